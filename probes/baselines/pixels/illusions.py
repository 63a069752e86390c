"""baseline/pixels on illusion/*: the geometry-only observer, which measures the red targets and
is never fooled (its point of subjective equality is 0 whatever the inducers).

It reads only the picture and the options it is shown: the red pixels are split into connected
blobs, the two blobs are told apart by their place (top/bottom or left/right, as the figure
places its targets), and each figure's own measurement (`probes.stimuli.illusions`: lengths in
pixels, areas, the gap between two lines, a fitted offset) says which option is true. The
measurement is the same definition the generator labels its items with; what differs is that the
generator knows its targets and this observer has to find them in the image. When the targets
measure equal (within the figure's stated tolerance) it still has to choose: it takes the first
option listed, so that over the counterbalanced option orders its choices split evenly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image

from probes.baselines.pixels.imaging import AnalysisError, colourless, components
from probes.core.truth import grey_of
from probes.stimuli.illusions import FAMILIES, Illusion
from probes.stimuli.illusions.measure import MeasureError

PREFIX = "illusion/"
SPECK = 0.02  # red blobs under this share of the largest are noise (a resized image's fringe)
RED_GREY = grey_of((255, 0, 0))  # 76: far from the black (0), grey (128) and white (255) around it
GREY_TOLERANCE = 12  # a little rounding of a re-saved grey copy keeps the targets, and brings in nothing else


def figure(benchmark_id: str) -> type[Illusion]:
    family = benchmark_id.removeprefix(PREFIX)
    if not benchmark_id.startswith(PREFIX) or family not in FAMILIES:
        raise AnalysisError(f"not an illusion benchmark: {benchmark_id!r} (known: {', '.join(FAMILIES)})")
    return FAMILIES[family]


def red_mask(image: Image.Image) -> np.ndarray:
    """Target pixels: strongly red. Exact on our PNGs (pure red on white, black and grey), and
    tolerant of the blends a resized or compressed copy adds. In a grey copy the targets are
    the pixels of red's own grey, darker than the white ground and the grey occluder, lighter
    than the black inducers: the dark grey lines and discs a person sees there."""
    if not isinstance(image, Image.Image):
        raise AnalysisError(f"expected a picture (a PIL image), got {type(image).__name__}")
    try:
        if colourless(image):
            grey = np.asarray(image.convert("L"), dtype=np.int16)
            return np.abs(grey - RED_GREY) <= GREY_TOLERANCE
        rgb = np.asarray(image.convert("RGB"), dtype=np.int16)
    except OSError as exc:
        raise AnalysisError(f"the picture cannot be decoded: {exc}") from None
    red, green, blue = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return (red >= 150) & (red - np.maximum(green, blue) >= 110)


def find_targets(cls: type[Illusion], image: Image.Image) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The two red targets' pixels, named as the figure names them."""
    mask = red_mask(image)
    found = components(mask, diagonal=True)
    if not len(found):
        raise AnalysisError("there is no red target in the picture")
    big = [i for i in range(len(found)) if found.area[i] >= SPECK * found.area[0]]
    if len(big) != 2:
        raise AnalysisError(f"expected two red targets, found {len(big)} red shapes")
    labels = found.labels(mask.shape)
    pixels = [np.nonzero(labels == index + 1) for index in big]
    # The two targets are told apart by their vertical or horizontal centre, as the figure names them.
    coordinate = 0 if cls.target_axis == "y" else 1
    first, second = sorted(pixels, key=lambda p: float(p[coordinate].mean()))
    names = cls.target_places()
    return {names[0]: first, names[1]: second}


def answer(benchmark_id: str, question: str, options: Sequence[str], image: Image.Image) -> tuple[str, dict[str, Any]]:
    """The reply (an option's text, as shown) to a two-alternative question about `image`, and
    what was measured. AnalysisError when the picture holds no two red targets to measure."""
    cls = figure(benchmark_id)
    chosen = {cls.positive: _option(options, cls.positive), cls.negative: _option(options, cls.negative)}
    try:
        measured = cls.measure_pixels(find_targets(cls, image))
    except MeasureError as exc:
        raise AnalysisError(f"the red targets cannot be measured: {exc}") from None
    favours = measured.favours
    if favours == "equal":
        reply = options[0]  # the tie rule: the first option listed (orders are counterbalanced)
    else:
        reply = options[chosen[cls.positive if favours == "positive" else cls.negative]]
    return reply, {"figure": cls.family, **measured.as_params(), "choice": reply}


def _option(options: Sequence[str], word: str) -> int:
    hits = [i for i, text in enumerate(options) if re.search(rf"\b{word}\b", text, re.IGNORECASE)]
    if len(hits) != 1:
        raise AnalysisError(f"the options {list(options)} do not name {word!r} exactly once")
    return hits[0]
