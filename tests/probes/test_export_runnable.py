"""A generated set is a custom folder as it is: `generate` writes items.jsonl beside
metadata.jsonl, and `run custom:<that folder>` asks the same questions with the same answers."""

import json

import pytest

from probes.core.registry import get_benchmark
from probes.files.export import generated_set, write_generated
from tests.conftest import run_cli


@pytest.mark.parametrize(
    ("benchmark_id", "params"),
    [("blind/touching-circles", {"canvas": ["384"]}),
     ("blind/line-intersections", {"resolution": ["384"]}),
     ("blind/grid-count", {"canvas": ["500"], "n": ["3", "4"]}),
     ("blind/circled-letter", {"word": ["Acknowledgement"], "letter": ["0", "3"]}),
     ("illusion/mueller-lyer", {"canvas": ["384"]})],
)  # fmt: skip
def test_the_folder_reads_back_as_the_same_questions_and_answers(tmp_path, benchmark_id, params):
    _, items = generated_set(benchmark_id, params, 12, seed=3)
    write_generated(items, tmp_path / "set")
    custom = {item.id: item for item in get_benchmark(f"custom:{tmp_path / 'set'}").items()}
    graded = [item for item in items if item.target is not None]
    assert set(custom) == {item.id for item in graded}  # ungraded (equal) items stay in metadata only
    for item in graded:
        back = custom[item.id]
        assert (back.kind, back.question, back.options) == (item.kind, item.question, item.options)
        assert back.target == item.target and back.target_text() == item.target_text()
        assert back.images[0].load().tobytes() == item.images[0].load().convert("RGB").tobytes()


def test_generate_then_run_custom_through_the_cli(tmp_path):
    out = tmp_path / "circles"
    done = run_cli("generate", "blind/touching-circles", "--n", "6", "--seed", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert f"custom:{out}" in done.stdout
    lines = (out / "items.jsonl").read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(line)["kind"] == "yes/no" for line in lines)
    store = tmp_path / "r.sqlite"
    run = run_cli("run", f"custom:{out}", "--model", "baseline/chance", "--store", str(store))
    assert run.returncode == 0, run.stderr
    rows = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--no-references").stdout)
    [overall] = [r for r in rows if r["group"] == "overall"]
    assert overall["n"] == 6 and overall["unparsed"] == 0


def test_generate_says_which_items_a_custom_folder_cannot_hold(tmp_path):
    out = tmp_path / "ml"
    done = run_cli("generate", "illusion/mueller-lyer", "--n", "40", "--seed", "2", "--out", str(out),
                   "--param", "canvas=384", "--param", "difference=0,0.3")  # fmt: skip
    assert done.returncode == 0, done.stderr
    metadata = [json.loads(line) for line in (out / "metadata.jsonl").read_text().splitlines()]
    runnable = (out / "items.jsonl").read_text().splitlines()
    equal = sum(1 for record in metadata if record["answer"] == "equal")
    assert equal and len(runnable) == len(metadata) - equal
    assert f"note: {equal} item(s) are in metadata.jsonl only" in done.stderr
