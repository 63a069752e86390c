"""Procedural stimulus generators: pure functions of (parameters, seed) -> image and geometry."""
