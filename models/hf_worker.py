"""One worker per loaded local model: a pipeline that keeps the model busy with the model's work.

A request is prepared (templated, tokenized, its images processed: models/hf_prepare.py) in the
process's preparation threads as soon as it arrives, up to a batch ahead of the model; the
worker's own thread only puts prepared requests together (`collate`, exactly what the processor
gives for them as one batch), moves them to the device and generates (greedy, left-padded) or
scores. So image processing runs on every core at once, beside generation, instead of one core
at a time before it. On a CPU, a batch gets the cores the preparation threads leave free
(`_cores`).

A batch holds requests of one kind (equal generation settings, or answer scoring) and one shape;
it is as large as the device's memory allows for rows that long (models/hf_batching.py), and is
started once the requests already being prepared are ready or it is full. A batch that fails as a
batch is answered one request at a time, so a model that cannot batch still answers.

Answer probabilities (`submit_scoring`, models/hf_scoring.py) reuse what the same conversation's
reply left (`keep`): its prepared inputs, and the next-token distributions of its first places,
which answer single-token candidates with no pass at all; the rest are scored in batches across
requests.

Generation and scoring go through models/hf_zerogpu.py, which runs them inside `spaces.GPU` on
ZeroGPU (with inputs prepared before) and calls the model directly anywhere else. Each batch
runs in the context of its first request (contextvars), so ZeroGPU counts the GPU time against
the visitor who asked. `stop()` ends the thread once the queue is empty and lets go of the model,
so an evicted model's memory can be freed.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from models import hf_prepare, hf_scoring, hf_zerogpu
from models.hf_batching import BatchBudget, cpu_threads, torch_threads
from models.hf_prepare import CannotCollate, ImageChoice, Prepared
from models.types import Output, ProviderError, Unavailable, Usage

MAX_IN_FLIGHT = 64  # requests a caller keeps in flight at most (the runner's own bound)
# Next-token distributions kept from the start of a reply whose probabilities come next: enough
# for an answer in its first tokens (yes/no, a letter, a count), read without a scoring pass.
KEEP_STEPS = 4
TYPICAL_ROW = 1024  # tokens of a row, for sizing before any request is seen

Conversation = list[dict[str, Any]]


@dataclass(eq=False)
class _Request:
    conversation: Conversation | Callable[[], Conversation]
    settings: dict[str, Any]  # generate() keyword arguments; only equal settings share a batch
    future: Future = field(default_factory=Future)
    context: contextvars.Context = field(default_factory=contextvars.copy_context)
    # (prefix, candidates) of a request to score candidate answers (models/hf_scoring.py),
    # answered with a dict of probabilities.
    scoring: tuple[str, tuple[str, ...]] | None = None
    keep: Hashable | None = None  # keep the prepared inputs under this key for a scoring to come
    anchor: Any = None  # what `keep` names, held so that the key stays its own
    state: str = "queued"  # queued -> preparing -> ready
    prepared: Prepared | None = None
    spelling: hf_scoring.Spelling | None = None  # a scoring's candidates as tokens
    failure: BaseException | None = None

    @property
    def kind(self) -> tuple:
        return ("score",) if self.scoring is not None else ("generate", tuple(sorted(self.settings.items())))


class ModelWorker:
    def __init__(
        self,
        model_id: str,
        processor: Any,
        model: Any,
        max_batch: int | None = None,
        folder: str = "",
        images: ImageChoice | None = None,
    ):
        self.model_id = model_id
        self.folder = folder  # where the weights are on disk (a ZeroGPU process may load them again)
        self.processor = processor
        self.model = model
        self.images = images or ImageChoice(None)
        self.budget = BatchBudget(model, ceiling=max_batch, zerogpu=hf_zerogpu.on_zerogpu())
        self.batch_sizes: list[int] = []  # what the worker actually did, for tests and benches
        self.scoring_batch_sizes: list[int] = []  # requests per scoring pass
        self.split_batches = 0  # batches that failed together and were answered one by one
        self.prepared_here = 0  # conversations this worker prepared (scorings that reused a reply's count none)
        self.scored_from_steps = 0  # scorings answered from their reply's own steps, with no pass
        self._queue: deque[_Request] = deque()
        self._ready = threading.Condition()
        self._stopping = False
        self._preparing = 0
        self._parallel = hf_prepare.prepare_threads(hf_prepare.backend_name(processor))
        self._kept: OrderedDict[Hashable, tuple[Any, Prepared, hf_scoring.Steps | None]] = OrderedDict()
        self._buffers: dict[str, Any] = {}  # the last batch's image tensors, reused by the next (collate)
        self._threads = torch_threads() if getattr(self.budget.device, "type", "cpu") == "cpu" else 0
        self._rows = self.budget.rows(TYPICAL_ROW)  # the batch size last allowed: how far to prepare ahead
        # Left padding: every row's prompt ends where generation starts.
        tokenizer = getattr(processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"
        self._pad = getattr(tokenizer, "pad_token_id", None)
        if self._pad is None:
            self._pad = getattr(getattr(model, "generation_config", None), "pad_token_id", None)
        self._options = self.images.processor_kwargs(getattr(self.budget, "device", None))
        self._key = f"{model_id}@{id(self)}"
        hf_zerogpu.register(self._key, model)
        self.thread = threading.Thread(target=self._serve, name=f"hf-worker:{model_id}", daemon=True)
        self.thread.start()

    @property
    def max_batch(self) -> int:
        """Rows the last batch was allowed (it follows memory and prompt length)."""
        return self._rows

    def in_flight(self) -> int:
        """Requests a caller should keep in flight: a batch generating and the next one preparing
        (batches as large as memory allows rows of about a thousand tokens)."""
        return max(2, min(MAX_IN_FLIGHT, 2 * max(self._rows, self.budget.cap(TYPICAL_ROW))))

    # -- asking ----------------------------------------------------------------------------------

    def submit(
        self,
        conversation: Conversation | Callable[[], Conversation],
        settings: dict[str, Any],
        keep: Hashable | None = None,
        anchor: Any = None,
    ) -> Future:
        """Generate a reply. `conversation` may be a function that builds it (called in a
        preparation thread). With `keep`, the prepared inputs are kept for a scoring of the same
        conversation that names the same `keep` and `anchor`."""
        return self._enqueue(_Request(conversation, settings, keep=keep, anchor=anchor))

    def submit_scoring(
        self,
        conversation: Conversation | Callable[[], Conversation],
        prefix: str,
        candidates: tuple[str, ...],
        kept: Hashable | None = None,
        anchor: Any = None,
    ) -> Future:
        """Score candidate continuations (models/hf_scoring.py); answered with a dict."""
        request = _Request(conversation, {}, scoring=(prefix, candidates), keep=kept, anchor=anchor)
        return self._enqueue(request)

    def _enqueue(self, request: _Request) -> Future:
        with self._ready:
            if self._stopping:
                raise Unavailable(f"{self.model_id} was unloaded to make room for another model: ask again")
            if request.scoring is not None and request.keep is not None:
                found = self._kept.pop(request.keep, None)
                if found is not None and found[0] is request.anchor:
                    request.prepared = found[1]
                    self._spell(request)
                    request.state = "ready"
                    steps = found[2]
                    answer = hf_scoring.from_steps(request.spelling, steps) if steps and request.spelling else None
                    if answer is not None:  # the reply's own steps hold every candidate: no pass
                        self.scored_from_steps += 1
                        request.future.set_result(answer)
                        return request.future
            self._queue.append(request)
            self._start_preparing()
            self._ready.notify_all()
        return request.future

    def stop(self) -> None:
        """Answer what is queued, then end the thread and drop the model and processor."""
        with self._ready:
            self._stopping = True
            self._ready.notify_all()

    # -- preparing -------------------------------------------------------------------------------

    def _start_preparing(self) -> None:
        """Under the lock: start preparing queued requests, in order, while fewer than a batch
        and a request per thread are prepared or preparing ahead, and the threads this model may
        use are free."""
        ahead = sum(1 for request in self._queue if request.state != "queued")
        for request in self._queue:
            if self._preparing >= self._parallel or ahead >= self._ahead():
                return
            if request.state == "queued":
                try:
                    hf_prepare.pool().submit(self._prepare, request)
                except RuntimeError as exc:  # the interpreter is shutting down
                    request.failure, request.state = Unavailable(f"{self.model_id}: {exc}"), "ready"
                    continue
                request.state = "preparing"
                self._preparing += 1
                ahead += 1

    def _prepare(self, request: _Request) -> None:
        try:
            # Building the conversation reads the images: its failure (a file that broke) is the
            # caller's to name, as it is raised.
            if callable(request.conversation):
                request.conversation = request.conversation()
        except BaseException as exc:  # noqa: BLE001 - the request's own failure, answered by the worker
            request.failure = exc
        else:
            try:
                request.prepared = hf_prepare.prepare(self.processor, request.conversation, self._options)
            except BaseException as exc:  # noqa: BLE001
                request.failure = self._failure(exc, "preparing the inputs")
        self._spell(request)
        with self._ready:
            self.prepared_here += 1
            self._preparing -= 1
            request.state = "ready"
            self._start_preparing()
            self._ready.notify_all()

    # -- the worker's thread -----------------------------------------------------------------------

    def _serve(self) -> None:
        while True:
            batch, failed = self._next_batch()
            for request in failed:
                assert request.failure is not None
                request.future.set_exception(request.failure)
            if batch is None:
                break
            if batch and batch[0].scoring is not None:
                self._score(batch)
            elif batch:
                self._answer(batch)
        hf_zerogpu.unregister(self._key)
        with self._ready:
            self._kept.clear()
        self.model = self.processor = None  # the last references this worker holds

    def _next_batch(self) -> tuple[list[_Request] | None, list[_Request]]:
        """The next batch (None: stopped and nothing left), and requests whose preparation failed."""
        with self._ready:
            while True:
                failed = [r for r in self._queue if r.state == "ready" and r.failure is not None]
                for request in failed:
                    self._queue.remove(request)
                if failed:
                    self._start_preparing()
                    return [], failed
                if not self._queue:
                    if self._stopping:
                        return None, []
                    self._buffers.clear()  # idle: no batch to keep memory for
                    self._ready.wait()
                    continue
                batch = self._complete_batch()
                if batch:
                    for request in batch:
                        self._queue.remove(request)
                    self._start_preparing()  # the next batch prepares while this one runs
                    return batch, []
                self._ready.wait()

    def _complete_batch(self) -> list[_Request]:
        """Under the lock: a batch of the oldest kind of ready request whose batch is complete:
        full, or with no request of its kind still to be prepared (preparing now, or waiting for
        a thread with room ahead); [] when none is."""
        room = sum(1 for request in self._queue if request.state != "queued") < self._ahead()
        seen: set[tuple] = set()
        for first in self._queue:
            if first.state != "ready" or first.kind in seen:
                continue
            seen.add(first.kind)
            assert first.prepared is not None
            signature = first.prepared.signature
            ready = [
                r
                for r in self._queue
                if r.kind == first.kind
                and r.state == "ready"
                and r.prepared is not None
                and r.prepared.signature == signature
            ]
            batch, rows, allowed = self._fill(first, ready)
            coming = any(
                r.kind == first.kind and (r.state == "preparing" or (r.state == "queued" and room)) for r in self._queue
            )
            if coming and len(batch) == len(ready) and rows < allowed:
                continue  # companions are on their way and there is room for them
            self._rows = allowed
            return batch
        return []

    def _ahead(self) -> int:
        """Requests prepared or preparing ahead of the model: the next batch, and one per thread."""
        return self._rows + self._parallel

    def _fill(self, first: _Request, ready: list[_Request]) -> tuple[list[_Request], int, int]:
        """As many of `ready` (oldest first) as the memory allows for rows this long: the batch,
        its rows, and the rows it could have had."""
        new = int(first.settings.get("max_new_tokens", 0) or 0)
        batch: list[_Request] = []
        rows = longest = 0
        allowed = self._rows
        headroom = self.budget.headroom()
        for request in ready:
            assert request.prepared is not None
            count = len(request.spelling.tails) if request.spelling is not None else 1
            extra = max((len(tail) for tail in request.spelling.tails), default=0) if request.spelling else 0
            length = max(longest, request.prepared.length + new + extra)
            fits = self.budget.rows(length, headroom)
            if batch and rows + count > fits:
                break
            batch.append(request)
            rows, longest, allowed = rows + count, length, fits
        return batch, rows, allowed

    # -- generating ------------------------------------------------------------------------------

    def _answer(self, batch: list[_Request]) -> None:
        self.batch_sizes.append(len(batch))
        started = time.perf_counter()
        try:
            outputs: list[Any] = batch[0].context.run(self._generate, batch)
        except Exception:  # noqa: BLE001 - this model cannot batch these: one at a time
            self.split_batches += 1
            outputs = []
            for request in batch:
                try:
                    outputs += request.context.run(self._generate, [request])
                except Exception as exc:  # noqa: BLE001 - a failure belongs to its request
                    outputs.append(self._failure(exc, "generation"))
        latency = time.perf_counter() - started
        for request, output in zip(batch, outputs, strict=True):
            if isinstance(output, Exception):
                request.future.set_exception(output)
                continue
            text, used, steps = output
            if request.keep is not None and request.prepared is not None:
                self._keep(request, steps)
            request.future.set_result(Output(text=text, latency=latency, usage=used))

    def _generate(self, batch: list[_Request]) -> list[tuple[str, Usage, hf_scoring.Steps | None]]:
        inputs = self._collate(batch, "left")
        settings = batch[0].settings
        width = int(inputs["input_ids"].shape[1])
        keep = tuple(row for row, request in enumerate(batch) if request.keep is not None)
        with self.budget.measuring(len(batch), width + int(settings.get("max_new_tokens", 0) or 0)), self._cores():
            output, kept = hf_zerogpu.generate(
                self._key, self.folder, self.model, inputs, settings, (keep, KEEP_STEPS if keep else 0)
            )
        generation = self.model.generation_config
        pad = getattr(generation, "pad_token_id", None)
        ends = {pad, *_ids(getattr(generation, "eos_token_id", None))} - {None}
        results = []
        for row, request in enumerate(batch):
            new_tokens = output[row, width:]
            text = self.processor.decode(new_tokens, skip_special_tokens=True).strip()
            generated = int((new_tokens != pad).sum()) if pad is not None else int(new_tokens.shape[0])
            assert request.prepared is not None
            steps = None
            if kept is not None and row in keep:
                steps = hf_scoring.Steps.of(kept[keep.index(row)], new_tokens[:KEEP_STEPS], ends)
            results.append((text, Usage(request.prepared.length, generated), steps))
        return results

    def _collate(self, batch: list[_Request], side: str) -> dict[str, Any]:
        prepared = [request.prepared for request in batch]
        assert all(p is not None for p in prepared)
        try:
            return hf_prepare.collate(prepared, self._pad, side, self._buffers)  # type: ignore[arg-type]
        except CannotCollate:
            if side != "left":
                raise
        # Requests the rules cannot put together: the processor makes their batch itself.
        conversations = [request.conversation for request in batch]
        inputs = self.processor.apply_chat_template(
            conversations,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
            processor_kwargs={"padding": True, **self._options},
        )
        return dict(inputs)

    def _keep(self, request: _Request, steps: hf_scoring.Steps | None) -> None:
        assert request.prepared is not None
        with self._ready:
            self._kept[request.keep] = (request.anchor, request.prepared, steps)
            while len(self._kept) > self.in_flight():
                self._kept.popitem(last=False)

    # -- scoring ---------------------------------------------------------------------------------

    def _spell(self, request: _Request) -> None:
        """A scoring's candidates as tokens (its failure is the request's)."""
        if request.scoring is None or request.failure is not None:
            return
        try:
            request.spelling = hf_scoring.spell(self.processor, *request.scoring)
        except Exception as exc:  # noqa: BLE001
            request.failure = self._failure(exc, "scoring")

    def _score(self, batch: list[_Request]) -> None:
        self.scoring_batch_sizes.append(len(batch))
        try:
            found = batch[0].context.run(self._score_together, batch)
        except Exception:  # noqa: BLE001 - one at a time, so one request's failure stays its own
            found = []
            for request in batch:
                try:
                    found += request.context.run(self._score_together, [request])
                except Exception as exc:  # noqa: BLE001
                    found.append(self._failure(exc, "scoring"))
        for request, result in zip(batch, found, strict=True):
            if isinstance(result, Exception):
                request.future.set_exception(result)
            else:
                request.future.set_result(result)

    def _score_together(self, batch: list[_Request]) -> list[dict[str, float]]:
        requests = [(request.prepared, request.spelling) for request in batch]
        assert all(prepared is not None and spelling is not None for prepared, spelling in requests)

        def forward(rows: list[Prepared], picks: list[tuple[int, int]]) -> Any:
            inputs = hf_prepare.collate(rows, self._pad, "right", self._buffers)
            with self.budget.measuring(len(rows), max(row.length for row in rows)), self._cores():
                return hf_zerogpu.score(self._key, self.folder, self.model, inputs, picks)

        return hf_scoring.score_together(requests, self.budget.rows, forward)  # type: ignore[arg-type]

    @contextmanager
    def _cores(self) -> Iterator[None]:
        """Around a batch on a CPU: torch's threads are the cores the preparation threads leave."""
        with self._ready:
            busy = self._preparing
        with cpu_threads(self._threads, busy):
            yield

    def _failure(self, exc: BaseException, doing: str) -> BaseException:
        if isinstance(exc, ProviderError | Unavailable) or not isinstance(exc, Exception):
            return exc
        return ProviderError(f"{self.model_id}: {doing} failed: {type(exc).__name__}: {exc}")


def _ids(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]
