"""Truth under every condition: a transformed picture is graded against the truth of the picture
sent (issue 21).

- Metamorphic: the geometry-only observer (baseline/pixels, which measures the picture it is
  given) scores the same upside down and mirrored as upright, on every generated family it
  answers; counts stay counted.
- The stored target of a flipped or mirrored illusion item names the place where the larger
  target is drawn in the picture sent, measured from those pixels by a segmentation of the test's
  own (not the generator's target lists, nor the observer's).
- Items whose truth a transform cannot keep: ungraded, with the reason, never graded against the
  upright answer.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3

import numpy as np
import pytest
from scipy import ndimage

from probes.asking import perturb
from probes.benchmarks.illusion.designs import designs
from probes.core.registry import generated_families, get_benchmark
from probes.core.types import AnswerKind, Item, Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from probes.running.store_schema import REGRADE
from probes.stimuli.illusions import FAMILIES
from tests.conftest import make_folder, shapes_image
from tests.support.older_stores import as_version_3

REFLECTIONS = ("flip-vertical", "flip-horizontal")
ILLUSIONS = [f"illusion/{family}" for family in FAMILIES]
BLIND_ANSWERED = [
    "blind/touching-circles", "blind/line-intersections", "blind/nested-squares", "blind/grid-count",
    "blind/olympic-circles", "blind/olympic-pentagons", "blind/subway-paths",
]  # fmt: skip
SAMPLE = 36  # items per family and condition


def sample(items: list[Item], n: int, seed: int = 7) -> list[Item]:
    graded = [item for item in items if item.target is not None]
    return random.Random(seed).sample(graded, min(n, len(graded)))


def accuracy(results) -> float:
    graded = [r for r in results if r.correct is not None]
    assert graded and all(r.status is not Status.ERROR for r in results), [r.error for r in results][:3]
    return 100 * sum(r.correct for r in graded) / len(graded)


def test_every_answered_generated_family_is_covered():
    """A new generated family must join the metamorphic test (or be known not to be answered)."""
    assert set(generated_families()) == {*ILLUSIONS, *BLIND_ANSWERED, "blind/circled-letter"}


@pytest.mark.parametrize("benchmark_id", BLIND_ANSWERED + ILLUSIONS)
def test_the_geometry_only_observer_scores_the_same_upside_down_and_mirrored(benchmark_id, tmp_path):
    benchmark = get_benchmark(benchmark_id)
    items = sample(benchmark.items(), SAMPLE)
    pixels = create("baseline/pixels")
    scores = {}
    with Store(tmp_path / "results.sqlite") as store:
        for condition in ("none", *REFLECTIONS):
            plan = RunPlan(benchmark, items, [pixels], perturbation=condition)
            scores[condition] = accuracy(asyncio.run(run(plan, store)))
    assert scores["none"] == 100.0, scores
    assert all(abs(scores[c] - scores["none"]) <= 1.0 for c in REFLECTIONS), scores


@pytest.mark.parametrize("benchmark_id", BLIND_ANSWERED)
def test_counts_stay_counted_under_every_picture_transform(benchmark_id):
    benchmark = get_benchmark(benchmark_id)
    for item in sample(benchmark.items(), 200, seed=3):
        for transform in (*REFLECTIONS, "grayscale", "resize-256"):
            sent = perturb.apply(benchmark, item, transform)
            assert sent.target == item.target and sent.ungraded_because is None


# --- illusions: the truth measured on the picture sent ----------------------------------------


def red_targets(image) -> list[tuple[np.ndarray, np.ndarray]]:
    """The two largest pure-red blobs of a picture, as (rows, columns): the test's own reading."""
    rgb = np.asarray(image.convert("RGB"), dtype=np.int16)
    red = (rgb[..., 0] >= 200) & (rgb[..., 1] <= 60) & (rgb[..., 2] <= 60)
    labels, count = ndimage.label(red, structure=np.ones((3, 3)))
    sizes = ndimage.sum(red, labels, range(1, count + 1))
    biggest = np.argsort(sizes)[::-1][:2] + 1
    return [np.nonzero(labels == label) for label in biggest]


def measured_in_picture(family, image):
    """The family's own rule applied to the red targets found in `image`, named by place."""
    first, second = red_targets(image)
    coordinate = 0 if family.target_axis == "y" else 1
    ordered = sorted((first, second), key=lambda p: float(p[coordinate].mean()))
    names = family.target_places()
    return family.measure_pixels({names[0]: ordered[0], names[1]: ordered[1]})


@pytest.mark.parametrize("benchmark_id", ILLUSIONS)
@pytest.mark.parametrize("transform", REFLECTIONS)
def test_a_reflected_illusion_item_names_where_the_larger_target_is_drawn(benchmark_id, transform):
    family = FAMILIES[benchmark_id.removeprefix("illusion/")]
    # Every design, jittered and centred: every polarity, strength and canvas of the family.
    swapped = 0
    named = list(designs(family.family))
    for params in (None, *({"design": [name], "jitter": ["off"]} for name in named)):
        benchmark = get_benchmark(benchmark_id, params=params)
        for item in sample(benchmark.items(), 12, seed=11):
            sent = perturb.apply(benchmark, item, transform)
            measured = measured_in_picture(family, sent.images[0].load())
            assert measured.favours != "equal"
            chosen = sent.options[sent.target].lower()
            assert chosen == (family.positive if measured.favours == "positive" else family.negative), item.id
            assert sent.params["measured_favours"] == measured.favours
            # The metadata says what the picture sent shows: the difference as drawn there.
            assert (sent.params["difference"] > 0) == (measured.favours == "positive") or sent.params["difference"] == 0
            assert sent.params["congruence"] == item.params["congruence"]
            swapped += sent.target != item.target
            if sent.target != item.target:
                assert sent.params["polarity"] == -item.params["polarity"]
                assert sent.groups["difference"] == item.groups["difference"].replace("+", "*").replace(
                    "-", "+"
                ).replace("*", "-")
    axis = {"flip-vertical": "rows", "flip-horizontal": "columns"}[transform]
    assert (swapped > 0) == (axis in family.swapped_by), (swapped, family.swapped_by)


def test_an_equal_illusion_item_stays_ungraded_when_reflected():
    benchmark = get_benchmark("illusion/mueller-lyer", params={"difference": ["0"], "canvas": ["384"]})
    item = benchmark.items()[0]
    assert item.target is None
    for transform in REFLECTIONS:
        sent = perturb.apply(benchmark, item, transform)
        assert sent.target is None and "equal" in sent.ungraded_because and sent.target_text() == "equal"


def test_the_pixel_observer_upside_down_is_right_on_the_command_line(tmp_path):
    """The issue's own measurement: `run ... --perturb flip-vertical` with baseline/pixels."""
    from tests.conftest import run_cli

    for benchmark_id in ("illusion/mueller-lyer", "illusion/ponzo", "illusion/poggendorff"):
        done = run_cli("run", benchmark_id, "--model", "baseline/pixels", "--limit", "30", "--seed", "1",
                       "--perturb", "flip-vertical", "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
        assert done.returncode == 0, done.stderr
    report = run_cli("report", "--store", str(tmp_path / "s.sqlite"), "--format", "json", "--no-references")
    rows = json.loads(report.stdout)
    assert {(r["benchmark"], r["accuracy"], r["n"]) for r in rows} == {
        ("illusion/mueller-lyer", 100.0, 30), ("illusion/ponzo", 100.0, 30), ("illusion/poggendorff", 100.0, 30)
    }  # fmt: skip


# --- items whose truth a transform may not keep ---------------------------------------------------


@pytest.mark.parametrize(
    ("letter", "transform", "reads"),
    [
        ("b", "flip-horizontal", "d"),
        ("d", "flip-vertical", "q"),
        ("n", "flip-vertical", "u"),
        ("M", "flip-vertical", "W"),
    ],
)
def test_a_circled_letter_whose_reflection_is_another_letter_is_not_graded(letter, transform, reads):
    benchmark = get_benchmark("blind/circled-letter")
    item = next(i for i in benchmark.items() if i.target == letter)
    sent = perturb.apply(benchmark, item, transform)
    assert sent.target is None and f"'{reads}'" in sent.ungraded_because


def test_other_circled_letters_keep_their_truth_when_reflected():
    benchmark = get_benchmark("blind/circled-letter")
    kept = [i for i in benchmark.items() if i.target in ("A", "k", "e", "g", "H")]
    assert kept
    for item in kept[:40]:
        for transform in REFLECTIONS:
            assert perturb.apply(benchmark, item, transform).target == item.target


def _soft_item(answer: str) -> Item:
    options = ("The left object", "The right object", "Both objects", "Neither object")
    return Item("illusionvqa/soft-localization", "t", "Which object is geometrically impossible?", (),
                AnswerKind.CHOICE, options.index(answer), options=options)  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "mirrored"),
    [("The left object", "The right object"), ("The right object", "The left object"),
     ("Both objects", "Both objects"), ("Neither object", "Neither object")],
)  # fmt: skip
def test_soft_localization_mirrored_moves_the_impossible_object_to_the_other_side(answer, mirrored):
    from probes.benchmarks.illusionvqa import IllusionVQA

    benchmark = IllusionVQA("illusionvqa/soft-localization", None, "test")
    item = _soft_item(answer)
    sent = perturb.apply(benchmark, item, "flip-horizontal")
    assert sent.options[sent.target] == mirrored
    assert perturb.apply(benchmark, item, "flip-vertical").target == item.target  # left stays left


def test_comprehension_items_that_name_a_side_or_turn_upside_down_are_ungraded():
    from probes.benchmarks.illusionvqa import IllusionVQA

    benchmark = IllusionVQA("illusionvqa/comprehension", None, "test")

    def item(question, options, category="size"):
        return Item(benchmark.id, "c", question, (), AnswerKind.CHOICE, 0, options=options,
                    groups={"category": category, "raw_category": category})  # fmt: skip

    left = item("What is unusual about the object on the left?", ("Nothing.", "It is impossible."))
    top = item("Which object is longer?", ("The object on top is longer.", "Both have the same length."))
    plain = item("Describe this image.", ("A cat on a mat.", "A dog."))
    seal = item("Describe this image.", ("A seal.", "A bear."), "upside-down")
    colour = item("Do both of the plus signs have the same color?", ("Yes.", "No."), "color")
    sent = lambda it, t: perturb.apply(benchmark, it, t)  # noqa: E731
    assert sent(left, "flip-horizontal").target is None and "'left'" in sent(left, "flip-horizontal").ungraded_because
    assert sent(left, "flip-vertical").target == 0
    assert sent(top, "flip-vertical").target is None and sent(top, "flip-horizontal").target == 0
    assert sent(plain, "flip-vertical").target == 0 and sent(plain, "flip-horizontal").target == 0
    assert sent(seal, "flip-vertical").target is None and sent(seal, "flip-horizontal").target == 0
    assert sent(colour, "grayscale").target is None and sent(colour, "resize-256").target == 0


def test_a_custom_folder_question_naming_a_side_is_ungraded_under_mirror(tmp_path):
    folder = make_folder(
        tmp_path / "mine",
        [
            {"id": "side", "image": "a.png", "question": "Is the red disc on the left?", "answer": "yes"},
            {"id": "count", "image": "a.png", "question": "How many discs?", "answer": 1},
            {"id": "hue", "image": "a.png", "question": "Is the disc red?", "answer": "yes"},
        ],
        {"a.png": shapes_image("circle")},
    )
    benchmark = get_benchmark(f"custom:{folder}")
    by_id = {item.id: item for item in benchmark.items()}
    mirrored = {k: perturb.apply(benchmark, v, "flip-horizontal") for k, v in by_id.items()}
    assert mirrored["side"].target is None and "'left'" in mirrored["side"].ungraded_because
    assert mirrored["count"].target == 1 and mirrored["hue"].target == "yes"
    grey = perturb.apply(benchmark, by_id["hue"], "grayscale")
    assert grey.target is None and "'red'" in grey.ungraded_because


def test_an_ungraded_reply_is_stored_with_its_reason_and_left_out_of_n(tmp_path):
    from probes.analysis.scoring import aggregate
    from probes.benchmarks.custom import UploadSet

    upload = tmp_path / "up.png"
    shapes_image("circle").save(upload)
    benchmark = UploadSet.from_files([upload], "Is the red disc on the left side?", [], "yes")
    chance = create("baseline/chance")
    with Store(tmp_path / "s.sqlite") as store:
        for condition in ("none", "flip-horizontal"):
            asyncio.run(run(RunPlan(benchmark, benchmark.items(), [chance], perturbation=condition), store))
        stored = {r.perturbation: r for r in store.results()}
    mirrored = stored["flip-horizontal"]
    assert mirrored.correct is None and mirrored.score is None and mirrored.target is None
    assert "truth unknown mirrored" in mirrored.ungraded and mirrored.reply
    assert stored["none"].correct is not None and stored["none"].ungraded is None
    rows = {row.perturbation: row for row in aggregate(stored.values())}
    assert rows["flip-horizontal"].n == 0 and rows["flip-horizontal"].ungraded == 1
    assert rows["none"].n == 1 and rows["none"].ungraded == 0


# --- a store graded before the truth followed the picture ---------------------------------------


def test_an_older_store_takes_transformed_results_it_cannot_trust_out_of_the_scores(tmp_path):
    path = tmp_path / "old.sqlite"
    with Store(path) as store:  # written now, then taken back to the version 3 layout
        pass
    as_version_3(path)
    db = sqlite3.connect(path)
    rows = [
        ("illusion/mueller-lyer", "flip-vertical"),  # upside down swaps its answer: cannot be trusted
        ("illusion/ebbinghaus", "flip-vertical"),  # left and right stay: its old grade stands
        ("blind/nested-squares", "flip-vertical"),  # a count: stands
        ("custom:/x", "grayscale"),  # may ask about a colour: cannot be trusted
        ("blind/line-intersections", "grayscale"),
        ("illusion/mueller-lyer", "none"),
    ]
    for benchmark, perturbation in rows:
        db.execute(
            "INSERT INTO results (benchmark, item_id, model, mode, perturbation, status, correct, score, groups,"
            " item_ref, created_at) VALUES (?, 'i', 'm', '0-shot', ?, 'answered', 1, 1.0, '{}', '{}', 0)",
            (benchmark, perturbation),
        )
    db.commit()
    db.close()
    with Store(path) as store:
        after = {(r.benchmark, r.perturbation): r for r in store.results()}
    untrusted = {("illusion/mueller-lyer", "flip-vertical"), ("custom:/x", "grayscale")}
    for key, result in after.items():
        if key in untrusted:
            assert result.correct is None and result.score is None and result.ungraded == REGRADE
        else:
            assert result.correct is True and result.score == 1.0 and result.ungraded is None


def test_imported_replies_under_a_condition_are_graded_as_that_condition_showed_the_item(tmp_path):
    """Replies produced elsewhere to the flipped (or option-rotated) items: graded against the
    truth and the option order of what was shown, like a run's."""
    from tests.conftest import run_cli

    benchmark = get_benchmark("illusion/ponzo")
    items = sample(benchmark.items(), 40, seed=5)
    store = tmp_path / "s.sqlite"
    for condition in ("flip-vertical", "rotate-options-1", "flip-horizontal"):
        lines = []
        for item in items:
            shown = perturb.apply(benchmark, item, condition)
            lines.append(json.dumps({"item_id": item.id, "response": f"Answer: {shown.labels[shown.target]}"}))
        path = tmp_path / f"{condition}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        done = run_cli("import", str(path), "--benchmark", "illusion/ponzo", "--model", "elsewhere",
                       "--perturbation", condition, "--store", str(store))  # fmt: skip
        assert done.returncode == 0, done.stderr
    report = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--no-references").stdout)
    assert {(r["perturbation"], r["accuracy"], r["n"]) for r in report} == {
        ("flip-vertical", 100.0, 40), ("rotate-options-1", 100.0, 40), ("flip-horizontal", 100.0, 40)
    }  # fmt: skip
