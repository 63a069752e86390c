"""The words the playground speaks, as data only: items, modes, parsed answers, item references,
results. Behaviour (how a benchmark asks and grades) lives in `probes.core.benchmark`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from PIL import Image

from probes.core.errors import UsageError


class AnswerKind(StrEnum):
    CHOICE = "choice"  # one of the item's options, named by its label (a/b/c, 0/1, 1/2) or its text
    NUMBER = "number"  # a whole number, digits or words
    YES_NO = "yes/no"
    LETTER = "letter"  # a single character, compared case-insensitively
    PAIR = "pair"  # (rows, columns)
    WORDS = "words"  # a list of words (texture generation)
    TEXT = "text"  # a short free answer, compared after normalisation


# An item parameter naming the parsed answer that "chose the target a positive difference favours"
# (the illusions set it per item; psychometric fits read it; rotating the options moves it).
POSITIVE_ANSWER = "positive_answer"


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
    content hash, so a ref must change whenever the pixels could. `path` is the file it was read
    from, when there is one (people judging a texture item are shown the same file).
    """

    ref: str
    load: Callable[[], Image.Image]
    path: str | None = None
    # The pixels without a picture (height x width x 3 uint8, C order), for sources that draw
    # them (`probes.stimuli.raster.Drawn`): a runner hashes and encodes them as they are.
    pixels: Callable[[], Any] | None = None


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
    # Why the item has no right answer as asked (target None): an answer key left out, targets
    # that measure equal, or a condition under which its truth cannot be known (`core.truth`).
    ungraded_because: str | None = None

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

    @property
    def max_tokens(self) -> int:
        """The default reply length: room for reasoning with chain of thought, short otherwise."""
        return 2048 if self.cot else 512

    @classmethod
    def parse(cls, label: str) -> Mode:
        match = re.fullmatch(r"(\d+)-shot(\+CoT)?", label.strip())
        if not match:
            raise UsageError(f"not a mode label: {label!r} (write e.g. 0-shot, 4-shot, 4-shot+CoT)")
        return cls(int(match.group(1)), bool(match.group(2)))


@dataclass(frozen=True)
class Condition:
    """How an item is asked: a mode and a perturbation (a column of the Probe tab's grid)."""

    mode: Mode = field(default_factory=Mode)
    perturbation: str = "none"

    @property
    def label(self) -> str:
        return self.mode.label if self.perturbation == "none" else f"{self.mode.label}, {self.perturbation}"


@dataclass(frozen=True)
class Parsed:
    value: Any  # None unless status is answered
    status: Status


class Origin(StrEnum):
    """Where a result came from: the scoreboard shows runs, imports and people by default, and
    single probe clicks one filter away."""

    RUN = "run"  # an evaluation run (command line or the Evaluate tab)
    PROBE = "probe"  # one item asked on the Probe tab
    HUMAN = "human"  # a person taking items
    IMPORT = "import"  # replies produced elsewhere, graded here
    JUDGEMENT = "judgement"  # people judging generated texture words


@dataclass(frozen=True)
class ItemRef:
    """What a result remembers of the item it answers: enough to find or rebuild the item,
    never image bytes. `images` are the content hashes of the images sent."""

    benchmark: str
    item_id: str
    origin: Origin = Origin.RUN
    seed: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    images: tuple[str, ...] = ()
    image_refs: tuple[str, ...] = ()
    image_files: tuple[str, ...] = ()  # files the images were read from, where there are files
    source_file: str | None = None  # an import's file name
    judge: str | None = None  # a judgement's judge
    options_count: int | None = None  # a multiple-choice item's options (consistency across rotations)

    @classmethod
    def of(cls, item: Item, origin: Origin = Origin.RUN, images: tuple[str, ...] = ()) -> ItemRef:
        return cls(
            benchmark=item.benchmark,
            item_id=item.id,
            origin=origin,
            seed=item.seed,
            params=dict(item.params),
            images=tuple(images),
            image_refs=tuple(source.ref for source in item.images),
            image_files=tuple(source.path for source in item.images if source.path),
            options_count=len(item.options) if item.kind is AnswerKind.CHOICE and item.options else None,
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain data for the store: empty fields left out."""
        data: dict[str, Any] = {"benchmark": self.benchmark, "item_id": self.item_id, "origin": self.origin.value}
        optional = {
            "seed": self.seed,
            "params": dict(self.params),
            "images": list(self.images),
            "image_refs": list(self.image_refs),
            "image_files": list(self.image_files),
            "source_file": self.source_file,
            "judge": self.judge,
            "options_count": self.options_count,
        }
        return data | {key: value for key, value in optional.items() if value not in (None, [], {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemRef:
        """Also reads stores written before item references were typed (origin inferred)."""
        origin = data.get("origin")
        if origin is None:
            if "imported_from" in data:
                origin = Origin.IMPORT
            elif "judge" in data:
                origin = Origin.JUDGEMENT
            elif data.get("taken_by") == "person":
                origin = Origin.HUMAN
            else:
                origin = Origin.RUN
        return cls(
            benchmark=str(data.get("benchmark", "")),
            item_id=str(data.get("item_id", "")),
            origin=Origin(origin),
            seed=data.get("seed"),
            params=dict(data.get("params") or {}),
            images=tuple(data.get("images") or ()),
            image_refs=tuple(data.get("image_refs") or ()),
            image_files=tuple(data.get("image_files") or ()),
            source_file=data.get("source_file") or data.get("imported_from"),
            judge=data.get("judge"),
            options_count=data.get("options_count"),
        )


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
    ungraded: str | None = None  # why a reply was not graded (the item's `ungraded_because`)
    # The model's probability of each of the item's answers (keyed as
    # `probes.reading.probabilities.answer_key` writes an answer: option index, yes/no, count),
    # normalised over them; `probability_mass` the share that fell on them; `alternatives` the
    # tokens offered where the answer was given, with their probabilities. None where the model
    # gave none: never derived from the choice.
    probabilities: dict[str, float] | None = None
    probability_mass: float | None = None
    alternatives: tuple[tuple[str, float], ...] | None = None
    prompt_hash: str | None = None
    cache_key: str | None = None
    groups: Mapping[str, str] = field(default_factory=dict)
    item_ref: ItemRef | None = None
    cached: bool = False
    # Where a cached reply was found beyond the answerer's own store ("demo": a demo prepared by
    # the operator, "shared": a public Space's shared cache, "link": kept for a shared link).
    cached_from: str | None = None
    created_at: float | None = None

    @property
    def origin(self) -> Origin:
        return self.item_ref.origin if self.item_ref else Origin.RUN


def jsonable(value: Any) -> Any:
    """Tuples as lists (what JSON gives back), so stored and fresh values compare equal."""
    if isinstance(value, tuple | list):
        return [jsonable(v) for v in value]
    return value


def describe_groups(items: Iterable[Item]) -> list[str]:
    names: dict[str, None] = {}
    for item in items:
        for name in item.groups:
            names.setdefault(name)
    return list(names)
