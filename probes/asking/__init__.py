"""Asking: prompts (0-shot, k-shot, chain of thought, images interleaved) and perturbations."""
