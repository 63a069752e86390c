"""What a teacher's form makes of a class: its items (a benchmark or generated family with its
parameters and a count, or a hand-picked list from the Examples), and the models beside it,
answered from the cache where they can be and asked live (within the visitor's budget) where not.

The server's open classes live here, in one registry (`CLASSES`): classes are server state, not a
browser's, so any reload of the teacher's or a student's page finds them again by token."""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import gradio as gr

from probes.asking.prompting import assemble_prompt
from probes.classroom import ClassError, Classes, ClassRoom, Lesson, Pace, Who
from probes.core.benchmark import Benchmark
from probes.core.errors import ProbeError, UsageError
from probes.core.params import parse_params
from probes.core.selection import select_items
from probes.core.types import Condition, Item, ItemRef, Origin, Result
from probes.demo.conditions import probe_config
from probes.reading.grading import grade_reply
from probes.running.limits import current as limits
from probes.running.limits import whole_number
from probes.running.runner import RunPlan, cache_key, run
from ui import examples
from ui import items as item_choice
from ui.common import backend_for, charge, paid_by_server, user_message
from ui.sessions import lease_for, reading, visitor

CLASSES = Classes()
MAX_MODELS = 4
MAX_COUNT = 60
CONDITION = Condition()  # the class is asked the item as it is; so are the models beside it


# Tokens and answers come from outside as JSON (an API caller's arguments, a browser's stored
# token, a button's value): any type, not only the strings the page sends. They are read here,
# so that a list or an object is refused as a forged token or an unreadable answer is, not an
# internal error with a traceback in the log for every such request.


def who(request: gr.Request | None) -> Who:
    """The page and address a class's request came from (a reloaded page is the same visitor)."""
    seen = visitor(request)
    return Who(seen.session, seen.client)


def may_open(request: gr.Request | None) -> None:
    """On a public Space, refuse a visitor who holds their share of classes before any work."""
    if limits().public:
        CLASSES.may_open(who(request))


def join(code: object, name: object, request: gr.Request | None) -> tuple[ClassRoom, str]:
    """A seat in the class with `code` for this page (its own seat again if it has one)."""
    return CLASSES.join(plain_text(code), plain_text(name) or None, who(request))


def close(token: object) -> None:
    """The teacher's token ends its class now (anything else is refused as a forged token is)."""
    CLASSES.close(token if isinstance(token, str) else "")


def room_for(token: object) -> ClassRoom:
    """The class a token from outside names; anything but a string names none, and is refused
    with the words a forged token gets (they say nothing of which classes are open)."""
    return CLASSES.by_token(token if isinstance(token, str) else "")


def answer_text(value: object) -> str:
    """An answer from outside as text: a string, or a number a script sent as one."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise ClassError("an answer is an option's letter or text, yes or no, or a number")


def plain_text(value: object) -> str:
    """A code, a nickname or a form's field from outside: "" for anything but a string."""
    return value if isinstance(value, str) else ""


def text_field(what: str, value: object) -> str:
    """A field of class_open from a script: text (None is empty); anything else is refused."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UsageError(f"{what}: write it as text")
    return value


def seconds_per_item(value: object) -> float | None:
    """Seconds per item from the form or a script: a number, None or 0 for untimed."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        seconds = float(value)  # type: ignore[arg-type] - a script may send anything: refused below
    except (TypeError, ValueError):
        raise UsageError("seconds per item: a number (0: untimed)") from None
    return seconds or None


def lesson_items(source: str, benchmark_id: str, params: str, count: float | None, seed: float | None,
                 picked: Sequence[str] | None) -> list[tuple[Benchmark, Item]]:  # fmt: skip
    """The class's items: hand-picked Examples, or `count` items of a benchmark (a seeded sample,
    parameters fixed or swept as on the command line: `difference=-0.2,-0.1,0.1,0.2`)."""
    bounds = limits()
    if source == "examples":
        chosen = [examples.BY_TITLE[t] for t in (picked or []) if t in examples.BY_TITLE]
        if not chosen:
            raise UsageError("tick at least one example for the class")
        return [item_choice.resolve(examples.spec_of(example)) for example in chosen]
    benchmark_id = bounds.benchmark(bounds.text("benchmark", benchmark_id or ""))
    grid = parse_params(bounds.text("parameters", params or "")) or None
    benchmark = item_choice.benchmark_of(benchmark_id, None, grid)
    n = whole_number("items", count, 1, MAX_COUNT, default=10)
    chosen = select_items(benchmark.items(), n, whole_number("seed", seed, 0, 2**31 - 1, default=0))
    return [(benchmark, item) for item in chosen]


def open_class(
    request: gr.Request | None,
    items: list[tuple[Benchmark, Item]],
    seconds: float | None,
    pace: str,
    models: Sequence[str],
    keys: dict[str, str],
    title: str = "",
) -> ClassRoom:
    chosen = list(dict.fromkeys(m.strip() for m in models if m and m.strip()))
    if len(chosen) > MAX_MODELS:
        raise UsageError(f"at most {MAX_MODELS} models beside a class")
    backends = {model: backend_for(model, keys) for model in chosen}  # refused models say why, now
    seconds = seconds_per_item(seconds)
    lesson = Lesson(tuple(items), seconds, tuple(chosen), Pace(pace), title)
    # On a public Space a class is its opener's, who holds a few at most; a teacher's own machine
    # trusts its teacher.
    room = CLASSES.open(lesson, who(request) if limits().public else None)
    ask_models(room, backends, keys, request)
    return room


# --- the models beside the class -------------------------------------------------------------------


def _cached(room: ClassRoom, stores: Sequence[Any], model: str, backend) -> list[int]:
    """Give the class every answer of `model` the stores already hold; the indices still missing."""
    missing = []
    config = probe_config(CONDITION)
    for index, (benchmark, item) in enumerate(room.lesson.items):
        try:
            asked, prompt = assemble_prompt(benchmark, item, CONDITION.mode, CONDITION.perturbation)
        except ProbeError as exc:
            room.set_model_answer(model, index, user_message(exc))
            continue
        key = cache_key(backend, config, prompt, asked.possible_answers())
        found = next((hit for store in stores if (hit := store.cached(key)) is not None), None)
        if found is None:
            missing.append(index)
            continue
        ref = ItemRef.of(asked, Origin.PROBE)
        room.set_model_answer(model, index, grade_reply(benchmark, asked, found.text, model, CONDITION, ref,
                                                         latency=found.latency, cached=True))  # fmt: skip
    return missing


def ask_models(room: ClassRoom, backends: dict[str, Any], keys: dict[str, str], request: gr.Request | None) -> None:
    """Cached answers now; the rest asked in the background (each paid request charged to the
    teacher's budget first: past it, the item says so instead of an answer)."""
    wanted: dict[str, list[int]] = {}
    with reading(request) as stores:
        found = {model: _cached(room, stores, model, backend) for model, backend in backends.items()}
    for model, missing in found.items():
        if missing and paid_by_server(model, keys):
            try:
                charge(request, len(missing))
            except ProbeError as exc:
                for index in missing:
                    room.set_model_answer(model, index, user_message(exc))
                continue
        for index in missing:
            room.set_model_answer(model, index, "asking…")
        wanted[model] = missing
    if any(wanted.values()):
        lease = lease_for(request)  # held until the models have answered: the store stays open
        threading.Thread(target=_ask, args=(room, backends, wanted, lease), daemon=True,
                         name=f"class-{room.code}-models").start()  # fmt: skip


def _ask(room: ClassRoom, backends: dict[str, Any], wanted: dict[str, list[int]], lease) -> None:
    try:
        asyncio.run(_ask_all(room, backends, wanted, lease.store))
    finally:
        lease.release()


async def _ask_all(room: ClassRoom, backends: dict[str, Any], wanted: dict[str, list[int]], store) -> None:
    async def one(model: str, benchmark: Benchmark, indexed: list[tuple[int, Item]]) -> None:
        where = {item.id: index for index, item in indexed}
        plan = RunPlan(benchmark, [item for _, item in indexed], [backends[model]], CONDITION.mode,
                       CONDITION.perturbation, probe_config(CONDITION), origin=Origin.PROBE)  # fmt: skip
        try:
            await run(
                plan, store, on_result=lambda result, _: room.set_model_answer(model, where[result.item_id], result)
            )
        except Exception as exc:  # noqa: BLE001 - the model's items say why; the class goes on
            for index, _ in indexed:
                if not isinstance(room.model_answers.get((model, index)), Result):
                    room.set_model_answer(model, index, user_message(exc))

    jobs = []
    for model, indices in wanted.items():
        groups: dict[int, list[tuple[int, Item]]] = defaultdict(list)
        benchmarks: dict[int, Benchmark] = {}
        for index in indices:
            benchmark, item = room.lesson.items[index]
            groups[id(benchmark)].append((index, item))
            benchmarks[id(benchmark)] = benchmark
        jobs += [one(model, benchmarks[key], indexed) for key, indexed in groups.items()]
    await asyncio.gather(*jobs)
