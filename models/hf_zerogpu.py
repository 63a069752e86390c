"""Local generation on ZeroGPU Spaces: inside `spaces.GPU`, and nowhere else.

On a ZeroGPU Space (`SPACES_ZERO_GPU=true`, set by the platform, and the `spaces` package
installed) a GPU exists only while a function decorated with `spaces.GPU` runs, and that
function runs in a process forked from the app: arguments and results are pickled across.
So there:

- models load on the CPU in the app's process (`load_kwargs()`: no `device_map="auto"`, which
  would touch the emulated CUDA from a worker thread);
- each batch runs `generate_on_gpu(key, folder, inputs, settings)` through the decorated
  function; in the GPU process the model inherited from the app (by fork) moves to CUDA once
  and stays there for that process's life; a GPU process forked before the model was loaded
  loads it from its (already downloaded) folder instead;
- the decorated function exists from import on, as ZeroGPU requires of GPU functions before
  the app starts (the app imports this module through models/hf_backend.py).

Anywhere else nothing here changes anything: `spaces` is not even imported, models load with
`device_map="auto"` and generation calls `model.generate` in the worker thread, as before.

Source: the `spaces` package 0.51 (spaces/zero/decorator.py, wrappers.py, config.py): `GPU`
returns the function unchanged unless `SPACES_ZERO_GPU` is true; the wrapper forks a worker
process per GPU and reuses it while the GPU stays allocated.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from typing import Any

GPU_SECONDS = 60  # the GPU time one batch asks ZeroGPU for: a batch of 8 short answers of a 3B model

_models: dict[str, Any] = {}  # key -> model in the app's process (CPU); forked processes inherit it
_on_gpu: dict[str, Any] = {}  # key -> model moved to CUDA, in a GPU process only
_models_lock = threading.Lock()


def zerogpu_here() -> bool:
    """A ZeroGPU Space: the platform's flag and the `spaces` package both present."""
    flag = os.environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "t", "true")
    return flag and importlib.util.find_spec("spaces") is not None


def load_kwargs() -> dict[str, Any]:
    """Extra `from_pretrained` arguments for the model: CPU in the app on ZeroGPU, else automatic."""
    return {} if _gpu_function is not None else {"device_map": "auto"}


def register(key: str, model: Any) -> None:
    with _models_lock:
        _models[key] = model


def unregister(key: str) -> None:
    with _models_lock:
        _models.pop(key, None)
        _on_gpu.pop(key, None)


def generate(key: str, folder: str, model: Any, inputs: Any, settings: dict[str, Any]) -> Any:
    """`model.generate(**inputs, **settings)`: inside `spaces.GPU` on ZeroGPU, directly elsewhere.
    Returns the generated token ids (prompt included) on the CPU."""
    if _gpu_function is None:
        return model.generate(**inputs.to(model.device), **settings)
    return _gpu_function(key, folder, dict(inputs), settings)


def generate_on_gpu(key: str, folder: str, inputs: dict[str, Any], settings: dict[str, Any]) -> Any:
    """Runs in the GPU process (ZeroGPU) or, in tests, wherever the decorator runs it."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = _on_gpu.get(key)
    if model is None:
        model = _models.get(key)
        if model is None:  # this process was forked before the model was loaded
            from transformers import AutoModelForImageTextToText

            model = AutoModelForImageTextToText.from_pretrained(folder, dtype="auto")
            model.eval()
        model = _on_gpu[key] = model.to(device)
    moved = {name: value.to(device) if hasattr(value, "to") else value for name, value in inputs.items()}
    with torch.inference_mode():
        output = model.generate(**moved, **settings)
    return output.cpu()


def _decorate() -> Callable[..., Any] | None:
    """The GPU function on ZeroGPU, else None. Decorated once, at import."""
    if not zerogpu_here():
        return None
    import spaces

    return spaces.GPU(duration=GPU_SECONDS)(generate_on_gpu)


_gpu_function = _decorate()


def refresh() -> bool:
    """Look at the environment again (tests simulate ZeroGPU with this); True when on ZeroGPU."""
    global _gpu_function
    _gpu_function = _decorate()
    return _gpu_function is not None
