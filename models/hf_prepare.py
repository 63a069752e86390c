"""Preparing a local model's inputs, off the model's thread: templating, tokenizing and image
processing of one request at a time in a pool of threads sized to the cores, and putting the
prepared requests of a batch together (`collate`) exactly as the processor would have done for
the whole batch.

Why threads work: what takes the time is PIL resizing and numpy arithmetic on image-sized
arrays, and both release the GIL, so two threads on two cores prepare nearly twice as fast as
one, and all of it overlaps with generation on the model's worker thread (models/hf_worker.py).

Which image processor (`PROBE_HF_IMAGES`):

- `auto` (default): transformers' own choice, which is the torchvision processor where
  torchvision imports and keeps the model's resampling (LANCZOS needs torchvision 0.27 or
  later, and the CPU), else the PIL one. Either runs on the CPU, in the pool.
- `pil` or `torchvision`: that processor, on the CPU.
- `gpu`: the torchvision processor on the model's GPU. Faster still, but there transformers
  resamples LANCZOS as BICUBIC, so the pixels differ from what the model was trained with:
  only on request, and `HFBackend.notes()` says so.

A torchvision that is installed but does not import (PyPI's wheel beside a CPU-only torch) counts
as absent.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from models.types import Unavailable

IMAGES_VARIABLE = "PROBE_HF_IMAGES"
IMAGES_MODES = ("auto", "pil", "torchvision", "gpu")
THREADS_VARIABLE = "PROBE_HF_PREPARE_THREADS"


def images_mode() -> str:
    raw = os.environ.get(IMAGES_VARIABLE, "").strip().lower() or "auto"
    if raw not in IMAGES_MODES:
        raise Unavailable(f"{IMAGES_VARIABLE} is one of {', '.join(IMAGES_MODES)}, not {raw!r}")
    return raw


_torchvision: bool | None = None
_torchvision_lock = threading.Lock()


def torchvision_imports() -> bool:
    """Whether torchvision imports here (tried once). Installed is not enough: PyPI's wheel
    beside a CPU-only torch fails on import."""
    global _torchvision
    with _torchvision_lock:
        if _torchvision is None:
            if importlib.util.find_spec("torchvision") is None:
                _torchvision = False
            else:
                try:
                    importlib.import_module("torchvision")
                    _torchvision = True
                except Exception:  # noqa: BLE001 - any failure to import means: not here
                    _torchvision = False
        return _torchvision


@dataclass(frozen=True)
class ImageChoice:
    """Which image processor a model's inputs are prepared with, and where it runs."""

    backend: str | None  # AutoProcessor's `backend=`: None lets transformers choose
    on_model_device: bool = False  # the torchvision processor on the model's GPU
    note: str = ""  # what a person should know about the choice, or ""

    def processor_kwargs(self, device: Any) -> dict[str, Any]:
        """Keyword arguments for each processor call (the device for GPU image processing)."""
        return {"device": str(device)} if self.on_model_device else {}


def choose_images(mode: str | None = None, gpu_here: bool = False) -> ImageChoice:
    """The image processor for `mode` (default: PROBE_HF_IMAGES) on this machine; `gpu_here`
    says whether the model will be on a CUDA device this process can use."""
    mode = mode or images_mode()
    if mode == "pil":
        return ImageChoice("pil")
    if not torchvision_imports():
        if mode == "auto":
            return ImageChoice("pil")  # transformers would pick torchvision if it were installed but broken
        return ImageChoice(
            "pil", note=f"{IMAGES_VARIABLE}={mode} asks for torchvision, which does not import here: PIL"
        )
    if mode == "auto":
        return ImageChoice(None)
    if mode == "gpu" and gpu_here:
        return ImageChoice(
            "torchvision",
            on_model_device=True,
            note="images resized on the GPU: LANCZOS becomes BICUBIC there, so pixels differ from the model's own",
        )
    if mode == "gpu":
        return ImageChoice("torchvision", note="no GPU for image processing here: torchvision on the CPU")
    return ImageChoice("torchvision")


def backend_name(processor: Any) -> str:
    """'pil' or 'torchvision': the image processor a loaded processor actually uses."""
    image_processor = getattr(processor, "image_processor", None)
    found = getattr(image_processor, "backend", None)
    return found if isinstance(found, str) else "pil"


# -- one request ------------------------------------------------------------------------------


@dataclass(eq=False)
class Prepared:
    """One conversation as the processor makes it: tensors with a batch of one row."""

    inputs: dict[str, Any]
    length: int  # prompt tokens
    signature: tuple  # requests share a batch only when their signatures are equal

    def to(self, device: Any) -> Prepared:
        moved = {name: value.to(device) if hasattr(value, "to") else value for name, value in self.inputs.items()}
        return Prepared(moved, self.length, self.signature)


def prepare(processor: Any, conversation: list[dict[str, Any]], options: dict[str, Any] | None = None) -> Prepared:
    """Template, tokenize and process the images of one conversation (any thread)."""
    inputs = processor.apply_chat_template(
        conversation,
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        return_tensors="pt",
        **({"processor_kwargs": options} if options else {}),
    )
    inputs = dict(inputs)
    length = int(inputs["input_ids"].shape[-1])
    return Prepared(inputs, length, _signature(inputs, length))


def _signature(inputs: dict[str, Any], length: int) -> tuple:
    """What must match for two prepared requests to be put together exactly: the same keys, of
    the same kinds, dtypes and ranks; per-row tensors (a first dimension of 1, as Idefics3's
    images) may differ in their other sizes, which `collate` pads as the processors do."""
    parts = []
    for name in sorted(inputs):
        value = inputs[name]
        if not hasattr(value, "shape"):
            parts.append((name, type(value).__name__))
        elif _is_sequence(value, length):
            parts.append((name, "sequence", str(value.dtype)))
        else:
            parts.append((name, str(value.dtype), value.dim(), tuple(value.shape[1:]) if value.shape[0] != 1 else None))
    return tuple(parts)


def _is_sequence(value: Any, length: int) -> bool:
    return value.dim() == 2 and value.shape[0] == 1 and value.shape[1] == length


# -- a batch ----------------------------------------------------------------------------------


class CannotCollate(Exception):
    """These prepared requests cannot be put together exactly: process them as one batch."""


def collate(
    rows: list[Prepared], pad_token_id: int | None, side: str = "left", buffers: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The batch of `rows`, equal to what the processor returns for their conversations together
    (padding=True): token sequences padded on `side` (input_ids with the pad token, masks and
    type ids with 0); image tensors concatenated along their first dimension, and per-row image
    tensors of different sizes padded with zeros at the end of each dimension first (the extra
    images and pixels the processors add, which the models drop again).

    `buffers` (name -> tensor), when given, keeps the image tensors' memory from one batch to the
    next of the same shape: the caller must be done with the previous batch. A fresh tensor of a
    few hundred MB costs a page fault per 4 KB to fill, about as much as the copy itself."""
    import torch
    import torch.nn.functional as F  # noqa: N812 - torch's own name

    if len({row.signature for row in rows}) != 1:
        raise CannotCollate("requests of different shapes")
    longest = max(row.length for row in rows)
    batch: dict[str, Any] = {}
    for name, first in rows[0].inputs.items():
        values = [row.inputs[name] for row in rows]
        if not hasattr(first, "shape"):
            raise CannotCollate(f"{name} is not a tensor")
        if _is_sequence(first, rows[0].length):
            fill = (pad_token_id if pad_token_id is not None else 0) if name == "input_ids" else 0
            padded = []
            for value in values:
                missing = longest - value.shape[1]
                padding = (missing, 0) if side == "left" else (0, missing)
                padded.append(F.pad(value, padding, value=fill) if missing else value)
            batch[name] = torch.cat(padded, dim=0)
            continue
        if len(rows) == 1:
            batch[name] = first
            continue
        shapes = {tuple(value.shape[1:]) for value in values}
        if len(shapes) > 1:
            if any(value.shape[0] != 1 for value in values):
                raise CannotCollate(f"{name} has rows of different sizes")
            widest = [max(sizes) for sizes in zip(*shapes, strict=True)]
            values = [_pad_end(value, widest) for value in values]
        batch[name] = torch.cat(values, dim=0, out=_buffer(buffers, name, values))
    return batch


REUSED_BYTES = 1 << 20  # tensors from this size on keep their memory in `buffers`


def _buffer(buffers: dict[str, Any] | None, name: str, values: list[Any]) -> Any:
    import torch

    shape = (sum(value.shape[0] for value in values), *values[0].shape[1:])
    dtype, device = values[0].dtype, values[0].device
    if buffers is None or device.type != "cpu" or values[0].element_size() * torch.Size(shape).numel() < REUSED_BYTES:
        return None
    found = buffers.get(name)
    if found is None or found.shape != shape or found.dtype != dtype:
        found = buffers[name] = torch.empty(shape, dtype=dtype)
    return found


def _pad_end(value: Any, sizes: list[int]) -> Any:
    import torch.nn.functional as F  # noqa: N812

    padding: list[int] = []
    for have, want in reversed(list(zip(value.shape[1:], sizes, strict=True))):
        padding += [0, want - have]
    return F.pad(value, padding, value=0) if any(padding) else value


# -- the pool ---------------------------------------------------------------------------------


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def prepare_threads(backend: str) -> int:
    """Preparations one model runs at once: one per core for PIL (single-threaded work that
    releases the GIL); two for torchvision, whose operations already use torch's threads.
    PROBE_HF_PREPARE_THREADS overrides."""
    chosen = threads_setting()
    if chosen is not None:
        return chosen
    return cores() if backend == "pil" else min(2, cores())


MAX_PREPARE_THREADS = 64


def threads_setting() -> int | None:
    """PROBE_HF_PREPARE_THREADS as set (None: unset), read like a flag: anything but a whole
    number from 1 to MAX_PREPARE_THREADS is refused with what to write."""
    raw = os.environ.get(THREADS_VARIABLE, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_PREPARE_THREADS:
        raise Unavailable(f"{THREADS_VARIABLE}={raw[:40]!r}: write a whole number of threads from 1 to "
                          f"{MAX_PREPARE_THREADS}, or leave it unset (one per core)")  # fmt: skip
    return int(raw)


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The process's preparation threads, shared by every loaded model (each bounds its own
    share with `prepare_threads`)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            size = max(cores(), prepare_threads("pil"))
            _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="hf-prepare")
        return _pool
