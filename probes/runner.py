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
from dataclasses import dataclass, field

from models.base import Backend, redact
from models.types import BackendError, GenerateConfig, ImagePart, Output
from probes import perturb
from probes.parsing import parse_item_reply
from probes.prompting import Prompt, build_prompt
from probes.scoring import grade
from probes.store import Store
from probes.types import Benchmark, Item, Mode, Result, Status


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

    async def run(
        self,
        on_result: Callable[[Result, Progress], None] | None = None,
    ) -> list[Result]:
        preflight(self.plan)
        plan = self.plan
        progress = Progress(total=len(plan.items) * len(plan.models))
        results: dict[tuple[str, str], Result] = {}

        async def worker(backend: Backend, queue: list[Item]) -> None:
            while queue:
                item = queue.pop()
                result = await self._one(backend, item)
                results[(backend.model_id, item.id)] = result
                progress.done += 1
                progress.cached += result.cached
                progress.errors += result.status is Status.ERROR
                progress.correct += bool(result.correct)
                if on_result:
                    on_result(result, progress)

        tasks = []
        for backend in plan.models:
            queue = list(reversed(plan.items))  # pop() from the end walks items in order
            width = plan.concurrency or backend.default_concurrency
            tasks += [asyncio.create_task(worker(backend, queue)) for _ in range(max(1, width))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
        order = {item.id: index for index, item in enumerate(plan.items)}
        return sorted(
            results.values(), key=lambda r: ([b.model_id for b in plan.models].index(r.model), order[r.item_id])
        )

    async def _one(self, backend: Backend, original: Item) -> Result:
        plan = self.plan
        base = Result(
            benchmark=plan.benchmark.id,
            item_id=original.id,
            model=backend.model_id,
            mode=plan.mode.label,
            perturbation=plan.perturbation,
            status=Status.ERROR,
            groups=dict(original.groups),
            target=_jsonable(original.target),
        )
        try:
            prepared = await asyncio.to_thread(self._prepare, backend, original)
        except Exception as exc:  # a broken image or example must cost one item, not the run
            base.error = redact(f"could not build the prompt: {type(exc).__name__}: {exc}")
            await asyncio.to_thread(self.store.record, base)
            return base
        item = prepared.item
        base.prompt_hash = prepared.prompt.hash
        base.cache_key = prepared.cache_key
        base.target = _jsonable(item.target)
        base.item_ref = {
            "benchmark": item.benchmark,
            "item_id": item.id,
            "seed": item.seed,
            "params": dict(item.params),
            "images": [p.sha256 for p in prepared.prompt.messages[-1].images],
            "image_refs": [s.ref for s in item.images],
        }
        output = prepared.cached
        fresh = output is None
        if fresh:
            try:
                output = await backend.generate(prepared.prompt.messages, plan.config, item.possible_answers())
            except BackendError as exc:
                base.error = redact(str(exc))
                await asyncio.to_thread(self.store.record, base)
                return base
            except Exception as exc:  # an SDK's unexpected failure is still one item's error
                base.error = redact(f"{backend.model_id}: unexpected {type(exc).__name__}: {exc}")
                await asyncio.to_thread(self.store.record, base)
                return base
        parsed = parse_item_reply(output.text, item)
        base.status = parsed.status
        base.reply = output.text
        base.parsed = _jsonable(parsed.value)
        base.correct = grade(item.kind, parsed, item.target)
        base.latency = output.latency
        base.input_tokens = output.usage.input_tokens
        base.output_tokens = output.usage.output_tokens
        base.cached = not fresh
        await asyncio.to_thread(self.store.record, base, output if fresh else None, backend.endpoint)
        return base

    def _prepare(self, backend: Backend, original: Item) -> _Prepared:
        plan = self.plan
        item = perturb.apply(original, plan.perturbation)
        examples = plan.benchmark.select_examples(item, plan.mode.shots) if plan.mode.shots else []
        no_images = perturb.drops_all_images(plan.perturbation)
        query_ids = {item.id}

        def image_parts(which: Item) -> list[ImagePart]:
            if no_images:
                return []
            if which.id in query_ids:
                return [ImagePart(source.load()) for source in which.images]
            return self._parts_of_example(which)

        prompt = build_prompt(plan.benchmark, item, plan.mode, examples, image_parts)
        key = cache_key(backend, plan.config, prompt, item.possible_answers())
        # Sampling at temperature > 0 asks for a new draw each time; only greedy requests repeat.
        cached = self.store.cached(key) if plan.config.temperature == 0 else None
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
