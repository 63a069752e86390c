"""`import --from vlmevalkit`: prediction files and evaluation records in VLMEvalKit's layout
(the dataset's table without images, plus `prediction`; the record adds `hit` and `log`)."""

from __future__ import annotations

import json

import pytest

from probes.running.toolkit_records import vlmevalkit_reading
from tests.conftest import run_cli
from tests.probes.toolkits.conftest import COMPREHENSION
from tests.support.toolkit_files import write_vlmevalkit


def table_rows(predictions: list[str], hits: list[int] | None = None) -> list[dict]:
    """IllusionVQA comprehension as a VLMEvalKit custom multiple-choice table (index, question,
    A..D, answer letter, category), with the model's predictions."""
    rows = []
    for index, (record, prediction) in enumerate(zip(COMPREHENSION, predictions, strict=True)):
        row = {"index": index, "question": record["question"]}
        for place in range(4):
            row["ABCD"[place]] = record["options"][place] if place < len(record["options"]) else ""
        row |= {"answer": "ABCD"[record["options"].index(record["answer"])], "category": record["category"],
                "prediction": prediction}  # fmt: skip
        if hits is not None:
            row |= {"hit": hits[index], "log": "Match Log: ..."}
        rows.append(row)
    return rows


def imported(tmp_path, path, *extra):
    store = tmp_path / "s.sqlite"
    done = run_cli("import", str(path), "--from", "vlmevalkit", "--benchmark", "illusionvqa/comprehension",
                   "--model", "InternVL3-8B", "--store", str(store), *extra)  # fmt: skip
    return done, store


@pytest.mark.parametrize("suffix", [".tsv", ".csv"])
def test_predictions_are_matched_by_question_and_their_exact_matching_figure_shown_beside_ours(
    tmp_path, illusionvqa_data, suffix
):
    predictions = ["B", "C. Three", "I'd go with option b"]
    path = write_vlmevalkit(tmp_path / f"InternVL3-8B_IllusionVQA{suffix}", table_rows(predictions))
    done, store = imported(tmp_path, path, "--data", str(illusionvqa_data))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert (
        "vlmevalkit InternVL3-8B_IllusionVQA -> illusionvqa/comprehension: 3 replies; matched to our items: 3/3" in out
    )
    # Their exact matching finds no capital letter standing alone in "option b": a miss. Ours reads b.
    assert [vlmevalkit_reading(p, {"A": "A staircase", "B": "A duck"}) for p in predictions[2:]] == [None]
    assert "their scorer 66.7% (2/3)" in out and "our reader 100.0% (3/3)" in out
    assert "doc 2: theirs wrong, ours right (read 'b')" in out
    report = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--no-references").stdout)
    assert report[0]["model"] == "InternVL3-8B" and report[0]["correct"] == 3


def test_an_evaluation_records_hit_is_their_figure(tmp_path, illusionvqa_data):
    # A judge model read "Probably B or C" as B (VLMEvalKit picks at random when its judge cannot
    # say); our reader calls it a hedge: unparsed, wrong.
    path = write_vlmevalkit(tmp_path / "InternVL3-8B_IllusionVQA_gpt-4o_result.tsv",
                            table_rows(["Probably B or C", "C", "B"], hits=[1, 1, 1]))  # fmt: skip
    done, _ = imported(tmp_path, path, "--data", str(illusionvqa_data))
    assert done.returncode == 0, done.stderr
    assert "their scorer 100.0% (3/3)" in done.stdout and "our reader 66.7% (2/3)" in done.stdout
    assert "doc 0: theirs right, ours wrong (unparsed)" in done.stdout


def test_xlsx_reads_as_vlmevalkit_writes_it(tmp_path, illusionvqa_data):
    pytest.importorskip("openpyxl")
    path = write_vlmevalkit(tmp_path / "InternVL3-8B_IllusionVQA.xlsx", table_rows(["B", "C", "A"]))
    done, _ = imported(tmp_path, path, "--data", str(illusionvqa_data))
    assert done.returncode == 0, done.stderr
    assert "matched to our items: 3/3" in done.stdout and "our reader 66.7% (2/3)" in done.stdout


def test_without_our_items_rows_are_graded_from_the_file(tmp_path):
    path = write_vlmevalkit(tmp_path / "m_IllusionVQA.tsv", table_rows(["B", "C", "A"]))
    done, store = imported(tmp_path, path)
    assert done.returncode == 0, done.stderr
    assert "matched to our items: 0/3" in done.stdout and "our items could not be loaded" in done.stdout
    groups = {r["group"] for r in json.loads(run_cli("report", "--store", str(store), "--format", "json",
                                                      "--by", "category", "--no-references").stdout)}  # fmt: skip
    assert "category=Size" in groups  # the file's category, through the benchmark's own names


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [("m_X.tsv", '"index"\t"question"\t"answer"\n"0"\t"Q"\t"A"\n', "not a VLMEvalKit prediction file (no prediction column)"),
     ("m_X.tsv", '"index"\t"question"\t"A"\t"C"\t"answer"\t"prediction"\n"0"\t"Q"\t"x"\t"y"\t"A"\t"A"\n',
      "row 2: options must fill A, B, C ... without a gap"),
     ("m_X.xlsx", "not a zip at all", "not a readable xlsx table"),
     ("m_X.json", "{}", "VLMEvalKit prediction files are .xlsx, .tsv or .csv"),
     ("m_X.csv", '"index","question","A","B","answer","prediction","hit"\n"0","Q","x","y","A","A","maybe"\n',
      "row 2: hit must be 0 or 1"),
     ("m_X.tsv", '"index"\t"question"\t"answer"\t"prediction"\n"7"\t"Q"\t"A"\t"A"\n"7"\t"Q"\t"A"\t"B"\n',
      "m_X.tsv: index 7 appears 2 times")],
)  # fmt: skip
def test_malformed_files_are_refused_in_one_line(tmp_path, name, content, message):
    if name.endswith(".xlsx"):
        pytest.importorskip("openpyxl")
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    done, store = imported(tmp_path, path)
    assert done.returncode == 2, done.stdout
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_command_says_what_it_needs(tmp_path):
    path = write_vlmevalkit(tmp_path / "m_X.tsv", table_rows(["B", "C", "A"]))
    done = run_cli("import", str(path), "--from", "vlmevalkit", "--model", "m", "--store", str(tmp_path / "s.sqlite"))
    assert done.returncode == 2 and "--from vlmevalkit needs --benchmark" in done.stderr
    done = run_cli("import", str(path), "--from", "vlmevalkit", "--benchmark", "nope/x", "--model", "m")
    assert done.returncode == 2 and "nope/x" in done.stderr


def test_their_reading_follows_their_rules():
    choices = {"A": "No.", "B": "Yes.", "C": "Cannot tell."}
    cases = {
        "B": "B",  # a letter alone
        "The answer is B because the lines match": "B",  # "answer is X"
        "b": None,  # lower case is no letter to them
        "Yes.": "B",  # the one option whose text the short reply holds
        "A or B": None,  # two letters
        "Cannot determine the answer": "Z",  # a refusal
        "B is what I first thought, but after measuring the two lines carefully, no": None,  # B too early
    }
    assert {reply: vlmevalkit_reading(reply, choices) for reply in cases} == cases


def test_without_openpyxl_an_xlsx_is_refused_with_what_to_do(tmp_path, monkeypatch):
    from probes.files.toolkit_logs import ToolkitFileError, read_vlmevalkit

    path = tmp_path / "m_X.xlsx"
    path.write_bytes(b"PK\x03\x04")
    monkeypatch.setitem(__import__("sys").modules, "openpyxl", None)  # as where it is not installed
    with pytest.raises(ToolkitFileError, match=r"reading \.xlsx needs openpyxl .* or save it as \.tsv"):
        read_vlmevalkit(path)
