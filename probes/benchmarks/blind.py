"""BlindTest, from "Vision language models are blind" (Rahmanzadehgervi et al., 2024; seed 002).

Generated geometry tasks that are trivial for people. Every stimulus is drawn here from its
parameters, so ground truth is exact and nothing needs downloading.

blind/touching-circles (task 2): two filled circles of equal size. Parameters, as the paper:
diameter 1/4, 1/5, 1/6, 1/7 of the canvas; gap between the perimeters -0.15 to 0.5 times the
diameter in steps of 0.05 (14 values); orientation 90, 0, -45, 45 degrees; canvas 384, 769,
1155 px: 672 images, each asked with both prompts = 1344 items. Ground truth from the gap d:
touching iff d <= 0, overlapping iff d < 0. Chance 50%. Groups: prompt, canvas, diameter, gap,
orientation. Every parameter can be fixed or swept with `--param NAME=V1,V2,...`.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Mapping, Sequence
from fractions import Fraction

from PIL import Image

from probes.registry import BenchmarkError, register
from probes.stimuli.touching_circles import ORIENTATIONS, TwoCircles
from probes.types import AnswerKind, Benchmark, ImageSource, Item

SOURCE = "Rahmanzadehgervi et al., Vision language models are blind (2024)"

TOUCHING_PROMPTS = {
    "touching": "Are the two circles touching each other? Answer with Yes/No.",
    "overlapping": "Are the two circles overlapping? Answer with Yes/No.",
}
TOUCHING_DEFAULTS: dict[str, list] = {
    "canvas": [384, 769, 1155],
    "diameter": [Fraction(1, 4), Fraction(1, 5), Fraction(1, 6), Fraction(1, 7)],
    "gap": [round(-0.15 + 0.05 * i, 2) for i in range(14)],
    "orientation": list(ORIENTATIONS),
    "prompt": list(TOUCHING_PROMPTS),
}
EXAMPLE_SEED_BASE = 1_000_000  # few-shot examples use seeds no test item uses


def _parse_values(name: str, values: Sequence[str]) -> list:
    parsed = []
    for raw in values:
        text = str(raw).strip()
        try:
            if name == "canvas":
                parsed.append(int(text))
            elif name == "diameter":
                parsed.append(Fraction(text).limit_denominator(1000))
            elif name == "gap":
                parsed.append(round(float(text), 4))
            elif name in ("orientation", "prompt"):
                choices = ORIENTATIONS if name == "orientation" else TOUCHING_PROMPTS
                if text not in choices:
                    raise ValueError(f"one of {', '.join(choices)}")
                parsed.append(text)
        except (ValueError, ZeroDivisionError) as exc:
            raise BenchmarkError(f"--param {name}={raw}: not a valid value ({exc})") from None
    return parsed


def _diameter_label(value: Fraction) -> str:
    return f"1/{value.denominator}" if value.numerator == 1 else f"{float(value):.3g}"


@functools.lru_cache(maxsize=32)
def _render(spec: TwoCircles) -> Image.Image:
    # Each image is asked with two prompts; a small cache draws it once for both.
    return spec.render()


class TouchingCircles(Benchmark):
    id = "blind/touching-circles"
    title = "Two circles: touching or overlapping?"
    source = SOURCE
    chance = 50.0

    def __init__(self, params: Mapping[str, Sequence[str]] | None = None):
        super().__init__()
        unknown = set(params or {}) - set(TOUCHING_DEFAULTS)
        if unknown:
            raise BenchmarkError(
                f"{self.id} has no parameter {', '.join(sorted(unknown))}; it has {', '.join(TOUCHING_DEFAULTS)}"
            )
        self.grid = {name: _parse_values(name, params[name]) if params and name in params else default
                     for name, default in TOUCHING_DEFAULTS.items()}  # fmt: skip
        try:
            for canvas, diameter, gap, orientation in self._image_grid():
                TwoCircles(canvas, float(diameter), gap, orientation)
        except ValueError as exc:
            raise BenchmarkError(f"{self.id}: {exc}") from None

    def _image_grid(self):
        grid = self.grid
        return itertools.product(grid["canvas"], grid["diameter"], grid["gap"], grid["orientation"])

    def size_note(self) -> str:
        images = len(list(self._image_grid()))
        return f"{images * len(self.grid['prompt'])} items ({images} images x {len(self.grid['prompt'])} prompts)"

    def load_items(self) -> list[Item]:
        items = []
        for canvas, diameter, gap, orientation in self._image_grid():
            spec = TwoCircles(canvas, float(diameter), gap, orientation)
            for prompt in self.grid["prompt"]:
                image_id = f"c{canvas}_{orientation}_d{_diameter_label(diameter).replace('/', '-')}_g{gap:+.2f}"
                items.append(self._item(spec, prompt, f"{image_id}_{prompt}", diameter))
        return items

    def load_examples(self) -> list[Item]:
        """Per prompt, 16 examples with continuous random parameters (never on the test grid),
        alternating yes/no answers so four examples hold two of each."""
        examples = []
        for prompt in TOUCHING_PROMPTS:
            for index in range(16):
                seed = EXAMPLE_SEED_BASE + index
                rng = random.Random(seed)
                wants_yes = index % 4 in (0, 3)
                gap = rng.uniform(-0.15, -0.03) if wants_yes else rng.uniform(0.03, 0.5)
                spec = TwoCircles(
                    rng.choice([384, 769, 1155]),
                    rng.uniform(1 / 7, 1 / 4),
                    round(gap, 4),
                    rng.choice(list(ORIENTATIONS)),
                )
                examples.append(self._item(spec, prompt, f"example-{seed}_{prompt}", None, seed=seed))
        return examples

    def _item(
        self, spec: TwoCircles, prompt: str, item_id: str, diameter: Fraction | None, seed: int | None = None
    ) -> Item:
        answer = spec.touching if prompt == "touching" else spec.overlapping
        params = {"canvas": spec.canvas, "diameter": spec.diameter, "gap": spec.gap, "orientation": spec.orientation}
        return Item(
            benchmark=self.id,
            id=item_id,
            question=TOUCHING_PROMPTS[prompt],
            images=(ImageSource(spec.ref, functools.partial(_render, spec)),),
            kind=AnswerKind.YES_NO,
            target="yes" if answer else "no",
            groups={
                "prompt": prompt,
                "canvas": str(spec.canvas),
                "diameter": _diameter_label(diameter) if diameter is not None else f"{spec.diameter:.3f}",
                "gap": f"{spec.gap:+.2f}",
                "orientation": spec.orientation,
            },
            params={**params, "prompt": prompt},
            seed=seed,
            reasoning=_explain(spec, prompt),
        )


def _explain(spec: TwoCircles, prompt: str) -> str:
    """A worked answer from the geometry, for chain-of-thought examples."""
    gap_px = abs(spec.gap) * spec.diameter * spec.canvas
    if spec.gap < 0:
        seen = f"The blue and the magenta circle overlap: their edges cross by about {gap_px:.0f} pixels."
    elif spec.gap == 0:
        seen = "The blue and the magenta circle meet at exactly one point, without overlapping."
    else:
        seen = f"There is a gap of about {gap_px:.0f} pixels of white between the blue and the magenta circle."
    verdict = {
        ("touching", True): "So they are touching.",
        ("touching", False): "So they are not touching.",
        ("overlapping", True): "So they are overlapping.",
        ("overlapping", False): "So they are not overlapping.",
    }[(prompt, spec.touching if prompt == "touching" else spec.overlapping)]
    return f"{seen} {verdict}"


@register("blind/touching-circles")
def touching_circles(data: str | None = None, params: Mapping[str, Sequence[str]] | None = None) -> Benchmark:
    if data is not None:
        raise BenchmarkError(
            "blind/touching-circles is generated here; --data is not used (yet: see the BlindTest issue)"
        )
    return TouchingCircles(params)
