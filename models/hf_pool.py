"""The local models loaded in this process: at most PROBE_MAX_LOCAL_MODELS (default 2) at once.

Every request holds a `Lease` on its model from before it is queued until its reply is out, and
a model is evicted only when nobody holds one: the least recently used idle model goes first.
When every loaded model is busy, a load waits: it marks the least recently used model
*draining* (its new requests wait for it to be loaded again, behind this load) so a busy run
cannot keep the waiting model out for ever, and takes the room when that model's last request
is answered. Loads are served first come, first served. Evicting stops the model's worker
thread (after its queue) and drops every reference to the model, so its memory can go.

Preparing a load (finding or downloading the files) takes no memory and so happens before
waiting for room; only `load` (reading weights into memory) needs a slot.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
from collections import OrderedDict, deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from models import hf_progress
from models.hf_worker import ModelWorker
from models.types import Unavailable

LIMIT_VARIABLE = "PROBE_MAX_LOCAL_MODELS"
DEFAULT_LIMIT = 2


def max_loaded() -> int:
    raw = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_LIMIT
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise Unavailable(
            f"{LIMIT_VARIABLE} must be a whole number of at least 1 (local models loaded at once), not {raw!r}"
        )
    return value


class Loader(Protocol):
    def prepare(self) -> Any:
        """Everything before memory is used (find or download the files); raises Unavailable."""

    def load(self, prepared: Any) -> ModelWorker:
        """Read the model into memory and start its worker; raises Unavailable."""


@dataclass(eq=False)
class _Entry:
    source: str
    worker: ModelWorker
    in_use: int = 0
    draining: bool = False


@dataclass(eq=False)
class _Load:
    source: str
    waiters: list[Future] = field(default_factory=list)  # each resolves to a Lease, or the load's error


class Lease:
    """A hold on a loaded model: it is not evicted until every lease on it is released."""

    def __init__(self, pool: Pool, entry: _Entry):
        self._pool = pool
        self._entry = entry
        self._released = False

    @property
    def worker(self) -> ModelWorker:
        return self._entry.worker

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._pool._release(self._entry)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


class Pool:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._loaded: OrderedDict[str, _Entry] = OrderedDict()  # least recently used first
        self._loads: dict[str, _Load] = {}  # loads under way (or waiting for room), by source
        self._turns: deque[_Load] = deque()  # loads waiting for room, first come first served
        self._loading_now = 0  # loads that have their room and are reading weights

    # -- taking a model ------------------------------------------------------------------------

    def lease(self, source: str, loader: Loader) -> Lease:
        """Blocking: a lease on `source`, loading it first if need be."""
        got = self._lease_or_wait(source, loader)
        return got if isinstance(got, Lease) else got.result()

    async def lease_async(self, source: str, loader: Loader) -> Lease:
        got = self._lease_or_wait(source, loader)
        if isinstance(got, Lease):
            return got
        try:
            return await asyncio.wrap_future(got)
        except asyncio.CancelledError:
            # The waiter was cancelled; if the load had already handed it a lease, give it back.
            if got.done() and not got.cancelled() and got.exception() is None:
                got.result().release()
            raise

    def _lease_or_wait(self, source: str, loader: Loader) -> Lease | Future:
        with self._cond:
            entry = self._loaded.get(source)
            if entry is not None and not entry.draining:
                entry.in_use += 1
                self._loaded.move_to_end(source)
                return Lease(self, entry)
            load = self._loads.get(source)
            if load is None:
                load = self._loads[source] = _Load(source)
                threading.Thread(
                    target=self._run_load, args=(load, loader), name=f"hf-load:{source}", daemon=True
                ).start()
            waiter: Future = Future()
            load.waiters.append(waiter)
            return waiter

    def _release(self, entry: _Entry) -> None:
        with self._cond:
            entry.in_use -= 1
            if entry.in_use == 0:
                if entry.draining and self._loaded.get(entry.source) is entry:
                    self._evict(entry)
                self._cond.notify_all()

    # -- loading -------------------------------------------------------------------------------

    def _run_load(self, load: _Load, loader: Loader) -> None:
        try:
            prepared = loader.prepare()
            self._wait_for_room(load)
            try:
                worker = loader.load(prepared)
            finally:
                with self._cond:
                    self._loading_now -= 1
                    self._cond.notify_all()
        except BaseException as exc:  # noqa: BLE001 - every waiter gets the load's error
            with self._cond:
                self._loads.pop(load.source, None)
                if load in self._turns:
                    self._turns.remove(load)
                waiters, load.waiters = load.waiters, []
                self._cond.notify_all()
            for waiter in waiters:
                if waiter.set_running_or_notify_cancel():
                    waiter.set_exception(exc)
            return
        with self._cond:
            self._loads.pop(load.source, None)
            entry = _Entry(load.source, worker)
            self._loaded[load.source] = entry
            waiters, load.waiters = load.waiters, []
            hf_progress.report(load.source, "ready", "loaded")
            for waiter in waiters:
                if waiter.set_running_or_notify_cancel():  # False: that waiter gave up
                    entry.in_use += 1
                    waiter.set_result(Lease(self, entry))
            self._cond.notify_all()

    def _wait_for_room(self, load: _Load) -> None:
        with self._cond:
            self._turns.append(load)
            told = False
            while True:
                limit = max_loaded()
                old = self._loaded.get(load.source)  # a draining copy of this very model
                if old is not None and old.in_use == 0:
                    self._evict(old)
                    old = None
                if self._turns[0] is load and old is None:
                    if len(self._loaded) + self._loading_now < limit:
                        self._turns.popleft()
                        self._loading_now += 1
                        self._cond.notify_all()
                        return
                    idle = [entry for entry in self._loaded.values() if entry.in_use == 0]
                    if idle:
                        self._evict(idle[0])
                        continue
                    if self._loaded and not any(entry.draining for entry in self._loaded.values()):
                        next(iter(self._loaded.values())).draining = True
                if not told:
                    busy = ", ".join(self._loaded) or "other loads"
                    hf_progress.report(
                        load.source, "waiting", f"waiting for room: {limit} local model(s) at most, busy: {busy}"
                    )
                    told = True
                self._cond.wait()

    def _evict(self, entry: _Entry) -> None:
        """Under the lock: forget the model and stop its worker (which then drops the model)."""
        self._loaded.pop(entry.source, None)
        entry.worker.stop()
        hf_progress.report(entry.source, "evicted", "unloaded to make room for another model")
        threading.Thread(target=_free_memory, args=(entry.worker,), daemon=True).start()

    # -- looking -------------------------------------------------------------------------------

    def loaded(self) -> list[str]:
        """Sources loaded now, least recently used first."""
        with self._cond:
            return list(self._loaded)

    def worker(self, source: str) -> ModelWorker | None:
        with self._cond:
            entry = self._loaded.get(source)
            return entry.worker if entry else None

    def in_use(self, source: str) -> int:
        with self._cond:
            entry = self._loaded.get(source)
            return entry.in_use if entry else 0

    def evict_idle(self) -> list[str]:
        """Unload every model nobody is using (tests; an operator freeing memory)."""
        with self._cond:
            idle = [entry for entry in self._loaded.values() if entry.in_use == 0]
            for entry in idle:
                self._evict(entry)
            self._cond.notify_all()
            return [entry.source for entry in idle]


def _free_memory(worker: ModelWorker) -> None:
    """After the worker's thread has let go of the model: collect it, and the GPU's cache."""
    worker.thread.join()
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001 - freeing is best effort
        pass
