"""What every parametric illusion shares: pyllusion's parameters, one canvas, measured targets.

A stimulus is a frozen dataclass: its fields are pyllusion's parameters (`difference`,
`illusion_strength`, `size_min`, ...) plus the canvas, the figure's offset on it (position
jitter) and the seed that drew the jitter. `scene()` asks pyllusion 1.4 for the geometry (its
`get_parameters()`, in its units: the canvas spans -1..1) and maps it to pixels exactly as
pyllusion's own `to_image` does (x right, y up, 1 unit = half the canvas; line widths in pixels
as its 3x-supersampled `outline`). `drawing` then draws it once, hard-edged, on one canvas.

Strength and polarity. pyllusion re-aims the inducers at whichever target is bigger: for the same
`illusion_strength` the fins of a Mueller-Lyer figure flip when `difference` changes sign, so its
strength means "congruent or incongruent with the truth". A psychometric curve needs the
opposite: the same inducers while the targets change. Here `illusion_strength` is therefore the
strength pyllusion would give *at a positive difference* (same sign conventions: for Mueller-Lyer
a positive strength puts arrowheads (<->) on the top line); the inducers stay put as `difference`
sweeps through zero, and `pyllusion_strength()` is what pyllusion calls the same picture (the
sign flipped for differences on the other side of zero). A negative strength is the flipped
polarity of the same inducers. `inducers="none"` draws the targets alone (pyllusion's
`target_only`).

Source: Makowski et al., A Parametric Framework to Generate Visual Illusions using Python
(Perception, 2021); pyllusion 1.4, MPL-2.0 (its code is called, not copied).
"""

from __future__ import annotations

import dataclasses
import functools
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from probes.stimuli.illusions import drawing
from probes.stimuli.illusions.drawing import Pixels, Scene
from probes.stimuli.illusions.measure import Measured

VERSION = 1  # bump when a drawing changes: image references (and cached answers) are keyed by it
INDUCERS = ("with", "flipped", "none")


@dataclass(frozen=True)
class Illusion(ABC):
    canvas: int  # side of the square canvas, px
    difference: float  # pyllusion's `difference` (sign: which target is bigger, see `positive`)
    illusion_strength: float  # pyllusion's strength at a positive difference (see module doc)
    inducers: str = "with"  # "with", "flipped" (the design's strength negated) or "none"
    offset_x: int = 0  # the figure's shift on the canvas, px (position jitter)
    offset_y: int = 0
    seed: int = 0  # the jitter draw this stimulus came from (also keeps jittered copies apart)

    family: ClassVar[str]  # e.g. "mueller-lyer"
    pyllusion_class: ClassVar[str]  # e.g. "MullerLyer"
    # The answer a positive difference makes true ("top": the top line is longer) and the other.
    positive: ClassVar[str]
    negative: ClassVar[str]
    # Whether pyllusion draws difference 0 with the inducers it draws for a positive difference.
    zero_is_positive: ClassVar[bool]
    # Whether the strength changes the targets themselves (a tilt) and not only the inducers.
    strength_shapes_targets: ClassVar[bool] = False
    # The two targets are named by place along this axis: "y" (top, bottom) or "x" (left, right).
    target_axis: ClassVar[str]
    # The reflections of the picture ("rows": upside down, "columns": mirror) that exchange which
    # answer is true: the figure then shows the opposite difference under the opposite inducers.
    swapped_by: ClassVar[frozenset[str]]
    # Whether anything but the targets is drawn (the vertical-horizontal figure has only its
    # two lines: its control without inducers is strength 0, the same picture as "with" 0).
    has_inducers: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.inducers not in INDUCERS:
            raise ValueError(f"inducers must be one of {', '.join(INDUCERS)}; got {self.inducers!r}")
        if not 64 <= self.canvas <= 4096:
            raise ValueError(f"canvas must be 64 to 4096 px; got {self.canvas}")

    # --- pyllusion ---------------------------------------------------------------------------

    def pyllusion_strength(self) -> float:
        """pyllusion's `illusion_strength` for this picture (the sign follows the difference)."""
        positive_side = self.difference > 0 or (self.difference == 0 and self.zero_is_positive)
        return float(self.illusion_strength if positive_side else -self.illusion_strength) + 0.0  # no -0.0

    def pyllusion_arguments(self) -> dict[str, Any]:
        """Keyword arguments for pyllusion's class: strength, difference and the family's own."""
        return {"illusion_strength": self.pyllusion_strength(), "difference": float(self.difference)}

    def pyllusion_parameters(self) -> dict[str, Any]:
        """pyllusion's `get_parameters()` for this stimulus (imported on first use: it is slow
        to import, and listing benchmarks must not pay for it)."""
        import pyllusion

        return getattr(pyllusion, self.pyllusion_class)(**self.pyllusion_arguments()).get_parameters()

    def congruence(self) -> str:
        """congruent / incongruent: pyllusion's label (`Illusion_Type`) for these inducers at a
        positive difference, the other one at a negative difference (the same inducers then
        work the other way); neutral at strength 0; n/a at difference 0 (no true difference to
        agree with); none without inducers. Taken at a positive difference because pyllusion's
        own Poggendorff label does not flip with the difference, although its picture does."""
        if self.inducers == "none":
            return "none"
        if self.illusion_strength == 0:
            return "neutral"
        if self.difference == 0:
            return "n/a"
        mirror = dataclasses.replace(self, difference=abs(self.difference))
        label = str(mirror.pyllusion_parameters()["Illusion_Type"]).lower()
        if self.difference > 0:
            return label
        return {"congruent": "incongruent", "incongruent": "congruent"}[label]

    # --- geometry ----------------------------------------------------------------------------

    @property
    def scale(self) -> float:
        return self.canvas / 2

    def px(self, x: float, y: float) -> tuple[float, float]:
        """pyllusion's units (-1..1, y up) to pixels (y down), about the figure's centre; the
        centre sits on a pixel corner so that mirror-image targets rasterise alike."""
        return (self.canvas // 2 + self.offset_x + x * self.scale, self.canvas // 2 + self.offset_y - y * self.scale)

    def segment(self, p: dict[str, Any], prefix: str, width: float = drawing.LINE_WIDTH) -> drawing.Segment:
        """A line from pyllusion's `{prefix}_x1`, `_y1`, `_x2`, `_y2`."""
        start = self.px(float(p[prefix + "_x1"]), float(p[prefix + "_y1"]))
        end = self.px(float(p[prefix + "_x2"]), float(p[prefix + "_y2"]))
        return drawing.Segment(start, end, width)

    @abstractmethod
    def scene(self) -> Scene:
        """Targets (named by place: "top", "left" ...), inducers and view points, in pixels."""

    @classmethod
    @abstractmethod
    def measure_pixels(cls, targets: dict[str, Pixels]) -> Measured:
        """Measure the targets' pixels (keyed as `scene` names them): the family's rule, the
        same for the generator's own targets and for targets found in an image."""

    def target_pixels(self) -> dict[str, Pixels]:
        return _pixels(self)

    def measure(self) -> Measured:
        return self.measure_pixels(self.target_pixels())

    @classmethod
    def target_places(cls) -> tuple[str, str]:
        """The targets' names, first the one nearer the top (or the left)."""
        return ("top", "bottom") if cls.target_axis == "y" else ("left", "right")

    def reflected_targets(self, axis: str) -> dict[str, Pixels]:
        """The targets' pixels in the picture reflected along `axis` ("rows" upside down,
        "columns" mirrored; exactly what `ImageOps.flip` / `mirror` make of `render()`), each
        named by its place in the reflected picture."""
        first, second = self.target_places()
        along = axis == ("rows" if self.target_axis == "y" else "columns")
        renamed = {first: second, second: first} if along else {}
        reflected = {}
        for name, (rows, cols) in self.target_pixels().items():
            if axis == "rows":
                rows = self.canvas - 1 - rows
            elif axis == "columns":
                cols = self.canvas - 1 - cols
            else:
                raise ValueError(f"not a reflection axis: {axis!r}")
            reflected[renamed.get(name, name)] = (rows, cols)
        return reflected

    def measure_reflected(self, axis: str) -> Measured:
        """The family's measurement of the picture reflected along `axis`: its truth as sent."""
        return self.measure_pixels(self.reflected_targets(axis))

    def render(self) -> Image.Image:
        return drawing.render(_scene(self), self.target_pixels(), with_inducers=self.inducers != "none")

    # --- naming --------------------------------------------------------------------------------

    @property
    def ref(self) -> str:
        """Generator, version and every field that changes pixels (the with/flipped label does
        not; whether inducers are drawn does)."""
        values = []
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name == "inducers":
                if value == "none" and self.has_inducers:
                    values.append("inducers=none")
                continue
            values.append(f"{item.name}={value!r}")
        return f"illusion-{self.family}/v{VERSION}:" + ",".join(values)

    def with_changes(self, **changes: Any) -> Illusion:
        return dataclasses.replace(self, **changes)


@functools.lru_cache(maxsize=64)
def _scene(stimulus: Illusion) -> Scene:
    return stimulus.scene()


@functools.lru_cache(maxsize=64)
def _pixels(stimulus: Illusion) -> dict[str, Pixels]:
    scene = _scene(stimulus)
    hidden = scene.occluder  # the same red pixels with or without the occluder drawn
    out = {}
    for name, shape in scene.targets.items():
        rows, cols = drawing.target_pixels(shape, scene.canvas, hidden)
        out[name] = (rows.astype(np.int32), cols.astype(np.int32))
    return out


def view_box(stimulus: Illusion) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) in px of what must stay on the canvas."""
    points = _scene(stimulus).view
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)
