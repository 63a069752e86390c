"""Class tab: a teacher opens a class (any benchmark or generated family with its parameters and
a count, a sweep of an illusion's difference, or a hand-picked list of the Examples; seconds per
item; models to show beside the class), students join from their phones by the link, the QR code
or the code, and the presenter's view reveals the class's answers beside the models'.

The logic is `probes.classroom` (no Gradio); this package lays it out: `teacher` holds the
page's handlers, `views` the HTML, `lessons` what the form makes of a class and the models asked
beside it, `api` the named endpoints (`class_open`, `class_join`, ...), `student_page` the
students' own page (`/class/CODE`, served beside Gradio: a phone never loads the whole app) and
`reach` the address phones can open."""

from __future__ import annotations

from typing import Any

import gradio as gr

from probes.classroom import ClassError, Pace
from ui import examples
from ui.choices import CheckboxGroup, Dropdown, Radio
from ui.classroom import api, lessons, teacher
from ui.common import key_boxes, model_choices, with_key_parameters
from ui.items import generated_ids

# (what the form says, what the form sends): the handlers get the second, as lessons.lesson_items reads it.
SOURCES = [("A benchmark or generated set", "benchmark"), ("Items from the Examples", "examples")]
SWEEP = "difference=-0.3,-0.2,-0.12,-0.06,0.06,0.12,0.2,0.3 inducers=with illusion_strength=30 prompt=which-longer"
TICK = 1.0  # seconds between the presenter's looks at where the class is (its countdown)


def browser_tokens() -> gr.BrowserState:
    """The teacher's token kept in the browser. Made outside every tab (a tab not yet opened is
    not in the page, and its BrowserState would not be read at load)."""
    return gr.BrowserState("", storage_key="probe-class-teacher")


# Students answer on the class's own page (ui/classroom/student_page.py), made for a phone: the
# Join view and a `?class=CODE` address of the whole app both lead there.
TO_STUDENT_PAGE = """(code) => {
  const wanted = (code || "").replace(/[\\s-]/g, "").toUpperCase();
  if (wanted) window.location.assign("/class/" + encodeURIComponent(wanted));
}"""
FROM_CLASS_LINK = """() => {
  const code = new URLSearchParams(window.location.search).get("class");
  if (code) window.location.replace("/class/" + encodeURIComponent(code.replace(/[\\s-]/g, "").toUpperCase()));
}"""


def build_class(teacher_token: gr.BrowserState, top: gr.Tabs | None = None, tab_id: str = "class") -> dict[str, Any]:
    """The tab's contents; `teacher_token` from `browser_tokens`; `top` (the app's tabs, where
    this one is `tab_id`) is switched to this tab when the page holds a class in progress."""
    with gr.Tabs(overflow_behavior="wrap", elem_id="class-tabs") as tabs:  # one tap away on a phone
        with gr.Tab("Join a class", id="class-join"):
            with gr.Group(elem_id="class-join-box"):
                code = gr.Textbox(label="Class code", max_length=12, elem_id="class-code")
                join = gr.Button("Join", variant="primary", elem_id="class-join-button")
            gr.Markdown("The class opens on a page of its own, made for a phone.")
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
            # The stage: the picture, the question and, under them, the reveal (the tally and each
            # model's answer), beside the QR code and the buttons. On a phone Next and Reveal come
            # right under the presenter's line; in projector mode the picture gets what the window
            # leaves (assets/app.css, ui/projector.py).
            with gr.Row(elem_id="class-stage"):
                with gr.Column(scale=3, elem_id="class-main"):
                    presenter = gr.HTML(elem_id="class-presenter")
                    item_picture = gr.Image(type="pil", visible=False, interactive=False, show_label=False, height=520,
                                            buttons=["fullscreen"], elem_id="class-item-image")  # fmt: skip
                    item_text = gr.HTML(elem_id="class-item-text")
                    revealed = gr.HTML(elem_id="class-revealed")
                with gr.Column(scale=1, min_width=240, elem_id="class-side"):
                    qr = gr.HTML(elem_id="class-qr")
                    with gr.Row(elem_id="class-buttons"):
                        next_button = gr.Button("Next", variant="primary", size="lg", elem_id="class-next")
                        reveal_button = gr.Button("Reveal", size="lg", elem_id="class-reveal")
                    with gr.Row(elem_id="class-more"):
                        end_button = gr.Button("End of lesson", size="sm", elem_id="class-end")
                        close_button = gr.Button("Close the class", size="sm", elem_id="class-close")
            summary = gr.HTML(elem_id="class-results")
            curve = gr.Plot(show_label=False, visible=False, elem_id="class-curve")
            with gr.Row():
                csv_file = gr.File(label="Answers (CSV)", visible=False, elem_id="class-csv")
                json_file = gr.File(label="Results (JSON)", visible=False, elem_id="class-json")
            publish = gr.Button("Publish the class's answers to the people rows", size="sm", elem_id="class-publish")
            published = gr.Markdown(elem_id="class-published")
            teacher_timer = gr.Timer(TICK, active=False)

    private = {"api_visibility": "private"}
    # The presenter's own tick (where the class is, the countdown): in-memory work of a
    # millisecond, posted straight to the server (queue=False) rather than through the queue,
    # whose bounded slots stay for model work. The count itself is pushed (assets/class/presenter.js).
    direct = {**private, "queue": False}
    join.click(None, code, None, js=TO_STUDENT_PAGE, **private)
    code.submit(None, code, None, js=TO_STUDENT_PAGE, **private)

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

    def outer(show: bool) -> Any:
        return gr.update(selected=tab_id) if show and top is not None else gr.update()

    def on_teacher(request: gr.Request, held: str) -> list[Any]:
        """The teacher's token, as the browser restores it after a reload: their class again."""
        if not live(held):
            return [gr.update()] * 2 + [gr.update()] * 4 + [gr.update(active=False)]
        return [gr.update(selected="class-teach"), outer(True), *teacher.restore(held, request)]

    top_out = top if top is not None else gr.State()
    teacher_token.change(on_teacher, teacher_token, [tabs, top_out, presenter, qr, item_picture, item_text,
                                                     teacher_timer], **private)  # fmt: skip
    return {"load": {"fn": None, "js": FROM_CLASS_LINK}}


def live(token: str) -> bool:
    """Whether a token held by the browser still names an open class."""
    if not token:
        return False
    try:
        lessons.room_for(token)
    except ClassError:  # expired, or not a token of this server: nothing to restore
        return False
    return True
