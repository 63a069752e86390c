"""The teacher's side: a form that opens a class, then the presenter's view for a projector (the
code, the link and its QR code, the item large, "23 of 28 answered", the countdown), Next and
Reveal, and the end of the lesson (the class beside the models and the papers' people, the
class's curve on a swept illusion, CSV / JSON downloads, publishing the answers to the people
rows). Only the browser holding the teacher's token (gr.BrowserState) controls the class."""

from __future__ import annotations

import html
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import gradio as gr

from probes.classroom import ClassError, answers_table, lesson_results
from probes.core.errors import ProbeError
from probes.files.spreadsheet import csv_text
from probes.running.limits import current as limits
from ui.classroom import student_page
from ui.classroom.lessons import close, lesson_items, may_open, open_class, room_for
from ui.classroom.reach import Reach, reach
from ui.classroom.views import curve_figure, presenter_html, qr_svg, results_html, reveal_html
from ui.common import session_keys, user_message
from ui.sessions import PEOPLE_LIMITS, lease_for, pooled_answer, shared_store, visitor
from ui.sessions import room_for as room_in_own_results

DOWNLOADS = Path(tempfile.gettempdir()) / "probe-classes"


REACH_FOR = 60.0  # seconds a page address's reach is known before it is checked again
_reached: dict[str, tuple[float, Reach]] = {}


def _reach(request: gr.Request | None) -> Reach:
    """Where phones reach this app, from the teacher's own page address (their browser's Referer)."""
    headers = getattr(request, "headers", None) or {}
    page = headers.get("referer", "") if hasattr(headers, "get") else ""
    now = time.monotonic()
    known = _reached.get(page)
    if known is None or now - known[0] > REACH_FOR:
        known = (now, reach(page))
        if len(_reached) > 1000:
            _reached.clear()
        _reached[page] = known
    return known[1]


def _link(request: gr.Request | None, code: str) -> str:
    """The student page a phone opens (`/class/CODE`), at an address a phone can reach."""
    found = _reach(request)
    return student_page.link(found.origin, code) if found.origin else f"/class/{code}"


def _presenter(request: gr.Request | None, room, status: dict) -> str:
    found = _reach(request)
    events = f"{student_page.API}events?token={room.teacher_token}"
    return presenter_html(status, _link(request, room.code), events, found.warning)


def _warn(text: str) -> str:
    return f'<p class="class-warning">⚠ {html.escape(text)}</p>'


def open_lesson(
    request: gr.Request,
    source: str,
    benchmark: str,
    params: str,
    count: float | None,
    seed: float | None,
    picked: list[str] | None,
    seconds: float | None,
    pace: str,
    models: list[str] | None,
    *typed_keys: str,
) -> list[Any]:
    """[teacher token, presenter, QR, message, timer active]. `source`: "benchmark" or "examples";
    `typed_keys`: the key boxes' values (the build names them, ui.common.with_key_parameters)."""
    try:
        may_open(request)
        items = lesson_items(source, benchmark, params, count, seed, picked)
        room = open_class(request, items, seconds, pace, models or [], session_keys(*typed_keys), benchmark or "")
    except (ClassError, ProbeError) as exc:
        return [gr.skip(), gr.skip(), gr.skip(), _warn(str(exc)), gr.skip()]
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the teacher's mistake
        return [gr.skip(), gr.skip(), gr.skip(), _warn(user_message(exc)), gr.skip()]
    status = room.status(room.teacher_token)
    return [room.teacher_token, _presenter(request, room, status), qr_svg(_link(request, room.code)), "",
            gr.update(active=True)]  # fmt: skip


def refresh(token: str, request: gr.Request) -> list[Any]:
    """[presenter, QR]: where the class is now (the timer's tick, and a reload)."""
    if not token:
        return [gr.skip(), gr.skip()]
    try:
        room = room_for(token)
        status = room.status(token)
    except (ClassError, ProbeError) as exc:
        return [_warn(str(exc)), ""]
    return [_presenter(request, room, status), gr.skip()]


def restore(token: str, request: gr.Request) -> list[Any]:
    """On page load: a teacher who reloads finds their class again. [presenter, QR, image,
    question, timer active]."""
    if not token:
        return [gr.skip()] * 4 + [gr.update(active=False)]
    try:
        room = room_for(token)
        status = room.status(token)
    except (ClassError, ProbeError):
        return [gr.skip()] * 4 + [gr.update(active=False)]
    images, question = _item_shown(room, token)
    return [_presenter(request, room, status), qr_svg(_link(request, room.code)), images, question,
            gr.update(active=True)]  # fmt: skip


def _item_shown(room, token: str) -> tuple[Any, str]:
    status = room.status(token)
    index = status.get("index")
    if index is None:
        return gr.update(value=None, visible=False), ""
    _, item = room.lesson.items[index]
    options = "\n".join(f"{label}. {text}" for label, text in zip(item.labels, item.options, strict=True))
    question = html.escape(item.question) + (f"<pre>{html.escape(options)}</pre>" if options else "")
    return gr.update(
        value=(room.image(token, index) or [None])[0], visible=True
    ), f'<div class="class-item">{question}</div>'


def next_item(token: str, request: gr.Request) -> list[Any]:
    """[presenter, image, question, reveal]."""
    try:
        room = room_for(token)
        status = room.next(token)
    except (ClassError, ProbeError) as exc:
        return [_warn(str(exc)), gr.skip(), gr.skip(), gr.skip()]
    image, question = _item_shown(room, token)
    return [_presenter(request, room, status), image, question, ""]


def close_lesson(token: str) -> list[Any]:
    """[teacher token, presenter, QR, image, question, reveal, timer active]: the class ends now
    (its students' pages say so), its place on the server frees up, and the form opens again."""
    try:
        close(token)
    except (ClassError, ProbeError) as exc:
        return [gr.skip(), _warn(str(exc)), *[gr.skip()] * 4, gr.skip()]
    closed = '<div class="class-presenter"><p>The class is closed: its code and links no longer work.</p></div>'
    return ["", closed, "", gr.update(value=None, visible=False), "", "", gr.update(active=False)]


def reveal(token: str) -> str:
    try:
        shown = room_for(token).reveal(token)
    except (ClassError, ProbeError) as exc:
        return _warn(str(exc))
    if "items" in shown:  # self-paced: every item at once
        return "".join(f"<h4>Item {entry['index'] + 1}</h4>{reveal_html(entry)}" for entry in shown["items"])
    return reveal_html(shown)


def results(token: str) -> list[Any]:
    """[results, curve, CSV file, JSON file]."""
    try:
        room = room_for(token)
        room.check_teacher(token)
        summary = lesson_results(room)
    except (ClassError, ProbeError) as exc:
        return [_warn(str(exc)), gr.update(visible=False), gr.update(visible=False), gr.update(visible=False)]
    answers = answers_table(room)
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    stem = DOWNLOADS / f"class-{room.code}"
    table = csv_text(["student", "number", "item", "item_id", "answer", "correct", "seconds"], answers)
    stem.with_suffix(".csv").write_text(table, encoding="utf-8")
    stem.with_suffix(".json").write_text(json.dumps({**summary, "answers": answers}, indent=2, default=str),
                                         encoding="utf-8")  # fmt: skip
    figure = curve_figure(summary["fit"])
    return [results_html(summary), gr.update(value=figure, visible=figure is not None),
            gr.update(value=str(stem.with_suffix(".csv")), visible=True),
            gr.update(value=str(stem.with_suffix(".json")), visible=True)]  # fmt: skip


def publish(token: str, request: gr.Request) -> str:
    """The class's answers join the people rows (the teacher's choice, once). On a public Space
    only where its operator lets classes publish, and then each student's answers within the
    Human tab's bounds for the page and address they joined from (each counted once per item); the
    rest, or all of them, stay in the teacher's own results."""
    try:
        room = room_for(token)
        room.check_teacher(token)
        if room.published:
            return "Already published."
        answers = room.answers_by_who()
        if not limits().public:  # the teacher's own machine: its store is theirs
            pooled, own = [result for _, result in answers], []
        elif not limits().class_publish:
            room_in_own_results(request, len(answers))
            pooled, own = [], [result for _, result in answers]
        else:
            room_in_own_results(request, len(answers))  # the most that could stay there
            teacher = visitor(request)
            pooled, own = [], []
            for who, result in answers:
                session, client = (who.session, who.address) if who is not None else (teacher.session, teacher.client)
                (pooled if pooled_answer(session, client, result.benchmark, result.item_id) else own).append(result)
        if pooled:
            shared_store().record_many([(result, None, "") for result in pooled])
        if own:
            with lease_for(request) as lease:
                lease.store.record_many([(result, None, "") for result in own])
        room.published = True
    except (ClassError, ProbeError) as exc:
        return _warn(str(exc))
    return published_message(len(pooled), len(own), limits().public and not limits().class_publish)


def published_message(pooled: int, own: int, closed: bool) -> str:
    if closed:
        return (f"Kept the class's {own} answers in your own results (your Scoreboard shows them): this Space "
                "keeps its people rows to the Human tab's visitors; its operator can let classes publish there.")  # fmt: skip
    said = f"Published {pooled} answers to the people rows: the Scoreboard shows them beside the models."
    if own:
        said += (f" {own} more stay in your own results: each address adds at most "
                 f"{PEOPLE_LIMITS['client_limit']} people's answers an hour here, and each person counts once an item.")  # fmt: skip
    return said
