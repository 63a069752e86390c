"""blind/subway-paths (BlindTest task 7): how many single-coloured paths join two stations of a
simplified subway map?

Four stations A (top), B (right), C (bottom), D (left) on a white canvas split by an invisible
18 x 18 grid; every station has exactly N path ends; each path has its own colour and is drawn
by a depth-first search over grid nodes (moves N/S/E/W) from a start point one cell
(canvas / 18 px) from its station to a start point of another station. Paths may cross, only
straight and at right angles, never running along each other (see
`probes.stimuli.subway_paths`).

Parameters (each can be fixed or swept with `--param NAME=V1,V2`):
- `paths`: N, path ends per station, 1, 2, 3 (a group; the paper's table reports by N);
- `canvas`: 512 or 1024 px;
- `thickness`: line width 10 or 20 points on the authors' 9000 px figure (4 / 8 px at 512 px,
  8 / 16 px at 1024 px): the paper's figure 14 shows both, and its authors' generator draws
  every map at both;
- `pair`: the two stations asked about, `auto` (default: drawn per map from the seed) or a
  fixed pair such as `A-C` (the paper's prompts name A and C; its figures also ask A to D);
- `maps`: maps per N, 15;
- `seed`: draws a different set of maps (default 0; `generate --seed`).

Default design: 3 N x 15 maps, each drawn at 2 canvases x 2 thicknesses = 180 images, as the
paper's 180 (the authors' generator makes 15 maps per N and draws each at 512 and 1024 px with
widths 10 and 20), each asked with both prompts = 360 items. The four renderings of a map share
its paths and its question.
The asked pair and its answer: map k of a cell is drawn so that the asked pair is joined by
k mod (N + 1) paths (the pair's matching gets that many; the other two matchings share the rest
at random), so every answer 0..N occurs evenly for each N: over the 180 images, answer 0 on 68,
1 on 64, 2 on 36, 3 on 12 (3 paths between two stations needs N = 3). With `pair=auto` the pair
is one of the six, drawn per map from the seed; it is written alphabetically ("from A to C").
Ground truth: the number of drawn paths whose two ends are the asked stations. Answers 0..3,
chance 25%. Groups: paths (N), canvas, thickness, pair, prompt.
Source: Rahmanzadehgervi et al., Vision language models are blind (2024), seed 002.
"""

from __future__ import annotations

import itertools
from typing import Any

from probes.benchmarks.blind import SOURCE, BlindTruth
from probes.benchmarks.blind.released import released
from probes.benchmarks.generated import EXAMPLE_SEED_BASE, GeneratedBenchmark, Param, format_answer
from probes.core.registry import register
from probes.core.types import AnswerKind, Item
from probes.stimuli.subway_paths import PAIRS, PALETTE_NAMES, SubwayMap

PAIR_CHOICES = ("auto", *PAIRS)


def _pair(text: str) -> str:
    """`auto`, or two stations in any order and spelling ("c-a", "AC") as "A-C"."""
    if text.lower() == "auto":
        return "auto"
    return "-".join(sorted(text.upper().replace("-", "").replace(" ", "")))


class SubwayPaths(BlindTruth, GeneratedBenchmark):
    id = "blind/subway-paths"
    title = "Subway map: how many single-coloured paths join two stations?"
    source = SOURCE
    chance = 25.0
    kind = AnswerKind.NUMBER
    told_apart_in_grey = (
        "each path can be followed from end to end without its colour: paths cross only straight on and at right "
        "angles, and never run along or turn on one another (`probes.stimuli.subway_paths.check_routes`)"
    )
    # Verbatim, asking about A and C; question() puts in each map's pair.
    prompts = {
        "how_many": "How many single-colored paths go from A to C? Answer with a number in curly brackets, e.g., {3}",
        "count": "Count the one-colored routes that go from A to C. Answer with a number in curly brackets, e.g., {3}.",
    }
    params = {
        "paths": Param((1, 2, 3), int, choices=(1, 2, 3)),
        "canvas": Param((512, 1024), int, pixels=True),
        "thickness": Param((10, 20), int, minimum=1, maximum=200),
        "pair": Param(("auto",), _pair, choices=PAIR_CHOICES),
        "maps": Param((15,), int, multiplies=True),
        "seed": Param((0,), int),
    }

    def design(self) -> list[SubwayMap]:
        grid = self.grid
        if len(grid["maps"]) != 1 or grid["maps"][0] < 1:
            raise ValueError("maps is the number of maps per N: give one positive number")
        return [
            SubwayMap(canvas, paths, thickness, seed, index, pair)
            for seed, paths, pair, index, canvas, thickness in itertools.product(
                grid["seed"], grid["paths"], grid["pair"], range(grid["maps"][0]), grid["canvas"], grid["thickness"]
            )
        ]

    def example_design(self) -> list[SubwayMap]:
        """16 maps from seeds no test item uses, their answers cycling 0, 1, 2, 3 (so any four
        examples hold each answer once), N large enough for the answer."""
        examples = []
        for index in range(16):
            answer = index % 4
            paths = max(1, answer, (1, 2, 3, 3)[index // 4 % 4])
            # Map k of a cell has answer k mod (N + 1): pick the first k with that answer.
            examples.append(
                SubwayMap((512, 1024)[index % 2], paths, (10, 20)[index // 2 % 2], EXAMPLE_SEED_BASE + index, answer)
            )
        return examples

    def stimulus_params(self, stimulus: SubwayMap) -> dict[str, Any]:
        return {
            "paths": stimulus.paths,
            "canvas": stimulus.canvas,
            "thickness": stimulus.thickness,
            "pair": stimulus.asked,
            "seed": stimulus.seed,
            "map": stimulus.index,
        }

    def question(self, stimulus: SubwayMap, prompt: str) -> str:
        start, end = stimulus.asked.split("-")
        return self.prompts[prompt].replace("from A to C", f"from {start} to {end}")

    def truth(self, stimulus: SubwayMap, prompt: str) -> int:
        return stimulus.count()

    def answer_space(self, stimulus: SubwayMap, prompt: str) -> tuple[str, ...]:
        question = self.question(stimulus, prompt)
        return tuple(format_answer(question, self.kind, n) for n in range(4))

    def reasoning(self, stimulus: SubwayMap, prompt: str) -> str:
        start, end = stimulus.asked.split("-")
        routes = stimulus.routes()
        names = [PALETTE_NAMES[i % len(PALETTE_NAMES)] for i in range(len(routes))]
        leaving = [
            f"the {name} one goes to {route.end if route.start == start else route.start}"
            for name, route in zip(names, routes, strict=True)
            if start in (route.start, route.end)
        ]
        joined = [name for name, route in zip(names, routes, strict=True) if route.pair == stimulus.asked]
        found = f"{len(joined)} ({', '.join(joined)})" if joined else "none"
        # "colored" as the prompt spells it; "1 path goes", "2 paths go" (the text is part of
        # the prompt a model sees, so it must read as a person writes).
        paths = "path goes" if len(joined) == 1 else "paths go"
        return (
            f"Following each colored path from station {start}: {'; '.join(leaving)}. "
            f"Of those, the paths that end at {end}: {found}. "
            f"So {len(joined)} single-colored {paths} from {start} to {end}."
        )

    def select_examples(self, item: Item, k: int) -> list[Item]:
        """Examples asked with the same wording (the pair may differ), in pool order, whose
        answers cycle 0..3."""
        pool = [e for e in self.examples() if e.id != item.id and e.groups["prompt"] == item.groups["prompt"]]
        if len(pool) < k:
            raise ValueError(f"{self.id} has {len(pool)} few-shot examples for this item; {k} asked")
        return pool[:k]


@register("blind/subway-paths", generated=SubwayPaths)
def subway_paths(data: str | None = None, params=None):
    if data is not None:
        return released(SubwayPaths.id, data, SubwayPaths, params)
    return SubwayPaths(params)
