"""Grayscale (issue 34): one rule for every item, and baseline/pixels answers what a person could.

- An item whose words name a colour is ungraded in grayscale, with the reason, unless its family
  drew the picture and declares how what the words name by colour is still told apart in grey
  (`told_apart_in_grey`); then its truth stands.
- The declarations hold in the pixels: in a grey copy of an illusion the targets are exactly the
  pixels of red's grey; BlindTest's two lines are two greys.
- The geometry-only observer answers every generated family in grayscale, right on every graded
  item, with no errors: the illusions' targets found by their grey, the two lines by theirs, the
  subway paths followed through their crossings, the circled letter read under a grey oval.
"""

from __future__ import annotations

import asyncio
import json
import random

import numpy as np
import pytest
from datasets import Dataset, Features, Value
from datasets import Image as ImageFeature

from probes.asking import perturb
from probes.benchmarks.illusion.common import EQUAL
from probes.core.registry import generated_families, get_benchmark
from probes.core.truth import COLOUR_WORDS, grey_of
from probes.core.types import Item, Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from probes.stimuli.illusions import FAMILIES
from probes.stimuli.line_intersections import BLUE, RED, LinePlot
from tests.conftest import shapes_image

SAMPLE = 16  # items per family


def sample(items: list[Item], n: int, seed: int = 34) -> list[Item]:
    return random.Random(seed).sample(items, min(n, len(items)))


def test_every_generated_family_is_graded_in_grey_where_its_words_name_a_colour_only_if_it_says_why():
    for benchmark_id in generated_families():
        benchmark = get_benchmark(benchmark_id)
        for item in sample(benchmark.items(), 40):
            sent = perturb.apply(benchmark, item, "grayscale")
            if item.target is None:
                continue
            names_a_colour = any(COLOUR_WORDS.search(text) for text in (item.question, *item.options))
            if names_a_colour and not benchmark.told_apart_in_grey:
                assert sent.target is None and "in grayscale" in sent.ungraded_because, (benchmark_id, item.id)
            else:
                assert sent.target == item.target and sent.ungraded_because is None, (benchmark_id, item.id)


@pytest.mark.parametrize("benchmark_id", ["illusion/ponzo", "blind/line-intersections", "blind/subway-paths"])
def test_the_families_that_name_a_colour_declare_how_it_is_told_apart(benchmark_id):
    benchmark = get_benchmark(benchmark_id)
    assert any(COLOUR_WORDS.search(item.question) for item in benchmark.items()[:4])
    assert benchmark.told_apart_in_grey


FEATURES = Features({"task": Value("string"), "image": ImageFeature(), "prompt": Value("string"),
                     "groundtruth": Value("string"), "metadata": Value("string")})  # fmt: skip


def test_the_papers_release_declares_nothing_so_its_colour_questions_are_ungraded_in_grey(tmp_path):
    """Pictures we did not draw: the words rule, as for any other item."""
    rows = {
        "task": ["Line Plot Intersections", "Circled Letter", "Circled Letter"],
        "image": [shapes_image("circle")] * 3,
        "prompt": [
            "How many times do the blue and red lines touch each other? Answer with a number in curly brackets, e.g., {5}.",
            "Which character is being highlighted with a red oval?",
            "Which letter is being circled?",
        ],
        "groundtruth": ["{1}", "e", "e"],
        "metadata": ["{}"] * 3,
    }
    folder = tmp_path / "vlmsareblind"
    (folder / "data").mkdir(parents=True)
    Dataset.from_dict(rows, features=FEATURES).to_parquet(str(folder / "data" / "valid-00000-of-00001.parquet"))
    lines = get_benchmark("blind/line-intersections", data=str(folder))
    [line] = lines.items()
    grey = perturb.apply(lines, line, "grayscale")
    assert grey.target is None and grey.ungraded_because == "truth unknown in grayscale: the item says 'blue'"
    letters = get_benchmark("blind/circled-letter", data=str(folder))
    highlighted, circled = letters.items()
    assert perturb.apply(letters, highlighted, "grayscale").ungraded_because.endswith("says 'red'")
    assert perturb.apply(letters, circled, "grayscale").target == "e"  # names no colour


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_in_a_grey_illusion_the_targets_are_exactly_the_pixels_of_reds_grey(family):
    benchmark = get_benchmark(f"illusion/{family}")
    for item in sample(benchmark.items(), 6):
        colour = np.asarray(item.images[0].load().convert("RGB"), dtype=np.int16)
        grey = np.asarray(perturb.images(item, "grayscale")[0].load(), dtype=np.int16)
        red = (colour[..., 0] == 255) & (colour[..., 1] == 0) & (colour[..., 2] == 0)
        assert red.any() and np.array_equal(grey == grey_of((255, 0, 0)), red), item.id


def test_the_two_lines_are_two_greys():
    assert abs(grey_of(BLUE) - grey_of(RED)) >= 40
    plot = LinePlot(blue=(0.2, 0.8, 0.2), red=(0.8, 0.2, 0.8), thickness=2, resolution=384)
    grey = np.asarray(plot.render().convert("L"))
    assert {grey_of(BLUE), grey_of(RED)} <= set(np.unique(grey).tolist())


def _grey_run(benchmark_id: str, items: list[Item], tmp_path):
    benchmark = get_benchmark(benchmark_id)
    with Store(tmp_path / "results.sqlite") as store:
        plan = RunPlan(benchmark, items, [create("baseline/pixels")], perturbation="grayscale")
        return asyncio.run(run(plan, store))


@pytest.mark.parametrize("benchmark_id", sorted(generated_families()))
def test_the_geometry_only_observer_answers_every_generated_family_in_grey(benchmark_id, tmp_path):
    items = sample(get_benchmark(benchmark_id).items(), SAMPLE)
    results = _grey_run(benchmark_id, items, tmp_path)
    assert len(results) == len(items)
    assert all(r.status is Status.ANSWERED for r in results), [r.error for r in results if r.error][:3]
    graded = [r for r in results if r.correct is not None]
    ungraded = [r for r in results if r.correct is None]
    assert graded and all(r.correct for r in graded), [(r.item_id, r.reply) for r in graded if not r.correct]
    # Ungraded only where no option is right (illusion targets that measure equal), never for grey.
    assert all(r.ungraded == EQUAL for r in ungraded), [r.ungraded for r in ungraded]


def test_ponzo_in_grey_from_the_command_line(tmp_path):
    """The issue's command: answers, no errors."""
    from tests.conftest import run_cli

    store = str(tmp_path / "r.sqlite")
    done = run_cli("run", "illusion/ponzo", "--perturb", "grayscale", "--model", "baseline/pixels", "--limit", "30",
                   "--store", store)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(run_cli("report", "--store", store, "--format", "json").stdout)
    [row] = [r for r in rows if r.get("source") == "measured" and r["group"] == "overall"]
    assert row["perturbation"] == "grayscale" and row["errors"] == 0 and row["n"] + row["ungraded"] == 30
    assert row["accuracy"] == 100.0
