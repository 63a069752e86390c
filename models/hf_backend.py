"""Local vision-language models through transformers: AutoProcessor + AutoModelForImageTextToText.

One loaded copy per model, shared by every caller in the process and loaded on first use, at
most PROBE_MAX_LOCAL_MODELS at once (models/hf_pool.py evicts the least recently used idle
one); a request's inputs are prepared (templated, tokenized, images processed) in a pool of
threads as it arrives (models/hf_prepare.py), and the model's worker thread (models/hf_worker.py)
generates or scores prepared requests in batches sized to the device's memory, so the event
loop (and the Gradio server) stays responsive and the model does not wait on image processing;
on ZeroGPU Spaces only the model runs inside `spaces.GPU` (models/hf_zerogpu.py). torch and
transformers are imported only when a local model is first asked something.

Which image processor prepares the inputs: `PROBE_HF_IMAGES` (models/hf_prepare.py; by default
transformers' choice, on the CPU, so the pixels are the model's own).

Before a model is asked, `notes()` and `download_size()` say what its first use will fetch
(the Hub's file listing, models/hf_hub.py); while it loads, `loading_progress()` (or
`models.hf_progress.subscribe`) says how far it is. Offline, a model whose weights are not in
the cache is unavailable at once, with the reason, instead of failing after minutes of retries.

A processor whose video half cannot be loaded (Qwen2.5-VL's needs torchvision) is loaded
without it: the same processor class, images and text only, which is all a probe sends.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from models import hf_hub, hf_pixels, hf_progress, hf_zerogpu
from models.base import Backend
from models.hf_pool import Pool, max_loaded
from models.hf_prepare import IMAGES_VARIABLE, ImageChoice, choose_images, images_mode
from models.hf_progress import LoadingProgress, size_text
from models.hf_worker import ModelWorker
from models.types import GenerateConfig, ImagePart, Message, Output, TextPart, Unavailable

_pool = Pool()
_failures: dict[str, tuple[float, str]] = {}  # source -> (when, why) of its last failed load
_failures_lock = threading.Lock()
RETRY_LOAD_AFTER = 60.0  # seconds


FIRST_CONCURRENCY = 8  # requests in flight before the model is loaded (then: its worker's in_flight)


class HFBackend(Backend):
    offers_probabilities = True  # candidates scored by the model itself (`score`)

    def __init__(self, model_id: str, source: str):
        self.model_id = model_id
        self.source = source  # a Hub id ("org/name") or a local folder
        self.endpoint = f"local:{_fingerprint(source)}"

    @property
    def default_concurrency(self) -> int:  # type: ignore[override]
        """Requests in flight: enough for the worker to batch them and prepare the next batch
        while one runs (it says how many, from the memory left); 8 before the model is loaded."""
        worker = _pool.worker(self.source)
        return worker.in_flight() if worker is not None else FIRST_CONCURRENCY

    def _is_local(self) -> bool:
        return self.source.startswith((".", "/", "~")) or Path(self.source).expanduser().is_dir()

    def check(self) -> None:
        """Unavailable when it cannot load here: packages missing, no model in the folder, or (for
        a Hub id not in the cache) the Hub unreachable, or no such model there. Asks the Hub at
        most once per id (its listing is kept) and never sends the model anything."""
        missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
        if missing:
            raise Unavailable(f"local models need {' and '.join(missing)}: pip install -r requirements.txt")
        if self._is_local():
            folder = Path(self.source).expanduser()
            if not (folder / "config.json").is_file():
                raise Unavailable(f"no model in {folder}: expected a config.json saved by save_pretrained")
            return
        if _pool.worker(self.source) is not None or hf_hub.cached_folder(self.source) is not None:
            return
        if hf_hub.listing(self.source) is None:  # raises for an unknown or gated id
            raise Unavailable(_not_downloaded(self.source, hf_hub.reachable()[1]))

    def download_size(self) -> int | None:
        """Bytes the first use still has to download: 0 when the weights are here, None when
        that cannot be known (the Hub unreachable)."""
        if self._is_local() or hf_hub.cached_folder(self.source) is not None:
            return 0
        try:
            found = hf_hub.listing(self.source)
        except Unavailable:
            return None
        return hf_hub.missing_bytes(found) if found else None

    def weights_size(self) -> int | None:
        """Bytes of the model's files (local folder, cache or, before download, the Hub's listing)."""
        folder = self._folder_here()
        if folder is not None:
            return hf_hub.folder_size(folder)
        try:
            found = hf_hub.listing(self.source)
        except Unavailable:
            return None
        return found.size if found else None

    def notes(self) -> str:
        worker = _pool.worker(self.source)
        images = worker.images.note if worker is not None else _images_note()
        found = self._weights_note()
        return f"{found}; {images}" if images else found

    def _weights_note(self) -> str:
        folder = self._folder_here()
        if folder is not None:
            where = "local folder" if self._is_local() else "Hugging Face cache"
            return f"weights present ({where}, {size_text(hf_hub.folder_size(folder))})"
        try:
            found = hf_hub.listing(self.source)
        except Unavailable as exc:
            return str(exc)
        if found is None:
            return "not downloaded"
        return f"downloads {size_text(hf_hub.missing_bytes(found))} on first use"

    def _folder_here(self) -> Path | None:
        if self._is_local():
            folder = Path(self.source).expanduser()
            return folder if folder.is_dir() else None
        return hf_hub.cached_folder(self.source)

    def loading_progress(self) -> LoadingProgress:
        """Where this model's loading is: idle, waiting for room, downloading (bytes), loading
        (tensors), ready, failed or evicted. Cheap: the UI may poll it."""
        state = hf_progress.progress(self.source)
        if _pool.worker(self.source) is not None and not state.busy:
            return LoadingProgress(self.source, "ready", message="loaded", updated=state.updated)
        return state

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Output:
        lease = await _pool.lease_async(self.source, _Loader(self))
        try:
            settings: dict[str, Any] = {"max_new_tokens": config.max_tokens}
            if config.temperature > 0:
                settings.update(do_sample=True, temperature=config.temperature)
            else:
                settings.update(do_sample=False, temperature=None, top_p=None, top_k=None)
            # The conversation is built (its images read) in a preparation thread; a reply whose
            # probabilities come next keeps its prepared inputs for that scoring (`score`).
            keep = id(messages) if config.probabilities else None
            future = lease.worker.submit(_conversation(messages), settings, keep=keep, anchor=messages)
        except BaseException:
            lease.release()
            raise
        # Held until the reply is out, even if this caller stops waiting: the model is not
        # evicted under a request its worker is answering.
        future.add_done_callback(lambda _: lease.release())
        return await asyncio.wrap_future(future)

    async def score(self, messages: Sequence[Message], prefix: str, candidates: Sequence[str]) -> dict[str, float]:
        lease = await _pool.lease_async(self.source, _Loader(self))
        try:
            future = lease.worker.submit_scoring(
                _conversation(messages), prefix, tuple(candidates), kept=id(messages), anchor=messages
            )
        except BaseException:
            lease.release()
            raise
        future.add_done_callback(lambda _: lease.release())
        return await asyncio.wrap_future(future)

    def warm_up(self) -> None:
        """Load the weights now (blocking), so a run fails before it starts if they cannot be."""
        self._load()

    def _load(self) -> ModelWorker:
        with _pool.lease(self.source, _Loader(self)) as lease:
            return lease.worker


class _Loader:
    """Finds or downloads the files (no memory needed), then reads them into memory."""

    def __init__(self, backend: HFBackend):
        self.backend = backend
        self.source = backend.source

    def prepare(self) -> Path:
        with _failures_lock:
            failed = _failures.get(self.source)
        if failed and time.monotonic() - failed[0] < RETRY_LOAD_AFTER:
            raise Unavailable(failed[1])
        try:
            self.backend.check()
            max_loaded()  # a limit that does not parse fails the load, not the room-making
            return self._files()
        except Unavailable as exc:
            self._failed(str(exc))
            raise

    def _files(self) -> Path:
        if self.backend._is_local():
            return Path(self.source).expanduser()
        folder = hf_hub.cached_folder(self.source)
        if folder is not None:
            return folder
        found = hf_hub.listing(self.source)
        if found is None:
            raise Unavailable(_not_downloaded(self.source, hf_hub.reachable()[1]))
        missing = hf_hub.missing_bytes(found)
        hf_progress.report(self.source, "downloading", f"downloading {size_text(missing)}", 0, missing)
        return hf_hub.download(found)

    def load(self, folder: Path) -> ModelWorker:
        hf_progress.report(self.source, "loading", "loading weights")
        try:
            from transformers import AutoModelForImageTextToText

            with hf_progress.count_weights_loaded(self.source):
                model = AutoModelForImageTextToText.from_pretrained(
                    str(folder), dtype="auto", **hf_zerogpu.load_kwargs()
                )
                images = choose_images(gpu_here=_on_cuda(model) and not hf_zerogpu.on_zerogpu())
                processor = load_processor(folder, images)
            # The PIL processor's rescale and normalize in fewer passes, where that is exact.
            hf_pixels.install(getattr(processor, "image_processor", None))
            model.eval()
        except Unavailable as exc:
            self._failed(str(exc))
            raise
        except Exception as exc:
            why = f"{self.backend.model_id} could not be loaded: {type(exc).__name__}: {exc}"
            self._failed(why)
            raise Unavailable(why) from None
        return ModelWorker(self.backend.model_id, processor, model, folder=str(folder), images=images)

    def _failed(self, why: str) -> None:
        # Loading can take long to fail; every item of a run must not pay that again.
        with _failures_lock:
            _failures[self.source] = (time.monotonic(), why)
        hf_progress.report(self.source, "failed", why)


def load_processor(folder: Path, images: ImageChoice | None = None) -> Any:
    """AutoProcessor, with the image processor `images` names (default: PROBE_HF_IMAGES's choice
    on the CPU); without torchvision, a processor whose video part needs it is built for images
    and text alone (the same class, minus its video processor)."""
    from transformers import AutoProcessor

    images = images or choose_images()
    chosen = {"backend": images.backend} if images.backend else {}
    try:
        return AutoProcessor.from_pretrained(str(folder), **chosen)
    except (ImportError, OSError) as exc:
        # Without torchvision: an ImportError naming it, or (for a folder saved without a video
        # processor) an OSError about the video processor's missing config.
        if "torchvision" not in str(exc).lower() and "video processor" not in str(exc).lower():
            raise
    return _image_only(_processor_class(folder)).from_pretrained(str(folder), **chosen)


def _processor_class(folder: Path) -> type:
    import transformers
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    name = None
    for file in ("processor_config.json", "preprocessor_config.json"):
        try:
            name = json.loads((folder / file).read_text()).get("processor_class")
        except (OSError, ValueError):
            continue
        if name:
            break
    if not name:
        model_type = json.loads((folder / "config.json").read_text()).get("model_type")
        name = PROCESSOR_MAPPING_NAMES.get(model_type)
    processor = getattr(transformers, name or "", None)
    if processor is None:
        raise ImportError(f"no processor class known for {folder} without torchvision")
    return processor


def _image_only(base: type) -> type:
    """`base` with no video processor: ProcessorMixin takes its parts from __init__'s signature."""

    def __init__(
        self: Any, image_processor: Any = None, tokenizer: Any = None, chat_template: Any = None, **kwargs: Any
    ):
        base.__init__(
            self,
            image_processor=image_processor,
            tokenizer=tokenizer,
            video_processor=None,
            chat_template=chat_template,
            **kwargs,
        )

    return type(f"{base.__name__}ImagesOnly", (base,), {"__init__": __init__})


def _not_downloaded(source: str, why: str) -> str:
    return f"{source} is not downloaded here and {why}: fetch it once online, or name a local folder"


def _on_cuda(model: Any) -> bool:
    try:
        return next(model.parameters()).device.type == "cuda"
    except (AttributeError, StopIteration, TypeError):
        return False


def _images_note() -> str:
    """Before a model is loaded: what PROBE_HF_IMAGES will do, where a person should know it."""
    try:
        mode = images_mode()
    except Unavailable as exc:
        return str(exc)
    if mode == "gpu":
        return f"{IMAGES_VARIABLE}=gpu: images resized on the GPU, where LANCZOS becomes BICUBIC (pixels differ)"
    return ""


def _conversation(messages: Sequence[Message]) -> Any:
    """A function building the conversation transformers takes (images as PIL RGB)."""
    return lambda: [_to_hf(m) for m in messages]


def _to_hf(message: Message) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append({"type": "image", "image": part.rgb})
    return {"role": message.role, "content": content}


def loaded_models() -> list[str]:
    """Model ids loaded in this process now, least recently used first."""
    return [f"hf/{source}" for source in _pool.loaded()]


def loading_progress(model_id: str) -> LoadingProgress:
    """Progress by model id (`hf/org/name` or `hf/FOLDER`), for callers that hold no backend."""
    return HFBackend(model_id, model_id.removeprefix("hf/")).loading_progress()


def evict_idle() -> list[str]:
    """Unload every local model nobody is using now; returns the model ids unloaded."""
    return [f"hf/{source}" for source in _pool.evict_idle()]


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
