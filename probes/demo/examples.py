"""The Probe tab's Examples: striking items across the families, each one click from the stage.

People find each of these trivial and models often do not: two circles that almost touch, lines
that cross twice, rings that interlock, squares in squares, a circled letter, a table's rows, a
subway map, and two illusions (the lines and discs are what differs, the inducers mislead); plus
one of our own pictures asked as an upload would be.

An Example names a generated stimulus by the parameters it fixes (the rest drawn from the paper's
values with the seed: `generated_choice`) or an image under assets/ with its question.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError
from probes.core.params import parse_params, single_values
from probes.core.registry import generated_families, get_benchmark
from probes.core.types import Item

ASSETS = Path(__file__).resolve().parents[2] / "assets"


@dataclass(frozen=True)
class Example:
    title: str
    benchmark: str = ""
    params: str = ""  # NAME=VALUE pairs fixing the stimulus (the rest drawn with the seed)
    seed: int = 0
    upload: str = ""  # an image under assets/, asked as an upload
    question: str = ""
    answer: str = ""

    @property
    def upload_path(self) -> Path:
        return ASSETS / self.upload


EXAMPLES = (
    Example("Two circles that almost touch", "blind/touching-circles",
            "gap=0.05 diameter=1/5 canvas=769 orientation=horizontal prompt=touching"),
    Example("How often do the lines cross?", "blind/line-intersections", "intersections=2 thickness=2 resolution=768"),
    Example("Count the interlocking rings", "blind/olympic-circles", "count=7 canvas=769 colour=colored"),
    Example("Squares in squares", "blind/nested-squares", "depth=4 thickness=3"),
    Example("Which letter is circled?", "blind/circled-letter", "word=Subdermatoglyphic prompt=circled", seed=3),
    Example("Rows and columns of a table", "blind/grid-count", "grid=text n=6 shape=wide canvas=1250"),
    Example("Paths on a subway map", "blind/subway-paths", "paths=3 canvas=512 thickness=10"),
    Example("Mueller-Lyer: which line is longer?", "illusion/mueller-lyer",
            "difference=0.06565 illusion_strength=42 inducers=with canvas=768"),
    Example("Ebbinghaus: which disc is bigger?", "illusion/ebbinghaus",
            "difference=0.11066 illusion_strength=1.74 inducers=with canvas=768"),
    Example("Your own picture (an upload)", upload="samples/shitsukan/glass.png",
            question="Is the object in the picture transparent? Answer yes or no.", answer="yes"),
)  # fmt: skip
BY_TITLE = {example.title: example for example in EXAMPLES}
FIRST = EXAMPLES[0]

Build = Callable[[str, dict[str, list[str]]], Benchmark]  # (benchmark id, params) -> the benchmark


def _build(benchmark_id: str, params: dict[str, list[str]]) -> Benchmark:
    return get_benchmark(benchmark_id, params=params)


def _plain(value: Any) -> Any:
    if hasattr(value, "denominator") and not isinstance(value, int):
        return f"{value.numerator}/{value.denominator}"
    return value


def generated_choice(task: str, params_text: str, seed: int, build: Build = _build) -> tuple[dict[str, list[str]], int]:
    """One stimulus of `task`: (the parameters, one value each, and the item's index among the
    items they design). The parameters given are fixed; the others are drawn from the paper's
    values with the seed."""
    fixed = single_values(parse_params(params_text))
    families = generated_families()
    if task not in families:
        raise BenchmarkError(f"{task!r} is not a generated task; choose one of {', '.join(families)}")
    known = families[task].params
    unknown = set(fixed) - set(known) - {"prompt"}
    if unknown:
        raise BenchmarkError(f"{task} has no parameter {', '.join(sorted(unknown))}; it has {', '.join(known)}")
    rng = random.Random(f"{task}:{seed}")
    chosen = {
        name: [fixed[name]] if name in fixed else [str(_plain(rng.choice(spec.default)))]
        for name, spec in known.items()
    }
    if "seed" in known and "seed" not in fixed:
        chosen["seed"] = [str(seed)]
    if "prompt" in fixed:
        chosen["prompt"] = [fixed["prompt"]]
    items = build(task, chosen).items()
    return chosen, rng.randrange(len(items))


def example_choice(example: Example, build: Build = _build) -> tuple[dict[str, list[str]], int]:
    """A generated Example's parameters and item index: every parameter it names kept, the index
    picking the prompt it names, if any."""
    params, _ = generated_choice(example.benchmark, example.params, example.seed, build)
    items = build(example.benchmark, params).items()
    wanted = parse_params(example.params).get("prompt", [None])[0]
    index = next((i for i, item in enumerate(items) if wanted is None or item.params.get("prompt") == wanted), 0)
    return params, index


def example_item(example: Example) -> tuple[Benchmark, Item]:
    """The Example as the Probe tab shows it (the same item, so the same requests)."""
    if example.upload:
        from probes.benchmarks.custom import UploadSet

        benchmark = UploadSet.from_files([example.upload_path], example.question, [], example.answer)
        return benchmark, benchmark.items()[0]
    params, index = example_choice(example)
    benchmark = _build(example.benchmark, params)
    return benchmark, benchmark.items()[index]
