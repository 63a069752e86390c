"""A student's page: join with the class code (or its link), then the item whole and large, big
answer buttons (the item's own options, or Yes / No, or a number pad for counts, or a short text
box), a countdown, "answer received", and the truth only once the teacher reveals it. The page
asks the server once a second where the class is (a gr.Timer); a reloaded page finds the class
again by the student's token, kept in the browser (gr.BrowserState)."""

from __future__ import annotations

import html
from typing import Any

import gradio as gr

from probes.classroom import ClassError
from probes.core.errors import ProbeError
from probes.core.types import AnswerKind
from ui.classroom.lessons import answer_text, room_for
from ui.classroom.lessons import join as take_seat
from ui.classroom.views import student_html
from ui.common import user_message

MAX_BUTTONS = 8  # answer buttons on a phone's screen; an item with more options gets a text box


def _message(text: str) -> str:
    return f'<div class="class-student"><p class="big">{html.escape(text)}</p></div>'


def join(code: str, name: str, request: gr.Request) -> list[Any]:
    """[token, page, join box visible, timer active]."""
    try:
        _, token = take_seat(code, name, request)
    except (ClassError, ProbeError) as exc:
        return [gr.update(), _message(str(exc)), gr.update(visible=True), gr.update(active=False)]
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the student's mistake
        return [gr.update(), _message(user_message(exc)), gr.update(visible=True), gr.update(active=False)]
    return [token, _message("Joined. Waiting for the class…"), gr.update(visible=False), gr.update(active=True)]


def refresh(token: str, shown: int | None) -> list[Any]:
    """[page, image, shown index, *buttons, number pad visible, text box visible, join visible,
    timer active]: what the student sees now (the picture only sent when the item changes)."""
    nothing = [gr.skip()] * MAX_BUTTONS
    if not token:
        return [
            gr.skip(),
            gr.skip(),
            shown,
            *nothing,
            gr.skip(),
            gr.skip(),
            gr.update(visible=True),
            gr.update(active=False),
        ]
    try:
        room = room_for(token)
        view = room.item_for(token)
    except (ClassError, ProbeError) as exc:
        hidden = [gr.update(visible=False)] * MAX_BUTTONS
        return [_message(str(exc)), gr.update(value=None, visible=False), None, *hidden, gr.update(visible=False),
                gr.update(visible=False), gr.update(visible=True), gr.update(active=False)]  # fmt: skip
    index = view.get("index")
    page = student_html(view)
    answering = view.get("state") == "answering"
    if index is None:
        hidden = [gr.update(visible=False)] * MAX_BUTTONS
        return [page, gr.update(value=None, visible=False), None, *hidden, gr.update(visible=False),
                gr.update(visible=False), gr.update(visible=False), gr.update(active=True)]  # fmt: skip
    picture = gr.skip() if index == shown else gr.update(value=(room.image(token) or [None])[0], visible=True)
    buttons, pad, text = _inputs(view, answering)
    return [page, picture, index, *buttons, pad, text, gr.update(visible=False), gr.update(active=True)]


def _inputs(view: dict[str, Any], answering: bool) -> tuple[list[Any], Any, Any]:
    labels = view.get("labels") or []
    kind = view.get("kind")
    if labels and len(labels) <= MAX_BUTTONS:
        shown = [f"{label}. {text}" for label, text in zip(labels, view["options"], strict=True)]
    elif kind == AnswerKind.YES_NO.value:
        shown = ["Yes", "No"]
    else:
        shown = []
    buttons = [gr.update(value=shown[i], visible=answering) if i < len(shown) else gr.update(visible=False)
               for i in range(MAX_BUTTONS)]  # fmt: skip
    pad = gr.update(visible=answering and not shown and kind == AnswerKind.NUMBER.value)
    text = gr.update(visible=answering and not shown and kind != AnswerKind.NUMBER.value)
    return buttons, pad, text


def answer(token: str, given: str) -> list[Any]:
    """A tap or a typed answer ("a. Top" sends its label "a"): [page, *buttons, number pad, text
    box], the inputs hidden once the answer is in (a refused one leaves them to try again)."""
    try:
        text = answer_text(given).strip()
        label, dot, _ = text.partition(". ")
        if dot and len(label) <= 2:
            text = label
        done = room_for(token).answer(token, text)
    except (ClassError, ProbeError) as exc:
        return [_message(str(exc)), *[gr.skip()] * (MAX_BUTTONS + 2)]
    hidden = [gr.update(visible=False)] * (MAX_BUTTONS + 2)
    return [_message(f"Answer received: {done['answer']}"), *hidden]
