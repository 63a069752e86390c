"""Local vision-language models through transformers: AutoProcessor + AutoModelForImageTextToText.

One loaded copy per model, shared by every caller in the process and loaded on first use;
generation runs on that model's worker thread (models/hf_worker.py), which batches the requests
waiting for it, so the event loop (and the Gradio server) stays responsive. torch and
transformers are imported only here, only when a local model is first asked something.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from models.base import Backend
from models.hf_worker import MAX_BATCH, ModelWorker
from models.types import GenerateConfig, ImagePart, Message, Output, TextPart, Unavailable

_loaded: dict[str, ModelWorker] = {}
_failures: dict[str, tuple[float, str]] = {}  # source -> (when, why) of its last failed load
_loading_lock = threading.Lock()
RETRY_LOAD_AFTER = 60.0  # seconds


class HFBackend(Backend):
    default_concurrency = MAX_BATCH  # requests in flight: the model's worker batches them

    def __init__(self, model_id: str, source: str):
        self.model_id = model_id
        self.source = source  # a Hub id ("org/name") or a local folder
        self.endpoint = f"local:{_fingerprint(source)}"

    def _is_local(self) -> bool:
        return self.source.startswith((".", "/", "~")) or Path(self.source).expanduser().is_dir()

    def check(self) -> None:
        missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
        if missing:
            raise Unavailable(f"local models need {' and '.join(missing)}: pip install -r requirements.txt")
        if self._is_local():
            folder = Path(self.source).expanduser()
            if not (folder / "config.json").is_file():
                raise Unavailable(f"no model in {folder}: expected a config.json saved by save_pretrained")
            return
        if not _in_hub_cache(self.source) and os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
            raise Unavailable(f"weights of {self.source} are not in the local cache and HF_HUB_OFFLINE is set")

    def notes(self) -> str:
        if self._is_local():
            return "weights present (local folder)"
        if _in_hub_cache(self.source):
            return "weights present (Hugging Face cache)"
        return "weights download on first use"

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Output:
        self.check()
        worker = await asyncio.to_thread(self._load)
        settings: dict[str, Any] = {"max_new_tokens": config.max_tokens}
        if config.temperature > 0:
            settings.update(do_sample=True, temperature=config.temperature)
        else:
            settings.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        conversation = await asyncio.to_thread(lambda: [_to_hf(m) for m in messages])
        return await asyncio.wrap_future(worker.submit(conversation, settings))

    def warm_up(self) -> None:
        """Load the weights now (blocking), so a run fails before it starts if they cannot be."""
        self._load()

    def _load(self) -> ModelWorker:
        with _loading_lock:
            if self.source not in _loaded:
                failed = _failures.get(self.source)
                if failed and time.monotonic() - failed[0] < RETRY_LOAD_AFTER:
                    raise Unavailable(failed[1])
                try:
                    _loaded[self.source] = self._load_fresh()
                except Unavailable as exc:
                    # Loading can take minutes to fail (the Hub client retries); every item of a
                    # run must not pay that again.
                    _failures[self.source] = (time.monotonic(), str(exc))
                    raise
            return _loaded[self.source]

    def _load_fresh(self) -> ModelWorker:
        try:
            from transformers import AutoModelForImageTextToText, AutoProcessor

            source = str(Path(self.source).expanduser()) if self._is_local() else self.source
            processor = AutoProcessor.from_pretrained(source)
            model = AutoModelForImageTextToText.from_pretrained(source, device_map="auto", dtype="auto")
        except Exception as exc:
            raise Unavailable(f"{self.model_id} could not be loaded: {type(exc).__name__}: {exc}") from None
        model.eval()
        return ModelWorker(self.model_id, processor, model)


def _to_hf(message: Message) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append({"type": "image", "image": part.rgb})
    return {"role": message.role, "content": content}


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    found = try_to_load_from_cache(repo_id, "config.json")
    return isinstance(found, str)


def _fingerprint(source: str) -> str:
    """Changes when a local folder's weights change, so cached answers of old weights are not
    served for new ones. Hub ids are named by themselves."""
    folder = Path(source).expanduser()
    if not folder.is_dir():
        return source
    digest = hashlib.sha256(str(folder.resolve()).encode())
    for file in sorted(folder.iterdir()):
        if file.is_file():
            stat = file.stat()
            digest.update(f"{file.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]
