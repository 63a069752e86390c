"""The Evaluate tab's machinery: a run's configuration as a small dict (fit for gr.State), checked
and expanded into runner plans, and the run itself with a gate that lets Cancel stop cleanly.

Cancel stops *sending*: requests already in flight are let finish and their results saved, the
next ones wait at the gate, and only then is the runner cancelled. So a paid reply is never
thrown away, and Resume (the same configuration again, answered from the store's cache where
possible) asks each item exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from typing import Any

from models.base import Backend
from models.types import BackendError, GenerateConfig, Message, Output, Unavailable
from probes.asking import perturb
from probes.core.registry import BenchmarkError
from probes.core.selection import select_items
from probes.core.types import Mode, Result, Status
from probes.running.runner import Progress, RunError, RunPlan, preflight, run
from ui.common import backend_for, paid_by_server, store
from ui.items import benchmark_of

Config = dict[str, Any]

MODES = ("0-shot", "4-shot", "0-shot+CoT", "4-shot+CoT")
PERTURBATIONS = (*perturb.FIXED, "rotate-options-1")
# How long Cancel waits for requests in flight before abandoning them (they are re-asked later).
DRAIN_LIMIT = 20.0
# The status is redrawn at most this often: a baseline answers thousands of items a second.
REDRAW_EVERY = 0.25

log = logging.getLogger(__name__)


class EvalInputError(ValueError):
    """Something in the form cannot run as asked; the message says what to change."""


# --- configuration ------------------------------------------------------------------------


def parse_sweep(text: str | None) -> dict[str, list[str]]:
    """`gap=-0.1,0,0.1 canvas=384` -> {"gap": ["-0.1", "0", "0.1"], "canvas": ["384"]}.

    Pairs are separated by spaces or semicolons; commas separate a sweep's values (spaces
    around them are allowed: `gap=0.1, 0.2`)."""
    text = re.sub(r"\s*,\s*", ",", (text or "").strip())
    params: dict[str, list[str]] = {}
    for token in re.split(r"[\s;]+", text):
        if not token:
            continue
        name, sep, values = token.partition("=")
        listed = [v for v in values.split(",") if v]
        if not sep or not name or not listed:
            raise EvalInputError(f"parameter {token!r}: write NAME=VALUE or NAME=V1,V2,... e.g. gap=-0.1,0,0.1")
        params[name] = listed
    return params


def _whole(value: float | None, what: str) -> int | None:
    if value is None or value == "":
        return None
    if float(value) != int(float(value)):
        raise EvalInputError(f"{what} must be a whole number, got {value}")
    return int(float(value))


def make_config(
    benchmarks: Sequence[str] | None,
    data: str | None,
    params_text: str | None,
    models: Sequence[str] | None,
    modes: Sequence[str] | None,
    perturbations: Sequence[str] | None,
    limit: float | None,
    seed: float | None,
    concurrency: float | None,
) -> Config:
    """The form's values, checked for what can be checked without building anything."""
    chosen_benchmarks = list(dict.fromkeys(b.strip() for b in benchmarks or [] if b and b.strip()))
    chosen_models = list(dict.fromkeys(m.strip() for m in models or [] if m and m.strip()))
    if not chosen_benchmarks:
        raise EvalInputError("choose at least one benchmark")
    if not chosen_models:
        raise EvalInputError("choose at least one model")
    if not modes:
        raise EvalInputError("tick at least one mode (0-shot, 4-shot, ...)")
    if not perturbations:
        raise EvalInputError("tick at least one perturbation (none runs the items as they are)")
    for mode in modes:
        Mode.parse(mode)
    for name in perturbations:
        perturb.check(name)
    # An emptied number box arrives as 0 (or None): both mean "not set".
    items = _whole(limit, "limit") or None
    if items is not None and items < 1:
        raise EvalInputError("the limit must be at least 1 item per benchmark (leave it empty for all)")
    width = _whole(concurrency, "concurrency") or None
    if width is not None and width < 1:
        raise EvalInputError("concurrency must be at least 1 (leave it empty for each provider's default)")
    return {
        "benchmarks": chosen_benchmarks,
        "data": (data or "").strip() or None,
        "params": parse_sweep(params_text),
        "models": chosen_models,
        "modes": [m for m in MODES if m in modes] + [m for m in modes if m not in MODES],
        "perturbations": list(dict.fromkeys(perturbations)),
        "limit": items,
        "seed": _whole(seed, "seed") or 0,
        "concurrency": width,
        "charged": [],  # models whose requests this configuration already paid for on server keys
    }


# --- plans ----------------------------------------------------------------------------------


class Gate:
    """Shared by a run's backends: once closed, a request about to be sent waits forever (until
    the run is cancelled) instead of going out."""

    def __init__(self) -> None:
        self.closed = False
        self.waiting: Counter[str] = Counter()
        self.on_wait: Any = None  # called whenever a request starts waiting

    async def hold(self, model_id: str) -> None:
        self.waiting[model_id] += 1
        if self.on_wait:
            self.on_wait()
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            self.waiting[model_id] -= 1


class GatedBackend:
    """A backend that asks its gate before each request; everything else is the backend's own
    (id, endpoint and so the cache keys, checks, warm-up, connections)."""

    def __init__(self, inner: Backend, gate: Gate):
        self.inner = inner
        self.gate = gate

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def endpoint(self) -> str:
        return self.inner.endpoint

    @property
    def default_concurrency(self) -> int:
        return self.inner.default_concurrency

    def check(self) -> None:
        self.inner.check()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def generate(
        self, messages: Sequence[Message], config: GenerateConfig, answer_space: Sequence[str] | None = None
    ) -> Output:
        if self.gate.closed:
            await self.gate.hold(self.model_id)
        return await self.inner.generate(messages, config, answer_space)


def build_plans(config: Config, keys: dict[str, str], gate: Gate) -> list[RunPlan]:
    """One runner plan per (benchmark, mode, perturbation), every model in each; everything that
    can be known wrong is raised here, before anything is sent."""
    backends = []
    for model_id in config["models"]:
        backend = backend_for(model_id, keys)
        try:
            backend.check()
        except Unavailable as exc:
            raise Unavailable(f"{model_id} is unavailable: {exc}") from None
        backends.append(GatedBackend(backend, gate))
    plans = []
    for benchmark_id in config["benchmarks"]:
        benchmark = benchmark_of(benchmark_id, config["data"], config["params"])
        items = select_items(benchmark.items(), config["limit"], config["seed"])
        for label in config["modes"]:
            mode = Mode.parse(label)
            generation = GenerateConfig(max_tokens=2048 if mode.cot else 512, seed=config["seed"])
            for perturbation in config["perturbations"]:
                plan = RunPlan(benchmark, items, backends, mode, perturbation, generation, config["concurrency"])
                preflight(plan)
                plans.append(plan)
    return plans


def server_paid_requests(plans: Sequence[RunPlan], keys: dict[str, str], already: Sequence[str]) -> dict[str, int]:
    """Requests per model that the server's keys would pay for, leaving out models already paid
    for (a Resume of the same configuration)."""
    owed: Counter[str] = Counter()
    for plan in plans:
        for backend in plan.models:
            if paid_by_server(backend.model_id, keys) and backend.model_id not in already:
                owed[backend.model_id] += len(plan.items)
    return dict(owed)


# --- the run --------------------------------------------------------------------------------


class EvalRun:
    """One session's run: plans asked one after another, progress over all of them, results as
    they arrive, and Cancel through the gate."""

    def __init__(self, plans: list[RunPlan], gate: Gate):
        self.plans = plans
        self.gate = gate
        gate.on_wait = self._cancel_if_drained
        self.per_model: dict[str, list[int]] = {}  # model -> [done, total]
        for plan in plans:
            for backend in plan.models:
                self.per_model.setdefault(backend.model_id, [0, 0])[1] += len(plan.items)
        self.progress = Progress(total=sum(total for _, total in self.per_model.values()))
        self.results: list[Result] = []
        self.scored = 0
        self.score_sum = 0.0
        self.first_error: str | None = None
        self.failure: str | None = None
        self.current = 0
        self.stopping = False
        self.finished = asyncio.Event()
        self._signals: asyncio.Queue[bool] = asyncio.Queue()
        self._remaining: dict[str, int] = {}
        self._width: dict[str, int] = {}
        self._task: asyncio.Task | None = None

    # -- lifecycle --

    def start(self) -> None:
        self._task = asyncio.create_task(self._run_all())

    async def _run_all(self) -> None:
        try:
            for index, plan in enumerate(self.plans):
                if self.stopping:
                    break
                self.current = index
                self._remaining = {b.model_id: len(plan.items) for b in plan.models}
                # The runner's own rule for workers per model: all of them waiting means drained.
                self._width = {b.model_id: max(1, plan.concurrency or b.default_concurrency) for b in plan.models}
                await run(plan, store(), self._on_result)
        except (BackendError, RunError, BenchmarkError, ValueError) as exc:
            self.failure = str(exc)
        except Exception as exc:  # a handler must end with a message, never a traceback
            log.exception("evaluation run failed")
            self.failure = f"unexpected {type(exc).__name__}: {exc}"
        finally:
            self.finished.set()
            self._signals.put_nowait(False)

    def stop(self) -> None:
        """Send nothing more; cancel the runner once the requests in flight have been saved."""
        if self.stopping or self._task is None:
            return
        self.stopping = True
        self.gate.closed = True
        self._cancel_if_drained()
        asyncio.get_running_loop().call_later(DRAIN_LIMIT, self._task.cancel)

    async def wait(self, timeout: float = DRAIN_LIMIT + 5) -> None:
        try:
            await asyncio.wait_for(self.finished.wait(), timeout)
        except TimeoutError:
            pass

    def _cancel_if_drained(self) -> None:
        if not self.stopping or self._task is None or self._task.done():
            return
        if all(self.gate.waiting[m] >= min(self._width[m], self._remaining[m]) for m in self._remaining):
            self._task.cancel()

    def _on_result(self, result: Result, _: Progress) -> None:
        self.results.append(result)
        progress = self.progress
        progress.done += 1
        progress.cached += result.cached
        progress.errors += result.status is Status.ERROR
        progress.correct += bool(result.correct)
        if result.status is not Status.ERROR and result.score is not None:
            self.scored += 1
            self.score_sum += result.score
        if result.status is Status.ERROR and self.first_error is None:
            self.first_error = result.error
        self.per_model[result.model][0] += 1
        self._remaining[result.model] -= 1
        self._signals.put_nowait(True)
        self._cancel_if_drained()

    async def updates(self) -> AsyncIterator[None]:
        """Yields when there is news to show (at most every REDRAW_EVERY s); ends with the run."""
        loop = asyncio.get_running_loop()
        shown = 0.0
        news = False
        while True:
            timeout = None if not news else max(0.0, shown + REDRAW_EVERY - loop.time())
            try:
                more = await asyncio.wait_for(self._signals.get(), timeout)
            except TimeoutError:
                more = True
            else:
                if not more:
                    return
            news = news or more
            if news and loop.time() - shown >= REDRAW_EVERY:
                shown, news = loop.time(), False
                yield

    # -- what to show --

    @property
    def outcome(self) -> str:
        if not self.finished.is_set():
            return "running"
        if self.failure:
            return "failed"
        return "done" if self.progress.done >= self.progress.total else "stopped"

    @property
    def accuracy(self) -> float | None:
        return 100 * self.score_sum / self.scored if self.scored else None

    def current_label(self) -> str:
        plan = self.plans[min(self.current, len(self.plans) - 1)]
        return f"{plan.benchmark.id} · {plan.mode.label} · {plan.perturbation}"
