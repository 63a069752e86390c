"""Async orchestration: items x models in one mode and perturbation -> graded results.

Each model gets its own pool of workers (its concurrency), so a slow model never holds back a
fast one. Per item: build the prompt (images load and hash in a worker thread), look the request
up in the store's cache, ask the model only on a miss, parse, grade, and commit the result at
once, so a killed run loses only the requests in flight.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from models.base import Backend, hold, redact, release, warm_up
from models.types import BackendError, GenerateConfig, ImagePart, Output
from probes.asking import perturb
from probes.asking.prompting import Prompt, assemble_prompt
from probes.core.types import Benchmark, Item, Mode, Result, Status
from probes.running.store import Store


class RunError(ValueError):
    """The run cannot start as asked; nothing was sent."""


@dataclass
class Progress:
    total: int
    done: int = 0
    cached: int = 0
    errors: int = 0
    correct: int = 0
    started: float = field(default_factory=time.monotonic)

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


@dataclass
class RunPlan:
    benchmark: Benchmark
    items: Sequence[Item]
    models: Sequence[Backend]
    mode: Mode = field(default_factory=Mode)
    perturbation: str = "none"
    config: GenerateConfig = field(default_factory=GenerateConfig)
    concurrency: int | None = None  # per model; None: each backend's default


@dataclass
class _Prepared:
    item: Item  # after the perturbation
    prompt: Prompt
    cache_key: str
    cached: Output | None


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
    except ValueError as exc:
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
    ) -> list[Result]:
        preflight(self.plan)
        plan = self.plan
        for backend in plan.models:
            await asyncio.to_thread(warm_up, backend)
        progress = Progress(total=len(plan.items) * len(plan.models))
        results: dict[tuple[str, str], Result] = {}

        def done(result: Result) -> None:
            results[(result.model, result.item_id)] = result
            progress.done += 1
            progress.cached += result.cached
            progress.errors += result.status is Status.ERROR
            progress.correct += bool(result.correct)
            if on_result:
                on_result(result, progress)

        async def worker(backend: Backend, queue: list[Item]) -> None:
            while queue:
                done(await self._one(backend, queue.pop()))

        total_width = sum(plan.concurrency or b.default_concurrency for b in plan.models)
        # Our own pool, sized to the workers: thread hops must not queue behind each other
        # (nor behind the event loop's default pool, which backends use for encoding).
        self._executor = ThreadPoolExecutor(max_workers=min(32, max(2, total_width)), thread_name_prefix="probe-runner")
        for backend in plan.models:
            hold(backend)
        tasks = []
        try:
            for backend in plan.models:
                if plan.config.temperature == 0:
                    answered, remaining = await self._in_thread(self._answer_from_cache, backend, plan.items)
                    for result in answered:
                        done(result)
                else:
                    remaining = list(plan.items)
                queue = list(reversed(remaining))  # pop() from the end walks items in order
                width = plan.concurrency or backend.default_concurrency
                tasks += [asyncio.create_task(worker(backend, queue)) for _ in range(max(1, width))]
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            self._executor.shutdown(wait=False, cancel_futures=True)
            for backend in plan.models:
                await release(backend)
        order = {item.id: index for index, item in enumerate(plan.items)}
        return sorted(
            results.values(), key=lambda r: ([b.model_id for b in plan.models].index(r.model), order[r.item_id])
        )

    def _blank_result(self, backend: Backend, original: Item) -> Result:
        plan = self.plan
        return Result(
            benchmark=plan.benchmark.id,
            item_id=original.id,
            model=backend.model_id,
            mode=plan.mode.label,
            perturbation=plan.perturbation,
            status=Status.ERROR,
            groups=dict(original.groups),
            target=_jsonable(original.target),
        )

    async def _one(self, backend: Backend, original: Item) -> Result:
        plan = self.plan
        result = self._blank_result(backend, original)
        try:
            # One trip to a worker thread: build the prompt (images load and hash there), look
            # it up, and on a hit grade and save it, so a cached re-run never waits twice.
            prepared = await self._in_thread(self._prepare, backend, original, result)
        except Exception as exc:  # a broken image or example must cost one item, not the run
            return await self._in_thread(self._fail, result, f"could not build the prompt: {type(exc).__name__}: {exc}")
        if prepared.cached is not None:
            return result
        try:
            output = await backend.generate(prepared.prompt.messages, plan.config, prepared.item.possible_answers())
        except BackendError as exc:
            return await self._in_thread(self._fail, result, str(exc))
        except Exception as exc:  # an SDK's unexpected failure is still one item's error
            return await self._in_thread(
                self._fail, result, f"{backend.model_id}: unexpected {type(exc).__name__}: {exc}"
            )
        return await self._in_thread(self._finish, result, prepared.item, output, backend.endpoint)

    async def _in_thread(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(self._executor, function, *args)

    def _fail(self, result: Result, message: str) -> Result:
        result.error = redact(message)
        self.store.record(result)
        return result

    def _finish(self, result: Result, item: Item, output: Output, endpoint: str | None, save: bool = True) -> Result:
        """Parse, grade and save. `endpoint` None: the reply came from the cache."""
        parsed = self.plan.benchmark.parse_reply(output.text, item)
        result.status = parsed.status
        result.reply = output.text
        result.parsed = _jsonable(parsed.value)
        result.correct, result.score = self.plan.benchmark.grade(item, parsed)
        result.latency = output.latency
        result.input_tokens = output.usage.input_tokens
        result.output_tokens = output.usage.output_tokens
        result.cached = endpoint is None
        if save:
            self.store.record(result, None if result.cached else output, endpoint or "")
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
            result = self._blank_result(backend, original)
            try:
                hit = self._prepare(backend, original, result, save=False).cached is not None
            except Exception:  # noqa: BLE001 - the worker meets it again and records the error
                hit = False
            (answered if hit else remaining).append(result if hit else original)
        self.store.record_many([(result, None, "") for result in answered])
        return answered, remaining

    def _prepare(self, backend: Backend, original: Item, result: Result, save: bool = True) -> _Prepared:
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
        result.prompt_hash = prompt.hash
        result.cache_key = key
        result.target = _jsonable(item.target)
        result.item_ref = {
            "benchmark": item.benchmark,
            "item_id": item.id,
            "seed": item.seed,
            "params": dict(item.params),
            "images": [p.sha256 for p in prompt.messages[-1].images],
            "image_refs": [s.ref for s in item.images],
        }
        # Sampling at temperature > 0 asks for a new draw each time; only greedy requests repeat.
        cached = self.store.cached(key) if plan.config.temperature == 0 else None
        if cached is not None:
            self._finish(result, item, cached, None, save)
        return _Prepared(item, prompt, key, cached)

    def _parts_of_example(self, example: Item) -> list[ImagePart]:
        """Examples recur across items: load, encode and hash their images once per run."""
        with self._example_lock:
            parts = self._example_parts.get(example.id)
            if parts is None:
                parts = [ImagePart(source.load()) for source in example.images]
                self._example_parts[example.id] = parts
            return parts


def _jsonable(value):
    if isinstance(value, tuple):
        return list(value)
    return value


async def run(plan: RunPlan, store: Store, on_result: Callable[[Result, Progress], None] | None = None) -> list[Result]:
    return await Runner(plan, store).run(on_result)
