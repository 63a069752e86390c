"""The named designs of the illusion benchmarks: which differences, strengths and sizes to draw.

`illusion-game` (the default) is series 1 of the Illusion Game (Makowski et al., Scientific
Reports 2023, study 2; stimuli made by RealityBending/IllusionGameValidation
`study2/make_stimuli.py`): per figure, 15 strengths spaced evenly in [-S, S] and 16 differences
(8 magnitudes, square- or cube-root spaced, times two signs), split into two series with
alternating values. Series 1 holds the 7 strengths at odd positions (3 congruent, 0, 3
incongruent) x the 8 differences at alternate magnitudes; `illusion-game-2` is series 2 (the 8
other strengths plus 0, x the other 8 differences). Ebbinghaus and Delboeuf were drawn with
`distance=0.9`.

`vlmbias` is the illusion domain of VLMBias (Vo et al. 2025, "Vision Language Models are
Biased", anvo25/vlms-are-biased `generators/optical_illusion_generator.py`, MIT): equal targets
at six strengths of both signs, and unequal ones at two or three strengths x three differences,
each with its mirror (strength and difference both negated, which is the same inducers around
the other target); the vertical-horizontal figure varies `size_min` at pyllusion's default
strength 0. VLMBias has no Delboeuf figure.

Strengths here are magnitudes: the `inducers` parameter draws each with its polarity ("with"),
the opposite one ("flipped"), or no inducers ("none").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Block:
    """A full product of differences x strengths (x any fixed extras such as `size_min`)."""

    differences: tuple[float, ...]
    strengths: tuple[float, ...]
    extras: dict[str, tuple[float, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class GameLevels:
    strength: float  # S: strengths span [-S, S]
    smallest: float  # difference magnitudes from here ...
    largest: float  # ... to here
    root: int  # 2: square-root spacing, 3: cube-root
    extras: dict[str, float] = field(default_factory=dict)


# From study2/make_stimuli.py of RealityBending/IllusionGameValidation.
ILLUSION_GAME = {
    "mueller-lyer": GameLevels(49, 0.04, 0.46, 3),
    "ponzo": GameLevels(25.2, 0.04, 0.46, 3),
    "ebbinghaus": GameLevels(2.03, 0.07, 0.7, 3, {"distance": 0.9}),
    "delboeuf": GameLevels(2.17, 0.07, 0.7, 3, {"distance": 0.9}),
    "vertical-horizontal": GameLevels(66.5, 0.03, 0.24, 2),
    "zoellner": GameLevels(77, 0.15, 4.15, 3),
    "poggendorff": GameLevels(44.8, 0.02, 0.3, 3),
}


def _magnitudes(levels: GameLevels) -> np.ndarray:
    root = levels.root
    return np.linspace(levels.smallest ** (1 / root), levels.largest ** (1 / root), 8) ** root


def game_differences(family: str, series: int) -> tuple[float, ...]:
    """The 8 signed differences of one series, smallest first."""
    x = _magnitudes(ILLUSION_GAME[family])
    every = np.round(np.concatenate((-x[::-1], x)), 5)
    chosen = np.concatenate((every[0:8:2], every[9::2])) if series == 1 else np.concatenate((every[1:8:2], every[8::2]))
    return tuple(float(v) for v in chosen)


def game_strengths(family: str, series: int) -> tuple[float, ...]:
    """The strength magnitudes of one series, strongest first (what a preview shows first):
    series 1's 7 signed strengths are these 4 with and without the flip."""
    every = np.round(np.linspace(-ILLUSION_GAME[family].strength, ILLUSION_GAME[family].strength, 15), 5)
    chosen = every[1:-1:2] if series == 1 else np.concatenate((every[0::2], [0.0]))
    return tuple(sorted({abs(float(v)) for v in chosen}, reverse=True))


def illusion_game(family: str, series: int = 1) -> tuple[Block, ...]:
    extras = {name: (value,) for name, value in ILLUSION_GAME[family].extras.items()}
    return (Block(game_differences(family, series), game_strengths(family, series), extras),)


@dataclass(frozen=True)
class BiasLevels:
    equal_strengths: tuple[float, ...]
    unequal_strengths: tuple[float, ...]
    differences: tuple[float, ...]


# From generators/optical_illusion_generator.py of anvo25/vlms-are-biased.
VLMBIAS = {
    "ebbinghaus": BiasLevels((3, 4, 5, 6, 7, 8), (3, 5), (0.5, 0.6, 0.7)),
    "mueller-lyer": BiasLevels((30, 35, 40, 45, 50, 55), (30, 50), (0.3, 0.4, 0.5)),
    "ponzo": BiasLevels((15, 17, 19, 21, 23, 25), (15, 18), (0.15, 0.2, 0.25)),
    "zoellner": BiasLevels((50, 55, 60, 65, 70, 75), (60, 75), (2, 2.5, 3)),
    "poggendorff": BiasLevels((30, 35, 40, 45, 50, 55), (40, 45, 50), (0.1, 0.2)),
}
# The vertical-horizontal figure varies the shorter line instead (strength 0, positive differences).
VLMBIAS_VERTICAL_HORIZONTAL = (
    Block((0.0,), (0.0,), {"size_min": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)}),
    Block((0.3, 0.4, 0.5), (0.0,), {"size_min": (0.5, 1.0)}),
)


def vlmbias(family: str) -> tuple[Block, ...]:
    if family == "vertical-horizontal":
        return VLMBIAS_VERTICAL_HORIZONTAL
    if family not in VLMBIAS:
        raise ValueError(f"VLMBias has no {family} figure; use design=illusion-game")
    levels = VLMBIAS[family]
    unequal = tuple(sorted({sign * float(d) for d in levels.differences for sign in (-1, 1)}))
    return (
        Block((0.0,), tuple(float(s) for s in levels.equal_strengths)),
        Block(unequal, tuple(float(s) for s in levels.unequal_strengths)),
    )


def designs(family: str) -> dict[str, tuple[Block, ...]]:
    """Every named design this family has."""
    named = {"illusion-game": illusion_game(family, 1), "illusion-game-2": illusion_game(family, 2)}
    if family in VLMBIAS or family == "vertical-horizontal":
        named["vlmbias"] = vlmbias(family)
    return named
