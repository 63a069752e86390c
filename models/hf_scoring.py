"""The exact probability of candidate answers under a local model: each candidate's tokens scored
after the prompt (and whatever the reply said before its answer), teacher-forced.

The caller names the candidates as plain text (answer labels, yes and no, counts: the words
come from probes/, the model knows nothing of benchmarks). What comes back are probabilities of
disjoint continuations, so that they add up: candidates spelled by the same tokens count once
(the first named), and a candidate whose tokens others extend ("1" before "10" where digits are
tokens of their own) counts without them: P("1") - P("10") - ..., its nearest extensions among
the candidates subtracted once each (their own extensions are inside them).

One forward pass gives every single-token candidate (the distribution at the answer's place);
each longer candidate costs one more, over its own tokens. Runs on the model's worker thread
(models/hf_worker.py), after the reply was generated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def score_candidates(
    processor: Any, model: Any, conversation: list[dict[str, Any]], prefix: str, candidates: Sequence[str]
) -> dict[str, float]:
    import torch

    tokenizer = getattr(processor, "tokenizer", processor)
    inputs = processor.apply_chat_template(
        conversation, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
    )
    inputs = {name: value.to(model.device) if hasattr(value, "to") else value for name, value in inputs.items()}
    head = inputs["input_ids"]
    said = tokenizer(prefix, add_special_tokens=False)["input_ids"] if prefix.strip() else []
    sequences: dict[tuple[int, ...], str] = {}
    for candidate in candidates:
        ids = tuple(tokenizer(candidate, add_special_tokens=False)["input_ids"])
        if ids and ids not in sequences:
            sequences[ids] = candidate
    unknown = getattr(tokenizer, "unk_token_id", None)
    # A candidate the tokenizer cannot spell (its unknown token) is not a word the model can say.
    sequences = {ids: name for ids, name in sequences.items() if unknown is None or unknown not in ids}

    def log_probs(extra: Sequence[int]) -> torch.Tensor:
        """Log probabilities of the next token at every place after the prompt and `said`."""
        tail = torch.tensor([[*said, *extra]], dtype=head.dtype, device=head.device)
        ids = torch.cat([head, tail], dim=1) if tail.shape[1] else head
        feed = dict(inputs, input_ids=ids)
        if "attention_mask" in inputs:
            feed["attention_mask"] = torch.ones_like(ids)
        with torch.inference_mode():
            logits = model(**feed).logits[0, head.shape[1] - 1 + len(said) :]
        return torch.log_softmax(logits.float(), dim=-1)

    first = log_probs(())[0]
    joint: dict[tuple[int, ...], float] = {}
    for ids in sequences:
        if len(ids) == 1:
            joint[ids] = float(first[ids[0]])
        else:
            steps = log_probs(ids[:-1])
            joint[ids] = float(sum(steps[place, token] for place, token in enumerate(ids)))
    probability = {ids: float(torch.tensor(value).exp()) for ids, value in joint.items()}
    found: dict[str, float] = {}
    for ids, name in sequences.items():
        longer = [other for other in sequences if len(other) > len(ids) and other[: len(ids)] == ids]
        # Extensions of extensions are inside those: only the shortest ones are taken away.
        outer = [o for o in longer if not any(len(m) < len(o) and o[: len(m)] == m for m in longer)]
        found[name] = max(0.0, probability[ids] - sum(probability[o] for o in outer))
    return found
