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
import math
import re
import shlex
import shutil
import tempfile
import zipfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import gradio as gr

from probes.benchmarks.generated import GeneratedBenchmark, Param
from probes.core.errors import BenchmarkError, UsageError
from probes.core.registry import generated_families
from probes.core.types import Item
from probes.files.export import generated_set, write_generated
from probes.running.limits import current as limits
from probes.running.limits import whole_number
from ui import items as item_choice
from ui.common import escape, user_message

DEFAULT_TASK = "blind/touching-circles"
MAX_EXPORT = 1000
MAX_PARAMS = 32  # parameters in a spec (the largest family has about a dozen)
# Previews and exports are written here (Gradio serves files from the temp folder).
LAB_DIR = Path(tempfile.gettempdir()) / "perception-lab"

Spec = dict[str, Any]


# --- a task's parameters and their controls -------------------------------------------------


def generator(task: str) -> type[GeneratedBenchmark]:
    """The task's benchmark class (from the registry): its parameters without building its
    (possibly large) design."""
    families = generated_families()
    if task not in families:
        raise BenchmarkError(f"{task!r} is not a generated task; choose one of {', '.join(families)}")
    return families[task]


def task_params(task: str) -> dict[str, Param]:
    """Every parameter of the task, the prompt wording last (as GeneratedBenchmark takes it)."""
    cls = generator(task)
    return {**cls.params, "prompt": Param(tuple(cls.prompts), choices=tuple(cls.prompts))}


def is_numeric(spec: Param) -> bool:
    return all(isinstance(v, int | float | Fraction) and not isinstance(v, bool) for v in spec.default)


def is_integer(spec: Param) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in spec.default)


def slider_range(spec: Param) -> tuple[float, float, float]:
    """(minimum, maximum, step) spanning the paper's values, fine enough for values between:
    a tenth of the decade of the closest two values, or a hundredth when that leaves few steps."""
    numbers = sorted({float(v) for v in spec.default})
    low, high = numbers[0], numbers[-1]
    if is_integer(spec):
        return low, high, 1
    closest = min(b - a for a, b in zip(numbers, numbers[1:], strict=False))
    step = 10.0 ** math.floor(math.log10(closest))
    if (high - low) / step < 20:
        step /= 10
    decimals = _decimals(step)
    low = round(math.floor(round(low / step, 6)) * step, decimals)
    high = round(math.ceil(round(high / step, 6)) * step, decimals)
    return low, high, round(step, decimals)


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9))


def value_text(spec: Param, value: Any) -> str:
    """A control's value as the command line writes it: ints without ".0", floats short."""
    if value is None or value == "":
        raise BenchmarkError("every parameter needs a value")
    if is_numeric(spec) and spec.choices is None:
        number = float(value)
        if is_integer(spec):
            return str(int(round(number)))
        return repr(round(number, 6))
    return str(value).strip()


def control(task: str, name: str, spec: Param) -> gr.components.Component:
    """A slider for a numeric parameter the paper varies, a number for one it holds fixed (a
    seed, a set size), a dropdown for a list of names or allowed values. Keyed by task, so a
    task's controls never inherit another task's props when the controls are drawn anew."""
    label = "Prompt wording" if name == "prompt" else name.replace("_", " ").capitalize()
    elem_id, key = f"stim-param-{name}", f"{task}:{name}"
    first = spec.default[0]
    if is_numeric(spec) and spec.choices is None and len(set(spec.default)) > 1:
        low, high, step = slider_range(spec)
        precision = 0 if is_integer(spec) else _decimals(step)
        shown = [spec.label(v) for v in spec.default]
        info = "the paper: " + (
            ", ".join(shown) if len(shown) <= 6 else f"{shown[0]} to {shown[-1]}, {len(shown)} values"
        )
        return gr.Slider(low, high, float(first), step=step, precision=precision, label=label, info=info,
                         interactive=True, elem_id=elem_id, key=key, preserved_by_key=[])  # fmt: skip
    if is_numeric(spec) and spec.choices is None:
        precision = 0 if is_integer(spec) else None
        return gr.Number(
            first, precision=precision, label=label, interactive=True, elem_id=elem_id, key=key, preserved_by_key=[]
        )
    allowed = spec.choices if spec.choices is not None else spec.default
    own = spec.choices is None  # not limited to a list: the paper's values, or one of yours
    info = "the paper's values, or type your own" if own else None
    return gr.Dropdown([str(v) for v in allowed], value=str(first), label=label, info=info,
                       allow_custom_value=own, interactive=True, elem_id=elem_id, key=key, preserved_by_key=[])  # fmt: skip


def default_spec(task: str) -> Spec:
    """The spec the controls show when a task is chosen: each parameter at its first value."""
    return {
        "task": task,
        "params": {name: value_text(spec, spec.default[0]) for name, spec in task_params(task).items()},
    }


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
    generator(task)
    params = {bounds.text("parameter name", str(name)): bounds.text(f"value of {name}", str(value))
              for name, value in raw.items()}  # fmt: skip
    return task, params


def file_name(task: str, item: Item) -> str:
    """`touching-circles_canvas=384_..._prompt=touching.png`: the parameters that drew it."""
    values = [f"{name}={value}" for name, value in item.params.items()]
    text = "_".join([task.rpartition("/")[2], *values])
    return re.sub(r"[^A-Za-z0-9=.+_-]", "", text)[:180] + ".png"


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
    status = f"These parameters give {count} stimuli: showing variant {index}." if count > 1 else ""
    values = {**item.params, "answer": item.target_text()}
    download = gr.update(value=str(path), interactive=True)
    return str(path), escape(question), f"Ground truth: **{escape(answer)}**", values, download, status


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
        write_generated(items, folder / "set", lambda done: progress((done, len(items)), desc="Drawing", unit="items"))
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


def build_stimuli() -> dict[str, Any]:
    first = default_spec(DEFAULT_TASK)
    image0, question0, answer0, values0, _, status0 = preview(first, 0)
    with gr.Row():
        with gr.Column(scale=1, min_width=320):
            task = gr.Dropdown(item_choice.generated_ids(), value=DEFAULT_TASK, label="Task", elem_id="stim-task")
            controls_area = gr.Column()
            variant = gr.Number(0, precision=0, minimum=0, label="Variant",
                                info="when the parameters still give several stimuli", elem_id="stim-variant")  # fmt: skip
        with gr.Column(scale=2):
            image = gr.Image(image0, type="filepath", format="png", label="Stimulus", interactive=False, height=460,
                             buttons=["fullscreen"], elem_id="stim-image")  # fmt: skip
            status = gr.Markdown(status0, elem_id="stim-status")
            question = gr.Markdown(question0, elem_id="stim-question")
            answer = gr.Markdown(answer0, elem_id="stim-answer")
            download = gr.DownloadButton("Download PNG", image0, size="md", elem_id="stim-download")
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
            seed = gr.Number(0, precision=0, label="Seed", info="which items are drawn, as generate --seed",
                             elem_id="stim-seed")  # fmt: skip
            fixed = gr.CheckboxGroup(list(first["params"]), value=[], label="Keep fixed at the values above",
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

    with controls_area:

        @gr.render(inputs=task)
        def render_controls(task_id: str) -> None:
            try:
                params = task_params(task_id)
            except BenchmarkError as exc:
                gr.Markdown(f"⚠ {escape(str(exc))}")
                return
            widgets = {name: control(task_id, name, spec) for name, spec in params.items()}
            triggers = {name: w.release if isinstance(w, gr.Slider) else w.input for name, w in widgets.items()}
            # One event for all controls: always_last keeps one session's redraws in order.
            gr.on(
                list(triggers.values()),
                _on_controls(task_id, params),
                [variant, *widgets.values()],
                [chosen, *shown],
                trigger_mode="always_last",
                show_progress="minimal",
                api_visibility="private",
            )
            for name, trigger in triggers.items():
                trigger(None, fixed, fixed, js=_tick_js(list(params), name), api_visibility="private")

    task.change(select_task, task, [chosen, fixed, variant, *shown], show_progress="minimal", api_visibility="private")
    variant.input(preview, [chosen, variant], shown, api_name="stimulus_preview", trigger_mode="always_last")
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
    return {"task": task, "spec": chosen, "export": export}


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
