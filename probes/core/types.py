"""The words the playground speaks: items, modes, parsed answers, results, benchmarks."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from PIL import Image

from models.types import ImagePart, TextPart


class AnswerKind(StrEnum):
    CHOICE = "choice"  # one of the item's options, named by its label (a/b/c, 0/1, 1/2) or its text
    NUMBER = "number"  # a whole number, digits or words
    YES_NO = "yes/no"
    LETTER = "letter"  # a single character, compared case-insensitively
    PAIR = "pair"  # (rows, columns)
    WORDS = "words"  # a list of words (texture generation)
    TEXT = "text"  # a short free answer, compared after normalisation


class Status(StrEnum):
    ANSWERED = "answered"
    UNPARSED = "unparsed"  # the model replied, but no well-formed answer could be read
    REFUSED = "refused"  # the model declined to answer
    ERROR = "error"  # no reply at all (provider fault, timeout); retried on the next run


class LabelStyle(StrEnum):
    LETTER = "letter"  # a, b, c ... (IllusionVQA)
    DIGIT0 = "digit0"  # 0, 1, 2 ... (texture classification)
    DIGIT1 = "digit1"  # 1, 2, 3 ... (DiscriBench)


def option_labels(count: int, style: LabelStyle = LabelStyle.LETTER) -> list[str]:
    if style is LabelStyle.LETTER:
        return [chr(ord("a") + i) for i in range(count)]
    start = 0 if style is LabelStyle.DIGIT0 else 1
    return [str(start + i) for i in range(count)]


@dataclass(frozen=True, eq=False)
class ImageSource:
    """An image loaded only when a prompt needs it (a benchmark can hold thousands).

    `ref` names it for the store, never by its bytes: a generator's name, version and
    parameters, or a file's path, size and modification time. The store remembers each ref's
    content hash, so a ref must change whenever the pixels could.
    """

    ref: str
    load: Callable[[], Image.Image]


@dataclass(frozen=True)
class Item:
    benchmark: str
    id: str
    question: str
    images: tuple[ImageSource, ...]
    kind: AnswerKind
    target: Any  # choice: option index; number: int; yes/no: "yes"/"no"; pair: (r, c); ...
    options: tuple[str, ...] = ()
    label_style: LabelStyle = LabelStyle.LETTER
    groups: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    reasoning: str | None = None  # a worked explanation, for chain-of-thought examples
    answer_space: tuple[str, ...] = ()  # well-formed replies, for baseline/chance

    @property
    def labels(self) -> list[str]:
        return option_labels(len(self.options), self.label_style)

    def target_text(self) -> str:
        """The target as a person (or an example's assistant turn) would write it."""
        if self.kind is AnswerKind.CHOICE:
            return self.labels[self.target]
        if self.kind is AnswerKind.YES_NO:
            return "Yes" if self.target == "yes" else "No"
        if self.kind is AnswerKind.PAIR:
            return f"({self.target[0]}, {self.target[1]})"
        if self.kind is AnswerKind.WORDS:
            return ", ".join(self.target)
        return str(self.target)

    def possible_answers(self) -> tuple[str, ...]:
        if self.answer_space:
            return self.answer_space
        if self.kind is AnswerKind.CHOICE:
            return tuple(self.labels)
        if self.kind is AnswerKind.YES_NO:
            return ("Yes", "No")
        return ()

    def with_changes(self, **changes: Any) -> Item:
        return replace(self, **changes)


@dataclass(frozen=True)
class Mode:
    shots: int = 0
    cot: bool = False

    @property
    def label(self) -> str:
        return f"{self.shots}-shot" + ("+CoT" if self.cot else "")

    @classmethod
    def parse(cls, label: str) -> Mode:
        match = re.fullmatch(r"(\d+)-shot(\+CoT)?", label.strip())
        if not match:
            raise ValueError(f"not a mode label: {label!r} (write e.g. 0-shot, 4-shot, 4-shot+CoT)")
        return cls(int(match.group(1)), bool(match.group(2)))


@dataclass(frozen=True)
class Parsed:
    value: Any  # None unless status is answered
    status: Status


@dataclass
class Result:
    benchmark: str
    item_id: str
    model: str
    mode: str
    perturbation: str
    status: Status
    reply: str | None = None
    parsed: Any = None
    correct: bool | None = None
    score: float | None = None  # this result's share of the accuracy: 1/0, or a match rate; None: left out
    target: Any = None
    latency: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    prompt_hash: str | None = None
    cache_key: str | None = None
    groups: Mapping[str, str] = field(default_factory=dict)
    item_ref: Mapping[str, Any] = field(default_factory=dict)
    cached: bool = False
    created_at: float | None = None


class Benchmark(ABC):
    """A set of items plus how to ask them. Subclasses fill `load_items` (and, for few-shot,
    `load_examples`); the prompt hooks have defaults that suit most short-answer tasks."""

    id: str = ""
    title: str = ""
    source: str = ""  # the paper
    chance: float | None = None  # accuracy of a uniform guess, in percent

    def __init__(self) -> None:
        self._items: list[Item] | None = None
        self._examples: list[Item] | None = None

    def items(self) -> list[Item]:
        if self._items is None:
            self._items = self.load_items()
        return self._items

    def examples(self) -> list[Item]:
        """The few-shot pool: never the items under test."""
        if self._examples is None:
            self._examples = self.load_examples()
        return self._examples

    @abstractmethod
    def load_items(self) -> list[Item]:
        """Every item under test, built cheaply: images load only when asked."""

    def load_examples(self) -> list[Item]:
        return []

    def size_note(self) -> str:
        return f"{len(self.items())} items"

    def select_examples(self, item: Item, k: int) -> list[Item]:
        """The k examples shown before `item`; default: the first k of the pool that share its
        question wording (so the examples are asked exactly as the item is)."""
        pool = [e for e in self.examples() if e.id != item.id]
        same = [e for e in pool if e.question == item.question]
        chosen = (same or pool)[:k]
        if len(chosen) < k:
            raise ValueError(f"{self.id} has {len(chosen)} few-shot examples for this item; {k} asked")
        return chosen

    def preamble(self, shots: int, cot: bool) -> str | None:
        """Text before everything else in the first user turn (a task instruction), or None."""
        return None

    def query_prefix(self, shots: int, cot: bool) -> str | None:
        """Text at the start of the item's own turn, after the examples ("Now you try it.")."""
        return None

    def render_question(self, item: Item) -> str:
        if not item.options:
            return item.question
        lines = [f"{label}. {text}" for label, text in zip(item.labels, item.options, strict=False)]
        return item.question + "\n" + "\n".join(lines)

    def cot_instruction(self, item: Item) -> str:
        """Appended to every question in CoT mode ("" when the preamble already asks for it)."""
        return (
            "Think step by step about what you see before answering. Then give your final "
            "answer on the last line, formatted as 'Answer: <answer>', in the format the "
            "question asks for."
        )

    def user_parts(self, item: Item, images: list[ImagePart], text: str) -> list[TextPart | ImagePart]:
        """The parts of a user turn: by default the item's images, then its text. Benchmarks
        whose images need labels (DiscriBench's "Image 1: ") interleave them here."""
        return [*images, TextPart(text)]

    def groups_for_category(self, category: str) -> dict[str, str]:
        """Scoreboard groups of an imported record that names only its category."""
        return {"category": category}

    def parse_reply(self, reply: str, item: Item) -> Parsed:
        """Read a reply. By default the shared parser; a paper with its own scoring rule
        (DiscriBench's regex) overrides this to grade exactly as the paper did."""
        from probes.reading.parsing import parse_item_reply  # parsing imports this module

        return parse_item_reply(reply, item)

    def grade(self, item: Item, parsed: Parsed) -> tuple[bool | None, float | None]:
        """(correct, score). By default right or wrong, scoring 1 or 0; texture generation
        overrides this with its match rate."""
        from probes.analysis.scoring import grade  # scoring imports this module

        if item.target is None:  # asked without an answer key (an upload): shown, not graded
            return None, None
        correct = grade(item.kind, parsed, item.target)
        return correct, None if correct is None else float(correct)

    def render_answer(self, example: Item, cot: bool) -> str:
        """An example's assistant turn."""
        if cot:
            reasoning = example.reasoning or ""
            return f"{reasoning}\nAnswer: {example.target_text()}".strip()
        return example.target_text()


def describe_groups(items: Sequence[Item]) -> list[str]:
    names: dict[str, None] = {}
    for item in items:
        for name in item.groups:
            names.setdefault(name)
    return list(names)
