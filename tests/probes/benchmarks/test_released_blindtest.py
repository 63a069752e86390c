"""`--data` for blind/*: the paper's release (XAI/vlmsareblind) read from a local copy in its schema."""

import json

import pytest
from datasets import Dataset, Features, Image, Value

from probes.benchmarks.blind.released import read_groundtruth
from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind
from tests.conftest import run_cli, shapes_image

FEATURES = Features({"task": Value("string"), "image": Image(), "prompt": Value("string"),
                     "groundtruth": Value("string"), "metadata": Value("string")})  # fmt: skip


@pytest.fixture
def release(tmp_path):
    """A small parquet copy in the release's schema and layout (data/valid-*.parquet)."""
    rows = {
        "task": ["Touching Circles", "Touching Circles", "Touching Circles", "Nested Squares"],
        "image": [shapes_image("circle"), shapes_image("square"), shapes_image("circle", 80), shapes_image("square")],
        "prompt": [
            "Are the two circles touching each other? Answer with Yes/No.",
            "Are the two circles overlapping? Answer with Yes/No.",
            "Are the two circles touching each other? Answer with Yes/No.",
            "Count total number of squares in the image.",
        ],
        "groundtruth": ["Yes", "No", "no", "{3}"],
        "metadata": [json.dumps({"pixels": 384, "distance": -0.1}), json.dumps({"pixels": 769}), "{}", "{}"],
    }
    folder = tmp_path / "vlmsareblind"
    (folder / "data").mkdir(parents=True)
    Dataset.from_dict(rows, features=FEATURES).to_parquet(str(folder / "data" / "valid-00000-of-00001.parquet"))
    return folder


def test_release_rows_of_the_task_become_items(release):
    benchmark = get_benchmark("blind/touching-circles", data=str(release))
    items = benchmark.items()
    assert [i.target for i in items] == ["yes", "no", "no"]
    assert items[0].question == "Are the two circles touching each other? Answer with Yes/No."
    assert (
        items[0].groups["pixels"] == "384" and items[0].groups["prompt"] == "p1" and items[1].groups["prompt"] == "p2"
    )
    assert items[0].images[0].load().size == (64, 64)
    assert items[0].possible_answers() == ("No", "Yes")
    examples = benchmark.select_examples(items[0], 4)  # from our generator
    assert len(examples) == 4 and all(e.id.startswith("example-") for e in examples)


def test_release_runs_through_the_cli(release, tmp_path):
    store = tmp_path / "r.sqlite"
    done = run_cli(
        "run", "blind/touching-circles", "--data", str(release), "--model", "baseline/chance", "--store", str(store)
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(run_cli("report", "--store", str(store), "--format", "json").stdout)
    assert next(r for r in rows if r["group"] == "overall" and r["source"] == "measured")["n"] == 3


def test_sweeping_parameters_of_the_release_is_refused(release):
    with pytest.raises(BenchmarkError, match="release is fixed"):
        get_benchmark("blind/touching-circles", data=str(release), params={"gap": ["0"]})


def test_a_folder_that_is_not_the_release_is_named(tmp_path):
    with pytest.raises(BenchmarkError, match="could not load"):
        get_benchmark("blind/touching-circles", data=str(tmp_path / "nothing")).items()


@pytest.mark.parametrize(
    ("kind", "raw", "value"),
    [(AnswerKind.NUMBER, "{2}", 2), (AnswerKind.NUMBER, "3", 3), (AnswerKind.YES_NO, "Yes", "yes"),
     (AnswerKind.PAIR, "5,6", (5, 6)), (AnswerKind.PAIR, "{5}x{6}", (5, 6)), (AnswerKind.LETTER, "e", "e")],
)  # fmt: skip
def test_groundtruth_formats(kind, raw, value):
    assert read_groundtruth(kind, raw) == value


RELEASE_TASKS = {
    "blind/line-intersections": ("Line Plot Intersections", "{2}", 2),
    "blind/touching-circles": ("Touching Circles", "No", "no"),
    "blind/circled-letter": ("Circled Letter", "e", "e"),
    "blind/olympic-circles": ("Olympic Counting - Circles", "7", 7),
    "blind/olympic-pentagons": ("Olympic Counting - Pentagons", "{6}", 6),
    "blind/nested-squares": ("Nested Squares", "3", 3),
    "blind/grid-count": ("Counting Grid - Word Grids", "5,6", (5, 6)),
    "blind/subway-paths": ("Subway Connections", "{1}", 1),
}


@pytest.mark.parametrize("benchmark_id", list(RELEASE_TASKS))
def test_every_blindtest_task_reads_its_rows_of_the_release(tmp_path, benchmark_id):
    rows = {"task": [], "image": [], "prompt": [], "groundtruth": [], "metadata": []}
    for task, truth, _ in RELEASE_TASKS.values():
        rows["task"].append(task)
        rows["image"].append(shapes_image("circle"))
        rows["prompt"].append(f"a {task} question")
        rows["groundtruth"].append(truth)
        rows["metadata"].append("{}")
    (tmp_path / "data").mkdir()
    Dataset.from_dict(rows, features=FEATURES).to_parquet(str(tmp_path / "data" / "valid-00000-of-00001.parquet"))
    task, _, target = RELEASE_TASKS[benchmark_id]
    [item] = get_benchmark(benchmark_id, data=str(tmp_path)).items()
    assert item.target == target and item.question == f"a {task} question"
