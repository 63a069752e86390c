"""How far a local model is from answering: waiting for room, downloading, loading weights, ready.

One `LoadingProgress` per model source (a Hub id or a folder), updated by the loader
(models/hf_backend.py) and read by anyone: `progress(source)` to poll (the UI's timer), or
`subscribe(callback)` to be told of every change. Downloads report bytes through a tqdm-shaped
object handed to `huggingface_hub.snapshot_download(tqdm_class=...)`; weight loading reports the
tensors transformers has placed, counted by wrapping the progress bar of its loading loop
(`transformers.core_model_loading.tqdm`, transformers 5) for the loading thread only: other
threads, and other transformers versions, keep their own bars untouched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

Stage = Literal["idle", "waiting", "downloading", "loading", "ready", "failed", "evicted"]


@dataclass(frozen=True)
class LoadingProgress:
    """One model's loading, as a person would be told it.

    `done`/`total` count bytes while downloading and weight tensors while loading (total None when
    unknown); `message` says it in words ("downloading 120 MB of 513 MB").
    """

    source: str
    stage: Stage = "idle"
    done: int = 0
    total: int | None = None
    message: str = "not loaded"
    updated: float = field(default_factory=time.time)

    @property
    def fraction(self) -> float | None:
        """0..1 within the current stage, or None when its total is unknown."""
        if self.stage == "ready":
            return 1.0
        if not self.total:
            return None
        return min(1.0, self.done / self.total)

    @property
    def busy(self) -> bool:
        return self.stage in ("waiting", "downloading", "loading")


_lock = threading.Lock()
_states: dict[str, LoadingProgress] = {}
_listeners: list[Callable[[LoadingProgress], None]] = []


def progress(source: str) -> LoadingProgress:
    with _lock:
        return _states.get(source) or LoadingProgress(source)


def everything() -> list[LoadingProgress]:
    """Every model that has started loading in this process, most recent change first."""
    with _lock:
        return sorted(_states.values(), key=lambda state: state.updated, reverse=True)


def subscribe(callback: Callable[[LoadingProgress], None]) -> Callable[[], None]:
    """Call `callback(progress)` on every change (from the loading thread: keep it quick).
    Returns the function that unsubscribes."""
    with _lock:
        _listeners.append(callback)

    def unsubscribe() -> None:
        with _lock:
            if callback in _listeners:
                _listeners.remove(callback)

    return unsubscribe


def report(source: str, stage: Stage, message: str, done: int = 0, total: int | None = None) -> LoadingProgress:
    state = LoadingProgress(source, stage, done, total, message)
    with _lock:
        _states[source] = state
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(state)
        except Exception:  # noqa: BLE001 - a broken listener must not break loading
            pass
    return state


def size_text(size: int | None) -> str:
    """Bytes for people: 513 MB, 1.2 GB, 250 KB."""
    if size is None:
        return "unknown size"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{size} bytes"


class DownloadBytes:
    """What `huggingface_hub.snapshot_download(tqdm_class=...)` needs of a progress bar, counting the
    bytes written for one model. One class per download (`for_download`), since the hub builds its
    bars itself: the "Downloading bytes" bar counts network transfer (xet), the other byte bar the
    bytes written to the cache, which is what we report; the file-count bar is ignored."""

    source: str
    expected: int | None

    def __init__(self, iterable: Iterable | None = None, *args: Any, **kwargs: Any):
        self.iterable = iterable
        self.total = kwargs.get("total")
        self.n = kwargs.get("initial", 0) or 0
        self.disable = False
        description = str(kwargs.get("desc") or "")
        self._counts = kwargs.get("unit") == "B" and not description.startswith("Downloading bytes")
        if self._counts:
            self._tell()

    @classmethod
    def for_download(cls, source: str, expected: int | None) -> type[DownloadBytes]:
        return type("DownloadBytesOf", (cls,), {"source": source, "expected": expected})

    def update(self, n: float | None = 1) -> None:
        self.n += n or 0
        if self._counts:
            self._tell()

    def _tell(self) -> None:
        total = self.expected or self.total or None
        done = int(self.n)
        report(self.source, "downloading", f"downloading {size_text(done)} of {size_text(total)}", done, total)

    def __iter__(self) -> Iterator:
        for item in self.iterable or ():
            yield item
            self.update(1)

    def __enter__(self) -> DownloadBytes:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Callable[..., None]:
        # refresh, close, set_description, set_postfix_str ...: nothing to draw
        return lambda *args, **kwargs: None


_loading = threading.local()  # .source: the model this thread is loading, if any
_patch_lock = threading.Lock()


class _CountingBar:
    """Wraps transformers' weight-loading bar: in a thread loading one of our models it counts the
    tensors placed into that model's progress; anywhere else it is transformers' own bar."""

    def __init__(self, original: Any):
        self.original = original

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        source = getattr(_loading, "source", None)
        iterable = args[0] if args else kwargs.get("iterable")
        if source is None or iterable is None:
            return self.original(*args, **kwargs)
        return _count(source, iterable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


def _count(source: str, iterable: Iterable) -> Iterator:
    total = len(iterable) if hasattr(iterable, "__len__") else None
    step = max(1, (total or 100) // 100)  # a hundred reports at most: listeners stay cheap
    report(source, "loading", "loading weights", 0, total)
    done = 0
    for done, item in enumerate(iterable, start=1):
        yield item
        if done % step == 0:
            report(source, "loading", f"loading weights ({done} of {total} tensors)", done, total)
    report(source, "loading", f"loading weights ({done} of {total} tensors)", done, total)


def count_weights_loaded(source: str) -> _LoadingScope:
    """`with count_weights_loaded(source): model = ...from_pretrained(...)` reports the tensors placed."""
    _install_counting_bar()
    return _LoadingScope(source)


class _LoadingScope:
    def __init__(self, source: str):
        self.source = source

    def __enter__(self) -> None:
        _loading.source = self.source

    def __exit__(self, *exc: Any) -> None:
        _loading.source = None


def _install_counting_bar() -> None:
    with _patch_lock:
        try:
            from transformers import core_model_loading
        except ImportError:  # another transformers layout: loading still works, without counts
            return
        bar = getattr(core_model_loading, "tqdm", None)
        if bar is not None and not isinstance(bar, _CountingBar):
            core_model_loading.tqdm = _CountingBar(bar)
