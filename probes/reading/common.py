"""What every answer reader shares: the reading context, the result types, numbers in words and
digits, and sentences.

A reader either finds an answer (`Found`: a value and where it was said), finds an answer that
does not commit (`HEDGE`: "3 or 4", "they might touch"), or finds nothing (None). The driver in
`parsing.py` decides which finding is the reply's answer.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from probes.core.types import AnswerKind


class _Hedge:
    """A reading that offers more than one answer, or none firmly: never an answer."""

    def __repr__(self) -> str:
        return "HEDGE"


HEDGE: Any = _Hedge()


@dataclass(frozen=True)
class Found:
    value: Any
    start: int
    end: int


@dataclass(frozen=True)
class Context:
    """What a reader knows of the item besides the reply."""

    kind: AnswerKind
    options: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()  # lower case
    question: str = ""
    predicate: str | None = None  # yes/no: "touch" or "overlap", the question's own predicate
    counted: frozenset[str] | None = None  # numbers: the nouns the question counts (None: any)
    extra: dict[str, Any] = field(default_factory=dict)


NUMBER_WORDS = {
    "zero": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20,
}  # fmt: skip
WORDS = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))  # number words as a pattern
# A whole number on its own: not inside a word ("x2", "3rd", "2つ"), not a decimal or a list of
# digits ("3.5", "1,000"). Digits are capped: a count never has seven of them, and Python
# refuses to read very long ones.
NUM = rf"(?<!\w)(?<!\d[.,])(\d{{1,6}}|{WORDS})(?![\w]|[.,]\d)"
NUM_RE = re.compile(NUM, re.IGNORECASE)


def to_int(token: str) -> int:
    token = token.lower()
    return NUMBER_WORDS[token] if token in NUMBER_WORDS else int(token)


_SENTENCE_BREAK = re.compile(r"[.!?。！？…]+(?=[\s\"'”’)\]*]|$)|\n")


def sentence_start(text: str, pos: int) -> int:
    """Where the sentence holding `pos` starts (bounded look back, so linear overall)."""
    low = max(0, pos - 600)
    start = low
    for match in _SENTENCE_BREAK.finditer(text, low, pos):
        start = match.end()
    return start


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line."""
    spans, start = [], 0
    for match in _SENTENCE_BREAK.finditer(text):
        if match.end() > start:
            spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


# Glue between two offered answers: "3 or 4", "(a) or (c)", "0か1", "'l' / 'I'".
ALTERNATIVE_GLUE = re.compile(
    r"\s*[,;]?\s*(?:or(?:\s+(?:maybe|possibly|perhaps|even|else))?|/|か|または|もしくは|あるいは)\s*", re.IGNORECASE
)


class Spans:
    """Half-open spans, merged, asked whether they hold a position (in log time)."""

    def __init__(self, spans) -> None:
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self.starts = [start for start, _ in merged]
        self.ends = [end for _, end in merged]

    def hold(self, position: int) -> bool:
        index = bisect.bisect_right(self.starts, position) - 1
        return index >= 0 and position < self.ends[index]
