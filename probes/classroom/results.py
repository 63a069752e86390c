"""The end of a lesson: the class's accuracy per item and overall beside the models and the
papers' human figures (where the papers have them), and for a swept illusion the class's
psychometric curve (its PSE with a bootstrap interval) beside each model's, from the same fit as
the Scoreboard's (`probes.analysis.psychometric`). Every student's answers count as one pooled
observer, "class"."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from probes.analysis.psychometric import fit_rows, number
from probes.analysis.scoring import published_rows, wilson
from probes.classroom.room import ClassRoom
from probes.core.types import Result, Status

CLASS = "class"
SWEPT = "difference"  # the illusions' swept parameter: the class's curve is fitted against it


def _share(right: int, n: int) -> dict[str, Any]:
    if not n:
        return {"n": 0, "correct": 0, "accuracy": None, "ci_low": None, "ci_high": None}
    low, high = wilson(right, n)
    return {"n": n, "correct": right, "accuracy": round(100 * right / n, 2), "ci_low": round(100 * low, 2),
            "ci_high": round(100 * high, 2)}  # fmt: skip


def lesson_results(room: ClassRoom) -> dict[str, Any]:
    items = []
    models: dict[str, list[Result]] = {m: [] for m in room.lesson.models}
    for index, (benchmark, item) in enumerate(room.lesson.items):
        tally = room.item_tally(index)
        graded = item.target is not None
        items.append({
            "index": index, "benchmark": benchmark.id, "item_id": item.id, "question": item.question,
            "truth": tally["truth"], "answered": tally["answered"], "right": tally["right"] if graded else None,
            "accuracy": round(100 * tally["right"] / tally["answered"], 2) if graded and tally["answered"] else None,
            "tally": tally["tally"], "models": {m: {"answer": a["answer"], "correct": a["correct"]}
                                                for m, a in tally["models"].items()},
        })  # fmt: skip
        for model in room.lesson.models:
            found = room.model_answers.get((model, index))
            if isinstance(found, Result):
                models[model].append(found)
    answers = room.class_results()
    graded = [r for r in answers if r.correct is not None]
    overall = {
        CLASS: {**_share(sum(1 for r in graded if r.correct), len(graded)), "students": len(room.students)},
        "models": {m: _share(sum(1 for r in rs if r.correct), sum(1 for r in rs if _scored(r)))
                   for m, rs in models.items()},
        "people": [
            {"benchmark": row.benchmark, "who": row.model, "accuracy": row.accuracy, "paper": row.paper}
            for row in published_rows({b.id for b, _ in room.lesson.items})
            if "human" in row.model.lower() and row.group == "overall"
        ],
    }  # fmt: skip
    return {"code": room.code, "title": room.lesson.title, "items": items, "overall": overall,
            "fit": curve_fits(answers, [r for rs in models.values() for r in rs])}  # fmt: skip


def _scored(result: Result) -> bool:
    return result.status is not Status.ERROR and result.correct is not None


def curve_fits(answers: list[Result], model_results: list[Result]) -> list[dict[str, Any]]:
    """For items sweeping an illusion's difference (two levels or more): one fit for the class
    (every student pooled) and one per model."""
    levels = {number((r.item_ref.params if r.item_ref else {}).get(SWEPT)) for r in answers + model_results}
    if len(levels - {None}) < 2:
        return []
    pooled = [replace(r, model=CLASS) for r in answers]
    rows = fit_rows(pooled + model_results, SWEPT)
    return [
        {"who": row.model, "param": SWEPT, "status": row.status, "pse": row.pse, "pse_low": row.pse_low,
         "pse_high": row.pse_high, "slope": row.slope, "n": row.n,
         "points": [dict(p) for p in row.points], "curve": {"x": list(row.curve_x), "p": list(row.curve_p)}}
        for row in rows if row.group == "overall"
    ]  # fmt: skip


def answers_table(room: ClassRoom) -> list[dict[str, Any]]:
    """One row per student answer, for the teacher's CSV/JSON download."""
    rows = []
    for student in sorted(room.students.values(), key=lambda s: s.number):
        for index, result in sorted(student.answers.items()):
            rows.append({"student": student.name, "number": student.number, "item": index,
                         "item_id": result.item_id, "answer": result.reply, "correct": result.correct,
                         "seconds": result.latency})  # fmt: skip
    return rows
