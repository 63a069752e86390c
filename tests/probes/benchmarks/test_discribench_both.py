"""discribench --param subset=both runs the file `ease` writes (Table 2's third column), and
records still marked `draft: true` are asked but flagged: a note, and a group of their own."""

import json

import numpy as np
import pytest

from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.tools.easing import ease
from tests.conftest import run_cli
from tests.probes.tools.test_easing import _release_like
from tests.support.tiny_encoders import PlantedEncoder


@pytest.fixture
def eased(tmp_path):
    vectors = np.random.default_rng(5).normal(size=(17, 8))
    root = _release_like(tmp_path / "data")  # 036 (English) is still a model's draft
    ease(root, clip=PlantedEncoder(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), "clip"),
         cache_dir=tmp_path / "cache")  # fmt: skip
    return root


def test_both_reads_the_file_ease_writes(eased):
    benchmark = get_benchmark("discribench", data=str(eased), params={"subset": ["both"]})
    items = {item.id: item for item in benchmark.items()}
    assert set(items) == {"both/034_en_both", "both/036_en_both"}
    birds = items["both/034_en_both"]
    assert birds.groups["subset"] == "both" and birds.question.startswith("The birds fly from right to left.")
    assert sum(source.ref.split("@")[0].endswith("black.jpg") for source in birds.images) == 2


def test_both_is_named_when_the_folder_has_no_such_file(tmp_path):
    (tmp_path / "discribench_en_200.jsonl").write_text("")
    with pytest.raises(BenchmarkError, match="no ablation/both_en_100.jsonl here"):
        get_benchmark("discribench", data=str(tmp_path), params={"subset": ["both"]}).items()


def test_drafts_are_asked_but_flagged(eased):
    benchmark = get_benchmark("discribench", data=str(eased), params={"subset": ["main"]})
    items = {item.id: item for item in benchmark.items()}
    assert items["main/036"].groups["draft"] == "model draft" and "draft" not in items["main/034"].groups
    [note] = benchmark.notes
    assert note.startswith("1 of 3 records in ablation/main_en_100.jsonl are model drafts")


def test_the_command_line_prints_the_drafts_note_and_report_keeps_them_apart(eased, tmp_path):
    store = tmp_path / "s.sqlite"
    done = run_cli("run", "discribench", "--data", str(eased), "--param", "subset=both", "--model", "baseline/chance",
                   "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "note: 1 of 2 records in ablation/both_en_100.jsonl are model drafts" in done.stderr
    rows = json.loads(run_cli("report", "--store", str(store), "--by", "draft", "--format", "json",
                              "--no-references").stdout)  # fmt: skip
    assert {r["group"]: r["n"] for r in rows} == {"overall": 2, "draft=model draft": 1}
