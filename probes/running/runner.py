"""Async orchestration: items x models in one mode and perturbation -> graded results.

Each model gets its own pool of workers (its concurrency), so a slow model never holds back a
fast one, and its own feeder: going through the items in chunks in a worker thread, it answers
what the store has cached (graded and saved a chunk at a time) and hands the rest to the
workers, so the first requests go out while later items are still being looked up. Per item a
worker builds the prompt (an image seen for the first time is drawn or decoded and hashed
there, once per store), asks the model, parses, grades and commits the result at once, so a
killed run loses only the requests in flight.

Images (`image_parts`): the store remembers each image reference's content hash, and the image
cache beside it (`image_cache`) keeps each image's encoded bytes by that hash, so a run for a
second, third, tenth model neither draws, decodes nor encodes anything: it reads bytes and sends
them. A file that providers take as it is (an upright 8-bit RGB PNG or JPEG) is sent as its own
bytes. A long run draws its new canvas stimuli in a child process (`drawing_process`), out of
the way of the event loop's GIL; the runner's threads draw whatever the child cannot.

The runner owns progress (`Progress`, shared by consecutive runs that make one evaluation) and
stopping (`Stop`, both in `control`): a stopped run sends nothing new, lets the requests in flight finish for a
grace period and abandons the rest, and has saved every reply it got.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from models.base import Backend, redact
from models.types import PNG_FAST, BackendError, GenerateConfig, Output
from probes.asking import perturb
from probes.asking.prompting import Prompt, assemble_prompt
from probes.baselines.base import ask
from probes.core.benchmark import Benchmark
from probes.core.errors import LimitExceeded, ProbeError, RunError
from probes.core.types import Condition, ImageSource, Item, ItemRef, Mode, Origin, Result
from probes.reading import probabilities as answer_probabilities
from probes.reading.grading import error_result, grade_reply
from probes.running.control import Progress, Stop, until_done_or_stopped
from probes.running.drawing_process import DrawingProcess
from probes.running.drawing_process import enabled as drawing_process_enabled
from probes.running.group_commit import GroupCommit
from probes.running.image_cache import ImageCache
from probes.running.image_parts import ImageParts
from probes.running.store import Store
from probes.running.store_chain import SERVED_FROM

FIRST_CHUNK_MAX = 16  # items the feeder looks up before the first requests can go out
CHUNK = 64  # items per look-up (and per transaction of cache hits) after that
# A run of this many items or more draws its canvas images in a child process (see
# `drawing_process`): starting one costs about a quarter of a second of a core, which a few
# dozen images repay. PROBE_DRAWING_PROCESS=0 keeps all drawing in the runner's threads.
DRAWING_PROCESS_MIN_ITEMS = 64


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
    # Called just before a request is sent (never for a cached answer): a public Space charges
    # its budgets on the server's keys here, so answers it already has cost nothing. Raising
    # LimitExceeded refuses that request: the item ends as an error saying why.
    spend: Callable[[Backend], None] | None = None
    # Ask for the probability of each of the item's answers where the model gives them. A
    # cached reply without them is asked again (only those: a reply that has them, or whose
    # model or server refused them, is not), unless `keep_answers` keeps every cached reply as it is.
    probabilities: bool = False
    keep_answers: bool = False

    @property
    def condition(self) -> Condition:
        return Condition(self.mode, self.perturbation)

    @property
    def asking(self) -> GenerateConfig:
        """The settings each request is sent with."""
        return dataclasses.replace(self.config, probabilities=True) if self.probabilities else self.config

    def lacks_probabilities(self, backend: Backend, item: Item, output: Output) -> bool:
        """Whether a cached reply must be asked again for its probabilities."""
        return (
            self.probabilities
            and not self.keep_answers
            and backend.offers_probabilities
            and not output.has_probabilities()
            and bool(answer_probabilities.answer_forms(item))
        )


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
        first = perturb.apply(plan.benchmark, plan.items[0], plan.perturbation)
        if plan.mode.shots:
            plan.benchmark.select_examples(first, plan.mode.shots)
    except ProbeError as exc:
        raise RunError(str(exc)) from None


class Runner:
    def __init__(self, plan: RunPlan, store: Store, images: ImageCache | None = None):
        """`images`: where encoded images are kept (default: the image cache beside `store`)."""
        self.plan = plan
        self.store = store
        # A benchmark of visitors' uploads keeps no encoded image beside the store: uploads are
        # deleted after an hour, and their bytes must not outlive them there.
        if images is None and plan.benchmark.cache_images:
            images = ImageCache.beside(store.path, store.image_cache_bytes)
        self._commits = GroupCommit(store)
        send_encoded = all(b.image_encoding == PNG_FAST for b in plan.models)  # see ImageParts
        self.parts = ImageParts(store, images, self._commits, send_encoded)
        self._executor: ThreadPoolExecutor | None = None
        self.drawing = DrawingProcess(images) if images is not None and self._draws_elsewhere() else None

    def _draws_elsewhere(self) -> bool:
        """Whether this run's canvas images are worth a child process (see DRAWING_PROCESS_MIN_ITEMS)."""
        plan = self.plan
        if not self.parts.send_encoded or len(plan.items) < DRAWING_PROCESS_MIN_ITEMS:
            return False
        if not drawing_process_enabled():
            return False
        try:
            first = self._images(plan.items[0])
        except ProbeError:
            return False  # preflight says why
        return any(source.pixels is not None for source in first)

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

        async def feed(backend: Backend, queue: asyncio.Queue, width: int) -> None:
            """Cache hits answered a chunk at a time; the rest queued for the workers. The first
            chunk is one request per worker, so requests start while the rest is looked up."""
            items, start, size = list(plan.items), 0, min(width, FIRST_CHUNK_MAX)
            try:
                while start < len(items) and not stop.requested:
                    chunk, start = items[start : start + size], start + size
                    if plan.config.temperature == 0:
                        answered, jobs = await self._in_thread(self._look_up, backend, chunk)
                    else:  # sampling asks for a new draw each time: nothing is looked up
                        answered, jobs = [], chunk
                    for result in answered:
                        done(result)
                    for job in jobs:
                        queue.put_nowait(job)
                    if self.drawing is not None:  # new canvas images: the child draws them ahead of the workers
                        await self._draw_ahead([job for job in jobs if not isinstance(job, _Prepared)])
                    size = CHUNK
            finally:
                queue.put_nowait(None)  # no more work: each worker passes it on and ends

        async def worker(backend: Backend, queue: asyncio.Queue) -> None:
            while True:
                job = await queue.get()
                if job is None or stop.requested:
                    queue.put_nowait(None)
                    return
                done(await self._one(backend, job))

        total_width = sum(plan.concurrency or b.default_concurrency for b in plan.models)
        # Our own pool, sized to the workers: thread hops must not queue behind each other
        # (nor behind the event loop's default pool, which backends use for encoding).
        self._executor = ThreadPoolExecutor(max_workers=min(32, max(2, total_width)), thread_name_prefix="probe-runner")
        # Drawing, decoding, hashing and encoding images: on a pool of one thread per core. More
        # threads at it than cores only fight over the GIL (and starve the event loop sending
        # requests), and every thread that allocates image-sized buffers keeps a malloc arena
        # of its own: 16 of them held about 45 MB more at 1155 px.
        self.parts.threads = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="probe-images")
        for backend in plan.models:
            backend.hold()
        tasks: list[asyncio.Task] = []
        queues: list[asyncio.Queue] = []

        async def wake_on_stop() -> None:
            await stop.wait()
            for queue in queues:  # idle workers end now instead of waiting out the grace period
                queue.put_nowait(None)

        waker = asyncio.create_task(wake_on_stop())
        try:
            for backend in plan.models:
                if stop.requested:
                    break
                queue: asyncio.Queue = asyncio.Queue()
                queues.append(queue)
                width = max(1, plan.concurrency or backend.default_concurrency)
                tasks.append(asyncio.create_task(feed(backend, queue, width)))
                tasks += [asyncio.create_task(worker(backend, queue)) for _ in range(width)]
            await until_done_or_stopped(tasks, stop)
        finally:
            for task in [*tasks, waker]:
                task.cancel()
            await asyncio.gather(*tasks, waker, return_exceptions=True)
            # Work already in a thread (a reply being graded and saved) finishes; queued work is
            # dropped. Waiting here means a stopped run has saved every reply it received.
            await asyncio.to_thread(self._executor.shutdown, True, cancel_futures=True)
            await asyncio.to_thread(self.parts.threads.shutdown, True, cancel_futures=True)
            self.parts.threads = None
            if self.drawing is not None:
                await self.drawing.close()
            await asyncio.to_thread(self._commits.save, [])  # image hashes learned since the last result
            for backend in plan.models:
                await backend.release()
        order = {item.id: index for index, item in enumerate(plan.items)}
        models = [b.model_id for b in plan.models]
        return sorted(results.values(), key=lambda r: (models.index(r.model), order[r.item_id]))

    async def _one(self, backend: Backend, job: Item | _Prepared) -> Result:
        """One item: `job` is the item (its images not yet known by hash) or its prompt, built
        by the feeder, that missed the cache."""
        plan = self.plan
        if isinstance(job, _Prepared):
            prepared = job
        else:
            try:
                if self.drawing is not None:  # new canvas images drawn in the child, if it can
                    await self._draw_in_child(self._images(job))
                # One trip to a worker thread: build the prompt (images seen for the first time
                # are drawn or decoded and hashed there), look it up, and on a hit grade and
                # save it, so a cached re-run never waits twice.
                prepared = await self._in_thread(self._prepare, backend, job)
            except Exception as exc:  # a broken image or example must cost one item, not the run
                message = f"could not build the prompt: {type(exc).__name__}: {exc}"
                return await self._in_thread(self._fail, backend, job, ItemRef.of(job, plan.origin), message)
            if prepared.result is not None:
                return prepared.result
        if plan.spend is not None:
            try:
                plan.spend(backend)
            except LimitExceeded as exc:  # over budget: this request is not sent
                return await self._in_thread(self._fail, backend, prepared.item, prepared.ref, str(exc), prepared)
        try:
            output = await ask(backend, prepared.item, prepared.prompt, plan.asking)
            if plan.probabilities and output.tokens is None and output.no_probabilities is None:
                output = await self._scored(backend, prepared, output)
        except BackendError as exc:
            return await self._in_thread(self._fail, backend, prepared.item, prepared.ref, str(exc), prepared)
        except ProbeError as exc:  # an image file that changed or broke since the prompt was built
            message = f"could not send the image: {exc}"
            return await self._in_thread(self._fail, backend, prepared.item, prepared.ref, message, prepared)
        except Exception as exc:  # an SDK's unexpected failure is still one item's error
            message = f"{backend.model_id}: unexpected {type(exc).__name__}: {exc}"
            return await self._in_thread(self._fail, backend, prepared.item, prepared.ref, message, prepared)
        if not isinstance(output.text, str):  # a backend that let a server's odd reply through
            message = f"{backend.model_id}: the reply was {type(output.text).__name__}, not text"
            return await self._in_thread(self._fail, backend, prepared.item, prepared.ref, message, prepared)
        return await self._in_thread(self._finish, backend, prepared, output, True)

    async def _scored(self, backend: Backend, prepared: _Prepared, output: Output) -> Output:
        """The reply with its candidates' probabilities, from a backend that scores them (local
        models), at the place the reply gives its answer (after the prompt when it gives none)."""
        item = prepared.item
        spellings = [text for _, text in answer_probabilities.candidates(item)]
        if not spellings or not isinstance(output.text, str):
            return output
        parsed = self.plan.benchmark.parse_reply(output.text, item)
        offset = answer_probabilities.answer_offset(output.text, item, parsed.value) or 0
        try:
            scores = await backend.score(prepared.prompt.messages, output.text[:offset], spellings)
        except BackendError:  # the reply stands without them; the next run asks for them again
            return output
        return output if scores is None else dataclasses.replace(output, scores=scores)

    async def _draw_in_child(self, sources: Sequence[ImageSource]) -> None:
        canvases = [source.ref for source in sources if source.pixels is not None]
        if self.parts.unseen(canvases):  # a sampled run's worker can start an item before its feeder looked it up
            await self._in_thread(self.parts.resolve, canvases)
        await self.parts.draw_elsewhere(sources, self.drawing)

    async def _draw_ahead(self, items: Sequence[Item]) -> None:
        assert self.drawing is not None
        sources: list[ImageSource] = []
        for item in items:
            try:
                sources += self._images(item)
            except ProbeError:
                continue  # the item's worker meets the error
        # A sampled run looks nothing up, so its images are not yet known to be new: ask the store.
        await self._in_thread(self.parts.resolve, [source.ref for source in sources if source.pixels is not None])
        await self.parts.draw_ahead(sources, self.drawing)

    def _images(self, item: Item) -> tuple[ImageSource, ...]:
        """The images an item is sent with (after the run's perturbation)."""
        return perturb.images(item, self.plan.perturbation)

    async def _in_thread(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(self._executor, function, *args)

    def _fail(
        self, backend: Backend, item: Item, ref: ItemRef, message: str, prepared: _Prepared | None = None
    ) -> Result:
        result = error_result(item, backend.model_id, self.plan.condition, ref, redact(message))
        if prepared is not None:
            result.prompt_hash, result.cache_key = prepared.prompt.hash, prepared.cache_key
        self._commits.save([(result, None, "")])
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
            cached_from=None if fresh else (output.raw or {}).get(SERVED_FROM),
        )
        answer_probabilities.attach(result, prepared.item, output)
        if save:
            self._commits.save([(result, output if fresh else None, backend.endpoint if fresh else "")])
        return result

    def _look_up(self, backend: Backend, items: Sequence[Item]) -> tuple[list[Result], list[Item | _Prepared]]:
        """In one thread, with a few queries and one transaction: every item whose images are
        already known by hash and whose request is cached. Returns those results, and what the
        workers are to ask: the prompt of an item that missed the cache, or the item itself when
        one of its images is new (drawn or decoded in a worker, not here)."""
        queries = [(original, perturb.images(original, self.plan.perturbation)) for original in items]
        self.parts.resolve([source.ref for _, sources in queries for source in sources])
        built: list[_Prepared] = []
        jobs: list[Item | _Prepared] = []
        for original, sources in queries:
            if any(self.parts.known(source.ref) is None for source in sources):
                jobs.append(original)
                continue
            try:
                built.append(self._prepare(backend, original, look_up=False))
            except Exception:  # noqa: BLE001 - the worker meets it again and records the error
                jobs.append(original)
        cached = self.store.cached_many([prepared.cache_key for prepared in built])
        answered: list[Result] = []
        for prepared in built:
            if prepared.cache_key in cached and not self.plan.lacks_probabilities(
                backend, prepared.item, cached[prepared.cache_key]
            ):
                answered.append(self._finish(backend, prepared, cached[prepared.cache_key], False, save=False))
            else:
                jobs.append(prepared)
        self._commits.save([(result, None, "") for result in answered])
        return answered, jobs

    def _prepare(self, backend: Backend, original: Item, save: bool = True, look_up: bool = True) -> _Prepared:
        with self.parts.preparing():
            return self._build(backend, original, save, look_up)

    def _build(self, backend: Backend, original: Item, save: bool, look_up: bool) -> _Prepared:
        plan = self.plan
        item, prompt = assemble_prompt(
            plan.benchmark, original, plan.mode, plan.perturbation, self.parts.of, self.parts.of_example
        )
        key = cache_key(backend, plan.config, prompt, item.possible_answers())
        ref = ItemRef.of(item, plan.origin, tuple(p.sha256 for p in prompt.messages[-1].images))
        prepared = _Prepared(item, prompt, key, ref, None)
        # Sampling at temperature > 0 asks for a new draw each time; only greedy requests repeat.
        cached = self.store.cached(key) if look_up and plan.config.temperature == 0 else None
        if cached is not None and plan.lacks_probabilities(backend, item, cached):
            cached = None
        if cached is not None:
            prepared.result = self._finish(backend, prepared, cached, False, save)
        elif look_up and self.parts.send_encoded:
            self.parts.encode_new(prompt)  # to be sent
        return prepared


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
