"""Issue 34, sets that run again exactly: a folder `generate` wrote, in any format (png, hf,
lmms-eval), runs again with `run PATH` (or `run custom:PATH`) as exactly its items: their ids,
their truths, the benchmark's own id, prompts and cached answers; `generate --n N --seed S` and
`run --limit N --seed S` of one description ask the same items (one sampler); a folder whose rows
are not the set its description draws is refused in one line; `import --from vlmevalkit --data
DIR` takes a PNG export as it takes an hf one. Driven through the command line's `main`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as parquet
import pytest

from probes.benchmarks.custom import CustomFolder
from probes.cli import main
from probes.core.errors import LimitExceeded, UnknownBenchmark
from probes.core.registry import get_benchmark
from probes.core.selection import draw_set
from probes.core.types import jsonable
from probes.files.set_spec import SetSpec, read_spec, spec_of
from probes.running import limits
from probes.running.store import Store
from tests.support.toolkit_files import write_vlmevalkit

FORMATS = ("png", "hf", "lmms-eval")
CASES = {
    # a BlindTest family drawn with random positions (it has a design seed of its own)
    "circled-letter": ("blind/circled-letter", ["word=Acknowledgement"], 6, 3),
    # an illusion swept, multiple choice; its equal items (no right option) are asked, ungraded
    "mueller-lyer": ("illusion/mueller-lyer", ["canvas=384", "difference=0,0.3"], 8, 4),
    # answers that are pairs (rows, columns)
    "grid-count": ("blind/grid-count", ["canvas=500"], 5, 2),
}
CHANCE = "baseline/chance"


def param_words(params: list[str]) -> list[str]:
    return [word for param in params for word in ("--param", param)]


def generate(out: Path, case: tuple, form: str) -> None:
    benchmark, params, n, seed = case
    assert main(["generate", benchmark, "--n", str(n), "--seed", str(seed), *param_words(params), "--out", str(out),
                 "--format", form]) == 0  # fmt: skip


def run(store: Path, *words: str) -> int:
    return main(["run", *words, "--model", CHANCE, "--store", str(store)])


def stored(store: Path) -> list:
    with Store(store) as opened:
        return opened.results(model=CHANCE)


def folder_ids(out: Path) -> list[str]:
    """The items a folder holds, in its order, as its own files say."""
    if (out / "metadata.jsonl").is_file():
        return [json.loads(line)["id"] for line in (out / "metadata.jsonl").read_text().splitlines()]
    return [row["id"] for row in shard_rows(out)]


def shard_rows(out: Path) -> list[dict]:
    return [row for path in sorted((out / "data").glob("*.parquet")) for row in parquet.read_table(path).to_pylist()]


def folder_truths(out: Path) -> dict[str, object]:
    """id -> the truth the folder holds (None: an item without a right answer), read from its own
    files: a PNG export's items.jsonl read as a folder of your own, an hf export's target column."""
    if (out / "metadata.jsonl").is_file():
        graded = {item.id: jsonable(item.target) for item in CustomFolder(str(out)).items()}
        return {item_id: graded.get(item_id) for item_id in folder_ids(out)}
    return {row["id"]: json.loads(row["target"]) for row in shard_rows(out)}


# --- a set runs again as exactly its items ----------------------------------------------------------


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize("case", list(CASES))
def test_an_exported_set_runs_again_with_its_ids_and_truths_as_the_benchmarks_own(tmp_path, case, form):
    benchmark, params, n, seed = CASES[case]
    out = tmp_path / "set"
    generate(out, CASES[case], form)
    named = str(out) if form != "lmms-eval" else f"custom:{out}"  # both ways of naming it
    assert run(tmp_path / "again.sqlite", named) == 0
    again = stored(tmp_path / "again.sqlite")
    assert {result.benchmark for result in again} == {benchmark}  # the benchmark's own cells
    assert {r.item_id: jsonable(r.target) for r in again} == folder_truths(out)
    assert len(again) == len(folder_ids(out)) == n
    if case == "mueller-lyer":
        assert any(r.target is None and r.ungraded for r in again)  # asked, stored ungraded with the reason
    # The same description named as a benchmark: the same items and the same requests (seed
    # included), so the cached answers are the very same ones.
    assert run(tmp_path / "bench.sqlite", benchmark, "--limit", str(n), "--seed", str(seed), *param_words(params)) == 0
    bench = stored(tmp_path / "bench.sqlite")
    assert {r.item_id: r.cache_key for r in bench} == {r.item_id: r.cache_key for r in again}


def test_a_limit_on_a_set_asks_a_sample_of_its_items(tmp_path):
    out = tmp_path / "set"
    generate(out, CASES["circled-letter"], "png")
    assert run(tmp_path / "s.sqlite", str(out), "--limit", "3", "--seed", "1") == 0
    asked = {r.item_id for r in stored(tmp_path / "s.sqlite")}
    assert len(asked) == 3 and asked <= set(folder_ids(out))


# --- one sampler --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("benchmark", "params", "n", "seed"),
    [("blind/circled-letter", [], 30, 3),  # the case: 0 of 30 ids were shared
     ("illusion/ponzo", ["canvas=384"], 20, 5),  # design seeds 0 and 1 by default
     ("blind/nested-squares", ["depth=3"], 10, 1),
     ("blind/touching-circles", ["canvas=384"], 12, 7)],  # no design seed
)  # fmt: skip
def test_generate_n_and_run_limit_with_one_seed_ask_the_same_items(tmp_path, benchmark, params, n, seed):
    out = tmp_path / "set"
    generate(out, (benchmark, params, n, seed), "png")
    assert run(tmp_path / "s.sqlite", benchmark, "--limit", str(n), "--seed", str(seed), *param_words(params)) == 0
    generated = folder_ids(out)
    assert len(generated) == n and {r.item_id for r in stored(tmp_path / "s.sqlite")} == set(generated)
    fixed = dict(param.split("=", 1) for param in params)
    _, drawn = draw_set(benchmark, {k: v.split(",") for k, v in fixed.items()}, n, seed)
    assert [item.id for item in drawn] == generated  # in the benchmark's order


def test_a_larger_limit_with_the_same_seed_keeps_the_smaller_sample_in_generate_too(tmp_path):
    small, large = tmp_path / "small", tmp_path / "large"
    generate(small, ("blind/circled-letter", [], 10, 3), "png")
    generate(large, ("blind/circled-letter", [], 25, 3), "png")
    assert set(folder_ids(small)) < set(folder_ids(large))


def test_a_description_names_the_design_seed_and_an_older_one_reads_as_it_was_drawn(tmp_path):
    spec = spec_of("illusion/ponzo", {"canvas": ["384"]}, 20, 5)
    assert spec.params == {"canvas": ("384",), "seed": ("0", "1")}  # the family's default, named
    assert spec_of("blind/touching-circles", {}, 3, 1).params == {}  # no design seed to name
    # Written before the design seed was named: the sample's seed drew the design too.
    older = SetSpec.from_dict({"benchmark": "illusion/ponzo", "params": {"canvas": ["384"]}, "n": 20, "seed": 5}, "x")
    assert older.params == {"canvas": ("384",), "seed": ("5",)}
    assert {item.params["seed"] for item in older.draw()[1]} == {5}


def test_a_folder_an_older_version_wrote_runs_again_as_it_was_drawn(tmp_path):
    """Before this, generate drew the design with the sample's seed and did not name it: the
    folder's description is read so, and its items run again."""
    out = tmp_path / "older"
    generate(out, ("blind/circled-letter", ["seed=3"], 6, 3), "hf")  # the very items it drew then
    record = json.loads((out / "probe_set.json").read_text())
    del record["params"]["seed"]
    (out / "probe_set.json").write_text(json.dumps(record))
    assert run(tmp_path / "s.sqlite", str(out)) == 0
    again = stored(tmp_path / "s.sqlite")
    assert {r.item_id: jsonable(r.target) for r in again} == folder_truths(out)
    assert {r.item_ref.params["seed"] for r in again} == {3}


# --- a folder that is not the set it describes ------------------------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    """A small set in png and hf, written once; each test edits a copy."""
    root = tmp_path_factory.mktemp("sets")
    folders = {}
    for form in ("png", "hf"):
        folders[form] = root / form
        generate(folders[form], CASES["circled-letter"], form)
    return folders


def refused(tmp_path, capsys, named: str) -> str:
    capsys.readouterr()
    assert run(tmp_path / "s.sqlite", named) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert not (tmp_path / "s.sqlite").exists() or not stored(tmp_path / "s.sqlite")  # nothing asked
    return lines[0]


def edit_line(path: Path, number: int, change) -> None:
    lines = path.read_text().splitlines()
    record = json.loads(lines[number - 1])
    change(record)
    lines[number - 1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


def flip_letter(record: dict, field: str) -> None:
    record[field] = "x" if record[field] != "x" else "y"


@pytest.mark.parametrize(
    ("name", "line", "field"),
    [("metadata.jsonl", 2, "answer"), ("items.jsonl", 3, "answer"), ("metadata.jsonl", 1, "id"),
     ("items.jsonl", 1, "question")],
)  # fmt: skip
def test_a_png_set_edited_by_hand_is_refused_naming_the_line(tmp_path, capsys, written, name, line, field):
    out = shutil.copytree(written["png"], tmp_path / "set")
    edit_line(out / name, line, lambda record: flip_letter(record, field))
    message = refused(tmp_path, capsys, str(out))
    assert f"{name} line {line} is not the item its probe_set.json draws there ({field}:" in message
    assert "without probe_set.json" in message  # what to do with items of one's own


def test_an_hf_set_edited_by_hand_is_refused_naming_the_row(tmp_path, capsys, written):
    out = shutil.copytree(written["hf"], tmp_path / "set")
    [shard] = sorted((out / "data").glob("*.parquet"))
    table = parquet.read_table(shard)
    targets = table.column("target").to_pylist()
    targets[4] = json.dumps("x" if json.loads(targets[4]) != "x" else "y")
    index = table.schema.get_field_index("target")
    parquet.write_table(table.set_column(index, "target", [targets]), shard)
    message = refused(tmp_path, capsys, f"custom:{out}")
    assert f"data/{shard.name} row 4 is not the item its probe_set.json draws there (target:" in message


@pytest.mark.parametrize("form", ["png", "hf"])
def test_a_description_that_draws_another_set_is_refused(tmp_path, capsys, written, form):
    out = shutil.copytree(written[form], tmp_path / "set")
    record = json.loads((out / "probe_set.json").read_text())
    (out / "probe_set.json").write_text(json.dumps({**record, "n": record["n"] + 1}))
    assert "holds 6 items where its probe_set.json draws 7" in refused(tmp_path, capsys, str(out))
    (out / "probe_set.json").write_text(json.dumps({**record, "seed": record["seed"] + 1}))
    assert "is not the item its probe_set.json draws there (id:" in refused(tmp_path, capsys, str(out))


def test_a_description_without_items_or_not_one_at_all_is_refused(tmp_path, capsys, written):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(written["hf"] / "probe_set.json", alone)
    assert "holds probe_set.json but no items" in refused(tmp_path, capsys, str(alone))
    (alone / "probe_set.json").write_text('{"benchmark": "blind/circled-letter"}')
    assert "not a generated set's description" in refused(tmp_path, capsys, str(alone))
    (alone / "probe_set.json").write_text('{"benchmark": "nope/x", "params": {}, "n": 3, "seed": 0}')
    assert f"{alone / 'probe_set.json'}: unknown benchmark 'nope/x'" in refused(tmp_path, capsys, str(alone))


# --- naming a folder ----------------------------------------------------------------------------


def test_a_path_names_a_folder_only_where_it_is_no_benchmark_id(tmp_path, capsys, written):
    capsys.readouterr()
    assert run(tmp_path / "s.sqlite", str(tmp_path / "nowhere")) == 2
    assert f"error: unknown benchmark '{tmp_path / 'nowhere'}'; known: " in capsys.readouterr().err
    assert run(tmp_path / "s.sqlite", str(written["png"]), "--param", "word=Subdermatoglyphic") == 2
    assert "--param: " in capsys.readouterr().err and not (tmp_path / "s.sqlite").exists()
    own = tmp_path / "mine"  # a folder of one's own: its items.jsonl, as custom:PATH always ran it
    own.mkdir()
    shutil.copy(written["png"] / "00000.png", own)
    (own / "items.jsonl").write_text(json.dumps({"id": "q", "image": "00000.png", "question": "Q?", "answer": "a"}))
    assert run(tmp_path / "s.sqlite", str(own)) == 0
    assert [(r.benchmark, r.item_id) for r in stored(tmp_path / "s.sqlite")] == [(f"custom:{own}", "q")]


def test_public_mode_takes_no_path_for_a_benchmark_id(tmp_path, monkeypatch, written):
    monkeypatch.setenv("PROBE_PUBLIC", "1")
    limits.reload()
    try:
        messages = set()
        for named in (str(written["png"]), f"custom:{written['png']}", "./set", "~/set", "..\\set",
                      str(tmp_path / "missing")):  # fmt: skip
            with pytest.raises(LimitExceeded) as refusal:
                limits.current().benchmark(named)
            messages.add(str(refusal.value))
        assert len(messages) == 1 and "runs no folders of the server" in messages.pop()
        assert limits.current().benchmark("blind/circled-letter") == "blind/circled-letter"
    finally:
        monkeypatch.delenv("PROBE_PUBLIC")
        limits.reload()
    with pytest.raises(UnknownBenchmark):  # nor does the registry (the playground's way in) read one
        get_benchmark(str(written["png"]))


# --- import --from vlmevalkit --data DIR ---------------------------------------------------------

MC = ("illusion/mueller-lyer", ["canvas=384", "difference=-0.3,0.3"], 6, 2)  # every item has a right option


def vlmevalkit_table(out: Path) -> list[dict]:
    """The set as a VLMEvalKit multiple-choice table (index: the row in the folder), answered
    right every time, as a toolkit user builds it from the folder's own files."""
    if (out / "items.jsonl").is_file():
        records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
        rows = [(r["question"], r["options"], "AB"[r["options"].index(r["answer"])]) for r in records]
    else:
        rows = [(r["question"], r["options"], r["answer"].upper()) for r in shard_rows(out)]
    return [{"index": index, "question": question, "A": options[0], "B": options[1], "answer": answer,
             "prediction": answer} for index, (question, options, answer) in enumerate(rows)]  # fmt: skip


@pytest.mark.parametrize("form", ["png", "hf"])
def test_vlmevalkit_predictions_on_an_exported_set_come_back_onto_its_items(tmp_path, capsys, form):
    out = tmp_path / "set"
    generate(out, MC, form)
    table = write_vlmevalkit(tmp_path / "InternVL3-8B_set.tsv", vlmevalkit_table(out))
    capsys.readouterr()
    store = tmp_path / "s.sqlite"
    assert main(["import", str(table), "--from", "vlmevalkit", "--data", str(out), "--model", "InternVL3-8B",
                 "--store", str(store)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert f"-> {MC[0]}: 6 replies; matched to our items: 6/6 (6 by their doc id)" in printed
    with Store(store) as opened:
        results = opened.results(model="InternVL3-8B")
    assert {r.benchmark for r in results} == {MC[0]} and {r.item_id for r in results} == set(folder_ids(out))
    assert all(r.correct for r in results)


def test_vlmevalkit_predictions_on_an_older_png_export_come_back_onto_its_items_jsonl(tmp_path, capsys):
    out = tmp_path / "set"
    generate(out, MC, "png")
    (out / "probe_set.json").unlink()  # as a PNG export written before it carried its description
    table = write_vlmevalkit(tmp_path / "m_set.tsv", vlmevalkit_table(out))
    store = tmp_path / "s.sqlite"
    assert main(["import", str(table), "--from", "vlmevalkit", "--data", str(out), "--model", "m",
                 "--store", str(store)]) == 0  # fmt: skip
    assert "matched to our items: 6/6" in capsys.readouterr().out
    with Store(store) as opened:
        results = opened.results(model="m")
    assert {r.benchmark for r in results} == {f"custom:{out}"} and {r.item_id for r in results} == set(folder_ids(out))


def test_an_edited_set_is_refused_by_the_import_too(tmp_path, capsys):
    out = tmp_path / "set"
    generate(out, MC, "png")
    table = write_vlmevalkit(tmp_path / "m_set.tsv", vlmevalkit_table(out))
    edit_line(out / "metadata.jsonl", 1, lambda record: record.update(answer="b" if record["answer"] == "a" else "a"))
    capsys.readouterr()
    assert main(["import", str(table), "--from", "vlmevalkit", "--data", str(out), "--model", "m",
                 "--store", str(tmp_path / "s.sqlite")]) == 2  # fmt: skip
    assert "metadata.jsonl line 1 is not the item its probe_set.json draws there" in capsys.readouterr().err


def test_the_description_holds_no_path_of_the_machine(tmp_path):
    out = tmp_path / "set"
    generate(out, CASES["circled-letter"], "png")
    text = (out / "probe_set.json").read_text()
    assert str(tmp_path) not in text and json.loads(text)["command"].endswith("--out OUT")
    assert read_spec(out) == spec_of("blind/circled-letter", {"word": ["Acknowledgement"]}, 6, 3)
