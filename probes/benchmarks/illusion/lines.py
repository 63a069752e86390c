"""What the two figures of two red lines one above the other share (illusion/mueller-lyer and
illusion/ponzo): the question and its options, the extra parameters, the sentence that says what
was measured, and the factory that registers each (a generated figure reads no data folder).
Each figure's module keeps only what is its own: id, title, the stimulus it draws, its docstring."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from probes.benchmarks.generated import Param
from probes.benchmarks.illusion import SOURCE
from probes.benchmarks.illusion.common import IllusionBenchmark, illusion_params
from probes.core.errors import BenchmarkError
from probes.stimuli.illusions.measure import Measured


class TwoLines(IllusionBenchmark):
    """Which of two red lines, one above the other, is longer? (A figure sets id, title, stimulus, params.)"""

    source = SOURCE
    options = ("Top", "Bottom")
    extras = ("size_min", "distance")
    prompts = {
        "which-longer": "Which red line is longer: the top one or the bottom one? Answer with the letter of your choice.",
        "longer-line": "Compare the two horizontal red lines. Which of them is longer? Answer with the letter of your choice.",
    }

    def describe(self, measured: Measured) -> str:
        v = measured.values
        return f"The top red line is {v['top_px']:.0f} pixels long and the bottom one {v['bottom_px']:.0f} pixels."


def line_params(family: str) -> dict[str, Param]:
    """The family's parameters: the illusions' own, with the lines' size and distance."""
    return illusion_params(
        family,
        {
            "size_min": Param((0.5,), float, minimum=0.01, maximum=2),
            "distance": Param((1.0,), float, minimum=0.01, maximum=3),
        },
    )


def generated_only(figure: type[TwoLines]) -> Any:
    """The factory `register` takes for `figure`: its items, never a data folder."""

    def make(data: str | None = None, params: Mapping[str, Sequence[str]] | None = None) -> TwoLines:
        if data is not None:
            raise BenchmarkError(f"{figure.id} is generated: it reads no --data")
        return figure(params)

    return make
