"""A visitor's own results on a public Space, to take home: every result of their session (kept a
day after their last visit) as CSV and JSON, the replies as they were stored."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import gradio as gr

from probes.core.types import Result
from probes.files.spreadsheet import csv_text
from ui.sessions import SESSIONS, visitor

FOLDER = Path(tempfile.gettempdir()) / "probe-my-results"  # swept hourly (app.py)
COLUMNS = ["benchmark", "item_id", "model", "mode", "perturbation", "status", "parsed", "correct", "target",
           "ungraded", "latency", "reply", "error", "origin", "created_at"]  # fmt: skip


def _row(result: Result) -> dict[str, Any]:
    return {
        "benchmark": result.benchmark, "item_id": result.item_id, "model": result.model, "mode": result.mode,
        "perturbation": result.perturbation, "status": result.status.value, "parsed": result.parsed,
        "correct": result.correct, "target": result.target, "ungraded": result.ungraded, "latency": result.latency,
        "reply": result.reply, "error": result.error, "origin": result.origin.value, "created_at": result.created_at,
    }  # fmt: skip


def download(request: gr.Request) -> list[Any]:
    """[message, CSV file, JSON file] of this visitor's results."""
    lease = SESSIONS.lease(visitor(request).session, create=False)
    if lease is None:
        return ["Nothing yet: your probes and evaluations on this Space will be here.", None, None]
    try:
        rows = [_row(result) for result in lease.store.results()]
    finally:
        lease.release()
    FOLDER.mkdir(parents=True, exist_ok=True)
    stem = FOLDER / f"my-results-{visitor(request).session[-12:]}"
    table = csv_text(COLUMNS, ({k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in row.items()}
                               for row in rows))  # fmt: skip
    stem.with_suffix(".csv").write_text(table, encoding="utf-8")
    stem.with_suffix(".json").write_text(json.dumps(rows, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    return [f"{len(rows)} results.", str(stem.with_suffix(".csv")), str(stem.with_suffix(".json"))]
