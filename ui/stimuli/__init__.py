"""Stimulus lab tab: every parameter of a generated task as a control, a live preview with the
question and the ground truth the generator computed, the PNG to download, and a set of N items
exported as a zip in the `python -m probes generate` layout.

The chosen parameters travel between events as a small spec, {"task": ID, "params": {NAME:
VALUE}}, values written as on the command line (`--param gap=-0.1`): one value per parameter
builds a benchmark of one stimulus (or a few, when a parameter such as `letter=all` or
`repeats` still spans several, shown as variants). The spec is also the API's input
(`stimulus_preview`, `export_stimuli`); parameters it leaves out take the paper's values.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import gradio as gr

from probes.benchmarks.generated import Param
from probes.core.errors import BenchmarkError, UsageError
from probes.core.types import AnswerKind, Item
from probes.files.export import generated_set, write_generated
from probes.files.set_spec import spec_of
from probes.running.limits import current as limits
from probes.running.limits import whole_number
from ui import items as item_choice
from ui.choices import CheckboxGroup, Dropdown
from ui.common import escape, user_message
from ui.human.view import show_tab_js
from ui.items import ItemSpec
from ui.stimuli.params import Spec, control, default_spec, generator, task_params, value_text

DEFAULT_TASK = "blind/touching-circles"
MAX_EXPORT = 1000
MAX_PARAMS = 32  # parameters in a spec (the largest family has about a dozen)
# Previews and exports are written here (Gradio serves files from the temp folder).
LAB_DIR = Path(tempfile.gettempdir()) / "perception-lab"
SHOW_PROBE_JS = show_tab_js("probe", "Probe")


# --- one stimulus ------------------------------------------------------------------------------


def stimulus(spec: Spec, variant: float | None) -> tuple[Item, int, int]:
    """(item, how many the parameters give, which one) for a spec: each parameter fixed to its
    one value; a parameter left out takes the paper's values."""
    task, params = _checked_spec(spec)
    items = item_choice.benchmark_of(task, params={name: [value] for name, value in params.items()}).items()
    if not items:
        raise BenchmarkError(f"{task}: these parameters give no stimulus")
    index = whole_number("variant", variant, 0, 2**31 - 1, default=0) % len(items)
    return items[index], len(items), index


def _checked_spec(spec: Any) -> tuple[str, dict[str, str]]:
    """(task, NAME -> value) from a spec an API caller may have written by hand."""
    shape = 'give {"task": "blind/...", "params": {"NAME": "VALUE"}}'
    if not isinstance(spec, dict) or not isinstance(spec.get("task"), str):
        raise UsageError(shape)
    raw = spec.get("params") or {}
    if not isinstance(raw, dict) or len(raw) > MAX_PARAMS:
        raise UsageError(shape + f" (at most {MAX_PARAMS} parameters)")
    bounds = limits()
    task = bounds.text("task", spec["task"])
    bounds.admit(benchmark=task)  # the public-mode gate (an export builds its set past ui.items)
    generator(task)
    params = {bounds.text("parameter name", str(name)): bounds.text(f"value of {name}", str(value))
              for name, value in raw.items()}  # fmt: skip
    return task, params


MAX_NAME = 60  # a downloaded file's name, ".png" included: whole in a file manager's column


def file_name(task: str, item: Item) -> str:
    """`touching-circles_canvas=384_diameter=0.25_gap=-0.15_5335.png`: the parameters that drew it, as
    many whole ones as fit in MAX_NAME characters, those the design sweeps first (the values that
    tell its pictures apart), then a short hash of the item, which keeps two pictures' names apart
    where what tells them apart is left out or is no parameter (a random draw of its seed)."""
    declared = list(getattr(generator(task), "params", {}).items())
    order = {name: (0 if len(spec.default) > 1 else 1, i) for i, (name, spec) in enumerate(declared)}
    names = sorted(item.params, key=lambda name: order.get(name, (2, 0)))
    head = re.sub(r"[^A-Za-z0-9=.+-]", "", task.rpartition("/")[2])
    parts = [part for part in (re.sub(r"[^A-Za-z0-9=.+-]", "", f"{n}={item.params[n]}") for n in names) if part]
    mark = "_" + hashlib.sha1(f"{task}|{item.id}".encode()).hexdigest()[:4] + ".png"
    kept = head[: MAX_NAME - len(mark)]
    for part in parts:  # whole parameters only, never one cut mid-word; a shorter later one may fit
        if len(kept) + 1 + len(part) + len(mark) <= MAX_NAME:
            kept += "_" + part
    return kept + mark


def write_png(task: str, item: Item) -> Path:
    """The item's image as a PNG under a folder named by the item, written once (atomically,
    since two sessions may ask for the same stimulus at the same time)."""
    folder = LAB_DIR / hashlib.sha1(f"{task}|{item.id}".encode()).hexdigest()[:16]
    path = folder / file_name(task, item)
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".part", delete=False) as handle:
            item.images[0].load().save(handle, format="PNG")
        Path(handle.name).replace(path)
    return path


def preview(spec: Spec, variant: float | None) -> tuple:
    """Outputs for [image, question, answer, values, download, status]."""
    try:
        item, count, index = stimulus(spec, variant)
        path = write_png(spec["task"], item)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return failed(user_message(exc))
    _, question, answer = item_choice.describe(item)
    if item.target is None and item.kind is AnswerKind.CHOICE:  # an illusion's targets measured equal
        answer = "equal (neither option is right; not graded)"
    status = f"These parameters give {count} stimuli: showing variant {index}." if count > 1 else ""
    values = {**item.params, "answer": item.target_text()}
    download = gr.update(value=str(path), interactive=True)
    truth = f"Ground truth: **{escape(answer)}**" + measured_text(item)
    return str(path), escape(question), truth, values, download, status


def measured_text(item: Item) -> str:
    """The targets as measured in the pixels drawn (the illusions keep them as `measured_*`
    parameters: lengths, areas, offsets, angles), as a second line; empty when there are none."""
    units = {"px": "px", "deg": "°"}
    parts = []
    for key, value in item.params.items():
        name = key.removeprefix("measured_")
        words = name.split("_")
        if not key.startswith("measured_") or words[-1] not in units or name == "difference":
            continue
        unit = "px²" if "area" in words else units[words[-1]]
        parts.append(f"{' '.join(words[:-1])} {value:g} {unit}")
    return "  \nMeasured in the pixels drawn: " + escape(" · ".join(parts)) if parts else ""


def failed(message: str) -> tuple:
    """Preview outputs for a choice that draws nothing: the generator's message, no stale image
    or answer left on show."""
    return None, "", "", None, gr.update(value=None, interactive=False), f"⚠ {escape(message)}"


# --- a set -----------------------------------------------------------------------------------


def export_stimuli(
    spec: Spec,
    fixed: list[str] | None,
    n: float | None,
    seed: float | None,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 (Gradio injects it)
) -> tuple:
    """N items of the task as a zip in the `generate` layout: the parameters in `fixed` keep the
    spec's values, the others take the paper's design, sampled with the seed as `generate` does.
    Outputs for [zip file, status, command line]."""
    try:
        task, chosen = _checked_spec(spec)
        if not isinstance(fixed, list | tuple | type(None)) or len(fixed or []) > MAX_PARAMS:
            raise UsageError("name the parameters to keep fixed as a list")
        params = {name: [chosen[name]] for name in fixed or [] if name in chosen}
        count = whole_number("number of items to export", n, 1, MAX_EXPORT)
        seed = whole_number("seed", seed, 0, 2**31 - 1, default=0)
        progress(0, desc="Building the design")
        benchmark, items = generated_set(task, params, count, seed)
        folder = Path(tempfile.mkdtemp(prefix="export-", dir=_lab_dir()))
        # Drawn in this process (workers=1): forking the server, its threads and its memory for
        # a pool of drawing processes is unsafe, and two exports at once took the process tree
        # past 4 GB (bench/abuse.py "exports"). The command line's `generate` draws in parallel.
        on_item = lambda done: progress((done, len(items)), desc="Drawing", unit="items")  # noqa: E731
        write_generated(items, folder / "set", on_item, workers=1, spec=spec_of(task, params, count, seed))
        archive = _zip(folder / "set", folder / f"{task.rpartition('/')[2]}-{len(items)}-seed{seed}.zip")
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return gr.update(value=None, visible=False), f"⚠ {escape(user_message(exc))}", ""
    note = f"Exported {len(items)} items of {escape(task)} (seed {seed})."
    if len(items) < count:
        note += f" These parameters give only {len(items)} items."
    return gr.update(value=str(archive), visible=True), note, command_line(task, params, count, seed)


def _lab_dir() -> Path:
    LAB_DIR.mkdir(parents=True, exist_ok=True)
    return LAB_DIR


def _zip(folder: Path, archive: Path) -> Path:
    """The folder's files at the zip's root; PNGs stored as they are (already compressed). The
    folder goes once zipped: only the zip is served."""
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted(folder.iterdir()):
            kind = zipfile.ZIP_STORED if path.suffix == ".png" else zipfile.ZIP_DEFLATED
            bundle.write(path, path.name, compress_type=kind)
    shutil.rmtree(folder)
    return archive


def command_line(task: str, params: dict[str, list[str]], n: int, seed: int) -> str:
    words = ["python", "-m", "probes", "generate", task, "--n", str(n), "--seed", str(seed)]
    for name, values in params.items():
        words += ["--param", f"{name}={','.join(values)}"]
    return shlex.join([*words, "--out", "OUT"])


# --- the tab ---------------------------------------------------------------------------------

# Typing into a slider's number box: the value is applied on Enter (or on leaving the box), not
# at every keystroke (a half-typed "3" of "384" would draw a 3-pixel canvas). Installed once
# per page by an empty HTML block's js_on_load; it acts on the lab's own elements only.
LAB_SCRIPT = r"""
if (!window.stimulusLab) {
  window.stimulusLab = true;
  const sliderBox = (el) => el instanceof HTMLInputElement && el.type === "number" &&
    !!el.closest('[id^="stim-param-"]')?.querySelector("input[type=range]");
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && sliderBox(event.target)) event.target.blur(); // the slider's release
  }, true);
  document.addEventListener("focusin", (event) => {
    const box = event.target;
    if (!sliderBox(box) || box.dataset.labQuiet) return;
    box.dataset.labQuiet = "1";
    // The box keeps what is typed (its own listener ran first), but the slider is not told of
    // each key, nor of a click into the box; its spin arrows (no InputEvent) still step live.
    box.addEventListener("input", (e) => { if (e instanceof InputEvent) e.stopPropagation(); });
    box.addEventListener("pointerup", (e) => e.stopPropagation());
  });
  // While a new preview loads, the last one stays drawn behind it (as the image's background):
  // a dragged slider shows a moving picture, not a blink of white between frames.
  const keep = (img) => { img.style.background = `url("${img.currentSrc}") center / 100% 100% no-repeat`; };
  document.addEventListener("load", (event) => {
    if (event.target.tagName === "IMG" && event.target.closest("#stim-image")) keep(event.target);
  }, true);
  document.querySelectorAll("#stim-image img").forEach((img) => { if (img.complete && img.naturalWidth) keep(img); });
}
"""


def build_stimuli() -> dict[str, Any]:
    """The tab. Returns its parts for app.py: `ask` (the "Ask models about this" button),
    `spec` and `variant` (what is on show), `to_probe` (spec, variant -> ui.items.ItemSpec)
    and `show_probe_js` (switches to the Probe tab): see `to_probe`."""
    first = default_spec(DEFAULT_TASK)
    image0, question0, answer0, values0, _, status0 = preview(first, 0)
    gr.HTML("", js_on_load=LAB_SCRIPT, visible="hidden", elem_id="stim-script")
    # On a phone the picture comes first and stays in view while the controls below it move
    # (assets/app.css: the right column's parts join the row, the image sticks to the top).
    with gr.Row(elem_id="stim-row"):
        with gr.Column(scale=1, min_width=320, elem_id="stim-controls"):
            task = Dropdown(item_choice.generated_ids(), value=DEFAULT_TASK, label="Task", elem_id="stim-task")
            controls_area = gr.Column()
            variant = gr.Number(0, precision=0, minimum=0, label="Variant",
                                info="when the parameters still give several stimuli", elem_id="stim-variant")  # fmt: skip
        with gr.Column(scale=2, elem_id="stim-preview"):
            image = gr.Image(image0, type="filepath", format="png", label="Stimulus", interactive=False, height=460,
                             buttons=["fullscreen"], elem_id="stim-image")  # fmt: skip
            status = gr.Markdown(status0, elem_id="stim-status")
            question = gr.Markdown(question0, elem_id="stim-question")
            answer = gr.Markdown(answer0, elem_id="stim-answer")
            with gr.Row():
                ask = gr.Button("Ask models about this", variant="primary", elem_id="stim-ask")
                download = gr.DownloadButton("Download PNG", image0, elem_id="stim-download")
            with gr.Accordion("Parameter values of this stimulus", open=True):
                values = gr.JSON(values0, elem_id="stim-values")
    # The spec the controls stand for: hidden, read by the variant, the export and the API.
    chosen = gr.JSON(first, visible=False, elem_id="stim-spec")
    # The ticked names again, unchecked: a CheckboxGroup only accepts its first task's choices
    # from an API client, and the export must take any task's parameters.
    fixed_names = gr.JSON([], visible=False, elem_id="stim-fixed-names")

    with gr.Accordion("Export a set", open=True):
        with gr.Row():
            count = gr.Number(20, precision=0, minimum=1, maximum=MAX_EXPORT, label="Items", elem_id="stim-n")
            seed = gr.Number(0, precision=0, label="Seed", info="which items are drawn: the same seed, the same items",
                             elem_id="stim-seed")  # fmt: skip
            fixed = CheckboxGroup(list(first["params"]), value=[], label="Keep fixed at the values above",
                                     info="ticked when you change a control; the rest follow the paper's design",
                                     elem_id="stim-fixed", scale=3)  # fmt: skip
        export = gr.Button("Export zip", variant="primary", elem_id="stim-export")
        with gr.Row():
            archive = gr.File(label="Zip: PNGs + metadata.jsonl", interactive=False, visible=False, elem_id="stim-zip")
            with gr.Column():
                export_status = gr.Markdown(elem_id="stim-export-status")
                command = gr.Textbox(label="The same set from the command line", interactive=False,
                                     elem_id="stim-command")  # fmt: skip

    shown = [image, question, answer, values, download, status]
    # Redraws are bounded: "always_last" keeps at most one per session in flight (a drag sends
    # the newest value when the last one is drawn), and two at a time for everyone.
    redraw = {"trigger_mode": "always_last", "concurrency_limit": 2, "concurrency_id": "stimulus-preview"}

    with controls_area:

        @gr.render(inputs=task)
        def render_controls(task_id: str) -> None:
            try:
                params = task_params(task_id)
            except BenchmarkError as exc:
                gr.Markdown(f"⚠ {escape(str(exc))}")
                return
            widgets = {name: control(task_id, name, spec) for name, spec in params.items()}
            triggers = {name: _triggers(widget) for name, widget in widgets.items()}
            # One event for all controls: always_last keeps one session's redraws in order.
            gr.on(
                [trigger for both in triggers.values() for trigger in both],
                _on_controls(task_id, params),
                [variant, *widgets.values()],
                [chosen, *shown],
                show_progress="hidden",
                api_visibility="private",
                **redraw,
            )
            for name, widget in widgets.items():  # a person's change, not a redraw's
                ticks = [widget.input, widget.release] if isinstance(widget, gr.Slider) else [widget.input]
                gr.on(ticks, None, fixed, fixed, js=_tick_js(list(params), name), api_visibility="private")

    task.change(select_task, task, [chosen, fixed, variant, *shown], show_progress="minimal", api_visibility="private")
    variant.input(preview, [chosen, variant], shown, api_name="stimulus_preview", show_progress="hidden", **redraw)
    # Mirrored in the browser (no round trip), so an export clicked right after a tick sees it.
    fixed.change(None, fixed, fixed_names, js="(names) => [names]", api_visibility="private")
    export.click(
        export_stimuli,
        [chosen, fixed_names, count, seed],
        [archive, export_status, command],
        api_name="export_stimuli",
        concurrency_limit=2,
        concurrency_id="stimulus-export",
    )
    return {"task": task, "spec": chosen, "variant": variant, "export": export, "ask": ask,
            "to_probe": to_probe, "show_probe_js": SHOW_PROBE_JS}  # fmt: skip


def _triggers(widget: gr.components.Component) -> list:
    """When a control redraws: a slider while it is dragged (`input`) and when let go or its
    box is left or sent with Enter (`release`); a number box on Enter or on leaving it; a list
    when a value is chosen."""
    if isinstance(widget, gr.Slider):
        return [widget.input, widget.release]
    if isinstance(widget, gr.Number):
        return [widget.submit, widget.blur]
    return [widget.input]


def to_probe(spec: Spec, variant: float | None) -> ItemSpec:
    """The stimulus on show as the Probe tab's item: the same task, parameters and variant, so
    the stage draws exactly this image. A spec that draws nothing raises gr.Error (a message
    for the visitor; the Probe stage keeps its item). app.py connects the button to the stage.
    """
    try:
        task, params = _checked_spec(spec)
        _, _, index = stimulus(spec, variant)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        raise gr.Error(user_message(exc)) from None
    return ItemSpec("generated", task, index, params={name: [value] for name, value in params.items()})


def _on_controls(task: str, params: dict[str, Param]):
    """Handler for the task's controls: reads them all into a spec and redraws."""
    names = list(params)

    def handler(variant: float | None, *raw: Any) -> tuple:
        try:
            spec = {"task": task, "params": {n: value_text(params[n], v) for n, v in zip(names, raw, strict=True)}}
        except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
            return gr.update(), *failed(user_message(exc))
        return spec, *preview(spec, variant)

    return handler


def _tick_js(names: list[str], name: str) -> str:
    """Tick a control's name among those kept fixed for the export, in the browser: each tick
    lands at once, so quick changes to two controls cannot undo each other's tick."""
    return f"(ticked) => [{json.dumps(names)}.filter((n) => n === {json.dumps(name)} || (ticked || []).includes(n))]"


def select_task(task: str) -> tuple:
    try:
        spec = default_spec(task)
    except BenchmarkError as exc:
        return gr.update(), gr.update(), gr.update(), *failed(str(exc))
    fixed = gr.update(choices=list(spec["params"]), value=[])
    return spec, fixed, 0, *preview(spec, 0)
