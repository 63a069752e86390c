"""People as answerers: a person's answer to an item, graded exactly as a model's reply is.

A person takes items under the model id `human/<name>`, 0-shot and unperturbed, so the store,
`report` and the scoreboard put people beside models with no special case. Their answer text
goes through the benchmark's own `parse_reply` and `grade` (choosing option b is the reply "b",
typing 5 is the reply "5"), and the seconds they took are the result's latency.
"""

from __future__ import annotations

import re
import time

from probes.core.registry import BenchmarkError
from probes.core.types import Benchmark, Item, Mode, Result

PROVIDER = "human"
MODE = Mode(0, False).label  # people see no worked examples and are not asked for reasoning
PERTURBATION = "none"
MAX_NAME = 40
# Letters of any script (a class in Tokyo types its names in kana), digits, space, - and _:
# nothing that could be read as a path, a separator in an item id ("|") or markup.
_NAME = re.compile(r"[^\W_]|[ _-]")


class NameRejected(BenchmarkError):
    """A person's name cannot be used; the message says what is allowed."""


def check_name(text: str | None) -> str:
    """The name as it will be stored: trimmed, 1-40 letters, digits, spaces, - or _."""
    name = re.sub(r"\s+", " ", (text or "").strip())
    if not name:
        raise NameRejected("enter your name first (it becomes the model id human/<name>)")
    if len(name) > MAX_NAME:
        raise NameRejected(f"a name has at most {MAX_NAME} characters; {len(name)} given")
    wrong = sorted({c for c in name if not _NAME.fullmatch(c)})
    if wrong:
        raise NameRejected(f"a name may hold letters, digits, spaces, - and _ only; not {' '.join(wrong)}")
    return name


def model_id(name: str) -> str:
    return f"{PROVIDER}/{check_name(name)}"


def is_human(model: str) -> bool:
    return model.startswith(f"{PROVIDER}/")


def answer_result(benchmark: Benchmark, item: Item, answer: str, name: str, seconds: float) -> Result:
    """A person's answer to `item`, parsed and graded by the benchmark's own hooks.

    Status `unparsed` means the answer could not be read in the item's format; a caller may ask
    again instead of recording it (a person can fix a typo, a model cannot)."""
    parsed = benchmark.parse_reply(answer, item)
    correct, score = benchmark.grade(item, parsed)
    return Result(
        benchmark=benchmark.id,
        item_id=item.id,
        model=model_id(name),
        mode=MODE,
        perturbation=PERTURBATION,
        status=parsed.status,
        reply=answer,
        parsed=_jsonable(parsed.value),
        correct=correct,
        score=score,
        target=_jsonable(item.target),
        latency=round(max(0.0, seconds), 3),
        groups=dict(item.groups),
        item_ref={
            "benchmark": item.benchmark,
            "item_id": item.id,
            "seed": item.seed,
            "params": dict(item.params),
            "image_refs": [source.ref for source in item.images],
            "taken_by": "person",
        },
        created_at=time.time(),
    )


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value
