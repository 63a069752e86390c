"""Async orchestration: items x models in one mode and perturbation -> graded results.

Each model gets its own pool of workers (its concurrency), so a slow model never holds back a
fast one. Per item: build the prompt (images load and hash in a worker thread), look the request
up in the store's cache, ask the model only on a miss, parse, grade, and commit the result at
once, so a killed run loses only the requests in flight.

The runner owns progress (`Progress`, shared by consecutive runs that make one evaluation) and
stopping (`Stop`): a stopped run sends nothing new, lets the requests in flight finish for a
grace period and abandons the rest, and has saved every reply it got.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from models.base import Backend, redact
from models.types import BackendError, GenerateConfig, ImagePart, Output
from probes.asking import perturb
from probes.asking.prompting import Prompt, assemble_prompt
from probes.baselines.base import ask
from probes.core.benchmark import Benchmark
from probes.core.errors import ProbeError, RunError
from probes.core.types import Condition, Item, ItemRef, Mode, Origin, Result, Status
from probes.reading.grading import error_result, grade_reply
from probes.running.store import Store


@dataclass
class Progress:
    """What a run (or several runs making one evaluation) has done so far."""

    total: int
    done: int = 0
    cached: int = 0
    errors: int = 0
    correct: int = 0
    scored: int = 0  # results with a score (errors and ungraded replies have none)
    score_sum: float = 0.0
    per_model: Counter[str] = field(default_factory=Counter)
    first_error: str | None = None
    started: float = field(default_factory=time.monotonic)

    def add(self, result: Result) -> None:
        self.done += 1
        self.cached += result.cached
        self.errors += result.status is Status.ERROR
        self.correct += bool(result.correct)
        self.per_model[result.model] += 1
        if result.status is not Status.ERROR and result.score is not None:
            self.scored += 1
            self.score_sum += result.score
        if result.status is Status.ERROR and self.first_error is None:
            self.first_error = result.error

    @property
    def accuracy(self) -> float | None:
        """Percent, over the results scored so far (a match rate counts by its share)."""
        return 100 * self.score_sum / self.scored if self.scored else None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def eta(self) -> float | None:
        """Seconds left, from the pace of requests actually sent (cache hits are near free)."""
        sent = self.done - self.cached
        if self.done == 0 or self.done >= self.total:
            return None if self.done == 0 else 0.0
        pace = self.elapsed / max(sent, 1) if sent else self.elapsed / self.done
        return pace * (self.total - self.done)


class Stop:
    """Asks runs to stop, from any thread (a Cancel button) or a signal handler: nothing new is
    sent; requests in flight get `grace` seconds to come back (and are saved), then are
    abandoned (they are asked again by the next run)."""

    def __init__(self) -> None:
        self.grace = 0.0
        self._requested = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._lock = threading.Lock()

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def request(self, grace: float = 0.0) -> None:
        with self._lock:
            if self._requested.is_set():
                self.grace = min(self.grace, grace)  # a second, more urgent stop shortens the wait
            else:
                self.grace = grace
            self._requested.set()
            waiters = list(self._waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def wait(self) -> None:
        """Return once a stop is requested."""
        event = asyncio.Event()
        with self._lock:
            if self._requested.is_set():
                return
            self._waiters.append((asyncio.get_running_loop(), event))
        await event.wait()


@dataclass
class RunPlan:
    benchmark: Benchmark
    items: Sequence[Item]
    models: Sequence[Backend]
    mode: Mode = field(default_factory=Mode)
    perturbation: str = "none"
    config: GenerateConfig = field(default_factory=GenerateConfig)
    concurrency: int | None = None  # per model; None: each backend's default
    origin: Origin = Origin.RUN  # an evaluation run, or one probe on the Probe tab

    @property
    def condition(self) -> Condition:
        return Condition(self.mode, self.perturbation)


@dataclass
class _Prepared:
    item: Item  # after the perturbation
    prompt: Prompt
    cache_key: str
    ref: ItemRef
    result: Result | None  # graded from the cache, if the request was answered before


def cache_key(backend: Backend, config: GenerateConfig, prompt: Prompt, answer_space: Sequence[str]) -> str:
    payload = {
        "model": backend.model_id,
        "endpoint": backend.endpoint,
        "config": config.cache_fields(),
        "prompt": prompt.hash,
        "answer_space": list(answer_space),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def preflight(plan: RunPlan) -> None:
    """Everything that can be known wrong before sending anything."""
    if not plan.items:
        raise RunError(f"{plan.benchmark.id}: no items to run")
    if not plan.models:
        raise RunError("no model given: add --model provider/name")
    for backend in plan.models:
        backend.check()  # raises Unavailable naming the missing key, package or weights
    try:
        perturb.check(plan.perturbation)
        first = perturb.apply(plan.items[0], plan.perturbation)
        if plan.mode.shots:
            plan.benchmark.select_examples(first, plan.mode.shots)
    except ProbeError as exc:
        raise RunError(str(exc)) from None


class Runner:
    def __init__(self, plan: RunPlan, store: Store):
        self.plan = plan
        self.store = store
        self._example_parts: dict[str, list[ImagePart]] = {}
        self._example_lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    async def run(
        self,
        on_result: Callable[[Result, Progress], None] | None = None,
        stop: Stop | None = None,
        progress: Progress | None = None,
    ) -> list[Result]:
        preflight(self.plan)
        plan = self.plan
        stop = stop or Stop()
        for backend in plan.models:
            await asyncio.to_thread(backend.warm_up)
        progress = progress or Progress(total=len(plan.items) * len(plan.models))
        results: dict[tuple[str, str], Result] = {}

        def done(result: Result) -> None:
            results[(result.model, result.item_id)] = result
            progress.add(result)
            if on_result:
                on_result(result, progress)

        async def worker(backend: Backend, queue: list[Item]) -> None:
            while queue and not stop.requested:
                done(await self._one(backend, queue.pop()))

        total_width = sum(plan.concurrency or b.default_concurrency for b in plan.models)
        # Our own pool, sized to the workers: thread hops must not queue behind each other
        # (nor behind the event loop's default pool, which backends use for encoding).
        self._executor = ThreadPoolExecutor(max_workers=min(32, max(2, total_width)), thread_name_prefix="probe-runner")
        for backend in plan.models:
            backend.hold()
        tasks: list[asyncio.Task] = []
        try:
            for backend in plan.models:
                if stop.requested:
                    break
                if plan.config.temperature == 0:
                    answered, remaining = await self._in_thread(self._answer_from_cache, backend, plan.items)
                    for result in answered:
                        done(result)
                else:
                    remaining = list(plan.items)
                queue = list(reversed(remaining))  # pop() from the end walks items in order
                width = plan.concurrency or backend.default_concurrency
                tasks += [asyncio.create_task(worker(backend, queue)) for _ in range(max(1, width))]
            await _until_done_or_stopped(tasks, stop)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # Work already in a thread (a reply being graded and saved) finishes; queued work is
            # dropped. Waiting here means a stopped run has saved every reply it received.
            await asyncio.to_thread(self._executor.shutdown, True, cancel_futures=True)
            for backend in plan.models:
                await backend.release()
        order = {item.id: index for index, item in enumerate(plan.items)}
        models = [b.model_id for b in plan.models]
        return sorted(results.values(), key=lambda r: (models.index(r.model), order[r.item_id]))

    async def _one(self, backend: Backend, original: Item) -> Result:
        plan = self.plan
        try:
            # One trip to a worker thread: build the prompt (images load and hash there), look
            # it up, and on a hit grade and save it, so a cached re-run never waits twice.
            prepared = await self._in_thread(self._prepare, backend, original)
        except Exception as exc:  # a broken image or example must cost one item, not the run
            message = f"could not build the prompt: {type(exc).__name__}: {exc}"
            return await self._in_thread(self._fail, backend, original, ItemRef.of(original, plan.origin), message)
        if prepared.result is not None:
            return prepared.result
        try:
            output = await ask(backend, prepared.item, prepared.prompt, plan.config)
        except BackendError as exc:
            return await self._in_thread(self._fail, backend, prepared.item, prepared.ref, str(exc), prepared)
        except Exception as exc:  # an SDK's unexpected failure is still one item's error
            message = f"{backend.model_id}: unexpected {type(exc).__name__}: {exc}"
            return await self._in_thread(self._fail, backend, prepared.item, prepared.ref, message, prepared)
        return await self._in_thread(self._finish, backend, prepared, output, True)

    async def _in_thread(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(self._executor, function, *args)

    def _fail(
        self, backend: Backend, item: Item, ref: ItemRef, message: str, prepared: _Prepared | None = None
    ) -> Result:
        result = error_result(item, backend.model_id, self.plan.condition, ref, redact(message))
        if prepared is not None:
            result.prompt_hash, result.cache_key = prepared.prompt.hash, prepared.cache_key
        self.store.record(result)
        return result

    def _finish(self, backend: Backend, prepared: _Prepared, output: Output, fresh: bool, save: bool = True) -> Result:
        """Parse, grade and (with `save`) store a reply; `fresh` False: it came from the cache."""
        result = grade_reply(
            self.plan.benchmark,
            prepared.item,
            output.text,
            backend.model_id,
            self.plan.condition,
            prepared.ref,
            latency=output.latency,
            input_tokens=output.usage.input_tokens,
            output_tokens=output.usage.output_tokens,
            prompt_hash=prepared.prompt.hash,
            cache_key=prepared.cache_key,
            cached=not fresh,
        )
        if save:
            self.store.record(result, output if fresh else None, backend.endpoint if fresh else "")
        return result

    def _answer_from_cache(self, backend: Backend, items: Sequence[Item]) -> tuple[list[Result], list[Item]]:
        """In one thread, in one transaction: every item whose images are already known by hash
        and whose request is cached. Returns those results and the items still to ask."""
        answered: list[Result] = []
        remaining: list[Item] = []
        for original in items:
            refs = [s.ref for s in perturb.apply(original, self.plan.perturbation).images]
            if any(self.store.image_hash(ref) is None for ref in refs):
                remaining.append(original)  # a first sighting: its images load in a worker
                continue
            try:
                hit = self._prepare(backend, original, save=False).result
            except Exception:  # noqa: BLE001 - the worker meets it again and records the error
                hit = None
            if hit is None:
                remaining.append(original)
            else:
                answered.append(hit)
        self.store.record_many([(result, None, "") for result in answered])
        return answered, remaining

    def _prepare(self, backend: Backend, original: Item, save: bool = True) -> _Prepared:
        plan = self.plan
        fresh_hashes: dict[str, ImagePart] = {}

        def query_parts(which: Item) -> list[ImagePart]:
            parts = []
            for source in which.images:
                part = ImagePart(source.load, content_hash=self.store.image_hash(source.ref))
                if part.content_hash is None:
                    fresh_hashes[source.ref] = part
                parts.append(part)
            return parts

        item, prompt = assemble_prompt(
            plan.benchmark, original, plan.mode, plan.perturbation, query_parts, self._parts_of_example
        )
        self.store.remember_image_hashes({ref: part.sha256 for ref, part in fresh_hashes.items()})
        key = cache_key(backend, plan.config, prompt, item.possible_answers())
        ref = ItemRef.of(item, plan.origin, tuple(p.sha256 for p in prompt.messages[-1].images))
        prepared = _Prepared(item, prompt, key, ref, None)
        # Sampling at temperature > 0 asks for a new draw each time; only greedy requests repeat.
        cached = self.store.cached(key) if plan.config.temperature == 0 else None
        if cached is not None:
            prepared.result = self._finish(backend, prepared, cached, False, save)
        return prepared

    def _parts_of_example(self, example: Item) -> list[ImagePart]:
        """Examples recur across items: load, encode and hash their images once per run."""
        with self._example_lock:
            parts = self._example_parts.get(example.id)
            if parts is None:
                parts = [ImagePart(source.load()) for source in example.images]
                self._example_parts[example.id] = parts
            return parts


async def _until_done_or_stopped(tasks: list[asyncio.Task], stop: Stop) -> None:
    """Wait for the workers; on a stop, give the requests in flight `stop.grace` seconds. A
    worker's unexpected failure (a bug: item errors are results) is raised."""
    stopped = asyncio.ensure_future(stop.wait())
    try:
        pending = set(tasks)
        while pending and not stopped.done():
            _, pending = await asyncio.wait(pending | {stopped}, return_when=asyncio.FIRST_COMPLETED)
            pending.discard(stopped)
            _raise_failure(tasks)
        if pending:
            await asyncio.wait(pending, timeout=stop.grace)
            _raise_failure(tasks)
    finally:
        stopped.cancel()


def _raise_failure(tasks: list[asyncio.Task]) -> None:
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()


async def run(
    plan: RunPlan,
    store: Store,
    on_result: Callable[[Result, Progress], None] | None = None,
    stop: Stop | None = None,
    progress: Progress | None = None,
) -> list[Result]:
    """Run `plan`, saving each result as it arrives. `stop` ends it early (see `Stop`); a given
    `progress` is added to, so consecutive runs can report as one evaluation."""
    return await Runner(plan, store).run(on_result, stop, progress)
