"""Freed image buffers handed back to the system, not kept by the allocator.

On glibc, `malloc` serves a buffer below its mmap threshold from an arena, each thread that
allocates gets an arena of its own, an arena keeps what is freed inside it for later, and the
threshold rises (up to 32 MB) each time a large buffer is freed. A Probe that decodes and
transforms 16 MP pictures on a few threads frees hundreds of megabytes of pixel buffers into
several arenas, where they stay: four 16 MP uploads asked of four models under every condition
held 1.4 GB here and 1.56 GB in CI, over the public app's 1.5 GB bound. With a fixed threshold,
every buffer at least that large is a mapping of its own, given back when freed.

`python -m bench.heap`: four models under four picture conditions of four 16 MP uploads peaked
739 MB above the start with the allocator's own threshold (636 MB still held after), 404 MB
with 4 MB (250 MB after), 392 MB with 1 MB; drawing, hashing and encoding the BlindTest
canvases took 1.02x the time with 4 MB and 1.97x with 1 MB (a 769 px canvas, 1.8 MB, then
costs a fresh mapping, its pages faulted in anew, each time). Elsewhere than glibc this does
nothing."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter numbers (malloc.h)
# Above the papers' largest canvas (1155 px: 4.0 MB of RGB), whose buffers the allocator's reuse
# serves faster; an upload's pictures are larger.
THRESHOLD_BYTES = 4 << 20
_done = False


def give_back_large_buffers(threshold: int = THRESHOLD_BYTES) -> bool:
    """Have every buffer of `threshold` bytes or more mapped on its own (set once per process,
    before the work that allocates them). True where that took effect (Linux with glibc)."""
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl or no libc found: nothing to set
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _done = mallopt(M_MMAP_THRESHOLD, threshold) == 1
    return _done
