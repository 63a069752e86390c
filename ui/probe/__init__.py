"""Probe tab, the stage: one item shown whole (already there on a first visit), Examples one click
away, up to four models and the conditions to compare (each one change from the item as asked),
and the answers as a models x conditions grid filled as they arrive, each condition's exact
prompt once below it. The page address then replays the probe from the cache."""

from __future__ import annotations

import functools
import random
from typing import Any

import gradio as gr

from models.hf_backend import loaded_models
from models.types import fit_within
from probes.core.errors import UsageError
from probes.core.registry import benchmark_ids
from probes.demo.conditions import CONDITIONS
from probes.running.limits import current as limits
from probes.running.limits import whole_number
from probes.running.link_store import KEEP_DAYS, expired
from ui import examples
from ui import items as item_choice
from ui.choices import CheckboxGroup, Dropdown, Radio
from ui.common import (
    escape,
    key_boxes,
    model_choices,
    user_message,
    with_key_parameters,
)
from ui.probe import export
from ui.probe import stage as stage_js
from ui.probe.ask import probe, probe_query, sent_by_condition, status_html
from ui.probe.export import Probed
from ui.probe.grid import DEFAULT_CONDITIONS, Cell, grid_html, prompts_html, tally_words
from ui.probe.share import decode, replay
from ui.sessions import cache_reading

MAX_MODELS = 4
MAX_IMAGES = 4  # image slots on the stage; an item with more shows the first four
MAX_SEED = 2**31 - 1
SOURCES = ("Generated stimulus", "Benchmark item", "Upload")
DEFAULT_MODELS = ["baseline/chance", "baseline/pixels", None, None]
STAGE_HEIGHT = 440
# Pixels a side of an image on the stage, full screen included (the models are sent the
# original): a 16 MP upload is not encoded and sent to the browser whole.
STAGE_MAX_SIDE = 2048


def build_probe() -> dict[str, Any]:
    first = examples.spec_of(examples.FIRST)
    first_view = _view(first)
    spec = gr.State(first)
    probed = gr.State(None)  # the last Ask's grid as data, for the downloads
    # The stage column holds the picture, the question and, right under them, the answers: a
    # presenter sees all three at once (ui/probe/stage.py sizes the picture to the window). The
    # controls and the Examples stand beside it (under it on a phone, after the answers).
    with gr.Row(equal_height=False, elem_id="probe-row"):
        with gr.Column(scale=3, min_width=320, elem_id="probe-stage"):
            with gr.Row(elem_id="probe-stage-images"):
                slots = [
                    gr.Image(first_view[i], type="pil", format="png", label=f"Image {i + 1}", show_label=False,
                             interactive=False, height=STAGE_HEIGHT, buttons=["fullscreen", "download"],
                             visible=first_view[i] is not None, min_width=160, elem_id=f"probe-image-{i}")
                    for i in range(MAX_IMAGES)
                ]  # fmt: skip
            item_text = gr.Markdown(first_view[MAX_IMAGES], elem_id="probe-item-text")
            with gr.Accordion("Right answer", open=False, elem_id="probe-answer-box"):
                item_answer = gr.Markdown(first_view[MAX_IMAGES + 1], elem_id="probe-item-answer")
            status = gr.HTML(elem_id="probe-status", js_on_load=stage_js.SCRIPT)
            grid = gr.HTML(elem_id="probe-grid")
            with gr.Row(elem_id="probe-downloads"):
                png = gr.DownloadButton("Grid as PNG (for slides)", visible=False, size="sm", elem_id="probe-png")
                csv = gr.DownloadButton("Grid as CSV", visible=False, size="sm", elem_id="probe-csv")
            link = gr.Textbox(label="Share this probe (the link replays it from the cache)", interactive=False,
                              buttons=["copy"], visible=False, elem_id="probe-link")  # fmt: skip
            prompts = gr.HTML(elem_id="probe-prompts")
            query = gr.Textbox(visible=False, elem_id="probe-query")
        with gr.Column(scale=2, min_width=300, elem_id="probe-controls"):
            choices = model_choices()
            models = []
            for pair in range(0, MAX_MODELS, 2):  # two by two: the Examples stay near the top
                with gr.Row(elem_classes=["probe-model-pair"]):
                    models += [
                        Dropdown(choices, value=DEFAULT_MODELS[i], label=f"Model {i + 1}", allow_custom_value=True,
                                 min_width=200, elem_id=f"probe-model-{i}")
                        for i in range(pair, pair + 2)
                    ]  # fmt: skip
            conditions = CheckboxGroup(list(CONDITIONS), value=list(DEFAULT_CONDITIONS), label="Conditions",
                                          info="each one change from the item as asked", elem_id="probe-conditions")  # fmt: skip
            ask = gr.Button("Ask", variant="primary", elem_id="probe-ask")
            with gr.Accordion("API keys (used for this session only, never stored)", open=False):
                keys = key_boxes("probe")
            # Beside the stage, not above the answers: the gallery wraps to the column's width.
            gallery = gr.Gallery(examples.gallery(), label="Examples: click one to put it on the stage", columns=3,
                                 height="auto", allow_preview=False, object_fit="contain",
                                 elem_id="probe-examples")  # fmt: skip
            with gr.Accordion("Choose another item", open=True, elem_id="probe-choose"):
                source = Radio(list(SOURCES), value=SOURCES[0], label="Source", elem_id="probe-source")
                with gr.Group(visible=True) as generated_box:
                    task = Dropdown(item_choice.generated_ids(), value="blind/touching-circles", label="Task",
                                       elem_id="probe-task")  # fmt: skip
                    params = gr.Textbox(label="Parameters", placeholder="gap=0.05 canvas=384",
                                        info="NAME=VALUE; parameters left out are drawn at random with the seed",
                                        elem_id="probe-params")  # fmt: skip
                    seed = gr.Number(0, precision=0, label="Seed", elem_id="probe-seed")
                    generate = gr.Button("Generate stimulus", elem_id="probe-generate")
                with gr.Group(visible=False) as benchmark_box:
                    benchmark = Dropdown(benchmark_ids(), value="blind/touching-circles", label="Benchmark",
                                            elem_id="probe-benchmark")  # fmt: skip
                    data = gr.Textbox(label="Data folder", placeholder="only for benchmarks read from a folder: its path",
                                      visible=not limits().public)  # fmt: skip
                    index = gr.Number(0, precision=0, label="Item number", elem_id="probe-index")
                    with gr.Row():
                        load = gr.Button("Load", elem_id="probe-load")
                        pick_random = gr.Button("Random", elem_id="probe-random")
                        pick_next = gr.Button("Next", elem_id="probe-next")
                with gr.Group(visible=False) as upload_box:
                    files = gr.File(file_count="multiple", file_types=["image"], label="Images", elem_id="probe-files")
                    question = gr.Textbox(label="Question", elem_id="probe-question")
                    options = gr.Textbox(label="Options, one per line (optional)", lines=3)
                    answer = gr.Textbox(label="Answer: option text or letter (optional)")
                    use_upload = gr.Button("Use these images", elem_id="probe-use-upload")

    stage = [spec, *slots, item_text, item_answer, status]
    downloads = [png, csv]
    answers = [status, grid, prompts, query, probed]
    # Async and API-bound: many at once cost little (local models queue on their own worker).
    asking = ask.click(None, js=stage_js.REVEAL).then(
        with_key_parameters(probe), [spec, *models, conditions, *keys], answers, api_name="probe", concurrency_limit=32
    )
    # `success`, not `then`: a probe stopped by another item leaves the new item's address and
    # downloads alone.
    asking.success(None, query, link, js=stage_js.SET_ADDRESS).success(
        _share_box, query, link, api_visibility="private"
    )  # fmt: skip
    # The downloads are checked again once made: another item may have come on stage while they
    # were being made (a running event is not cancelled), and they belong to the last item.
    asking.success(export_files, [probed, spec], downloads, api_visibility="private").then(
        _still_on_stage, [probed, spec], downloads, api_visibility="private"
    )  # fmt: skip

    def new_item(trigger: Any, handler: Any, inputs: list, outputs: list, *, example: bool = False,
                 **options: Any) -> Any:  # fmt: skip
        """Another item on the stage: the last one's answers go at once (in the browser), a
        probe still answering for it is stopped, and once the new item is drawn the address
        names it. The handler's own outputs stay as they were (some are API endpoints). Once an
        item chosen otherwise than from the Examples (`example`) is on stage, the gallery marks
        the Example it is, or none: never a picture that is not on the stage."""
        trigger(None, None, [status, grid, prompts, query, link], js=stage_js.CLEAR, api_visibility="private")
        event = trigger(handler, inputs, outputs, cancels=[asking], **options)
        if not example:
            event.then(_marked_example, spec, gallery, api_visibility="private")
        return event.then(fresh_item, spec, [grid, prompts, query, link, probed, *downloads],
                          api_visibility="private").then(None, query, None, js=stage_js.SET_ADDRESS)  # fmt: skip

    source.change(
        lambda s: [gr.update(visible=s == name) for name in SOURCES], source,
        [generated_box, benchmark_box, upload_box], api_visibility="private",
    )  # fmt: skip
    new_item(generate.click, generate_stimulus, [task, params, seed], stage, api_name="generate_stimulus")
    new_item(load.click, load_item, [benchmark, data, index], [*stage, index], api_name="load_item")
    new_item(pick_random.click, lambda b, d: load_item(b, d, random.randrange(1_000_000)), [benchmark, data],
             [*stage, index], api_visibility="private")  # fmt: skip
    new_item(pick_next.click, lambda b, d, i: load_item(b, d, int(i or 0) + 1), [benchmark, data, index],
             [*stage, index], api_visibility="private")  # fmt: skip
    new_item(use_upload.click, upload_item, [files, question, options, answer], stage, api_name="use_upload")
    new_item(gallery.select, load_example, None, stage, example=True, api_visibility="private")

    loaded = [*stage, *models, conditions, grid, prompts, query, probed]
    on_load = (replay_link, None, loaded)
    return {"spec": spec, "generate": generate, "ask": ask, "on_load": on_load, "stage": stage,
            "show": show_item, "new_item": new_item, "after_load": after_load(query, link, probed, spec, downloads)}  # fmt: skip


def after_load(query: gr.Textbox, link: gr.Textbox, probed: gr.State, spec: gr.State, downloads: list) -> Any:
    """What follows the page's load (app.py chains it): a replayed link's address stays, its
    share box shows it, its downloads are made, and the stage comes into view with its grid."""

    def chain(event: Any) -> None:
        shown = event.then(None, query, link, js="(q) => { if (q) { window.probeStage?.reveal_soon(); } "
                           "return q ? location.href : ''; }")  # fmt: skip
        shown.then(_share_box, query, link, api_visibility="private")
        event.then(export_files, [probed, spec], downloads, api_visibility="private").then(
            _still_on_stage, [probed, spec], downloads, api_visibility="private"
        )  # fmt: skip

    return chain


@functools.cache
def _example_specs() -> tuple[item_choice.ItemSpec | None, ...]:
    specs: list[item_choice.ItemSpec | None] = []
    for example in examples.EXAMPLES:
        try:
            specs.append(examples.spec_of(example))
        except Exception:  # noqa: BLE001 - an Example that cannot be drawn here is never on stage
            specs.append(None)
    return tuple(specs)


def _marked_example(spec: item_choice.ItemSpec | None) -> gr.Gallery:
    """The gallery marking the Example on stage, or none. A component, not gr.update: Gradio 6
    sends `gr.update(selected_index=None)` yet the gallery keeps its highlight; the component's
    own selected_index clears it (its pictures kept)."""
    index = next((i for i, one in enumerate(_example_specs()) if one is not None and one == spec), None)
    return gr.Gallery(selected_index=index)


def _share_box(query: str | None) -> dict[str, Any]:
    """The share box shows a link to a probe (models and answers), not to an item alone: after
    a failed Ask the address still names the item, but there is nothing to share."""
    try:
        return gr.update(visible=bool(query) and bool(decode(query.removeprefix("?probe=")).models))
    except Exception:  # noqa: BLE001 - not a link we made: nothing to show
        return gr.update(visible=False)


def fresh_item(spec: item_choice.ItemSpec | None) -> list[Any]:
    """After a new item: no grid, prompts, link or downloads; the query names the item alone
    (a reload brings it back; an upload cannot be named, and the address then names nothing)."""
    shown = probe_query(spec, [], [], None) if spec is not None else ""
    hidden = gr.update(value=None, visible=False)
    return ["", "", shown, gr.update(value="", visible=False), None, hidden, hidden]


def export_files(probed: Probed | None, spec: item_choice.ItemSpec | None) -> list[Any]:
    """The downloads of the last grid: shown once every cell is in, and only while its item is
    the one on stage."""
    hidden = gr.update(value=None, visible=False)
    if probed is None or probed.spec != spec:
        return [hidden, hidden]
    try:
        png, csv = export.write(probed)
    except Exception as exc:  # noqa: BLE001 - a failed export must not break the probe shown
        user_message(exc)  # logged
        return [hidden, hidden]
    return [gr.update(value=str(png), visible=True), gr.update(value=str(csv), visible=True)]


def _still_on_stage(probed: Probed | None, spec: item_choice.ItemSpec | None) -> list[Any]:
    """After the downloads were made: hidden again if another item came on stage while they were
    being made (its `fresh_item` hid them before they arrived), else left as they are."""
    if probed is not None and probed.spec == spec:
        return [gr.skip(), gr.skip()]
    hidden = gr.update(value=None, visible=False)
    return [hidden, hidden]


# --- the stage --------------------------------------------------------------------------------


def _view(spec: item_choice.ItemSpec) -> list[Any]:
    """Images for the stage's slots (None hides a slot), the question and the answer."""
    _, item = item_choice.resolve(spec)
    images, question, answer = item_choice.describe(
        item, lambda image: fit_within(image, STAGE_MAX_SIDE, reducing_gap=3.0)
    )
    slots = [images[i] if i < len(images) else None for i in range(MAX_IMAGES)]
    if len(images) > MAX_IMAGES:
        question += f"\n\n({len(images)} images; the stage shows the first {MAX_IMAGES})"
    return [*slots, escape(question), escape(answer)]


def _stage(spec: item_choice.ItemSpec, status: str = "") -> list[Any]:
    view = _view(spec)
    slots = [gr.update(value=image, visible=image is not None) for image in view[:MAX_IMAGES]]
    return [spec, *slots, *view[MAX_IMAGES:], status]


def _unchanged_stage(message: str) -> list[Any]:
    return [gr.update()] * (1 + MAX_IMAGES + 2) + [status_html(message, warning=True)]


def show_item(spec: item_choice.ItemSpec | None) -> list[Any]:
    """Put an item another tab chose on the stage (the Stimulus lab's "Ask models about this")."""
    try:
        if spec is None:
            raise UsageError("no stimulus on show")
        return _stage(spec)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return _unchanged_stage(user_message(exc))


def generate_stimulus(task: str, params: str, seed: float | None) -> list[Any]:
    try:
        bounds = limits()
        task, params = bounds.text("task", task), bounds.text("parameters", params)
        return _stage(item_choice.generated_spec(task, params, whole_number("seed", seed, 0, MAX_SEED, default=0)))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return _unchanged_stage(user_message(exc))


def load_item(benchmark_id: str, data: str, index: float | None) -> list[Any]:
    try:
        bounds = limits()
        index = whole_number("item number", index, 0, MAX_SEED, default=0)
        spec = item_choice.benchmark_spec(bounds.benchmark(benchmark_id or ""), bounds.data(data), index)
        return [*_stage(spec), spec.index]
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return [*_unchanged_stage(user_message(exc)), gr.update()]


def upload_item(files: list[str] | None, question: str, options: str, answer: str) -> list[Any]:
    """Put uploaded images on the stage. A plain function on purpose: Gradio runs it in its
    thread pool, and what it waits for (checking and decoding each file) happens in a decoding
    worker process within bounds, so other visitors' requests are served meanwhile."""
    try:
        if not files:  # said first, and with the question if that is missing too
            asked = bool((question or "").strip())
            raise UsageError("no image was chosen: choose one or more under Images" + (
                "" if asked else ", and write a question about them under Question"))  # fmt: skip
        return _stage(item_choice.upload_spec(files, question, options, answer))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return _unchanged_stage(user_message(exc))


def load_example(event: gr.SelectData) -> list[Any]:
    try:
        return _stage(examples.spec_of(examples.EXAMPLES[int(event.index)]))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return _unchanged_stage(user_message(exc))


# --- a link that replays ------------------------------------------------------------------------


def _replayed(cells: dict[tuple[str, str], Cell], too_old: bool = False) -> str:
    """What a replay found, said as it is: nothing was sent, each outcome counted as Ask counts
    it, and what was not in the cache."""
    missing = sum(1 for cell in cells.values() if cell.state == "missing")
    counted = tally_words(list(cells.values()))
    if not missing:
        return f"Replayed from the cache: nothing was sent · {counted}. Press Ask to ask again."
    if too_old:
        return (f"This link is more than {KEEP_DAYS} days old: the answers kept for it have expired "
                f"({missing} of {len(cells)} not found). Press Ask to ask again.")  # fmt: skip
    return f"Replayed from the cache: nothing was sent · {counted}: press Ask to ask them."


def replay_link(request: gr.Request) -> list[Any]:
    """On page load: a `?probe=` address puts its item on the stage, its models and conditions
    in their boxes, and its answers in the grid, from the cache; nothing is sent. Without one, a
    local model already loaded takes the second model's place (it needs no key and is warm)."""
    value = (getattr(request, "query_params", None) or {}).get("probe") if request is not None else None
    stage_size = 1 + MAX_IMAGES + 3  # spec, images, question, answer, status
    unchanged = [gr.update()] * (stage_size + MAX_MODELS + 5)
    if not value:
        loaded = loaded_models()  # a local model already in memory answers at once: offer it
        if loaded:
            unchanged[stage_size + 1] = gr.update(value=loaded[-1])
        return unchanged
    try:
        shared = decode(limits().text("link", value))
        spec, models, names = shared.spec, shared.models, shared.conditions
        benchmark, item = item_choice.resolve(spec)
        if not models:  # the address of an item alone (chosen, not yet asked): the item, no grid
            return [*_stage(spec), *unchanged[stage_size : stage_size + MAX_MODELS + 1], "", "", f"?probe={value}",
                    None]  # fmt: skip
        with cache_reading(request, shared.link) as reader:
            cells = replay(spec, models, names, reader)
        stage = _stage(spec, status_html(_replayed(cells, expired(shared.day))))
        boxes = [gr.update(value=models[i] if i < len(models) else None) for i in range(MAX_MODELS)]
        sent = sent_by_condition(benchmark, item, names)
        return [*stage, *boxes, gr.update(value=names), grid_html(item, models, names, cells, sent),
                prompts_html(sent), f"?probe={value}", Probed.kept(spec, item, models, names, cells, sent)]  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return [*unchanged[: stage_size - 1], status_html(user_message(exc), warning=True), *unchanged[stage_size:]]
