"""One worker thread per loaded local model: it takes the requests waiting for that model and
answers them in batches (padded on the left, greedy), so a run's concurrent requests share one
forward pass instead of queueing one by one. A batch that fails as a batch is answered one
request at a time, so a model that cannot batch still answers.

Generation goes through models/hf_zerogpu.py, which runs it inside `spaces.GPU` on ZeroGPU and
calls `model.generate` directly anywhere else. Each batch runs in the context of its first
request (contextvars), so ZeroGPU counts the GPU time against the visitor who asked.
`stop()` ends the thread once the queue is empty and lets go of the model, so an evicted model's
memory can be freed.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from models import hf_zerogpu
from models.types import Output, ProviderError, Unavailable, Usage

MAX_BATCH = 8
GATHER_SECONDS = 0.01  # how long a new batch waits for companions once the worker is free


@dataclass
class _Request:
    conversation: list[dict[str, Any]]
    settings: dict[str, Any]  # generate() keyword arguments; only equal settings share a batch
    future: Future = field(default_factory=Future)
    context: contextvars.Context = field(default_factory=contextvars.copy_context)
    # (prefix, candidates) of a request to score candidate answers (models/hf_scoring.py): alone
    # in its batch, answered with a dict of probabilities.
    scoring: tuple[str, tuple[str, ...]] | None = None


class ModelWorker:
    def __init__(self, model_id: str, processor: Any, model: Any, max_batch: int = MAX_BATCH, folder: str = ""):
        self.model_id = model_id
        self.folder = folder  # where the weights are on disk (a ZeroGPU process may load them again)
        self.processor = processor
        self.model = model
        self.max_batch = max_batch
        self.batch_sizes: list[int] = []  # what the worker actually did, for tests and benches
        self.split_batches = 0  # batches that failed together and were answered one by one
        self._queue: deque[_Request] = deque()
        self._ready = threading.Condition()
        self._stopping = False
        # Left padding: every row's prompt ends where generation starts.
        tokenizer = getattr(processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"
        self._key = f"{model_id}@{id(self)}"
        hf_zerogpu.register(self._key, model)
        self.thread = threading.Thread(target=self._serve, name=f"hf-worker:{model_id}", daemon=True)
        self.thread.start()

    def submit(self, conversation: list[dict[str, Any]], settings: dict[str, Any]) -> Future:
        return self._enqueue(_Request(conversation, settings))

    def submit_scoring(self, conversation: list[dict[str, Any]], prefix: str, candidates: tuple[str, ...]) -> Future:
        """Score candidate continuations (models/hf_scoring.py) on this worker's thread."""
        return self._enqueue(_Request(conversation, {}, scoring=(prefix, candidates)))

    def _enqueue(self, request: _Request) -> Future:
        with self._ready:
            if self._stopping:
                raise Unavailable(f"{self.model_id} was unloaded to make room for another model: ask again")
            self._queue.append(request)
            self._ready.notify()
        return request.future

    def stop(self) -> None:
        """Answer what is queued, then end the thread and drop the model and processor."""
        with self._ready:
            self._stopping = True
            self._ready.notify_all()

    def _serve(self) -> None:
        while True:
            batch = self._next_batch()
            if not batch:
                break
            if batch[0].scoring is not None:
                self._score(batch[0])
                continue
            started = time.perf_counter()
            try:
                outputs = batch[0].context.run(self._generate, batch)
            except Exception:  # noqa: BLE001 - this model cannot batch these: one at a time
                self.split_batches += 1
                outputs = []
                for request in batch:
                    try:
                        outputs += request.context.run(self._generate, [request])
                    except Exception as exc:  # noqa: BLE001 - a failure belongs to its request
                        outputs.append(
                            ProviderError(f"{self.model_id}: generation failed: {type(exc).__name__}: {exc}")
                        )
            latency = time.perf_counter() - started
            for request, output in zip(batch, outputs, strict=True):
                if isinstance(output, Exception):
                    request.future.set_exception(output)
                else:
                    text, used = output
                    request.future.set_result(Output(text=text, latency=latency, usage=used))
        hf_zerogpu.unregister(self._key)
        self.model = self.processor = None  # the last references this worker holds

    def _next_batch(self) -> list[_Request]:
        with self._ready:
            while not self._queue and not self._stopping:
                self._ready.wait()
            if not self._queue:
                return []
            self._ready.wait(timeout=GATHER_SECONDS)  # let the other waiting requests arrive
            first = self._queue.popleft()
            batch = [first]
            for request in list(self._queue) if first.scoring is None else []:
                if len(batch) == self.max_batch:
                    break
                if request.settings == first.settings and request.scoring is None:
                    self._queue.remove(request)
                    batch.append(request)
        if first.scoring is None:  # scoring is not generation: the sizes say how generation batched
            self.batch_sizes.append(len(batch))
        return batch

    def _score(self, request: _Request) -> None:
        from models.hf_scoring import score_candidates

        assert request.scoring is not None
        prefix, candidates = request.scoring
        try:
            found = request.context.run(
                score_candidates, self.processor, self.model, request.conversation, prefix, candidates
            )
        except Exception as exc:  # noqa: BLE001 - the request's own failure
            request.future.set_exception(ProviderError(f"{self.model_id}: scoring failed: {type(exc).__name__}: {exc}"))
        else:
            request.future.set_result(found)

    def _generate(self, batch: list[_Request]) -> list[tuple[str, Usage]]:
        conversations = [request.conversation for request in batch]
        inputs = self.processor.apply_chat_template(
            conversations if len(batch) > 1 else conversations[0],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
            **({"processor_kwargs": {"padding": True}} if len(batch) > 1 else {}),
        )
        output = hf_zerogpu.generate(self._key, self.folder, self.model, inputs, batch[0].settings)
        prompt_length = inputs["input_ids"].shape[1]
        pad = getattr(self.model.generation_config, "pad_token_id", None)
        results = []
        for row in range(len(batch)):
            new_tokens = output[row, prompt_length:]
            text = self.processor.decode(new_tokens, skip_special_tokens=True).strip()
            generated = int((new_tokens != pad).sum()) if pad is not None else int(new_tokens.shape[0])
            prompt_tokens = int(inputs["attention_mask"][row].sum()) if "attention_mask" in inputs else prompt_length
            results.append((text, Usage(prompt_tokens, generated)))
        return results
