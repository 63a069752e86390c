"""The class as named API endpoints (`gr.api`), so a class can be run or checked from a notebook
with `gradio_client`: each takes plain values and returns a JSON object (a dict). A refusal
(wrong token, closed class, late or second answer) comes back as `{"error": "..."}` rather than
an exception, so a script reads the reason like a person does.

    class_open(benchmark, params, count, seconds, models) -> {code, teacher_token, items}
    class_join(code, name) -> {student_token, name}
    class_item(student_token, shown) -> {index, image, question, options, seconds_left, state, ...}
    class_answer(student_token, answer) -> {received, index, answer}
    class_status(teacher_token) -> {phase, index, students, answered, seconds_left, ...}
    class_next(teacher_token) -> {phase, index, answered, students, ...}
    class_reveal(teacher_token) -> {tally, truth, models, ...}
    class_results(teacher_token) -> {items: [...], overall, fit}
    class_close(teacher_token) -> {closed: true}

Every endpoint but class_open is cheap, in-memory work, served without the queue: a script may
POST straight to `/gradio_api/run/<name>` with `{"data": [...]}`, every parameter given (`null`
for `shown`): one request, a JSON reply, as sixty phones' pages do each second. `gradio_client`
goes through the queue, unlimited in concurrency for these.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from probes.classroom import ClassError, lesson_results
from probes.core.errors import ProbeError
from probes.running.limits import current as limits
from ui.classroom import pictures
from ui.classroom.lessons import (
    answer_text,
    close,
    join,
    lesson_items,
    may_open,
    open_class,
    room_for,
    text_field,
)
from ui.common import user_message


def _answer(work) -> dict[str, Any]:
    try:
        return work()
    except (ClassError, ProbeError) as exc:
        return {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the caller's mistake
        return {"error": user_message(exc)}


def class_open(
    benchmark: str, params: str, count: int, seconds: float, models: str, request: gr.Request
) -> dict[str, Any]:
    """Open a class on `count` items of `benchmark` (parameters as NAME=V1,V2; seconds 0:
    untimed; models comma-separated, at most four)."""

    def work() -> dict[str, Any]:
        may_open(request)
        named, listed = text_field("benchmark", benchmark), text_field("models", models)
        chosen = [m.strip() for m in listed.split(",") if m.strip()]
        items = lesson_items("benchmark", named, text_field("params", params), count, 0, None)
        room = open_class(request, items, seconds, "paced", chosen, {}, limits().text("benchmark", named))
        return {"code": room.code, "teacher_token": room.teacher_token, "items": len(room.lesson.items)}

    return _answer(work)


def class_join(code: str, name: str, request: gr.Request) -> dict[str, Any]:
    """Join the class with this code under a nickname (optional). One session holds one seat: a
    second join from it gives back the same student."""

    def work() -> dict[str, Any]:
        room, token = join(code, name, request)
        return {"student_token": token, "name": room.student(token).name}

    return _answer(work)


def class_item(student_token: str, shown: int | None = None) -> dict[str, Any]:
    """The item this student is on: never its truth or tally before the reveal. `shown`: the
    index of the item whose picture the caller has already; its picture is then not sent again
    (`image` null, `image_unchanged` true): a poll each second costs a few hundred bytes."""

    def work() -> dict[str, Any]:
        room = room_for(student_token)
        view = room.item_for(student_token)
        index = view.get("index")
        if index is not None and index == shown:
            view["image"], view["image_unchanged"] = None, True
        elif index is not None:
            view["image"] = pictures.data_uri(room, student_token, index)
        return view

    return _answer(work)


def class_answer(student_token: str, answer: str) -> dict[str, Any]:
    """This student's answer to the item they are on: an option's letter or text, yes/no, a number."""
    return _answer(lambda: room_for(student_token).answer(student_token, answer_text(answer)))


def class_status(teacher_token: str) -> dict[str, Any]:
    """Where the class is: the item on screen, how many joined and answered, the countdown."""
    return _answer(lambda: room_for(teacher_token).status(teacher_token))


def class_next(teacher_token: str) -> dict[str, Any]:
    """Show the next item (the first, from the lobby)."""
    return _answer(lambda: room_for(teacher_token).next(teacher_token))


def class_reveal(teacher_token: str) -> dict[str, Any]:
    """The class's answers to the item on screen, its truth and each model's answer."""
    return _answer(lambda: room_for(teacher_token).reveal(teacher_token))


def class_results(teacher_token: str) -> dict[str, Any]:
    """The end of the lesson: per item and overall beside the models, and the curve's fits."""

    def work() -> dict[str, Any]:
        room = room_for(teacher_token)
        room.check_teacher(teacher_token)
        return lesson_results(room)

    return _answer(work)


def class_close(teacher_token: str) -> dict[str, Any]:
    """End the class now: every token of it stops working and its place on the server frees up."""

    def work() -> dict[str, Any]:
        close(teacher_token)
        return {"closed": True}

    return _answer(work)


ENDPOINTS = (class_open, class_join, class_item, class_answer, class_status, class_next, class_reveal, class_results,
             class_close)  # fmt: skip


def register() -> None:
    """Inside a Blocks: each function as a named endpoint (its name is its api_name)."""
    for function in ENDPOINTS:
        cheap = function is not class_open  # opening builds a lesson's pictures: through the queue
        gr.api(function, api_name=function.__name__, queue=not cheap, concurrency_limit=None if cheap else "default")
