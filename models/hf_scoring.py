"""The exact probability of candidate answers under a local model: each candidate's tokens scored
after the prompt (and whatever the reply said before its answer), teacher-forced.

The caller names the candidates as plain text (answer labels, yes and no, counts: the words
come from probes/, the model knows nothing of benchmarks). What comes back are probabilities of
disjoint continuations, so that they add up: candidates spelled by the same tokens count once
(the first named), and a candidate whose tokens others extend ("1" before "10" where digits are
tokens of their own) counts without them: P("1") - P("10") - ..., its nearest extensions among
the candidates subtracted once each (their own extensions are inside them).

A request becomes rows: the prompt, what the reply said, then a candidate's tokens but its last.
One row gives the distribution after the prompt (every single-token candidate) and, along its
tokens, every candidate it spells the start of, so a row is needed only for each longest such
start: one row for yes/no, one per longer count. The model's worker (models/hf_worker.py) puts
the rows of many requests in one forward pass (`Spelling` here, the pass in `log_probabilities`);
rows are padded on the right, so every real token keeps the place it has alone.

Often no pass is needed at all: the reply was generated from the same prompt, and generation
computed the model's next-token distribution after the prompt and after each token it wrote.
The worker keeps the first few of those (`Steps`, from `capture_steps`); where the reply begins
with what `said` spells and every candidate but its last token follows the reply's own tokens
(every single-token candidate does: yes, no, a letter), `from_steps` reads the candidates' exact
probabilities from them, as the scoring pass would compute them.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from models.hf_prepare import Prepared


@dataclass(frozen=True)
class Spelling:
    """The candidates of one request as tokens, and the rows that score them."""

    said: tuple[int, ...]  # the reply before its answer
    sequences: dict[tuple[int, ...], str]  # token ids -> the candidate named first with them
    tails: tuple[tuple[int, ...], ...]  # per row: the tokens after `said`

    def row_of(self, ids: tuple[int, ...]) -> int:
        """The row whose tail starts with every token of `ids` but its last."""
        start = ids[:-1]
        return next(index for index, tail in enumerate(self.tails) if tail[: len(start)] == start)


def spell(processor: Any, prefix: str, candidates: Sequence[str]) -> Spelling:
    tokenizer = getattr(processor, "tokenizer", processor)
    said = tuple(tokenizer(prefix, add_special_tokens=False)["input_ids"]) if prefix.strip() else ()
    sequences: dict[tuple[int, ...], str] = {}
    for candidate in candidates:
        ids = tuple(tokenizer(candidate, add_special_tokens=False)["input_ids"])
        if ids and ids not in sequences:
            sequences[ids] = candidate
    unknown = getattr(tokenizer, "unk_token_id", None)
    # A candidate the tokenizer cannot spell (its unknown token) is not a word the model can say.
    sequences = {ids: name for ids, name in sequences.items() if unknown is None or unknown not in ids}
    starts = {ids[:-1] for ids in sequences} or {()}
    tails = sorted(s for s in starts if not any(len(o) > len(s) and o[: len(s)] == s for o in starts))
    return Spelling(said, sequences, tuple(tails))


def row(prepared: Prepared, tokens: Sequence[int]) -> Prepared:
    """`prepared` with `tokens` written after its prompt: text tokens, attended to, of no image."""
    import torch

    if not tokens:
        return prepared
    extra = len(tokens)
    grown: dict[str, Any] = {}
    for name, value in prepared.inputs.items():
        if hasattr(value, "dim") and value.dim() == 2 and value.shape[0] == 1 and value.shape[1] == prepared.length:
            if name == "input_ids":
                tail = torch.tensor([list(tokens)], dtype=value.dtype, device=value.device)
            elif name == "attention_mask":
                tail = torch.ones((1, extra), dtype=value.dtype, device=value.device)
            else:  # token type ids and the like: 0 is text
                tail = torch.zeros((1, extra), dtype=value.dtype, device=value.device)
            grown[name] = torch.cat([value, tail], dim=1)
        else:
            grown[name] = value
    return Prepared(grown, prepared.length + extra, prepared.signature)


def places(spelling: Spelling, length: int) -> list[tuple[int, int]]:
    """(row, position) of each distribution a request needs, rows numbered within the request:
    after the prompt (`length` tokens) and `said`, then after each token of the row's tail."""
    start = length + len(spelling.said) - 1
    return [(r, start + step) for r, tail in enumerate(spelling.tails) for step in range(len(tail) + 1)]


def score_together(
    requests: list[tuple[Prepared, Spelling]],
    rows_allowed: Callable[[int], int],
    forward: Callable[[list[Prepared], list[tuple[int, int]]], Any],
) -> list[dict[str, float]]:
    """The candidates' probabilities of several requests from as few passes as the memory allows:
    every request's rows in one batch (`rows_allowed(length)` rows at most per pass), `forward`
    (rows, picks) giving `log_probabilities` for the picks of its rows."""
    import torch

    rows: list[Prepared] = []
    picks: list[tuple[int, int]] = []
    firsts: list[int] = []
    for prepared, spelling in requests:
        firsts.append(len(picks))
        base = len(rows)
        rows += [row(prepared, (*spelling.said, *tail)) for tail in spelling.tails]
        picks += [(base + r, position) for r, position in places(spelling, prepared.length)]
    limit = rows_allowed(max(r.length for r in rows))  # rows, not requests: a request may need several
    steps = []
    for start in range(0, len(rows), limit):
        chunk_picks = [(r - start, p) for r, p in picks if start <= r < start + limit]
        steps.append(forward(rows[start : start + limit], chunk_picks))
    found = torch.cat(steps, dim=0)
    return [read(spelling, found, first) for (_, spelling), first in zip(requests, firsts, strict=True)]


def log_probabilities(model: Any, batch: dict[str, Any], picks: list[tuple[int, int]]) -> Any:
    """Natural-log next-token distributions at (row, position) `picks` of a right-padded batch,
    from one forward pass that keeps the logits of those positions only (where the model takes
    `logits_to_keep`). Returns a (len(picks), vocabulary) float tensor on the CPU."""
    import torch

    device = _device(model)
    feed = {name: value.to(device) if hasattr(value, "to") else value for name, value in batch.items()}
    columns = sorted({position for _, position in picks})
    keeps = "logits_to_keep" in inspect.signature(model.forward).parameters
    if keeps:
        feed["logits_to_keep"] = torch.tensor(columns, device=device)
    with torch.inference_mode():
        logits = model(**feed).logits
    where = {column: index for index, column in enumerate(columns)} if keeps else None
    rows = torch.tensor([r for r, _ in picks], device=logits.device)
    cols = torch.tensor([where[p] if where else p for _, p in picks], device=logits.device)
    return torch.log_softmax(logits[rows, cols].float(), dim=-1).cpu()


def read(spelling: Spelling, steps: Any, first_pick: int) -> dict[str, float]:
    """The candidates' disjoint probabilities from `steps` (the rows of `log_probabilities`),
    this request's distributions starting at `first_pick`, in the order of `places`."""
    offsets: list[int] = []
    at = first_pick
    for tail in spelling.tails:
        offsets.append(at)
        at += len(tail) + 1
    joint: dict[tuple[int, ...], float] = {}
    for ids in spelling.sequences:
        base = offsets[spelling.row_of(ids)]
        joint[ids] = float(sum(float(steps[base + place, token]) for place, token in enumerate(ids)))
    return _disjoint(spelling, joint)


@dataclass(frozen=True)
class Steps:
    """The model's next-token log probabilities while it wrote a reply: after the prompt, then
    after each of the reply's first tokens (`tokens`), one row per place."""

    log_probs: Any  # (places, vocabulary) float tensor on the CPU
    tokens: tuple[int, ...]  # what the reply wrote at the places before the last kept

    @classmethod
    def of(cls, log_probs: Any, written: Any, ends: set[Any]) -> Steps:
        """A row's captured places and the tokens it wrote there; a place counts while the reply
        before it is the model's own writing, not past its end (`ends`: end and pad tokens)."""
        tokens = [int(token) for token in written]
        valid = next((at + 1 for at, token in enumerate(tokens) if token in ends), len(tokens))
        places = min(valid, log_probs.shape[0])
        return cls(log_probs[:places], tuple(tokens[: places - 1]))


def from_steps(spelling: Spelling, steps: Steps) -> dict[str, float] | None:
    """The candidates' probabilities from a reply's own steps, or None where some candidate
    leaves the reply's path before its last token (a scoring pass is needed then)."""
    said = spelling.said
    if steps.tokens[: len(said)] != said:
        return None
    joint: dict[tuple[int, ...], float] = {}
    for ids in spelling.sequences:
        last = len(said) + len(ids) - 1
        if last >= steps.log_probs.shape[0] or steps.tokens[len(said) : last] != ids[:-1]:
            return None
        joint[ids] = float(sum(float(steps.log_probs[len(said) + j, token]) for j, token in enumerate(ids)))
    return _disjoint(spelling, joint)


def _disjoint(spelling: Spelling, joint: dict[tuple[int, ...], float]) -> dict[str, float]:
    probability = {ids: math.exp(value) for ids, value in joint.items()}
    found: dict[str, float] = {}
    for ids, name in spelling.sequences.items():
        longer = [other for other in spelling.sequences if len(other) > len(ids) and other[: len(ids)] == ids]
        # Extensions of extensions are inside those: only the shortest ones are taken away.
        outer = [o for o in longer if not any(len(m) < len(o) and o[: len(m)] == m for m in longer)]
        found[name] = max(0.0, probability[ids] - sum(probability[o] for o in outer))
    return found


@contextmanager
def capture_steps(model: Any, rows: Sequence[int], places: int) -> Iterator[list[Any]]:
    """Around `model.generate`: the log-softmax of the logits of the first `places` steps of
    batch rows `rows`, as (rows, places, vocabulary) pieces in the yielded list (on the model's
    device; one per step). Read from the output layer, so only those steps are kept, whatever
    the reply's length; nothing is captured for a model that changes its logits after that layer."""
    import torch

    captured: list[Any] = []
    head = model.get_output_embeddings() if rows and places and _plain_logits(model) else None
    if head is None:
        yield captured
        return
    index = torch.tensor(list(rows))

    def keep(_module: Any, _inputs: Any, output: Any) -> None:
        if len(captured) < places and hasattr(output, "dim") and output.dim() == 3:
            last = output[index.to(output.device), -1, :]
            captured.append(torch.log_softmax(last.float(), dim=-1))

    handle = head.register_forward_hook(keep)
    try:
        yield captured
    finally:
        handle.remove()


def _plain_logits(model: Any) -> bool:
    config = getattr(model, "config", None)
    text = getattr(config, "text_config", None) or config
    return not getattr(text, "final_logit_softcapping", None) and not getattr(config, "final_logit_softcapping", None)


def _device(model: Any) -> Any:
    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration, TypeError):
        return getattr(model, "device", "cpu")
