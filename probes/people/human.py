"""People as answerers: a person's answer to an item, graded exactly as a model's reply is.

A person takes items under the model id `human/<name>`, 0-shot and unperturbed, so the store,
`report` and the scoreboard put people beside models with no special case. Their answer text
goes through the benchmark's own `parse_reply` and `grade` (choosing option b is the reply "b",
typing 5 is the reply "5"), and the seconds they took are the result's latency.
"""

from __future__ import annotations

import re

from probes.core.benchmark import Benchmark
from probes.core.errors import NameRejected
from probes.core.types import AnswerKind, Condition, Item, ItemRef, Mode, Origin, Parsed, Result, Status
from probes.reading.grading import grade_parsed, grade_reply

PROVIDER = "human"
# People see no worked examples, are not asked for reasoning, and see the item as it is.
CONDITION = Condition(Mode(0, False), "none")
MODE = CONDITION.mode.label
PERTURBATION = CONDITION.perturbation
MAX_NAME = 40
# Letters of any script (a class in Tokyo types its names in kana), digits, space, - and _:
# nothing that could be read as a path, a separator in an item id ("|") or markup.
_NAME = re.compile(r"[^\W_]|[ _-]")
_TAG = re.compile(r"[0-9a-f]{4,64}")


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


def model_id(name: str, tag: str | None = None) -> str:
    """`human/<name>`; with a `tag` (a public Space's session), `human/<name> #<tag>`, so two
    visitors who type the same name never share (or overwrite) each other's answers."""
    return f"{PROVIDER}/{check_name(name)}" + (f" #{check_tag(tag)}" if tag else "")


def check_tag(tag: str) -> str:
    """A session's tag as the app makes it (hex digits of a keyed digest, ui/identity.py):
    nothing else may stand where it proves whose answers these are."""
    if not _TAG.fullmatch(tag):
        raise NameRejected("a session tag is 4 to 64 hex digits")
    return tag


def tagged_name(name: str, tag: str) -> str:
    """`<name> <tag>`, a judge's name in public mode, within the length of a name (judgements
    are stored under it): a name typed there leaves room for the tag."""
    room = MAX_NAME - len(check_tag(tag)) - 1
    name = check_name(name)
    if len(name) > room:
        raise NameRejected(f"a name has at most {room} characters here (your session's tag follows it)")
    return check_name(f"{name} {tag}")


def is_human(model: str) -> bool:
    return model.startswith(f"{PROVIDER}/")


def answer_result(
    benchmark: Benchmark, item: Item, answer: str, name: str, seconds: float, tag: str | None = None
) -> Result:
    """A person's answer to `item`, parsed and graded by the benchmark's own hooks.

    Status `unparsed` means the answer could not be read in the item's format; a caller may ask
    again instead of recording it (a person can fix a typo, a model cannot)."""
    ref = ItemRef.of(item, Origin.HUMAN)
    fields = {"latency": round(max(0.0, seconds), 3)}
    parsed = tapped(benchmark, item, answer)
    if parsed is not None:
        return grade_parsed(benchmark, item, answer, parsed, model_id(name, tag), CONDITION, ref, **fields)
    return grade_reply(benchmark, item, answer, model_id(name, tag), CONDITION, ref, **fields)


WHOLE_NUMBER = re.compile(r"\d{1,9}")


def tapped(benchmark: Benchmark, item: Item, answer: str) -> Parsed | None:
    """An answer as a button or a key sends it, read at once: an option's label, Yes or No, a
    whole number, each the value the benchmark's reader gives it (tests/probes/test_human.py),
    without the reader's pass over a model's prose (a hall of 300 taps at once: 0.1 ms each, not
    1 to 3). None for anything else, and for a benchmark with a reader of its own."""
    if type(benchmark).parse_reply is not Benchmark.parse_reply:
        return None
    text = answer.strip()
    if item.kind is AnswerKind.CHOICE and item.options:
        lowered = text.lower()
        index = next((i for i, label in enumerate(item.labels) if label.lower() == lowered), None)
        return None if index is None else Parsed(index, Status.ANSWERED)
    if item.kind is AnswerKind.YES_NO and text.lower() in ("yes", "no"):
        return Parsed(text.lower(), Status.ANSWERED)
    if item.kind is AnswerKind.NUMBER and WHOLE_NUMBER.fullmatch(text):
        return Parsed(int(text), Status.ANSWERED)
    return None
