"""The benchmark base class: a set of items plus how to ask them and how to grade the replies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from models.types import ImagePart, TextPart
from probes.core import truth
from probes.core.errors import BenchmarkError
from probes.core.types import AnswerKind, Item, LabelStyle, Mode, Parsed
from probes.reading.correctness import is_correct
from probes.reading.parsing import parse_item_reply


class Benchmark(ABC):
    """A set of items plus how to ask them. Subclasses fill `load_items` (and, for few-shot,
    `load_examples`); the prompt hooks have defaults that suit most short-answer tasks."""

    id: str = ""
    title: str = ""
    source: str = ""  # the paper
    chance: float | None = None  # accuracy of a uniform guess, in percent
    # What every item shares, where all do: an imported record that carries only its target is
    # built with these, so it is read and graded exactly as the benchmark's own items are.
    kind: AnswerKind | None = None  # None: the items differ (a custom folder)
    label_style: LabelStyle = LabelStyle.LETTER  # how options are labelled: a/b/c, 0/1/2, 1/2/3
    fixed_options: tuple[str, ...] = ()  # options every item has (DiscriBench's "Image 1".."Image 4")
    cache_images: bool = True  # a run may keep encoded images beside the store (not for uploads)
    # How the things this family's words name by colour are still told apart in a grey copy of a
    # picture it drew (so knows), which keeps their truth in grayscale; None: such items are
    # ungraded there (`truth.in_grey`).
    told_apart_in_grey: str | None = None

    def __init__(self) -> None:
        self._items: list[Item] | None = None
        self._examples: list[Item] | None = None
        self.notes: list[str] = []  # what a user should know about accepted data (a custom folder's odd images)

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
            raise BenchmarkError(f"{self.id} has {len(chosen)} few-shot examples for this item; {k} asked")
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

    def one_message(
        self, item: Item, examples: list[Item], mode: Mode, image_parts: Callable[[Item], list[ImagePart]]
    ) -> list[TextPart | ImagePart] | None:
        """The whole prompt as the parts of ONE user message, examples pasted inside it, as some
        papers sent them (IllusionVQA's notebooks); None, the default, for a real conversation
        (each example a user turn and an assistant answer)."""
        return None

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
        return parse_item_reply(reply, item)

    def truth_under(self, item: Item, transform: str) -> Item:
        """The item as sent with its picture transformed (`transform`, one of
        `truth.PICTURE_TRANSFORMS`; its images are already transformed): its answer, options and
        measured geometry as they hold for the picture sent, or its truth marked unknown
        (`truth.unknown`). Grading never compares a reply with the truth of a picture that was
        not sent. Default: the truth stands unless the item's words name what the transform
        changes (`truth.by_words`, and `truth.in_grey` in grayscale); a family that knows its
        answers declares better."""
        if transform == "grayscale":
            return truth.in_grey(item, self.told_apart_in_grey)
        return truth.by_words(item, transform)

    def grade(self, item: Item, parsed: Parsed) -> tuple[bool | None, float | None]:
        """(correct, score). By default right or wrong, scoring 1 or 0; texture generation
        overrides this with its match rate."""
        if item.target is None:  # asked without an answer key (an upload): shown, not graded
            return None, None
        correct = is_correct(item.kind, parsed, item.target)
        return correct, None if correct is None else float(correct)

    def render_answer(self, example: Item, cot: bool) -> str:
        """An example's assistant turn."""
        if cot:
            reasoning = example.reasoning or ""
            return f"{reasoning}\nAnswer: {example.target_text()}".strip()
        return example.target_text()
