"""One path from a reply to a stored `Result`, for every answerer: the runner's models, imported
replies, people taking items, and people judging texture words.

`grade_reply` reads a reply with the benchmark's own `parse_reply` and scores it with its own
`grade`; `new_result` fills what every result shares (item, who, how, where it came from), so a
result looks the same whoever answered.
"""

from __future__ import annotations

import time
from typing import Any

from probes.core.benchmark import Benchmark
from probes.core.types import Condition, Item, ItemRef, Parsed, Result, Status, jsonable


def new_result(item: Item, model: str, condition: Condition, ref: ItemRef, status: Status, **fields: Any) -> Result:
    """A result for `item`, answered by `model` under `condition`; `fields` fill the rest."""
    return Result(
        benchmark=item.benchmark,
        item_id=item.id,
        model=model,
        mode=condition.mode.label,
        perturbation=condition.perturbation,
        status=status,
        target=jsonable(item.target),
        groups=dict(item.groups),
        item_ref=ref,
        created_at=time.time(),
        **fields,
    )


def grade_reply(
    benchmark: Benchmark,
    item: Item,
    reply: str,
    model: str,
    condition: Condition,
    ref: ItemRef,
    **fields: Any,
) -> Result:
    """Parse and grade `reply` to `item` (as asked, after any perturbation)."""
    return grade_parsed(benchmark, item, reply, benchmark.parse_reply(reply, item), model, condition, ref, **fields)


def grade_parsed(
    benchmark: Benchmark,
    item: Item,
    reply: str,
    parsed: Parsed,
    model: str,
    condition: Condition,
    ref: ItemRef,
    **fields: Any,
) -> Result:
    """Grade `reply` to `item`, already read as `parsed`."""
    correct, score = benchmark.grade(item, parsed)
    return new_result(
        item,
        model,
        condition,
        ref,
        parsed.status,
        reply=reply,
        parsed=jsonable(parsed.value),
        correct=correct,
        score=score,
        ungraded=item.ungraded_because if correct is None and score is None else None,
        **fields,
    )


def error_result(item: Item, model: str, condition: Condition, ref: ItemRef, message: str) -> Result:
    """No reply at all (a provider fault, an image that could not be built): retried next run."""
    return new_result(item, model, condition, ref, Status.ERROR, error=message)
