"""A published row measured on another item set (or with another question) carries that fact in
the report's rows (JSON, CSV) and as a marked footnote in the table, not only in a JSON file."""

import csv
import io
import json

from probes.analysis.report import to_csv, to_json
from probes.analysis.scoring import PUBLISHED, published_rows
from probes.cli.table import table
from tests.conftest import run_cli


def test_notes_come_from_the_published_files():
    discribench = published_rows(["discribench"], by=["image_type", "subset"])
    assert discribench and all(row.note for row in discribench)
    table1 = [row for row in discribench if row.group == "overall"]
    assert all("100" in row.note and "200" in row.note for row in table1)
    grid = published_rows(["blind/grid-count"], by=["grid"])
    assert grid and all("3..9" in row.note for row in grid)
    vlmbias = [row for row in published_rows(["illusion/ebbinghaus"]) if "Vo et al" in row.paper]
    assert vlmbias and all("pooled" in row.note for row in vlmbias)
    # Rows measured on our own item sets say nothing more.
    assert all(row.note is None for row in published_rows(["blind/line-intersections"], by=["thickness"]))


def test_every_note_in_the_files_reaches_a_row():
    written = {
        row["note"]
        for path in PUBLISHED.glob("*.json")
        for row in json.loads(path.read_text(encoding="utf-8"))["rows"]
        if row.get("note")
    }
    benchmarks = {row["benchmark"] for path in PUBLISHED.glob("*.json") for row in json.loads(path.read_text())["rows"]}
    groups = ["image_type", "subset", "grid", "n", "category", "thickness", "lang"]
    assert {row.note for row in published_rows(benchmarks, by=groups) if row.note} == written


def test_json_csv_and_table_show_the_note():
    rows = published_rows(["discribench", "blind/line-intersections"])
    [note] = {row.note for row in rows if row.benchmark == "discribench"}
    assert all("note" in row for row in json.loads(to_json(rows)))
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert {r["note"] for r in parsed if r["benchmark"] == "discribench"} == {note}
    text = table(rows)
    marked = [line for line in text.splitlines() if line.startswith("discribench")]
    assert marked and all(line.endswith("[1]") for line in marked)
    assert not any(line.endswith("]") for line in text.splitlines() if line.startswith("blind/"))
    assert text.splitlines()[-1] == f"[1] {note}"


def test_report_on_the_command_line_marks_the_rows(tmp_path):
    store = tmp_path / "s.sqlite"
    done = run_cli("run", "blind/grid-count", "--model", "baseline/chance", "--limit", "4", "--store", str(store))
    assert done.returncode == 0, done.stderr
    shown = run_cli("report", "--store", str(store), "--by", "grid").stdout.splitlines()
    published = [line for line in shown if "published" in line]
    assert published and all(line.endswith("[1]") for line in published)
    assert shown[-1].startswith("[1] The paper states N in 3..9")
    rows = json.loads(run_cli("report", "--store", str(store), "--format", "json").stdout)
    assert all(r["note"] for r in rows if r["source"] == "published")
    assert all(r["note"] is None for r in rows if r["source"] == "measured")
