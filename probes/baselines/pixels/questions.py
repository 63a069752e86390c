"""Which BlindTest question is being asked, read from the question's text alone (the answerer
never sees an item's metadata or its answer). The answer is then written as the benchmarks
write their own examples' answers (`probes.benchmarks.generated.format_answer`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Task(StrEnum):
    TOUCHING = "touching-circles: touching"
    OVERLAPPING = "touching-circles: overlapping"
    NESTED_SQUARES = "nested-squares"
    GRID = "grid-count"
    OLYMPIC = "olympic shapes"
    LINES = "line-intersections"
    SUBWAY = "subway-paths"
    CIRCLED = "circled-letter"


# Order matters: the first pattern that matches the question names the task.
PATTERNS: tuple[tuple[Task, re.Pattern[str]], ...] = (
    (Task.TOUCHING, re.compile(r"\bcircles\b.*\btouching\b|\btouching\b.*\bcircles\b", re.S)),
    (Task.OVERLAPPING, re.compile(r"\bcircles\b.*\boverlapping\b|\boverlapping\b.*\bcircles\b", re.S)),
    (Task.LINES, re.compile(r"\bblue\b.*\bred\b.*\blines?\b|\bred\b.*\bblue\b.*\blines?\b", re.S)),
    (Task.GRID, re.compile(r"\brows\b.*\bcolumns\b", re.S)),
    (Task.NESTED_SQUARES, re.compile(r"\b(how many|count)\b.*\bsquares\b", re.S)),
    (Task.OLYMPIC, re.compile(r"\b(how many|count)\b.*\b(circles|pentagons)\b", re.S)),
    (Task.SUBWAY, re.compile(r"\b(paths|routes)\b.*\bfrom\s+([A-Z])\s+to\s+([A-Z])\b", re.S)),
    (Task.CIRCLED, re.compile(r"\b(letter|character)\b.*\b(circled|oval|encircled)\b", re.S)),
)
_STATIONS = re.compile(r"\bfrom\s+([A-Z])\s+to\s+([A-Z])\b")

KNOWN = (
    "two circles touching/overlapping, blue and red line meetings, nested squares, grid rows and "
    "columns, Olympic-like circles or pentagons, subway paths from X to Y, the circled letter"
)


@dataclass(frozen=True)
class Question:
    task: Task
    text: str

    @property
    def stations(self) -> tuple[str, str]:
        """(from, to) of a subway question."""
        match = _STATIONS.search(self.text)
        if match is None:
            raise ValueError("the question names no stations 'from X to Y'")
        return match.group(1), match.group(2)


def recognise(text: str) -> Question | None:
    lowered = " ".join(text.split())
    for task, pattern in PATTERNS:
        source = lowered if task is Task.SUBWAY else lowered.lower()
        if pattern.search(source):
            return Question(task, lowered)
    return None


def final(text: str, answer: str) -> str:
    """Prefix 'Answer: ' when the prompt asks for a final line in that form (chain of thought)."""
    return f"Answer: {answer}" if re.search(r"['\"]Answer: ?<", text) else answer


def _wants_braces(text: str) -> bool:
    return "curly bracket" in text.lower() or bool(re.search(r"\{\d+\}", text))
