"""The Human tab's texture judgement: a judge marks each of a model's three generated texture
words natural or not, one item at a time; the judgement score (SPEC.md section 3, Eq. 1) is
computed by probes.benchmarks.shitsukan.judgement from what is stored."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gradio as gr
from PIL import Image

from probes.benchmarks.shitsukan import judgement
from probes.benchmarks.shitsukan.generation import BENCHMARK_ID as GENERATION_ID
from probes.core.errors import BenchmarkError, LimitExceeded, NameRejected, ProbeError, UsageError
from probes.files.images import load_image
from probes.people.human import check_name, tagged_name
from probes.running.limits import current as limits
from ui import items as item_choice
from ui.choices import Dropdown, Radio
from ui.common import escape, user_message
from ui.sessions import claim, people_quota, reading, session_tag, shared_store

WORDS = 3
VERDICTS = ["natural", "not natural"]
NO_RESULTS = (
    "No texture-generation results in the store yet: run `shitsukan/generation` on a model first "
    "(Evaluate tab, or `python -m probes run shitsukan/generation --model MODEL`), then refresh the list."
)


@dataclass(frozen=True)
class JudgeSession:
    """One judge working through one model's generations in one browser session."""

    judge: str
    key: tuple[str, str, str]  # (model, mode, perturbation) of the generations judged
    queue: tuple[judgement.Generated, ...]
    position: int = 0
    shown_at: float = 0.0

    @property
    def finished(self) -> bool:
        return self.position >= len(self.queue)


def build_judge() -> dict[str, Any]:
    """The judgement section; returns the refresh handler and its outputs for the sub-tab's select."""
    state = gr.State(None)
    choices = _model_choices(None)
    with gr.Row():
        with gr.Column(scale=1):
            gr.Markdown("Mark each word a model wrote for the object **natural** or **not natural**. "
                        "The judgement score is the mean share of words judged natural (Eq. 1).")  # fmt: skip
            judge = gr.Textbox(label="Your name (judge)", placeholder="e.g. Ada", elem_id="human-judge-name")
            model = Dropdown(choices, label="Model judged", elem_id="human-judge-model")
            refresh = gr.Button("↻ Refresh the list of models", size="sm", elem_id="human-judge-refresh")
            data = gr.Textbox(
                label="Data folder (only if the images moved since the run)",
                visible=not limits().public,
                elem_id="human-judge-data",
            )  # public: no server folders
            start = gr.Button("Start judging", variant="primary", elem_id="human-judge-start")
            availability = gr.Markdown(_availability(choices), elem_id="human-judge-available")
        with gr.Column(scale=2):
            progress = gr.Markdown(elem_id="human-judge-progress")
            image = gr.Image(label="Image", type="pil", height=320, interactive=False, elem_id="human-judge-image")
            subject = gr.Markdown(elem_id="human-judge-object")
            words, verdicts = [], []
            for i in range(WORDS):
                with gr.Row(equal_height=True):
                    words.append(gr.Textbox(label=f"Word {i + 1}", interactive=False, scale=2,
                                            elem_id=f"human-judge-word-{i}"))  # fmt: skip
                    verdicts.append(Radio(VERDICTS, label=f"Word {i + 1} is", scale=2,
                                             elem_id=f"human-judge-verdict-{i}"))  # fmt: skip
            submit = gr.Button("Submit judgement", variant="primary", elem_id="human-judge-submit")
            status = gr.Markdown(elem_id="human-judge-status")
            score = gr.Markdown(elem_id="human-judge-score")

    outputs = [state, progress, image, subject, *words, *verdicts, status, score]
    start.click(start_judging, [judge, model, data], outputs, api_name="human_judge_start", concurrency_limit=16)
    submit.click(submit_judgement, [state, data, *verdicts], outputs, api_visibility="private", concurrency_limit=16)
    refresh.click(refresh_models, None, [model, availability], api_visibility="private")
    return {"handler": refresh_models, "outputs": [model, availability]}


# --- which outputs can be judged -------------------------------------------------------------


def _generations(request: gr.Request | None, key: tuple[str, str, str] | None = None) -> list[judgement.Generated]:
    """Generations this visitor can see: the operator's, and in public mode their own."""
    model, mode, perturbation = key or (None, None, None)
    with reading(request) as stores:
        results = [r for s in stores for r in s.results(GENERATION_ID, model, mode, perturbation)]
    return judgement.judgeable(results)


def _model_choices(request: gr.Request | None) -> list[tuple[str, str]]:
    counts: dict[tuple[str, str, str], int] = {}
    for generated in _generations(request):
        counts[generated.key] = counts.get(generated.key, 0) + 1
    choices = []
    for (model, mode, perturbation), n in sorted(counts.items()):
        extra = "" if perturbation == "none" else f", {perturbation}"
        choices.append((f"{model} · {mode}{extra} · {n} items", json.dumps([model, mode, perturbation])))
    return choices


def _availability(choices: list[tuple[str, str]]) -> str:
    return "" if choices else f"⚠ {NO_RESULTS}"


def refresh_models(request: gr.Request) -> tuple:
    choices = _model_choices(request)
    return gr.update(choices=choices, value=choices[0][1] if choices else None), _availability(choices)


# --- handlers ----------------------------------------------------------------------------------


def start_judging(judge: str, chosen: str | None, data: str, request: gr.Request) -> list:
    try:
        bounds = limits()
        name = check_name(bounds.text("name", judge))
        if bounds.public:  # names are per session: nobody can replace another's verdicts
            name = tagged_name(name, session_tag(request))
            claim(request, name)
        bounds.data(data)
        chosen = bounds.text("model", chosen)
        if not chosen:
            raise BenchmarkError(
                NO_RESULTS if not _model_choices(request) else "choose the model whose words you judge"
            )
        try:
            model, mode, perturbation = json.loads(chosen)
        except (ValueError, TypeError):  # not one of the listed choices (an API caller's value)
            raise UsageError("choose the model whose words you judge from the list") from None
        key = (str(model), str(mode), str(perturbation))
        everything = _generations(request, key)
        if not everything:
            raise BenchmarkError(f"{key[0]} has no well-formed texture generations to judge; refresh the list")
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return _unchanged(f"⚠ {escape(user_message(exc))}")
    done = judgement.judged_by(shared_store().results(judgement.BENCHMARK_ID, *key), name, key)
    state = JudgeSession(name, key, tuple(g for g in everything if g.item_id not in done))
    skipped = f"{len(done)} item(s) you judged before are skipped. " if done else ""
    return _show(state, data, skipped)


def submit_judgement(request: gr.Request, state: JudgeSession | None, data: str, *marks: str | None) -> list:
    if state is None or state.finished:
        return _unchanged("⚠ press Start judging first")
    if any(mark not in VERDICTS for mark in marks):
        return _unchanged("⚠ mark every word natural or not natural")
    generated = state.queue[state.position]
    seconds = time.monotonic() - state.shown_at
    try:
        claim(request, state.judge)  # checked again where the row is written, whatever the tag's bits
        people_quota(request)
    except (LimitExceeded, NameRejected) as exc:
        return _unchanged(f"⚠ {escape(str(exc))}")
    verdicts = [m == "natural" for m in marks]
    shared_store().record(judgement.judgement_result(generated, state.judge, verdicts, seconds))
    state = replace(state, position=state.position + 1)
    return _show(state, data, f"Judgement {state.position} saved.")


# --- views ---------------------------------------------------------------------------------------


def _show(state: JudgeSession, data: str, status: str) -> list:
    key = state.key
    score = _score_text(key)
    total = len(state.queue)
    if state.finished:
        done = f"**Done** · you judged {state.position} item(s)." if total else "**Nothing left to judge**"
        blanks = [gr.update(value="")] * WORDS + [gr.update(value=None)] * WORDS
        return [state, done, None, "", *blanks, f"{status} Thank you.".strip(), score]
    entry = state.queue[state.position]
    picture = _image(entry, data)
    if picture is None:
        status = f"{status} ⚠ the image was not found: give its data folder and press Start judging again.".strip()
    state = replace(state, shown_at=time.monotonic())
    name = escape(entry.object or "(object not recorded)")
    lang = f" ({escape(entry.lang)})" if entry.lang else ""
    return [
        state,
        f"**Item {state.position + 1} of {total}** · words by {escape(key[0])}, {escape(key[1])}",
        picture,
        f"Object: **{name}**{lang} · item {escape(entry.item_id)}",
        *[gr.update(value=word) for word in entry.words],
        *[gr.update(value=None) for _ in range(WORDS)],
        status,
        score,
    ]


def _image(entry: judgement.Generated, data: str) -> Image.Image | None:
    """The image the model saw: from the path the store remembers, else from the data folder."""
    try:
        if entry.image:
            return load_image(Path(entry.image))
        folder = None if limits().public else (data or "").strip() or None  # public: no server folders
        items = item_choice.benchmark_of(GENERATION_ID, folder).items()
        found = next((i for i in items if i.id == entry.item_id), None)
        return found.images[0].load() if found and found.images else None
    except (ProbeError, OSError):
        return None  # the words can still be judged; the status line says the image is missing


def _score_text(key: tuple[str, ...]) -> str:
    result = judgement.judgement_score(shared_store().results(judgement.BENCHMARK_ID, *key), key)
    if result.value is None:
        return f"Judgement score of {escape(key[0])}: no judgements yet."
    return (
        f"Judgement score (Eq. 1) of {escape(key[0])}, {escape(key[1])}: **{result.value:.2f}** "
        f"over {result.n} judgement(s) of {result.items} item(s) by {result.judges} judge(s)"
    )


def _unchanged(status: str) -> list:
    return [gr.update()] * (4 + 2 * WORDS) + [status, gr.update()]
