"""How many requests one batch of a local model may hold: from the memory its device has left and
the length of the rows, not a constant.

Each row of a batch costs memory in proportion to its tokens (prompt and new ones: the key-value
cache, the activations, and for a vision-language model the image tiles behind its image tokens).
Before anything is measured that cost is estimated from the text model's shape; on a CUDA device
every batch then measures it (the peak allocated during the batch, per row token), and the
largest cost seen is what later batches are sized by. A CPU has its available memory; a ZeroGPU
Space's GPU cannot be seen from the app's process, so there a fixed ceiling serves.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# Rows. A GPU's batch stops at half the requests a run keeps in flight (64), so that the next
# batch is being prepared while one generates.
CUDA_CEILING = 32
CPU_CEILING = 8  # a CPU is busy at far fewer rows; more only delays the first replies and the run's last batch
ZEROGPU_CEILING = 16  # one `spaces.GPU` call must finish within its duration
SAFETY = 0.8  # of the headroom a batch may use: the allocator's fragments, a neighbour's growth
FIRST_BATCH = 8  # rows of the first batch on a GPU, before anything was measured


class BatchBudget:
    def __init__(self, model: Any, ceiling: int | None = None, zerogpu: bool = False):
        self.device = _device(model)
        self.cuda = getattr(self.device, "type", "cpu") == "cuda" and not zerogpu
        default = ZEROGPU_CEILING if zerogpu else CUDA_CEILING if self.cuda else CPU_CEILING
        self.ceiling = max(1, ceiling or default)
        self.fixed = ceiling is not None or zerogpu  # nothing to measure: the ceiling is the limit
        self.per_token = _estimated_bytes_per_token(model)
        self.measured = False
        self._lock = threading.Lock()

    def rows(self, tokens_per_row: int, headroom: float | None = None) -> int:
        """Rows a batch of rows this long (prompt plus new tokens) may have; `headroom`, the
        memory free now, when the caller has just asked (`headroom()`)."""
        fits = self.cap(tokens_per_row, headroom)
        with self._lock:
            measured = self.measured
        if self.cuda and not self.fixed and not measured:
            fits = min(fits, FIRST_BATCH)  # until a batch has shown what a row costs
        return fits

    def cap(self, tokens_per_row: int, headroom: float | None = None) -> int:
        """Rows that fit by what is known of a row's cost (estimated or measured)."""
        if self.fixed:
            return self.ceiling
        headroom = headroom if headroom is not None else self.headroom()
        if headroom is None:
            return self.ceiling
        with self._lock:
            per_row = max(1.0, self.per_token * max(1, tokens_per_row))
        return max(1, min(self.ceiling, int(headroom * SAFETY // per_row)))

    @contextmanager
    def measuring(self, rows: int, tokens_per_row: int) -> Iterator[None]:
        """Around a batch: on CUDA, learn the memory its rows took per token."""
        if not self.cuda or self.fixed:
            yield
            return
        import torch

        torch.cuda.reset_peak_memory_stats(self.device)
        before = torch.cuda.memory_allocated(self.device)
        yield
        used = torch.cuda.max_memory_allocated(self.device) - before
        if used > 0 and rows > 0 and tokens_per_row > 0:
            per_token = used / (rows * tokens_per_row)
            with self._lock:
                self.per_token = per_token if not self.measured else max(self.per_token, per_token)
                self.measured = True

    def headroom(self) -> float | None:
        """Bytes the device has free for batches now (None: unknown, the ceiling holds)."""
        if self.fixed:
            return None
        if self.cuda:
            import torch

            free, _ = torch.cuda.mem_get_info(self.device)
            cached = torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
            return float(free + max(0, cached))
        return _available_ram()


def torch_threads() -> int:
    """torch's intra-op threads for this thread (the process's setting)."""
    import torch

    return torch.get_num_threads()


@contextmanager
def cpu_threads(threads: int, busy: int) -> Iterator[None]:
    """Around a batch on a CPU, from the thread that runs it: torch's threads for it are the
    `threads` cores less the `busy` preparation threads beside it (one at least), put back after.
    Threads past the cores cost more than they give: torch's OpenMP threads spin at every
    barrier, and a preparation thread beside them turns that spinning into waiting (measured on
    two cores: a batch plus preparing four more requests took 8.4-9.7 s of CPU with torch on two
    threads, 6.3 s on one). torch.set_num_threads takes effect for the calling thread's parallel
    work; threads already running keep theirs."""
    wanted = max(1, threads - busy)
    if not threads or wanted == threads:
        yield
        return
    import torch

    torch.set_num_threads(wanted)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _device(model: Any) -> Any:
    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration, TypeError):
        return getattr(model, "device", None)


def _estimated_bytes_per_token(model: Any) -> float:
    """Key-value cache plus activations of one token of one row, from the text model's config;
    a generous guess (it is replaced by a measurement on CUDA)."""
    config = getattr(model, "config", None)
    text = getattr(config, "text_config", None) or config
    hidden = getattr(text, "hidden_size", None) or 4096
    layers = getattr(text, "num_hidden_layers", None) or 32
    heads = getattr(text, "num_attention_heads", None) or 32
    kv_heads = getattr(text, "num_key_value_heads", None) or heads
    head_dim = getattr(text, "head_dim", None) or hidden // max(1, heads)
    intermediate = getattr(text, "intermediate_size", None) or 4 * hidden
    try:
        width = next(model.parameters()).element_size()
    except (AttributeError, StopIteration, TypeError):
        width = 4
    cache = 2 * layers * kv_heads * head_dim * width
    activations = 8 * (hidden + intermediate) * width
    return float(cache + activations)


def _available_ram() -> float | None:
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        return None
    return None
