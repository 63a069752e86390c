"""Class tab: a teacher opens a class (any benchmark or generated family with its parameters and
a count, a sweep of an illusion's difference, or a hand-picked list of the Examples; seconds per
item; models to show beside the class), students join from their phones by the link, the QR code
or the code, and the presenter's view reveals the class's answers beside the models'.

The logic is `probes.classroom` (no Gradio); this package lays it out: `teacher` and `student`
hold the page's handlers, `views` the HTML, `lessons` what the form makes of a class and the
models asked beside it, `api` the named endpoints (`class_open`, `class_join`, ...)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from probes.classroom import ClassError, Pace
from ui import examples
from ui.choices import CheckboxGroup, Dropdown, Radio
from ui.classroom import api, lessons, student, teacher
from ui.classroom.student import MAX_BUTTONS
from ui.common import key_boxes, model_choices, with_key_parameters
from ui.items import generated_ids

# (what the form says, what the form sends): the handlers get the second, as lessons.lesson_items reads it.
SOURCES = [("A benchmark or generated set", "benchmark"), ("Items from the Examples", "examples")]
SWEEP = "difference=-0.3,-0.2,-0.12,-0.06,0.06,0.12,0.2,0.3 inducers=with illusion_strength=30 prompt=which-longer"
TICK = 1.0  # seconds between a page's looks at where the class is


def browser_tokens() -> tuple[gr.BrowserState, gr.BrowserState]:
    """The teacher's and the student's tokens kept in the browser. Made outside every tab (a
    tab not yet opened is not in the page, and its BrowserState would not be read at load)."""
    return gr.BrowserState("", storage_key="probe-class-teacher"), gr.BrowserState(
        "", storage_key="probe-class-student"
    )


def build_class(
    tokens: tuple[gr.BrowserState, gr.BrowserState], top: gr.Tabs | None = None, tab_id: str = "class"
) -> dict[str, Any]:
    """The tab's contents; `tokens` from `browser_tokens`; `top` (the app's tabs, where this one
    is `tab_id`) is switched to this tab when the page opens from a class link or holds a class
    in progress."""
    teacher_token, student_token = tokens
    shown = gr.State(None)  # the item index a student's picture shows
    with gr.Tabs(overflow_behavior="wrap", elem_id="class-tabs") as tabs:  # one tap away on a phone
        with gr.Tab("Join a class", id="class-join"):
            with gr.Group(elem_id="class-join-box") as join_box:
                code = gr.Textbox(label="Class code", max_length=12, elem_id="class-code")
                name = gr.Textbox(label="Nickname (optional)", max_length=40, elem_id="class-name")
                join = gr.Button("Join", variant="primary", elem_id="class-join-button")
            page = gr.HTML(elem_id="class-student-page")
            picture = gr.Image(type="pil", visible=False, interactive=False, show_label=False, height=380,
                               buttons=["fullscreen"], elem_id="class-student-image")  # fmt: skip
            with gr.Column(elem_id="class-answers"):
                buttons = [gr.Button(visible=False, size="lg", elem_classes=["class-answer"], elem_id=f"class-answer-{i}")
                           for i in range(MAX_BUTTONS)]  # fmt: skip
            with gr.Group(visible=False, elem_id="class-pad") as pad:
                typed = gr.Textbox(label="Your answer", interactive=False, elem_id="class-pad-value")
                with gr.Row():
                    digits = [gr.Button(str(d), size="lg", min_width=60, elem_id=f"class-digit-{d}") for d in range(10)]
                with gr.Row():
                    clear = gr.Button("Clear", size="lg")
                    send_number = gr.Button("Send", variant="primary", size="lg", elem_id="class-pad-send")
            with gr.Group(visible=False, elem_id="class-text") as text_box:
                written = gr.Textbox(label="Your answer", max_length=64, elem_id="class-text-value")
                send_text = gr.Button("Send", variant="primary", size="lg", elem_id="class-text-send")
            student_timer = gr.Timer(TICK, active=False)
        with gr.Tab("Teach", id="class-teach"):
            with gr.Accordion("Open a class", open=True, elem_id="class-open-form") as form:
                source = Radio(SOURCES, value="benchmark", label="Items", elem_id="class-source")
                with gr.Row():
                    benchmark = Dropdown(generated_ids(), value="illusion/mueller-lyer", label="Benchmark",
                                         allow_custom_value=True, elem_id="class-benchmark")  # fmt: skip
                    params = gr.Textbox(SWEEP, label="Parameters (NAME=V1,V2 ...)", elem_id="class-params")
                with gr.Row():
                    count = gr.Number(8, precision=0, label="Items", elem_id="class-count")
                    seed = gr.Number(0, precision=0, label="Seed", elem_id="class-seed")
                    seconds = gr.Number(20, precision=0, label="Seconds per item (0: untimed)", elem_id="class-seconds")
                picked = CheckboxGroup([e.title for e in examples.EXAMPLES if not e.upload], label="Examples",
                                       visible=False, elem_id="class-examples")  # fmt: skip
                pace = Radio([p.value for p in Pace], value=Pace.PACED.value, label="Pace", elem_id="class-pace")
                models = Dropdown(model_choices(), value=["baseline/pixels"], multiselect=True,
                                  label="Models beside the class (at most four)", elem_id="class-models")  # fmt: skip
                with gr.Accordion("API keys (used for this session only, never stored)", open=False):
                    keys = key_boxes("class")
                open_button = gr.Button("Open the class", variant="primary", elem_id="class-open")
                message = gr.HTML(elem_id="class-message")
            with gr.Row(elem_id="class-stage"):
                with gr.Column(scale=3):
                    presenter = gr.HTML(elem_id="class-presenter")
                    item_picture = gr.Image(type="pil", visible=False, interactive=False, show_label=False, height=520,
                                            buttons=["fullscreen"], elem_id="class-item-image")  # fmt: skip
                    item_text = gr.HTML(elem_id="class-item-text")
                with gr.Column(scale=1, min_width=240):
                    qr = gr.HTML(elem_id="class-qr")
                    with gr.Row():
                        next_button = gr.Button("Next", variant="primary", size="lg", elem_id="class-next")
                        reveal_button = gr.Button("Reveal", size="lg", elem_id="class-reveal")
                    with gr.Row():
                        end_button = gr.Button("End of lesson", size="sm", elem_id="class-end")
                        close_button = gr.Button("Close the class", size="sm", elem_id="class-close")
            revealed = gr.HTML(elem_id="class-revealed")
            summary = gr.HTML(elem_id="class-results")
            curve = gr.Plot(show_label=False, visible=False, elem_id="class-curve")
            with gr.Row():
                csv_file = gr.File(label="Answers (CSV)", visible=False, elem_id="class-csv")
                json_file = gr.File(label="Results (JSON)", visible=False, elem_id="class-json")
            publish = gr.Button("Publish the class's answers to the people rows", size="sm", elem_id="class-publish")
            published = gr.Markdown(elem_id="class-published")
            teacher_timer = gr.Timer(TICK, active=False)

    private = {"api_visibility": "private"}
    # What sixty phones send each second (where the class is, an answer) and the presenter's own
    # tick: in-memory work of a millisecond, posted straight to the server (queue=False) rather
    # than through the queue, whose bounded slots (and SSE stream per call) stay for model work.
    # bench/classroom.py measures the difference.
    direct = {**private, "queue": False}
    # The student's side.
    join.click(student.join, [code, name], [student_token, page, join_box, student_timer], **private)
    name.submit(student.join, [code, name], [student_token, page, join_box, student_timer], **private)
    view = [page, picture, shown, *buttons, pad, text_box, join_box, student_timer]
    student_timer.tick(student.refresh, [student_token, shown], view, **direct)
    inputs_after = [page, *buttons, pad, text_box]
    for button in buttons:
        button.click(student.answer, [student_token, button], inputs_after, **direct)
    for digit in digits:
        digit.click(None, typed, typed, js=f"(v) => ((v || '') + '{digit.value}').slice(0, 6)", **private)
    clear.click(lambda: "", None, typed, **private)
    send_number.click(student.answer, [student_token, typed], inputs_after, **private).then(lambda: "", None, typed)
    send_text.click(student.answer, [student_token, written], inputs_after, **private).then(lambda: "", None, written)

    # The teacher's side.
    source.change(lambda s: [gr.update(visible=s == "benchmark")] * 4 + [gr.update(visible=s == "examples")],
                  source, [benchmark, params, count, seed, picked], **private)  # fmt: skip
    # Named after the key boxes of this build (with_key_parameters reads the providers now, as the
    # boxes above do): a provider declared after import gets its box and its parameter alike.
    opening = [source, benchmark, params, count, seed, picked, seconds, pace, models, *keys]
    open_button.click(
        with_key_parameters(teacher.open_lesson), opening, [teacher_token, presenter, qr, message, teacher_timer],
        **private,
    ).success(lambda held: gr.update(open=not held), teacher_token, form, **private)  # fmt: skip
    teacher_timer.tick(teacher.refresh, teacher_token, [presenter, qr], **direct)
    next_button.click(teacher.next_item, teacher_token, [presenter, item_picture, item_text, revealed], **private)
    reveal_button.click(teacher.reveal, teacher_token, revealed, **private)
    end_button.click(teacher.results, teacher_token, [summary, curve, csv_file, json_file], **private)
    publish.click(teacher.publish, teacher_token, published, **private)
    close_button.click(teacher.close_lesson, teacher_token,
                       [teacher_token, presenter, qr, item_picture, item_text, revealed, teacher_timer],
                       **private).then(lambda: gr.update(open=True), None, form, **private)  # fmt: skip
    api.register()

    def on_link(request: gr.Request) -> list[Any]:
        """A `?class=` link opens the Class tab's Join view with the code filled in."""
        query = getattr(request, "query_params", None) or {}
        link_code = "".join(str(query.get("class", "")).split())[:12]
        if not link_code:
            return [gr.update()] * 3
        return [gr.update(value=link_code), gr.update(selected="class-join"), outer(True)]

    def outer(show: bool) -> Any:
        return gr.update(selected=tab_id) if show and top is not None else gr.update()

    def on_teacher(request: gr.Request, held: str) -> list[Any]:
        """The teacher's token, as the browser restores it after a reload: their class again."""
        if not live(held):
            return [gr.update()] * 2 + [gr.update()] * 4 + [gr.update(active=False)]
        return [gr.update(selected="class-teach"), outer(True), *teacher.restore(held, request)]

    def on_student(held: str, request: gr.Request) -> list[Any]:
        """The student's token, as the browser restores it: the page rejoins where the class is
        (unless the page was opened from another class's link)."""
        query = getattr(request, "query_params", None) or {}
        if not live(held) or query.get("class"):
            return [gr.update()] * 3 + [gr.update()]
        return [gr.update(selected="class-join"), outer(True), gr.update(visible=False), gr.update(active=True)]

    top_out = top if top is not None else gr.State()
    teacher_token.change(on_teacher, teacher_token, [tabs, top_out, presenter, qr, item_picture, item_text,
                                                     teacher_timer], **private)  # fmt: skip
    student_token.change(on_student, student_token, [tabs, top_out, join_box, student_timer], **private)
    return {"load": (on_link, None, [code, tabs, top_out])}


def live(token: str) -> bool:
    """Whether a token held by the browser still names an open class."""
    if not token:
        return False
    try:
        lessons.room_for(token)
    except ClassError:  # expired, or not a token of this server: nothing to restore
        return False
    return True
