"""The shared shape of the illusion benchmarks: parameters, design expansion with jitter and
controls, two-alternative questions with counterbalanced options, labels from measured pixels.

See the package docstring (`probes/benchmarks/illusion/__init__.py`) for the conventions.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from probes.benchmarks.generated import EXAMPLE_SEED_BASE, GeneratedBenchmark, Param
from probes.benchmarks.illusion.designs import ILLUSION_GAME, designs, game_differences, game_strengths
from probes.core import truth
from probes.core.errors import BenchmarkError
from probes.core.truth import REFLECTIONS, grey_of
from probes.core.types import POSITIVE_ANSWER, AnswerKind, Item
from probes.stimuli.illusions.base import INDUCERS, Illusion, view_box
from probes.stimuli.illusions.drawing import BLACK, GREY, RED
from probes.stimuli.illusions.measure import Measured, MeasureError

SIZE_JITTER = (0.9, 1.1)  # size_min is scaled by a factor drawn from here (then shrunk to fit)
SHIFT_JITTER = 0.06  # the figure moves by up to this share of the canvas, where it has room
MARGIN = 2  # px kept clear between a figure and the canvas edge
CANVASES = (384, 768, 1152)

# How far a visitor may take a family's two swept parameters: about twice past the published
# designs (Illusion Game, VLMBias), where every figure still draws in about a second. An angle
# stays short of 90 degrees (Poggendorff's own geometry allows 60); a size ratio stays where a
# figure still fits a canvas. Past these a figure degenerates, or Pillow would fill shapes
# millions of pixels wide for minutes.
STRENGTH_BOUND = {"mueller-lyer": 89, "ponzo": 89, "vertical-horizontal": 89, "zoellner": 89,
                  "poggendorff": 60, "ebbinghaus": 10, "delboeuf": 10}  # fmt: skip
DIFFERENCE_BOUND = {"mueller-lyer": 3, "ponzo": 3, "ebbinghaus": 3, "delboeuf": 3,
                    "vertical-horizontal": 1, "poggendorff": 1, "zoellner": 45}  # fmt: skip


class EqualItem(Item):
    """An item whose targets measured equal: asked like any other, but no option is right, so
    it is not graded (target None) and counts only towards psychometric fits. Its answer reads
    "equal" (in an exported set's metadata, under a preview), never an option's letter."""

    def target_text(self) -> str:
        return "equal" if self.target is None else super().target_text()


EQUAL = "the red targets measure equal: no option is right"


def signed(value: float) -> str:
    return "0" if value == 0 else f"{value:+.4g}"


def illusion_params(family: str, extras: Mapping[str, Param]) -> dict[str, Param]:
    """Every parameter of a family, defaults as the default design (Illusion Game series 1)."""
    names = tuple(designs(family))
    params = {
        "design": Param(("illusion-game",), choices=names),
        "difference": Param(
            game_differences(family, 1),
            float,
            signed,
            minimum=-DIFFERENCE_BOUND[family],
            maximum=DIFFERENCE_BOUND[family],
        ),
        "illusion_strength": Param(
            game_strengths(family, 1), float, signed, minimum=-STRENGTH_BOUND[family], maximum=STRENGTH_BOUND[family]
        ),
        "inducers": Param(INDUCERS, choices=INDUCERS),
        "canvas": Param(CANVASES, int, pixels=True),
        "seed": Param((0, 1), int),
        "jitter": Param(("on",), choices=("on", "off")),
    }
    game_extras = ILLUSION_GAME[family].extras
    for name, spec in extras.items():
        default = (game_extras[name],) if name in game_extras else spec.default
        params[name] = dataclasses.replace(spec, default=default)
    return params


class IllusionBenchmark(GeneratedBenchmark):
    kind = AnswerKind.CHOICE
    chance = 50.0
    told_apart_in_grey = (
        f"the red targets turn a grey ({grey_of(RED)} of 255) that no other ink has: the inducers are black "
        f"({grey_of(BLACK)}), the occluder grey ({grey_of(GREY)}), the ground white"
    )
    stimulus: ClassVar[type[Illusion]]
    options: ClassVar[tuple[str, str]]  # (the answer a positive difference makes true, the other)
    extras: ClassVar[tuple[str, ...]] = ()  # the family's own pyllusion parameters (size_min ...)

    def __init__(self, params: Mapping[str, Sequence[str]] | None = None):
        self.given = set(params or {})
        self._design_of: dict[Illusion, str] = {}
        self._measured: dict[Illusion, Measured] = {}
        super().__init__(params)

    # --- design ---------------------------------------------------------------------------

    def design(self) -> list[Illusion]:
        if len(set(self.grid["jitter"])) > 1:
            raise ValueError("--param jitter takes one value, on or off")
        named = designs(self.stimulus.family)
        plans: dict[tuple, list[tuple[str, dict[str, Any]]]] = {}
        for name in self.grid["design"]:
            for block in named[name]:
                for spec in self._block_specs(block):
                    key = (spec["canvas"], spec["difference"], spec["seed"], *(spec[e] for e in self.extras))
                    plans.setdefault(key, []).append((name, spec))
        stimuli, seen = [], set()
        for key, members in plans.items():
            for name, stimulus in zip(
                [n for n, _ in members], self._jittered(key, [s for _, s in members]), strict=True
            ):
                if stimulus.ref not in seen:
                    seen.add(stimulus.ref)
                    self._design_of[stimulus] = name
                    stimuli.append(stimulus)
        return stimuli

    def _block_specs(self, block) -> list[dict[str, Any]]:
        grid = self.grid
        differences = grid["difference"] if "difference" in self.given else block.differences
        strengths = grid["illusion_strength"] if "illusion_strength" in self.given else block.strengths
        extra_values = [self._extra_values(block, name) for name in self.extras]
        specs = []
        # Controls last: where a control is the same picture as a designed strength (the
        # vertical-horizontal figure's strength 0), the design's own label is kept.
        labels = sorted(grid["inducers"], key=lambda label: label == "none")
        for label, difference, strength, extras, canvas, seed in itertools.product(
            labels, differences, strengths, itertools.product(*extra_values), grid["canvas"], grid["seed"]
        ):
            for drawn in self._drawn_strengths(strength, label):
                spec = {"canvas": canvas, "difference": float(difference), "illusion_strength": drawn}
                specs.append({**spec, "inducers": label, "seed": seed, **dict(zip(self.extras, extras, strict=True))})
        return specs

    def _extra_values(self, block, name: str) -> tuple:
        if name in self.given:
            return tuple(self.grid[name])
        if name in block.extras:
            return block.extras[name]
        return (next(f.default for f in dataclasses.fields(self.stimulus) if f.name == name),)

    def _drawn_strengths(self, strength: float, label: str) -> list[float]:
        if label == "with":
            return [float(strength)]
        if label == "flipped":
            return [-float(strength) + 0.0]  # + 0.0: strength 0 flips to 0.0, not -0.0
        if not self.stimulus.strength_shapes_targets or not self.stimulus.has_inducers:
            return [0.0]  # the targets alone do not depend on the strength: one control
        # The strength tilts the targets themselves (Poggendorff): a control for each polarity drawn.
        polarities = [1.0] + ([-1.0] if "flipped" in self.grid["inducers"] else [])
        return sorted({sign * float(strength) + 0.0 for sign in polarities})

    def _jittered(self, key: tuple, specs: list[dict[str, Any]]) -> list[Illusion]:
        """The stimuli of one (canvas, difference, seed, extras) group, all with the same size and
        position, so that every strength and control of a level shows the very same targets."""
        canvas, difference, seed = key[:3]
        jitter = self.grid["jitter"][0] == "on"
        rng = random.Random(f"{self.stimulus.family}|{canvas}|{difference!r}|{seed}|{key[3:]!r}")
        if not jitter:  # pyllusion's figure as it is: centred, its sizes, even where it overflows
            return [self._stimulus(s, 1.0, 0, 0) for s in specs]
        sized = "size_min" in self.extras and "size_min" not in self.given
        factor = rng.uniform(*SIZE_JITTER) if sized else 1.0
        build = lambda f, dx=0, dy=0: [self._stimulus(s, f, dx, dy) for s in specs]  # noqa: E731
        stimuli = build(factor)
        for _ in range(30):
            if not sized or _slack(stimuli, canvas)[0] >= 0:
                break
            factor *= 0.96
            stimuli = build(factor)
        low_x, high_x, low_y, high_y = _slack(stimuli, canvas)[1]
        cap = int(SHIFT_JITTER * canvas)
        dx = rng.randint(-min(cap, low_x), min(cap, high_x)) if min(low_x, high_x) >= 0 else 0
        dy = rng.randint(-min(cap, low_y), min(cap, high_y)) if min(low_y, high_y) >= 0 else 0
        return build(factor, dx, dy) if dx or dy else stimuli

    def _stimulus(self, spec: dict[str, Any], factor: float, dx: int, dy: int) -> Illusion:
        fields = dict(spec, offset_x=dx, offset_y=dy)
        if "size_min" in fields:
            fields["size_min"] = round(fields["size_min"] * factor, 6)
        return self.stimulus(**fields)

    def example_design(self) -> list[Illusion]:
        """16 stimuli off the test design (seeds from EXAMPLE_SEED_BASE, continuous parameters),
        alternating which target is bigger so that any four examples hold two of each."""
        levels = ILLUSION_GAME[self.stimulus.family]
        game = designs(self.stimulus.family)["illusion-game"][0]
        extras = {name: self._extra_values(game, name)[0] for name in self.extras}
        examples = []
        for index in range(16):
            rng = random.Random(EXAMPLE_SEED_BASE + index)
            sign = 1 if index % 4 in (0, 3) else -1
            difference = round(sign * rng.uniform(0.6, 1.0) * levels.largest, 4)
            strength = round(rng.uniform(-6 / 7, 6 / 7) * levels.strength, 3)
            examples.append(
                self.stimulus(rng.choice(CANVASES), difference, strength, seed=EXAMPLE_SEED_BASE + index, **extras)
            )
        return examples

    # --- answers ----------------------------------------------------------------------------

    def measured(self, stimulus: Illusion) -> Measured:
        if stimulus not in self._measured:
            try:
                self._measured[stimulus] = stimulus.measure()
            except MeasureError as exc:
                raise BenchmarkError(f"{self.id}: {exc} ({stimulus.ref}); keep the figure on the canvas") from None
        return self._measured[stimulus]

    def flipped(self, stimulus: Illusion, prompt: str) -> bool:
        """Whether the options are shown negative-first: alternating with the seed and between
        the two wordings, so each image is asked in both orders and each level in both orders."""
        return (stimulus.seed + list(self.prompts).index(prompt)) % 2 == 1

    def shown_options(self, stimulus: Illusion, prompt: str) -> tuple[str, str]:
        return self.options[::-1] if self.flipped(stimulus, prompt) else self.options

    def positive_answer(self, stimulus: Illusion, prompt: str) -> int:
        """The option index (as shown) of the answer a positive difference makes true."""
        return 1 if self.flipped(stimulus, prompt) else 0

    def truth(self, stimulus: Illusion, prompt: str) -> int | None:
        favours = self.measured(stimulus).favours
        if favours == "equal":
            return None
        positive = self.positive_answer(stimulus, prompt)
        return positive if favours == "positive" else 1 - positive

    def describe(self, measured: Measured) -> str:
        """The measurement in words, for chain-of-thought examples."""
        raise NotImplementedError

    def reasoning(self, stimulus: Illusion, prompt: str) -> str | None:
        measured = self.measured(stimulus)
        if measured.favours == "equal":
            return f"{self.describe(measured)} They measure the same."
        answer = self.options[0] if measured.favours == "positive" else self.options[1]
        return f"{self.describe(measured)} So the answer is: {answer}."

    def render_answer(self, example: Item, cot: bool) -> str:
        answer = example.target_text()  # the option's letter, as the question asks
        return f"{example.reasoning or ''}\nAnswer: {answer}".strip() if cot else answer

    # --- items ------------------------------------------------------------------------------

    def stimulus_params(self, stimulus: Illusion) -> dict[str, Any]:
        values: dict[str, Any] = {
            "design": self._design_of.get(stimulus, "example"),
            "difference": stimulus.difference,
            "illusion_strength": stimulus.illusion_strength,
            "pyllusion_strength": stimulus.pyllusion_strength(),
            "inducers": stimulus.inducers,
            "polarity": polarity(stimulus),
            "congruence": stimulus.congruence(),
            "canvas": stimulus.canvas,
            **{name: getattr(stimulus, name) for name in self.extras},
            "offset_x": stimulus.offset_x,
            "offset_y": stimulus.offset_y,
            "seed": stimulus.seed,
            "jitter": self.grid["jitter"][0],
        }
        return {**values, **self.measured(stimulus).as_params()}

    def groups(self, stimulus: Illusion, prompt: str) -> dict[str, str]:
        groups = {
            "prompt": prompt,
            "design": self._design_of.get(stimulus, "example"),
            "difference": signed(stimulus.difference),
            "illusion_strength": "none" if stimulus.inducers == "none" else signed(stimulus.illusion_strength),
            "inducers": stimulus.inducers,
            "congruence": stimulus.congruence(),
            "canvas": str(stimulus.canvas),
        }
        for name in self.extras:
            if name in self.given or not (name == "size_min" and self.grid["jitter"][0] == "on"):
                groups[name] = f"{getattr(stimulus, name):g}"
        return groups

    def _item(self, stimulus: Illusion, prompt: str, seed_offset: bool) -> Item:
        item = super()._item(stimulus, prompt, seed_offset)
        params = {**item.params, POSITIVE_ANSWER: self.positive_answer(stimulus, prompt)}
        fields = {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}
        fields.update(options=self.shown_options(stimulus, prompt), params=params)
        if item.target is None:
            return EqualItem(**{**fields, "ungraded_because": EQUAL})
        return Item(**fields)

    # --- the picture transformed ------------------------------------------------------------

    def truth_under(self, item: Item, transform: str) -> Item:
        """Upside down or mirrored, the truth is measured again on the picture sent (the same
        rule, on the reflected targets, named by their new places), and the item's metadata says
        what that picture shows: where a reflection exchanges the answers (the family's
        `swapped_by`), the opposite difference under inducers of the opposite polarity
        (`difference`, `illusion_strength` and `polarity` negated; `congruence` kept), so that
        fits and reports read the picture sent. Grayscale and a smaller copy keep every target
        where it was drawn: the truth stands, grey included, where the targets stay told apart
        (`told_apart_in_grey`)."""
        if transform == "grayscale":
            return truth.in_grey(item, self.told_apart_in_grey)
        axis = REFLECTIONS.get(transform)
        if axis is None:
            return item
        stimulus = self.stimulus_of(item)
        measured = _measure_reflected(stimulus, axis)
        params = {k: v for k, v in item.params.items() if not k.startswith("measured_")}
        params.update(measured.as_params())
        shifted = "offset_x" if axis == "columns" else "offset_y"  # the figure's shift, reflected with it
        params[shifted] = -params[shifted]
        groups = dict(item.groups)
        if axis in stimulus.swapped_by:
            for name in ("difference", "illusion_strength"):
                params[name] = -float(params[name]) + 0.0  # no -0.0
            params["polarity"] = -params["polarity"]
            groups["difference"] = signed(params["difference"])
            if groups.get("illusion_strength") not in (None, "none"):
                groups["illusion_strength"] = signed(params["illusion_strength"])
        positive = params[POSITIVE_ANSWER]
        target = {"positive": positive, "negative": 1 - positive, "equal": None}[measured.favours]
        fields = {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}
        fields.update(target=target, params=params, groups=groups, ungraded_because=EQUAL if target is None else None)
        return (Item if target is not None else EqualItem)(**fields)

    def stimulus_of(self, item: Item) -> Illusion:
        """The stimulus an item shows, rebuilt from its parameters (checked against its image)."""
        names = [f.name for f in dataclasses.fields(self.stimulus)]
        try:
            stimulus = self.stimulus(**{name: item.params[name] for name in names})
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchmarkError(f"{self.id} item {item.id}: its parameters do not name a figure ({exc})") from None
        if item.images and item.images[0].ref.split("|")[0] != stimulus.ref:
            raise BenchmarkError(f"{self.id} item {item.id}: its parameters do not name the figure it shows")
        return stimulus


@functools.lru_cache(maxsize=4096)
def _measure_reflected(stimulus: Illusion, axis: str) -> Measured:
    try:
        return stimulus.measure_reflected(axis)
    except MeasureError as exc:
        raise BenchmarkError(f"{stimulus.family}: {exc} ({stimulus.ref}); keep the figure on the canvas") from None


def polarity(stimulus: Illusion) -> int:
    """+1 for the inducers pyllusion draws for a positive difference at a positive strength
    (what `illusion_strength` > 0 draws here), -1 for the flipped ones, 0 for controls (no
    inducers, or strength 0): how `probes.analysis.psychometric` splits fits by polarity."""
    if stimulus.inducers == "none" or stimulus.illusion_strength == 0:
        return 0
    return 1 if stimulus.illusion_strength > 0 else -1


def _slack(stimuli: list[Illusion], canvas: int) -> tuple[float, tuple[int, int, int, int]]:
    """(the least room left on any side, (room left, right, top, bottom) in whole px) over the
    stimuli: how far the figure may move without any of them leaving the canvas."""
    boxes = [view_box(s) for s in stimuli]
    left = min(b[0] for b in boxes) - MARGIN
    top = min(b[1] for b in boxes) - MARGIN
    right = canvas - max(b[2] for b in boxes) - MARGIN
    bottom = canvas - max(b[3] for b in boxes) - MARGIN
    room = (int(left // 1), int(right // 1), int(top // 1), int(bottom // 1))
    return min(left, top, right, bottom), room
