"""The Evaluate tab's machinery: a run's configuration (`EvalConfig`, fit for gr.State), checked
and expanded into runner plans, and the run itself, which Cancel stops through the runner's own
`Stop`.

Cancel stops *sending*: requests already in flight get DRAIN_LIMIT seconds to come back and be
saved; only then are they abandoned. So a paid reply is never thrown away, and Resume (the same
configuration again, answered from the store's cache where possible) asks each item exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from models.types import GenerateConfig, Unavailable
from probes.asking import perturb
from probes.core.errors import UsageError
from probes.core.params import parse_params
from probes.core.selection import select_items
from probes.core.types import Mode, Result
from probes.running.limits import current as limits
from probes.running.runner import Progress, RunPlan, Stop, preflight, run
from probes.running.store import Store
from ui.common import backend_for, user_message
from ui.items import benchmark_of
from ui.sessions import shared_store

MODES = ("0-shot", "4-shot", "0-shot+CoT", "4-shot+CoT")
PERTURBATIONS = (*perturb.FIXED, "rotate-options-1", perturb.ALL_ROTATIONS)
MAX_CHOICES = 32  # benchmarks, models, modes or perturbations in one evaluation
# How long Cancel waits for requests in flight before abandoning them (they are re-asked later).
DRAIN_LIMIT = 20.0
# The status is redrawn at most this often: a baseline answers thousands of items a second.
REDRAW_EVERY = 0.25

log = logging.getLogger(__name__)


class EvalInputError(UsageError):
    """Something in the form cannot run as asked; the message says what to change."""


@dataclass(frozen=True)
class EvalConfig:
    """One evaluation as the form set it up: run again by Resume."""

    benchmarks: tuple[str, ...]
    models: tuple[str, ...]
    modes: tuple[str, ...]
    perturbations: tuple[str, ...]
    data: str | None = None
    params: dict[str, list[str]] = field(default_factory=dict)
    limit: int | None = None  # items per benchmark; None: all
    seed: int = 0
    concurrency: int | None = None  # per model; None: each provider's default


# --- configuration ------------------------------------------------------------------------


def _whole(value: float | None, what: str) -> int | None:
    if value is None or value == "":
        return None
    number = float(value)
    if not math.isfinite(number) or number != int(number):
        raise EvalInputError(f"{what} must be a whole number, got {value}")
    if abs(number) > 2**31:
        raise EvalInputError(f"{what} is out of range: {value}")
    return int(number)


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
) -> EvalConfig:
    """The form's values, checked for what can be checked without building anything."""
    bounds = limits()
    chosen_benchmarks = list(dict.fromkeys(bounds.benchmark(b.strip()) for b in benchmarks or [] if b and b.strip()))
    chosen_models = list(dict.fromkeys(bounds.text("model id", m).strip() for m in models or [] if m and m.strip()))
    for name, values in (("benchmarks", chosen_benchmarks), ("models", chosen_models), ("modes", modes or []),
                         ("perturbations", perturbations or [])):  # fmt: skip
        if len(values) > MAX_CHOICES:
            raise EvalInputError(f"{len(values)} {name} chosen; at most {MAX_CHOICES} in one evaluation")
    if not chosen_benchmarks:
        raise EvalInputError("choose at least one benchmark")
    if not chosen_models:
        raise EvalInputError("choose at least one model")
    if not modes:
        raise EvalInputError("tick at least one mode (0-shot, 4-shot, ...)")
    if not perturbations:
        raise EvalInputError("tick at least one perturbation (none runs the items as they are)")
    for mode in modes:
        Mode.parse(bounds.text("mode", mode))
    for name in perturbations:
        perturb.check(bounds.text("perturbation", name))
    # An emptied number box arrives as 0 (or None): both mean "not set".
    items = _whole(limit, "limit") or None
    if items is not None and items < 1:
        raise EvalInputError("the limit must be at least 1 item per benchmark (leave it empty for all)")
    width = _whole(concurrency, "concurrency") or None
    if width is not None and width < 1:
        raise EvalInputError("concurrency must be at least 1 (leave it empty for each provider's default)")
    bounds.concurrency(width)
    try:
        params = parse_params(bounds.text("parameters", params_text))
    except UsageError as exc:
        raise EvalInputError(str(exc)) from None
    return EvalConfig(
        benchmarks=tuple(chosen_benchmarks),
        models=tuple(chosen_models),
        modes=tuple([m for m in MODES if m in modes] + [m for m in modes if m not in MODES]),
        perturbations=tuple(dict.fromkeys(perturbations)),
        data=bounds.data(data),
        params=params,
        limit=items,
        seed=_whole(seed, "seed") or 0,
        concurrency=width,
    )


# --- plans ----------------------------------------------------------------------------------


def build_plans(config: EvalConfig, keys: dict[str, str]) -> list[RunPlan]:
    """One runner plan per (benchmark, mode, perturbation), every model in each; everything that
    can be known wrong is raised here, before anything is sent."""
    backends = []
    for model_id in config.models:
        backend = backend_for(model_id, keys)
        try:
            backend.check()
        except Unavailable as exc:
            raise Unavailable(f"{model_id} is unavailable: {exc}") from None
        backends.append(backend)
    plans: list[RunPlan] = []
    for benchmark_id in config.benchmarks:
        benchmark = benchmark_of(benchmark_id, config.data, config.params)
        items = select_items(benchmark.items(), config.limit, config.seed)
        for label in config.modes:
            mode = Mode.parse(label)
            generation = GenerateConfig(max_tokens=mode.max_tokens, seed=config.seed)
            for perturbation in config.perturbations:
                for name, chosen in perturb.expand(perturbation, items):
                    # Each request asks for the answers' probabilities where the model gives them
                    # (the Scoreboard's calibration and graded curves read them); an answer already
                    # stored without them is kept as it is, never bought again for them.
                    plan = RunPlan(benchmark, chosen, backends, mode, name, generation, config.concurrency,
                                   probabilities=True, keep_answers=True)  # fmt: skip
                    preflight(plan)
                    plans.append(plan)
                limits().evaluation(sum(len(p.items) * len(p.models) for p in plans))
    return plans


# --- the run --------------------------------------------------------------------------------


class EvalRun:
    """One session's run: plans asked one after another, progress over all of them (the
    runner's own `Progress`), results as they arrive, and Cancel through the runner's `Stop`."""

    def __init__(self, plans: list[RunPlan], store: Store | None = None):
        self.plans = plans
        self.store = store or shared_store()
        self.totals: Counter[str] = Counter()  # model -> results it will give
        for plan in plans:
            for backend in plan.models:
                self.totals[backend.model_id] += len(plan.items)
        self.progress = Progress(total=sum(self.totals.values()))
        self.results: list[Result] = []
        self.failure: str | None = None
        self.current = 0
        self.stop_signal = Stop()
        self.finished = asyncio.Event()
        self._signals: asyncio.Queue[bool] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    # -- lifecycle --

    def start(self, deadline: float | None = None) -> None:
        """Begin; past `deadline` seconds the run stops as Cancel stops it."""
        self._task = asyncio.create_task(self._run_all())
        if deadline is not None:
            timer = asyncio.get_running_loop().call_later(deadline, self.stop_signal.request, 0.0)
            self._task.add_done_callback(lambda _: timer.cancel())

    async def _run_all(self) -> None:
        try:
            for index, plan in enumerate(self.plans):
                if self.stop_signal.requested:
                    break
                self.current = index
                await run(plan, self.store, self._on_result, self.stop_signal, self.progress)
        except Exception as exc:  # noqa: BLE001 - a handler must end with a message, never a traceback
            self.failure = user_message(exc)
        finally:
            self.finished.set()
            self._signals.put_nowait(False)

    def finished_callback(self, callback) -> None:
        """Call `callback()` once the run has ended (at once if it has)."""
        assert self._task is not None, "start the run first"
        self._task.add_done_callback(lambda _: callback())

    @property
    def stopping(self) -> bool:
        return self.stop_signal.requested

    def stop(self) -> None:
        """Send nothing more; requests in flight get DRAIN_LIMIT seconds to be saved."""
        self.stop_signal.request(DRAIN_LIMIT)

    async def wait(self, timeout: float = DRAIN_LIMIT + 5) -> None:
        try:
            await asyncio.wait_for(self.finished.wait(), timeout)
        except TimeoutError:
            pass

    def _on_result(self, result: Result, _: Progress) -> None:
        self.results.append(result)
        self._signals.put_nowait(True)

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
        return self.progress.accuracy

    @property
    def first_error(self) -> str | None:
        return self.progress.first_error

    @property
    def per_model(self) -> dict[str, tuple[int, int]]:
        """model -> (results so far, results in all)."""
        return {model: (self.progress.per_model[model], total) for model, total in self.totals.items()}

    def current_label(self) -> str:
        plan = self.plans[min(self.current, len(self.plans) - 1)]
        return f"{plan.benchmark.id} · {plan.mode.label} · {plan.perturbation}"
