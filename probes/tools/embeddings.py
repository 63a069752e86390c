"""Image embeddings for mining look-alike sets: CLIP image features and DINOv2's CLS embedding,
L2-normalised, computed through transformers and cached on disk by file content.

Source: DiscriBench (Muraoka & Okazaki, NLP2025; seed 003, section 2.2) collects its option
quadruples with the "erroneous agreement" method of MMVP (Tong et al., "Eyes Wide Shut?", CVPR
2024): images that CLIP finds near-identical while DINOv2 does not. As MMVP, the defaults are
`openai/clip-vit-large-patch14` and `facebook/dinov2-large`; any Hub id or a local folder saved
with `save_pretrained` (model and image processor, no tokenizer) can replace them.

What is embedded:
- CLIP: the projected image embedding (`CLIPVisionModelWithProjection.image_embeds`, the same
  vector `CLIPModel.get_image_features` returns; in transformers 5 that method returns an output
  object whose `pooler_output` holds it). Only the vision tower is loaded. Another image-text
  model (SigLIP, ...) works through its own `get_image_features`.
- DINOv2: `Dinov2Model`'s `pooler_output`, which is the CLS token after the final layer norm:
  the image embedding DINOv2's own code returns (`x_norm_clstoken`) and the one retrieval with
  DINOv2 compares. A mean of patch tokens would weigh background texture more; MMVP compared
  whole-image embeddings, so we keep the CLS one.

The cache (`probes.tools.embedding_cache`) keeps one folder per model identity: `fingerprint`
hashes what the model is (its kind, our embedding recipe, its config and image-processor files,
and each weight file's size and sampled bytes: the first, middle and last MiB; a fingerprint, not
a checksum of gigabytes), so the same weights at another path share the cache and a changed model
does not. A Hub id's identity comes from its downloaded snapshot, so when every image is already
cached the model is not even loaded.

Images come from `probes.tools.image_scan` (the hardened reader); an image that cannot be
decoded or that makes an encoder fail is reported and left out, never fatal.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from PIL import Image

from probes.core.errors import ProbeError
from probes.files.images import ImageRejected, load_image
from probes.tools.embedding_cache import EmbeddingCache, default_cache_dir
from probes.tools.image_scan import ImageFile, Rejected, without_name

DEFAULT_CLIP = "openai/clip-vit-large-patch14"
DEFAULT_DINO = "facebook/dinov2-large"
# Bump a recipe when what we embed changes, so old cached vectors are not mixed with new ones.
RECIPES = {"clip": "clip-image-embeds/v1", "dino": "dinov2-pooler-cls/v1"}

Kind = Literal["clip", "dino"]
Progress = Callable[[int, int], None]


class MiningError(ProbeError):
    """Mining or easing cannot go on as asked; the message says what to change."""


class Encoder(Protocol):
    """What the miner needs from an image encoder; `HFEncoder` is the real one."""

    kind: Kind
    source: str

    def identity(self) -> str:
        """A stable key for the cache: the same for the same weights and recipe."""
        ...

    def embed(self, images: list[Image.Image]) -> np.ndarray:
        """One L2-normalised float32 row per image."""
        ...


# --- the real encoders --------------------------------------------------------------------------


class HFEncoder:
    """A CLIP or DINOv2 model from the Hub or a local folder, loaded on first use, on the GPU when
    there is one."""

    def __init__(self, source: str | Path, kind: Kind, device: str | None = None):
        if kind not in RECIPES:
            raise ValueError(f"kind must be one of {', '.join(RECIPES)}")
        self.source = str(source)
        self.kind: Kind = kind
        self._device = device
        self._model: Any = None
        self._processor: Any = None
        self._identity: str | None = None
        self._use_projection_output = False

    @property
    def label(self) -> str:
        return "CLIP" if self.kind == "clip" else "DINOv2"

    def identity(self) -> str:
        if self._identity is None:
            folder = _local_folder(self.source)
            if folder is None or not _weight_files(folder):
                self._load()  # downloads a Hub model that is not cached yet
                folder = _local_folder(self.source)
            if folder is None or not _weight_files(folder):
                raise MiningError(f"--{self.kind} {self.source}: loaded, but its files cannot be found to fingerprint")
            self._identity = fingerprint(folder, self.kind)
        return self._identity

    def embed(self, images: list[Image.Image]) -> np.ndarray:
        import torch

        self._load()
        inputs = self._processor(images=images, return_tensors="pt")
        pixels = inputs["pixel_values"].to(self.device)
        with torch.inference_mode():
            if self.kind == "dino":
                output = self._model(pixel_values=pixels)
                pooled = getattr(output, "pooler_output", None)
                vectors = pooled if pooled is not None else output.last_hidden_state[:, 0]
            elif self._use_projection_output:
                vectors = self._model(pixel_values=pixels).image_embeds
            else:
                features = self._model.get_image_features(pixel_values=pixels)
                vectors = features if isinstance(features, torch.Tensor) else features.pooler_output
        return normalise(vectors.float().cpu().numpy())

    @property
    def device(self) -> str:
        if self._device is None:
            import torch

            self._device = "cuda" if torch.cuda.is_available() else "cpu"
        return self._device

    def _load(self) -> None:
        if self._model is not None:
            return
        from transformers import AutoConfig, AutoImageProcessor, AutoModel, CLIPVisionModelWithProjection

        what = f"--{self.kind} {self.source}"
        hint = (
            "give a Hub id that is downloaded (or reachable), or a local folder holding a model saved with "
            "save_pretrained and its image processor"
        )
        with _quiet_transformers():
            try:
                config = AutoConfig.from_pretrained(self.source)
                processor = AutoImageProcessor.from_pretrained(self.source)
            except (OSError, ValueError) as exc:
                raise MiningError(
                    f"{what}: cannot load its config or image processor ({_first_line(exc)}); {hint}"
                ) from None
            try:
                if self.kind == "clip" and config.model_type in ("clip", "clip_vision_model"):
                    vision = config.vision_config if config.model_type == "clip" else config
                    if config.model_type == "clip":
                        # The vision config inside a CLIPConfig does not carry the projection size.
                        vision.projection_dim = config.projection_dim
                    model, info = CLIPVisionModelWithProjection.from_pretrained(
                        self.source, config=vision, output_loading_info=True
                    )
                    self._use_projection_output = True
                else:
                    model, info = AutoModel.from_pretrained(self.source, output_loading_info=True)
            except (OSError, ValueError, RuntimeError) as exc:
                raise MiningError(f"{what}: cannot load its weights ({_first_line(exc)}); {hint}") from None
        missing = list(info.get("missing_keys") or [])
        if missing:
            # Loading would "work" with those weights random: the similarities would mean nothing.
            raise MiningError(f"{what}: the checkpoint lacks {len(missing)} weight(s) of the model, e.g. {missing[0]}")
        if self.kind == "clip" and not self._use_projection_output and not hasattr(model, "get_image_features"):
            raise MiningError(f"{what}: a {config.model_type} model has no image features; give a CLIP-like model")
        if self.kind == "dino" and not config.model_type.startswith("dinov2"):
            raise MiningError(f"{what}: expected a DINOv2 model, got {config.model_type}")
        self._processor = processor
        self._model = model.eval().to(self.device)


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """transformers prints a loading bar and a report of the text-tower weights we do not load;
    the command line draws its own progress."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _local_folder(source: str) -> Path | None:
    """The folder holding a model's files: the source itself, or a Hub id's cached snapshot."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(source, "config.json")
    except Exception:  # noqa: BLE001 - not a valid repo id, or no cache: nothing local
        return None
    return Path(found).parent if isinstance(found, str) else None


def _weight_files(folder: Path) -> list[Path]:
    """The files from_pretrained reads weights from: safetensors when there are any, else .bin."""
    safetensors = sorted(folder.glob("*.safetensors"))
    return safetensors or sorted(folder.glob("pytorch_model*.bin"))


def fingerprint(folder: Path, kind: Kind) -> str:
    digest = hashlib.sha256(f"{kind}\n{RECIPES[kind]}\n".encode())
    for name in ("config.json", "preprocessor_config.json", "model.safetensors.index.json"):
        path = folder / name
        if path.is_file():
            digest.update(f"{name}\n".encode() + path.read_bytes())
    for path in _weight_files(folder):
        size = path.stat().st_size
        digest.update(f"{path.name}:{size}\n".encode())
        with path.open("rb") as handle:
            for start in sorted({0, max(size // 2 - (1 << 19), 0), max(size - (1 << 20), 0)}):
                handle.seek(start)
                digest.update(handle.read(1 << 20))
    return digest.hexdigest()


# --- embedding files ----------------------------------------------------------------------------


@dataclass
class Embedded:
    """Embeddings aligned with `files` (the images every encoder could read), one array per kind."""

    files: list[ImageFile]
    vectors: dict[str, np.ndarray]
    rejected: list[Rejected]
    computed: dict[str, int]  # embedded this run, per kind
    cached: dict[str, int]  # found in the cache, per kind


def embed_files(
    files: Sequence[ImageFile],
    encoders: Sequence[Encoder],
    cache_dir: Path | None = None,
    batch_size: int = 16,
    progress: Progress | None = None,
) -> Embedded:
    """Embed `files` with every encoder, reading vectors from the cache where it has them.

    Each image is decoded once for all encoders. `progress(done, total)` counts the images that
    needed embedding (cached ones do not count; total 0 when all were cached). A file that cannot
    be decoded or processed is rejected, and left out of every kind's array."""
    if batch_size < 1:
        raise MiningError("batch size must be at least 1")
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    caches = {encoder.kind: _open_cache(root, encoder) for encoder in encoders}
    missing = [f for f in files if any(f.sha256 not in caches[e.kind] for e in encoders)]
    cached = {e.kind: sum(f.sha256 in caches[e.kind] for f in files) for e in encoders}
    computed = {e.kind: 0 for e in encoders}
    rejected: dict[str, Rejected] = {}
    if progress:
        progress(0, len(missing))
    try:
        for start in range(0, len(missing), batch_size):
            batch = missing[start : start + batch_size]
            images: dict[str, Image.Image] = {}
            for file in batch:
                try:
                    images[file.sha256] = load_image(file.path)
                except ImageRejected as exc:
                    rejected[file.sha256] = Rejected(file.name, without_name(file.path, exc))
            for encoder in encoders:
                cache = caches[encoder.kind]
                todo = [f for f in batch if f.sha256 in images and f.sha256 not in cache]
                for file, vector in _embed_batch(encoder, todo, images, rejected):
                    cache.add(file.sha256, vector)
                    computed[encoder.kind] += 1
            if progress:
                progress(min(start + batch_size, len(missing)), len(missing))
    finally:
        for cache in caches.values():
            cache.flush()
    kept = [f for f in files if f.sha256 not in rejected and all(f.sha256 in caches[e.kind] for e in encoders)]
    vectors = {
        e.kind: (np.stack([caches[e.kind].get(f.sha256) for f in kept]) if kept else np.zeros((0, 0), np.float32))
        for e in encoders
    }
    return Embedded(kept, vectors, list(rejected.values()), computed, cached)


def _open_cache(root: Path, encoder: Encoder) -> EmbeddingCache:
    about = {"kind": encoder.kind, "source": encoder.source, "recipe": RECIPES.get(encoder.kind, "")}
    return EmbeddingCache(root, encoder.identity(), about)


def _embed_batch(
    encoder: Encoder, todo: list[ImageFile], images: dict[str, Image.Image], rejected: dict[str, Rejected]
) -> Iterator[tuple[ImageFile, np.ndarray]]:
    if not todo:
        return
    try:
        vectors = encoder.embed([images[f.sha256] for f in todo])
        yield from zip(todo, vectors, strict=True)
        return
    except MiningError:
        raise
    except Exception:  # noqa: BLE001 - one odd image can fail a whole batch; find it below
        pass
    for file in todo:
        try:
            vector = encoder.embed([images[file.sha256]])[0]
        except MiningError:
            raise
        except Exception as exc:  # noqa: BLE001 - that image alone fails: report it, go on
            rejected[file.sha256] = Rejected(file.name, f"the {encoder.kind} encoder failed ({exc})")
            continue
        yield file, vector
