"""Probe tab: one item, up to four models side by side, each pane filled as its answer arrives."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Iterable
from typing import Any

import gradio as gr

from models.types import GenerateConfig, ImagePart, Message
from probes.asking import perturb
from probes.asking.prompting import assemble_prompt
from probes.core.errors import UsageError
from probes.core.registry import benchmark_ids
from probes.core.types import Mode, Origin, Result
from probes.running.deadline import run_within
from probes.running.limits import current as limits
from probes.running.limits import whole_number
from probes.running.runner import RunPlan
from ui import items as item_choice
from ui.common import (
    backend_for,
    charge,
    escape,
    image_file,
    key_boxes,
    model_choices,
    paid_by_server,
    result_summary,
    session_keys,
    user_message,
    with_key_parameters,
)
from ui.sessions import room_for, store_for

MAX_MODELS = 4
MAX_SEED = 2**31 - 1
MAX_SHOTS = 16
SOURCES = ("Generated stimulus", "Benchmark item", "Upload")
PERTURBATIONS = [*perturb.FIXED, "rotate-options-1", "rotate-options-2"]
DEFAULT_MODELS = ["baseline/chance", None, None, None]


def build_probe() -> dict[str, Any]:
    spec = gr.State(None)
    with gr.Row():
        with gr.Column(scale=1):
            source = gr.Radio(list(SOURCES), value=SOURCES[0], label="Source", elem_id="probe-source")
            with gr.Group(visible=True) as generated_box:
                task = gr.Dropdown(
                    item_choice.generated_ids(), value="blind/touching-circles", label="Task", elem_id="probe-task"
                )
                params = gr.Textbox(label="Parameters", placeholder="gap=0.05 canvas=384",
                                    info="NAME=VALUE; parameters left out are drawn at random with the seed",
                                    elem_id="probe-params")  # fmt: skip
                seed = gr.Number(0, precision=0, label="Seed", elem_id="probe-seed")
                generate = gr.Button("Generate stimulus", elem_id="probe-generate")
            with gr.Group(visible=False) as benchmark_box:
                benchmark = gr.Dropdown(
                    benchmark_ids(), value="blind/touching-circles", label="Benchmark", elem_id="probe-benchmark"
                )
                data = gr.Textbox(label="Data folder", placeholder="only for benchmarks read from a folder (--data)")
                index = gr.Number(0, precision=0, label="Item number", elem_id="probe-index")
                with gr.Row():
                    load = gr.Button("Load", elem_id="probe-load")
                    pick_random = gr.Button("Random")
                    pick_next = gr.Button("Next")
            with gr.Group(visible=False) as upload_box:
                files = gr.File(file_count="multiple", file_types=["image"], label="Images", elem_id="probe-files")
                question = gr.Textbox(label="Question", elem_id="probe-question")
                options = gr.Textbox(label="Options, one per line (optional)", lines=3)
                answer = gr.Textbox(label="Answer: option text or letter (optional)")
                use_upload = gr.Button("Use these images", elem_id="probe-use-upload")
        with gr.Column(scale=2):
            item_images = gr.Gallery(
                label="Item", height=340, columns=2, object_fit="contain", elem_id="probe-item-images"
            )
            item_text = gr.Markdown(elem_id="probe-item-text")
            with gr.Accordion("Answer", open=False):
                item_answer = gr.Markdown(elem_id="probe-item-answer")

    choices = model_choices()
    with gr.Row():
        models = [
            gr.Dropdown(
                choices,
                value=DEFAULT_MODELS[i],
                label=f"Model {i + 1}",
                allow_custom_value=True,
                elem_id=f"probe-model-{i}",
            )  # fmt: skip
            for i in range(MAX_MODELS)
        ]
    with gr.Row():
        shots = gr.Radio([0, 4], value=0, label="Shots", elem_id="probe-shots")
        cot = gr.Checkbox(False, label="Chain of thought", elem_id="probe-cot")
        perturbation = gr.Dropdown(PERTURBATIONS, value="none", label="Perturbation", elem_id="probe-perturbation")
        ask = gr.Button("Ask", variant="primary", elem_id="probe-ask")
    with gr.Row():
        compare = {
            label: gr.Button(label, size="sm")
            for label in ("Again 4-shot", "Again with CoT", "Again upside down", "Again without image")
        }
    with gr.Accordion("API keys (used for this session only, never stored)", open=False):
        keys = key_boxes("probe")
    status = gr.Markdown(elem_id="probe-status")

    panes = []
    with gr.Row():
        for slot in range(MAX_MODELS):
            with gr.Column(min_width=220):
                summary = gr.Markdown(elem_id=f"probe-pane-{slot}")
                reply = gr.Textbox(label="Raw reply", interactive=False, lines=4, elem_id=f"probe-reply-{slot}")
                with gr.Accordion("Show prompt", open=False):
                    prompt_images = gr.Gallery(label="Images sent, in order", height=200, columns=3)
                    prompt_text = gr.Textbox(
                        label="Text sent", interactive=False, lines=8, elem_id=f"probe-prompt-{slot}"
                    )
            panes.append((summary, reply, prompt_images, prompt_text))
    pane_outputs = [component for pane in panes for component in pane]

    preview = [spec, item_images, item_text, item_answer, status]
    source.change(
        lambda s: [gr.update(visible=s == name) for name in SOURCES],
        source,
        [generated_box, benchmark_box, upload_box],
        api_visibility="private",
    )
    generate.click(generate_stimulus, [task, params, seed], preview, api_name="generate_stimulus")
    load.click(load_item, [benchmark, data, index], [*preview, index], api_name="load_item")
    pick_random.click(
        lambda b, d: load_item(b, d, random.randrange(1_000_000)), [benchmark, data], [*preview, index],
        api_visibility="private",
    )  # fmt: skip
    pick_next.click(
        lambda b, d, i: load_item(b, d, int(i or 0) + 1), [benchmark, data, index], [*preview, index],
        api_visibility="private",
    )  # fmt: skip
    use_upload.click(upload_item, [files, question, options, answer], preview, api_name="use_upload")

    ask_inputs = [spec, *models, shots, cot, perturbation, *keys]
    # Async and API-bound: many at once cost little (local models queue on their own worker).
    ask.click(with_key_parameters(probe), ask_inputs, [status, *pane_outputs], api_name="probe", concurrency_limit=32)
    again = {
        "Again 4-shot": lambda: (4, False, "none"),
        "Again with CoT": lambda: (gr.update(), True, gr.update()),
        "Again upside down": lambda: (gr.update(), gr.update(), "flip-vertical"),
        "Again without image": lambda: (gr.update(), gr.update(), "no-image"),
    }
    for label, settings in again.items():
        compare[label].click(settings, None, [shots, cot, perturbation], api_visibility="private").then(
            probe, ask_inputs, [status, *pane_outputs], concurrency_limit=8, api_visibility="private"
        )
    return {"spec": spec, "generate": generate, "ask": ask}


def _preview(spec: item_choice.ItemSpec) -> tuple:
    _, item = item_choice.resolve(spec)
    images, question, answer = item_choice.describe(item)
    return spec, images, escape(question), escape(answer), ""


def generate_stimulus(task: str, params: str, seed: float | None) -> tuple:
    try:
        bounds = limits()
        task, params = bounds.text("task", task), bounds.text("parameters", params)
        return _preview(item_choice.generated_spec(task, params, whole_number("seed", seed, 0, MAX_SEED, default=0)))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return gr.update(), gr.update(), gr.update(), gr.update(), f"⚠ {escape(user_message(exc))}"


def load_item(benchmark_id: str, data: str, index: float | None) -> tuple:
    try:
        bounds = limits()
        index = whole_number("item number", index, 0, MAX_SEED, default=0)
        spec = item_choice.benchmark_spec(bounds.benchmark(benchmark_id or ""), bounds.data(data), index)
        return (*_preview(spec), spec.index)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return gr.update(), gr.update(), gr.update(), gr.update(), f"⚠ {escape(user_message(exc))}", gr.update()


def upload_item(files: list[str] | None, question: str, options: str, answer: str) -> tuple:
    try:
        return _preview(item_choice.upload_spec(files or [], question, options, answer))
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return gr.update(), gr.update(), gr.update(), gr.update(), f"⚠ {escape(user_message(exc))}"


async def probe(
    request: gr.Request,
    spec: item_choice.ItemSpec | None,
    model_1: str | None,
    model_2: str | None,
    model_3: str | None,
    model_4: str | None,
    shots: int,
    cot: bool,
    perturbation: str,
    *typed_keys: str,
) -> AsyncIterator[list]:
    """Ask every chosen model; yield after each answer so panes fill in the order answers come.
    Each frame sends only the panes that changed (images are the costly part of a frame).
    `typed_keys` are the visitor's key boxes, one per key provider (`ui.common.key_boxes`)."""
    panes: list[list[Any]] = [["", "", [], ""] for _ in range(MAX_MODELS)]

    def frame(status: str, changed: Iterable[int] = range(MAX_MODELS)) -> list:
        changed = set(changed)
        values = [panes[slot] if slot in changed else [gr.skip()] * 4 for slot in range(MAX_MODELS)]
        return [status, *[value for pane in values for value in pane]]

    chosen = [(slot, m.strip()) for slot, m in enumerate([model_1, model_2, model_3, model_4]) if m and m.strip()]
    keys = session_keys(*typed_keys)
    try:
        if not chosen:
            raise UsageError("choose at least one model")
        mode = Mode(whole_number("number of shots", shots, 0, MAX_SHOTS, default=0), bool(cot))
        perturb.check(limits().text("perturbation", perturbation))
        backends = [(slot, backend_for(model_id, keys)) for slot, model_id in chosen]
        benchmark, item = item_choice.resolve(spec)
        room_for(request, len(chosen))
        charge(request, sum(paid_by_server(m, keys) for _, m in chosen))
        _, prompt = await asyncio.to_thread(assemble_prompt, benchmark, item, mode, perturbation)
        sent_images = await asyncio.to_thread(_prompt_images, prompt.messages)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        yield frame(f"⚠ {escape(user_message(exc))}")
        return

    # The same settings as `python -m probes run` (seed 0 by default), so answers are shared
    # through the cache between the CLI, Evaluate and this tab.
    config = GenerateConfig(max_tokens=mode.max_tokens, seed=0)
    finished: asyncio.Queue = asyncio.Queue()

    async def ask_one(slot: int, backend) -> None:
        try:
            plan = RunPlan(benchmark, [item], [backend], mode, perturbation, config, origin=Origin.PROBE)
            [result] = await run_within(plan, store_for(request), limits().deadline)
            await finished.put((slot, result, None))
        except Exception as exc:  # noqa: BLE001 - one model's failure is its own pane's message
            await finished.put((slot, None, user_message(exc)))

    for slot, model_id in chosen:
        panes[slot][0] = f"**{escape(model_id)}** · asking…"
    yield frame(f"Asking {len(chosen)} model(s), {mode.label}, perturbation {perturbation}…")
    tasks = [asyncio.create_task(ask_one(slot, backend)) for slot, backend in backends]
    try:
        for done in range(1, len(tasks) + 1):
            slot, result, error = await finished.get()
            if result is not None:
                panes[slot][:2] = [result_summary(result, _target_text(item, result)), result.reply or ""]
            else:
                panes[slot][:2] = [f"**{escape(chosen_id(chosen, slot))}** · ⚠ {escape(error or '')}", ""]
            panes[slot][2:] = [sent_images, _prompt_text(prompt.messages)]
            # The last frame carries every pane: an API client reads its answer from it.
            yield frame(f"{done} of {len(tasks)} answered", changed=[slot] if done < len(tasks) else range(MAX_MODELS))
    finally:
        for task in tasks:
            task.cancel()


def chosen_id(chosen: list[tuple[int, str]], slot: int) -> str:
    return next(model_id for s, model_id in chosen if s == slot)


def _target_text(item, result: Result) -> str | None:
    if item.target is None:
        return None
    if item.options and isinstance(result.target, int):
        return f"{item.labels[result.target]}"
    return item.target_text()


def _prompt_images(messages: tuple[Message, ...]) -> list[tuple[str, str]]:
    """The images sent, in order, as PNG files written once (by content): every pane and every
    frame reuses the file instead of encoding the picture again."""
    images = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, ImagePart):
                images.append((image_file(part), f"image {len(images) + 1} ({message.role})"))
    return images


def _prompt_text(messages: tuple[Message, ...]) -> str:
    """The conversation as sent, images marked where they stand."""
    lines = []
    count = 0
    for message in messages:
        pieces = []
        for part in message.parts:
            if isinstance(part, ImagePart):
                count += 1
                pieces.append(f"[image {count}]")
            else:
                pieces.append(part.text)
        lines.append(f"--- {message.role} ---\n" + "\n".join(pieces))
    return "\n\n".join(lines)
