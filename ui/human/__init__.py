"""Human tab: a person takes a benchmark's items one at a time, timed, and is scored like a model
(model id `human/<name>`); and judges mark generated texture words natural or not (ui/human/judge.py).

Made for a class: Enter starts, each answer is a key (Y/N, 1-4, A-D, the arrows of a
two-alternative illusion; numbers typed and sent with Enter) and the next item follows at once;
a bar and a clock show where the person is; the results list each item as a thumbnail, and a
button leads to the Scoreboard, where people stand beside the models (ui/human/view.py draws
these and holds the browser script).

Each browser session keeps its own small state (item indices, position, when the item was shown,
the answers so far), so a class can take a test together on one Space. Every answer is graded
and stored the moment it arrives, so a half-finished session keeps what it answered. Timing is
measured on the server, from when an item was sent to when its answer came back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from probes.core.errors import BenchmarkError, LimitExceeded, NameRejected
from probes.core.registry import benchmark_ids
from probes.core.selection import select_items
from probes.core.types import AnswerKind, Item, Status
from probes.people import human
from probes.running.limits import current as limits
from probes.running.limits import whole_number
from ui import identity
from ui import items as item_choice
from ui.choices import Dropdown, Radio
from ui.common import escape, user_message
from ui.human import view
from ui.human.judge import build_judge
from ui.human.view import Answered
from ui.scoreboard.data import open_next
from ui.sessions import SESSIONS, answered_once, claim, people_quota, session_tag, shared_store, visitor

DEFAULT_BENCHMARK = "blind/touching-circles"
DEFAULT_ITEMS = 10
MAX_ITEMS = 200
RADIO_KINDS = (AnswerKind.CHOICE, AnswerKind.YES_NO)
HINTS = {
    AnswerKind.NUMBER: "a whole number, e.g. 5",
    AnswerKind.LETTER: "one letter, e.g. A",
    AnswerKind.PAIR: "rows x columns, e.g. 3x4 or (3, 4)",
    AnswerKind.WORDS: "three words separated by commas",
    AnswerKind.TEXT: "a short answer",
}
IMAGE_HEIGHT = 420  # the item's images, whole (object-fit contain); a phone's CSS lowers it
SCOREBOARD_JS = view.show_tab_js("scoreboard", "Scoreboard")


@dataclass(frozen=True)
class TakeSession:
    """One person taking items in one browser session."""

    name: str
    benchmark: str
    data: str | None
    indices: tuple[int, ...]  # the items' places in the benchmark, in the order asked
    tag: str | None = None  # in public mode, this session's mark on the name (human/<name> #tag)
    position: int = 0
    shown_at: float = 0.0  # when the current item was sent (server clock)
    thumbnail: str = ""  # the current item's, kept for the results table
    answers: tuple[Answered, ...] = ()

    @property
    def finished(self) -> bool:
        return self.position >= len(self.indices)


def build_human() -> dict[str, Any]:
    """The tab; returns the Take section's start button and Scoreboard button (the Scoreboard
    button switches tabs in the browser, so app.py wires nothing)."""
    if limits().public:
        identity.server_secret()  # made or read at start: a PROBE_SESSION_SECRET too short stops the app here
    with gr.Tabs(overflow_behavior="wrap", elem_id="human-sections"):  # both one tap away on a phone
        with gr.Tab("Take a benchmark", id="human-take"):
            take = _build_take()
        with gr.Tab("Judge texture words", id="human-judge") as judge_tab:
            refresh = build_judge()
        judge_tab.select(refresh["handler"], None, refresh["outputs"])
    return take


def _build_take() -> dict[str, Any]:
    state = gr.State(None)
    with gr.Row(elem_id="human-row"):
        # The form steps aside while items are shown: the item gets the width.
        with gr.Column(scale=1, min_width=280, elem_id="human-setup") as setup:
            name = gr.Textbox(label="Your name", placeholder="e.g. Ada", max_length=human.MAX_NAME,
                              info="letters, digits, spaces, - and _; you appear as human/<name>",
                              elem_id="human-name")  # fmt: skip
            benchmark = Dropdown(benchmark_ids(), value=DEFAULT_BENCHMARK, label="Benchmark", elem_id="human-benchmark")
            data = gr.Textbox(
                label="Data folder",
                placeholder="only for benchmarks read from a folder: its path",
                visible=not limits().public,
                elem_id="human-data",
            )  # public: no server folders
            with gr.Row():
                count = gr.Number(DEFAULT_ITEMS, precision=0, minimum=1, maximum=MAX_ITEMS, label="Items",
                                  elem_id="human-count")  # fmt: skip
                seed = gr.Number(0, precision=0, label="Seed", elem_id="human-seed")
            gr.Markdown("Mode: 0-shot (no worked examples). Answer with the keys shown under each item; "
                        "the next item follows at once. The answers are shown at the end.")  # fmt: skip
            start = gr.Button("Start (Enter)", variant="primary", elem_id="human-start")
        with gr.Column(scale=2):
            progress = gr.Markdown("Enter your name, choose a benchmark and press Start.", elem_id="human-progress")
            clock = gr.HTML(view.clock("idle"), js_on_load=view.SCRIPT, elem_id="human-clock")
            # Where the page says what became of a key pressed between two items (view.SCRIPT).
            gr.HTML("", elem_id="human-pending")
            # Whole images (contain); a single image large, several side by side.
            images = gr.Gallery(label="Item", show_label=False, height=IMAGE_HEIGHT, columns=1, object_fit="contain",
                                preview=True, allow_preview=True, interactive=False, visible=False,
                                elem_id="human-images")  # fmt: skip
            question = gr.Markdown(elem_id="human-question")
            choice = Radio([], label="Your answer", visible=False, elem_id="human-choice")
            answer = gr.Textbox(label="Your answer", visible=False, elem_id="human-answer")
            keys = gr.Markdown(elem_id="human-keys")
            with gr.Row():
                submit = gr.Button("Submit answer (Enter)", variant="primary", visible=False, elem_id="human-submit")
                finish = gr.Button("Finish now", size="sm", visible=False, scale=0, min_width=120,
                                   elem_id="human-finish")  # fmt: skip
            status = gr.Markdown(elem_id="human-status")
            # The end: where the items were, so the person sees their score without scrolling.
            summary = gr.Markdown(elem_id="human-summary")
            to_scoreboard = gr.Button("See everyone on the Scoreboard →", visible=False, elem_id="human-to-scoreboard")
            table = gr.HTML(visible=False, elem_id="human-table")

    outputs = [state, progress, clock, setup, images, question, choice, answer, keys, submit, finish, status,
               summary, table, to_scoreboard]  # fmt: skip
    begin = [name, benchmark, data, count, seed]
    start.click(start_session, begin, outputs, api_name="human_start", concurrency_limit=16)
    for trigger in (name.submit, count.submit, seed.submit):  # Enter in the form starts too
        trigger(start_session, begin, outputs, api_visibility="private", concurrency_limit=16)
    # Choosing an option is the answer (a click or a key); a second choice while the first is
    # on its way is dropped ("once"), never counted for the next item.
    choice.input(submit_answer, [state, choice, answer], outputs, api_visibility="private", concurrency_limit=16,
                 trigger_mode="once")  # fmt: skip
    for trigger in (submit.click, answer.submit):
        trigger(submit_answer, [state, choice, answer], outputs, api_visibility="private", concurrency_limit=16)
    finish.click(finish_now, state, outputs, api_visibility="private")
    # The Scoreboard opens on the benchmark just taken (it takes the name as the tab opens).
    to_scoreboard.click(scoreboard_opens, state, None, api_visibility="private").then(None, js=SCOREBOARD_JS)
    return {"start": start, "to_scoreboard": to_scoreboard}


# --- handlers -------------------------------------------------------------------------------


def start_session(
    name: str, benchmark_id: str, data: str, count: float | None, seed: float | None, request: gr.Request
) -> list:
    try:
        bounds = limits()
        person = human.check_name(bounds.text("name", name))
        data = (data or "").strip() or None
        benchmark_id = benchmark_id or ""
        bounds.admit(benchmark=benchmark_id, data=data)  # the public-mode gate, before anything is read
        wanted = whole_number("number of items", count, 1, MAX_ITEMS, default=DEFAULT_ITEMS)
        seed = whole_number("seed", seed, 0, 2**31 - 1, default=0)
        items = item_choice.benchmark_of(benchmark_id, data).items()
        if not items:
            raise BenchmarkError(f"{benchmark_id} has no items")
        position = {item.id: index for index, item in enumerate(items)}
        chosen = [position[item.id] for item in select_items(items, wanted, seed)]
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return _unchanged(f"⚠ {escape(user_message(exc))}")
    tag = session_tag(request) if limits().public else None
    try:
        claim(request, human.model_id(person, tag))  # a session with the same tag is refused here
    except NameRejected as exc:
        return _unchanged(f"⚠ {escape(str(exc))}")
    return _show(TakeSession(person, benchmark_id, data, tuple(chosen), tag=tag), "")


def submit_answer(state: TakeSession | None, choice: str | None, text: str | None, request: gr.Request) -> list:
    if state is None or state.finished:
        return _unchanged("⚠ press Start first")
    try:
        benchmark, item = _current(state)  # through the gate again: a session's saved state is no pass
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return _unchanged(f"⚠ {escape(user_message(exc))}")
    given = (choice if item.kind in RADIO_KINDS else text) or ""
    if not given.strip():
        return _unchanged("⚠ choose or write an answer first")
    seconds = time.monotonic() - state.shown_at
    result = human.answer_result(benchmark, item, given.strip(), state.name, seconds, state.tag)
    if result.status is Status.UNPARSED:  # a typo, not an answer: ask again, the clock runs on
        hint = HINTS.get(item.kind, "one of the choices")
        return _unchanged(f"⚠ could not read “{escape(given.strip())}” as an answer: write {escape(hint)}")
    try:
        # Checked where the row is written, whatever the tag's bits: only the session that took
        # this tagged name writes under it.
        claim(request, result.model)
        people_quota(request)
        if limits().public:
            answered_once(request, benchmark.id, item.id)
    except (LimitExceeded, NameRejected) as exc:
        return _unchanged(f"⚠ {escape(str(exc))}")
    if limits().public:
        # Kept in the visitor's own store while the test goes on; the pooled people curve takes a
        # test's answers only once it is finished (below), never a half-taken or scripted one.
        with SESSIONS.lease(visitor(request).session) as lease:
            lease.store.record(result)
    else:
        shared_store().record(result)  # people's answers are shared (a class's pooled curve)
    row = Answered(item.id, _shown_answer(item, given.strip()), _expected(item), result.correct, result.score,
                   result.latency or 0.0, state.thumbnail)  # fmt: skip
    state = replace(state, position=state.position + 1, answers=(*state.answers, row))
    if state.finished and limits().public:
        await_shared = share_finished_test(request, state)
        return _show(state, f"Answer {len(state.answers)} saved. {await_shared}")
    return _show(state, f"Answer {len(state.answers)} saved.")


def share_finished_test(request: gr.Request, state: TakeSession) -> str:
    """A test taken to its end on a public Space: its answers join the pooled people rows."""
    model = human.model_id(state.name, state.tag)
    chosen = {row.item for row in state.answers}
    with SESSIONS.lease(visitor(request).session) as lease:
        mine = [r for r in lease.store.results(state.benchmark, model) if r.item_id in chosen]
    shared_store().record_many([(result, None, "") for result in mine])
    return f"Test finished: your {len(mine)} answers join the people beside the models."


def scoreboard_opens(state: TakeSession | None, request: gr.Request) -> None:
    if state is not None:
        open_next(request, state.benchmark)


def finish_now(state: TakeSession | None) -> list:
    if state is None:
        return _unchanged("⚠ press Start first")
    return _end(replace(state, position=len(state.indices)))


# --- views ----------------------------------------------------------------------------------


def _current(state: TakeSession) -> tuple[Any, Item]:
    benchmark = item_choice.benchmark_of(state.benchmark, state.data)
    return benchmark, benchmark.items()[state.indices[state.position]]


def _show(state: TakeSession, status: str) -> list:
    if state.finished:
        return _end(state, status)
    _, item = _current(state)
    loaded = [source.load() for source in item.images]
    pictures = [(image, None if len(loaded) == 1 else f"image {i + 1}") for i, image in enumerate(loaded)]
    if item.kind is AnswerKind.CHOICE:
        options = [(f"{label}. {text}", label) for label, text in zip(item.labels, item.options, strict=True)]
    else:
        options = [("Yes", "Yes"), ("No", "No")]
    radio = item.kind in RADIO_KINDS
    keys = view.answer_keys(item)
    # Stamped last, after the images are drawn: the person's time starts when they can see it.
    state = replace(state, shown_at=time.monotonic(), thumbnail=view.thumbnail(loaded))
    single = len(loaded) == 1
    return [
        state,
        f"**Item {state.position + 1} of {len(state.indices)}** · {escape(state.benchmark)} · "
        f"answering as {escape(human.model_id(state.name, state.tag))}",
        view.clock("running", f"{state.shown_at:.6f}", state.position, len(state.indices), keys, typed=not radio),
        gr.update(visible=False),
        gr.update(
            value=pictures,
            visible=True,
            preview=single,
            selected_index=0 if single else None,
            columns=1 if single else min(len(loaded), 4),
        ),  # fmt: skip
        escape(item.question),
        gr.update(choices=options if radio else [], value=None, visible=radio),
        gr.update(value="", visible=not radio, placeholder=HINTS.get(item.kind, "")),
        view.keys_hint(item),
        gr.update(visible=not radio),  # a choice is sent as it is made
        gr.update(visible=True),
        status,
        "",
        gr.update(visible=False),
        gr.update(visible=False),
    ]


def _end(state: TakeSession, status: str = "") -> list:
    answers = state.answers
    total = sum(a.seconds for a in answers)
    return [
        state,
        f"**Finished** · {len(answers)} of {len(state.indices)} items answered",
        view.clock("finished", f"end {state.shown_at:.6f}", len(answers), len(answers), seconds=total),
        gr.update(visible=True),
        gr.update(value=[], visible=False),
        "",
        gr.update(choices=[], value=None, visible=False),
        gr.update(value="", visible=False),
        "",
        gr.update(visible=False),
        gr.update(visible=False),
        status,
        _summary(state),
        gr.update(value=view.results_table(answers), visible=bool(answers)),
        gr.update(visible=bool(answers)),
    ]


def _unchanged(status: str) -> list:
    return [gr.update()] * 11 + [status] + [gr.update()] * 3


def _summary(state: TakeSession) -> str:
    answers = state.answers
    who = f"**{escape(state.name)}** (stored as {escape(human.model_id(state.name, state.tag))})"
    if not answers:
        return f"{who}: no answers given."
    scores = [a.score for a in answers if a.score is not None]
    right = sum(1 for a in answers if a.correct)
    graded = sum(1 for a in answers if a.correct is not None)
    seconds = sum(a.seconds for a in answers) / len(answers)
    plural = "" if len(answers) == 1 else "s"
    lines = [f"{who} · {escape(state.benchmark)} · {len(answers)} item{plural} answered, 0-shot"]
    if scores:
        score = f"{round(100 * sum(scores) / len(scores), 1):g}%"
        tally = f" ({right} of {graded} right)" if graded else " (mean match rate)"
        lines.append(f"Your score: **{score}**{tally} · time per item: **{seconds:.1f} s**")
    else:
        lines.append(f"Not graded (this benchmark has no answer key) · time per item: **{seconds:.1f} s**")
    return "  \n".join(lines)


def _shown_answer(item: Item, given: str) -> str:
    if item.kind is AnswerKind.CHOICE and given in item.labels:
        return f"{given}. {item.options[item.labels.index(given)]}"
    return given


def _expected(item: Item) -> str:
    if item.target is None:
        return "(no answer key)"
    if item.kind is AnswerKind.CHOICE:
        return f"{item.target_text()}. {item.options[item.target]}"
    return item.target_text()
