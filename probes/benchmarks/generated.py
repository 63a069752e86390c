"""The shared shape of generated benchmarks: a design (a grid of parameters, the paper's by
default), a stimulus per point of the design, each asked with each prompt wording.

A task module supplies a stimulus class (in `probes/stimuli/`) and a `GeneratedBenchmark`
subclass that says which parameters exist, how the design expands them into stimuli, and what
the true answer is. Everything else (items, groups, sweeps from `--param NAME=V1,V2`, few-shot
pools, answer formats) lives here once.
"""

from __future__ import annotations

import functools
import math
import threading
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Protocol

from PIL import Image

from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError, LimitExceeded
from probes.core.types import AnswerKind, ImageSource, Item
from probes.running.limits import current as current_limits
from probes.stimuli.raster import Drawn

EXAMPLE_SEED_BASE = 1_000_000  # few-shot examples use design seeds no test item uses


class Stimulus(Protocol):
    """A pure function of its fields: the same fields always render the same pixels."""

    @property
    def ref(self) -> str:
        """Generator name, version and every field: keys cached image hashes and answers."""

    def render(self) -> Image.Image: ...


@dataclass(frozen=True)
class Param:
    """A parameter of the design. `default` is the paper's set of values.

    Bounds, checked before anything is designed (a public Space's visitor can send any value):
    `minimum`/`maximum` for a numeric value; `pixels` for a picture's side (at most the limits'
    `max_canvas`); `multiplies` for a count of stimuli per design point (images, repeats, maps):
    its value, not its number of values, multiplies the design."""

    default: tuple[Any, ...]
    parse: Callable[[str], Any] = str
    label: Callable[[Any], str] = str  # the value as a scoreboard group shows it
    choices: tuple[Any, ...] | None = None  # the only values allowed, if limited
    minimum: float | None = None
    maximum: float | None = None
    pixels: bool = False
    multiplies: bool = False


def fraction(text: str) -> Fraction:
    return Fraction(text).limit_denominator(1000)


def fraction_label(value: Fraction | float) -> str:
    value = Fraction(value).limit_denominator(1000)
    return f"1/{value.denominator}" if value.numerator == 1 else f"{float(value):.3g}"


def _pixels(stimulus: Stimulus) -> Callable[[], Any] | None:
    """How to draw a stimulus's pixels without a picture, when it can (see `Drawn`)."""
    return stimulus.draw if isinstance(stimulus, Drawn) else None


class _RenderCache:
    """Pictures drawn lately, bounded by their pixels (not their number: a 4096 px canvas weighs
    as much as a hundred 384 px ones). Each image is asked with several prompts; the cache draws
    it once for all of them."""

    def __init__(self, max_pixels: int):
        self.max_pixels = max_pixels
        self._images: OrderedDict[Stimulus, Image.Image] = OrderedDict()
        self._pixels = 0
        self._lock = threading.Lock()

    def __call__(self, stimulus: Stimulus) -> Image.Image:
        with self._lock:
            if stimulus in self._images:
                self._images.move_to_end(stimulus)
                return self._images[stimulus]
        image = stimulus.render()
        size = image.width * image.height
        if size > self.max_pixels // 4:
            return image  # too big to keep: drawing it again is cheaper than holding it
        with self._lock:
            if stimulus not in self._images:
                self._images[stimulus] = image
                self._pixels += size
            while self._pixels > self.max_pixels:
                _, dropped = self._images.popitem(last=False)
                self._pixels -= dropped.width * dropped.height
        return image

    def cache_clear(self) -> None:
        with self._lock:
            self._images.clear()
            self._pixels = 0

    def __reduce__(self) -> str:
        # Pickled by name: a loader `partial(render_cached, stimulus)` travels to the drawing
        # processes as the stimulus alone, not with every picture this process holds.
        return "render_cached"


render_cached = _RenderCache(max_pixels=48_000_000)  # about 144 MB of RGB


class GeneratedBenchmark(Benchmark):
    kind: ClassVar[AnswerKind]
    params: ClassVar[dict[str, Param]]  # sweepable parameters, in display order
    prompts: ClassVar[dict[str, str]]  # prompt name -> the paper's wording

    def __init__(self, params: Mapping[str, Sequence[str]] | None = None):
        super().__init__()
        params = dict(params or {})
        known = {**self.params, "prompt": Param(tuple(self.prompts), choices=tuple(self.prompts))}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise BenchmarkError(f"{self.id} has no parameter {', '.join(unknown)}; it has {', '.join(known)}")
        limits = current_limits()
        self.grid: dict[str, list[Any]] = {}
        for name, spec in known.items():
            if name in params:
                limits.values(name, len(params[name]))
            self.grid[name] = (
                [self._parse(name, spec, raw) for raw in params[name]] if name in params else list(spec.default)
            )
            if not self.grid[name]:
                raise BenchmarkError(f"--param {name}= needs at least one value")
        limits.design(self.id, self.design_bound())
        try:
            self._stimuli = list(self.design())
        except ValueError as exc:
            raise BenchmarkError(f"{self.id}: {exc}") from None
        limits.design(self.id, len(self._stimuli) * len(self.grid["prompt"]))

    def design_bound(self) -> int:
        """Items the grid designs, counted before designing anything: the product of each
        parameter's number of values (a count parameter's largest value instead) times a
        family's own `expansion` (e.g. every letter of a word)."""
        known = {**self.params, "prompt": None}
        sizes = [
            max(self.grid[name]) if spec is not None and spec.multiplies else len(self.grid[name])
            for name, spec in known.items()
        ]
        return math.prod(int(size) for size in sizes) * self.expansion

    expansion: ClassVar[int] = 1  # stimuli one design point may give beyond the grid (letter=all)

    def _parse(self, name: str, spec: Param, raw: str) -> Any:
        shown = _shown(raw)
        try:
            value = spec.parse(str(raw).strip())
        except (ValueError, ZeroDivisionError, KeyError, OverflowError) as exc:
            raise BenchmarkError(f"--param {name}={shown}: not a valid value ({_shown(str(exc))})") from None
        if spec.choices is not None and value not in spec.choices:
            raise BenchmarkError(f"--param {name}={shown}: choose from {', '.join(map(str, spec.choices))}")
        if isinstance(value, int | float | Fraction) and not isinstance(value, bool):
            self._check_number(name, spec, value, shown)
        return value

    def _check_number(self, name: str, spec: Param, value: float, shown: str) -> None:
        if not math.isfinite(value):
            raise BenchmarkError(f"--param {name}={shown}: give a finite number")
        low = 1 if spec.multiplies or spec.pixels else spec.minimum
        high = current_limits().max_canvas if spec.pixels else spec.maximum
        if spec.pixels and spec.maximum is not None:
            high = min(high, spec.maximum)
        if (low is not None and value < low) or (high is not None and value > high):
            if low is not None and high is not None:
                bounds = f"from {low:g} to {high:g}"
            else:
                bounds = f"at least {low:g}" if low is not None else f"at most {high:g}"
            raise LimitExceeded(f"--param {name}={shown}: {name} is {bounds} here")

    # --- what a task defines ----------------------------------------------------------

    @abstractmethod
    def design(self) -> Sequence[Stimulus]:
        """The stimuli under test, from `self.grid` (the paper's design by default)."""

    @abstractmethod
    def example_design(self) -> Sequence[Stimulus]:
        """The few-shot pool: stimuli off the test design (e.g. seeds from EXAMPLE_SEED_BASE)."""

    @abstractmethod
    def truth(self, stimulus: Stimulus, prompt: str) -> Any:
        """The true answer, from the geometry the generator drew."""

    def stimulus_params(self, stimulus: Stimulus) -> dict[str, Any]:
        """The values of this stimulus for every parameter (metadata, groups)."""
        return {name: getattr(stimulus, name) for name in self.params if hasattr(stimulus, name)}

    def groups(self, stimulus: Stimulus, prompt: str) -> dict[str, str]:
        values = self.stimulus_params(stimulus)
        groups = {"prompt": prompt}
        for name, spec in self.params.items():
            if name in values and name != "seed":
                groups[name] = spec.label(values[name])
        return groups

    def question(self, stimulus: Stimulus, prompt: str) -> str:
        return self.prompts[prompt]

    def answer_space(self, stimulus: Stimulus, prompt: str) -> tuple[str, ...]:
        """Well-formed answers (baseline/chance draws from these)."""
        return ()

    def reasoning(self, stimulus: Stimulus, prompt: str) -> str | None:
        """A worked answer from the geometry, for chain-of-thought examples."""
        return None

    def render_answer(self, example: Item, cot: bool) -> str:
        """Examples answer in the format their prompt asks for ("{3}", "(5,6)", "Yes")."""
        answer = format_answer(example.question, example.kind, example.target)
        if cot:
            return f"{example.reasoning or ''}\nAnswer: {answer}".strip()
        return answer

    # --- items ---------------------------------------------------------------------------

    def size_note(self) -> str:
        images, prompts = len(self._stimuli), len(self.grid["prompt"])
        return f"{images * prompts} items ({images} images x {prompts} prompts)"

    def load_items(self) -> list[Item]:
        return [self._item(s, p, seed_offset=False) for s in self._stimuli for p in self.grid["prompt"]]

    def load_examples(self) -> list[Item]:
        return [self._item(s, p, seed_offset=True) for s in self.example_design() for p in self.prompts]

    def _item(self, stimulus: Stimulus, prompt: str, seed_offset: bool) -> Item:
        values = self.stimulus_params(stimulus)
        item_id = ("example-" if seed_offset else "") + _item_id(stimulus.ref, prompt)
        return Item(
            benchmark=self.id,
            id=item_id,
            question=self.question(stimulus, prompt),
            images=(ImageSource(stimulus.ref, functools.partial(render_cached, stimulus), pixels=_pixels(stimulus)),),
            kind=self.kind,
            target=self.truth(stimulus, prompt),
            groups=self.groups(stimulus, prompt),
            params={**{k: _plain(v) for k, v in values.items()}, "prompt": prompt},
            seed=values.get("seed"),
            reasoning=self.reasoning(stimulus, prompt),
            answer_space=self.answer_space(stimulus, prompt),
        )


def _shown(raw: Any, limit: int = 40) -> str:
    """A value as a message may echo it: never more than a few dozen characters."""
    text = str(raw)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _plain(value: Any) -> Any:
    """JSON-friendly parameter values (fractions as floats)."""
    return float(value) if isinstance(value, Fraction) else value


def _item_id(ref: str, prompt: str) -> str:
    body = ref.split(":", 1)[-1]
    return f"{body}|{prompt}"


def format_answer(question: str, kind: AnswerKind, target: Any) -> str:
    """The target written the way the question asks for it."""
    if kind is AnswerKind.PAIR:
        rows, columns = target
        if "rows={" in question:
            return f"rows={{{rows}}} columns={{{columns}}}"
        return f"({rows},{columns})"
    if kind is AnswerKind.YES_NO:
        return "Yes" if target == "yes" else "No"
    if kind in (AnswerKind.NUMBER, AnswerKind.LETTER) and "curly bracket" in question.lower():
        return f"{{{target}}}"
    return str(target)
