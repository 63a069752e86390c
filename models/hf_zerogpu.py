"""Local generation on ZeroGPU Spaces: inside `spaces.GPU`, and nowhere else.

On a ZeroGPU Space (`SPACES_ZERO_GPU=true`, set by the platform, and the `spaces` package
installed) a GPU exists only while a function decorated with `spaces.GPU` runs, and that
function runs in a process forked from the app: arguments and results are pickled across.
So there:

- models load on the CPU in the app's process (`load_kwargs()`: no `device_map="auto"`, which
  would touch the emulated CUDA from a worker thread);
- each batch runs `generate_on_gpu(key, folder, inputs, settings)` (answer probabilities:
  `score_on_gpu`) through the decorated function, with inputs already prepared: templating,
  tokenizing and image processing happen before, in the app's preparation threads
  (models/hf_prepare.py), so a visitor's GPU quota pays for the model alone; in the GPU process
  the model inherited from the app (by fork) moves to CUDA once and stays there for that
  process's life; a GPU process forked before the model was loaded loads it from its (already
  downloaded) folder instead;
- the decorated functions exist from import on, as ZeroGPU requires of GPU functions before
  the app starts (the app imports this module through models/hf_backend.py).

Anywhere else nothing here changes anything: `spaces` is not even imported, models load with
`device_map="auto"` and generation calls `model.generate` in the worker thread.

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


def generate(
    key: str,
    folder: str,
    model: Any,
    inputs: dict[str, Any],
    settings: dict[str, Any],
    keep: tuple[tuple[int, ...], int] = ((), 0),
) -> tuple[Any, Any]:
    """`model.generate(**inputs, **settings)`: inside `spaces.GPU` on ZeroGPU, directly elsewhere.
    `inputs` are prepared tensors (images already processed: no preprocessing happens in here).
    Returns the generated token ids (prompt included) on the CPU, and for `keep` = (rows, places)
    the log probabilities of those rows' first places (models/hf_scoring.py `capture_steps`) as a
    (rows, places, vocabulary) CPU tensor, or None."""
    if _gpu_function is None:
        return _generate(model, _device(model), inputs, settings, keep)
    return _gpu_function(key, folder, dict(inputs), settings, keep)


def _generate(
    model: Any, device: Any, inputs: dict[str, Any], settings: dict[str, Any], keep: tuple[tuple[int, ...], int]
) -> tuple[Any, Any]:
    import torch

    from models.hf_scoring import capture_steps

    rows, places = keep
    with torch.inference_mode(), capture_steps(model, rows, places) as steps:
        output = model.generate(**_moved(inputs, device), **settings)
    kept = torch.stack(steps, dim=1).cpu() if steps else None
    return output.cpu(), kept


def score(key: str, folder: str, model: Any, batch: dict[str, Any], picks: list[tuple[int, int]]) -> Any:
    """Next-token log probabilities at `picks` of a prepared, right-padded batch
    (models/hf_scoring.py): inside `spaces.GPU` on ZeroGPU, directly elsewhere."""
    from models.hf_scoring import log_probabilities

    if _score_function is None:
        return log_probabilities(model, batch, picks)
    return _score_function(key, folder, dict(batch), picks)


def generate_on_gpu(
    key: str, folder: str, inputs: dict[str, Any], settings: dict[str, Any], keep: tuple[tuple[int, ...], int] = ((), 0)
) -> tuple[Any, Any]:
    """Runs in the GPU process (ZeroGPU) or, in tests, wherever the decorator runs it."""
    model, device = _on_device(key, folder)
    return _generate(model, device, inputs, settings, keep)


def score_on_gpu(key: str, folder: str, batch: dict[str, Any], picks: list[tuple[int, int]]) -> Any:
    """Runs in the GPU process (ZeroGPU) or, in tests, wherever the decorator runs it."""
    from models.hf_scoring import log_probabilities

    model, _ = _on_device(key, folder)
    return log_probabilities(model, batch, picks)


def _on_device(key: str, folder: str) -> tuple[Any, str]:
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
    return model, device


def _moved(inputs: dict[str, Any], device: Any) -> dict[str, Any]:
    return {name: value.to(device) if hasattr(value, "to") else value for name, value in inputs.items()}


def _device(model: Any) -> Any:
    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration, TypeError):
        return model.device


def _decorate(function: Callable[..., Any]) -> Callable[..., Any] | None:
    """`function` as a GPU function on ZeroGPU, else None. Decorated once, at import."""
    if not zerogpu_here():
        return None
    import spaces

    return spaces.GPU(duration=GPU_SECONDS)(function)


_gpu_function = _decorate(generate_on_gpu)
_score_function = _decorate(score_on_gpu)


def on_zerogpu() -> bool:
    """Whether generation and scoring go through `spaces.GPU` (as decided at import or `refresh`)."""
    return _gpu_function is not None


def refresh() -> bool:
    """Look at the environment again (tests simulate ZeroGPU with this); True when on ZeroGPU."""
    global _gpu_function, _score_function
    _gpu_function = _decorate(generate_on_gpu)
    _score_function = _decorate(score_on_gpu)
    return _gpu_function is not None
