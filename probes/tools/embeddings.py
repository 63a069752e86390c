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

Cache (default `$PROBE_HOME/embeddings/`, `.probe/embeddings/` without it): one folder per model
identity, named by a fingerprint of what the model is (its kind, our embedding recipe, its config
and image-processor files, and each weight file's size and sampled bytes: the first, middle and
last MiB; a fingerprint, not a checksum of gigabytes). The same weights at another path share
the cache; `model.json` in the folder records where they were loaded from. Inside, `part-*.npz`
files each hold `sha256` (the hex digest of an image file's bytes) and `vectors` (float32 rows).
Every part is written to a temporary name and renamed, so an interrupted run leaves whole parts
only, and the next run embeds just what is missing; parts are written every few hundred images
and merged when they pile up. When every image is already cached the model is not even loaded.

Images are read with the project's hardened reader (`probes.files.images`): a file it refuses
(not an image, too large, damaged) is reported and skipped, never fatal; so is an image more
than 8 times longer than wide (resizing its short side to the encoder's size would make it
enormous).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from PIL import Image

from probes.core.errors import ProbeError
from probes.files.images import ImageRejected, check_image_file, load_image

DEFAULT_CLIP = "openai/clip-vit-large-patch14"
DEFAULT_DINO = "facebook/dinov2-large"
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"})
MAX_ASPECT = 8.0
MINED_MARK = "mining.json"  # a folder holding this was written by `mine`; scans skip it
# Bump a recipe when what we embed changes, so old cached vectors are not mixed with new ones.
RECIPES = {"clip": "clip-image-embeds/v1", "dino": "dinov2-pooler-cls/v1"}
FLUSH_EVERY = 512  # vectors per cache part; also flushed every FLUSH_SECONDS
FLUSH_SECONDS = 30.0
MAX_PARTS = 16  # merge the parts into one past this many

Kind = Literal["clip", "dino"]
Progress = Callable[[int, int], None]


class MiningError(ProbeError):
    """Mining or easing cannot go on as asked; the message says what to change."""


@dataclass(frozen=True)
class ImageFile:
    """An accepted image: where it is, its name relative to the scanned folder, its content hash."""

    path: Path
    name: str
    sha256: str


@dataclass(frozen=True)
class Rejected:
    name: str
    reason: str


@dataclass
class Scan:
    files: list[ImageFile] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (skipped name, kept name)


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


# --- scanning a folder ------------------------------------------------------------------------


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def scan_folder(folder: Path, exclude: Sequence[Path] = ()) -> Scan:
    """Every image file under `folder` (recursively, in name order; hidden files and folders,
    anything under `exclude`, and earlier mining outputs (folders holding a `mining.json`)
    skipped), checked by the hardened reader and hashed. Files whose
    name is not an image's are ignored; files named as images but refused are reported. A file
    with the same bytes as an earlier one is a duplicate: reported and left out, since two
    identical options would make a question unanswerable."""
    folder = Path(folder)
    excluded = [Path(p).resolve() for p in exclude]
    scan = Scan()
    by_hash: dict[str, str] = {}
    for path in _walk(folder, excluded):
        name = path.relative_to(folder).as_posix()
        reason = image_problem(path)
        if reason:
            scan.rejected.append(Rejected(name, reason))
            continue
        try:
            digest = file_sha256(path)
        except OSError as exc:
            scan.rejected.append(Rejected(name, f"cannot be read ({exc.strerror or exc})"))
            continue
        if digest in by_hash:
            scan.duplicates.append((name, by_hash[digest]))
            continue
        by_hash[digest] = name
        scan.files.append(ImageFile(path, name, digest))
    return scan


def image_problem(path: Path) -> str | None:
    """Why the miner cannot use this file, or None."""
    try:
        info = check_image_file(path)
    except ImageRejected as exc:
        return _without_name(path, exc)
    long_side, short_side = max(info.width, info.height), max(min(info.width, info.height), 1)
    if long_side / short_side > MAX_ASPECT:
        return (
            f"{info.width} x {info.height} pixels is more than {MAX_ASPECT:g} times longer than wide; "
            "crop it to compare it with other pictures"
        )
    return None


def _without_name(path: Path, exc: Exception) -> str:
    """The reader's messages start with the file's name; reports already name the file."""
    return str(exc).removeprefix(f"{path.name}: ")


def _walk(folder: Path, excluded: list[Path]) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and (here / d).resolve() not in excluded
            and not (here / d / MINED_MARK).is_file()  # an earlier output: copies and contact sheets
        )
        for name in sorted(files):
            if not name.startswith(".") and Path(name).suffix.lower() in IMAGE_SUFFIXES:
                yield here / name


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


# --- the cache ----------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    return Path(os.environ.get("PROBE_HOME", ".probe")) / "embeddings"


class EmbeddingCache:
    """Vectors of one model identity, by image sha256 (see the module docstring for the layout)."""

    def __init__(self, root: Path, identity: str, about: dict[str, Any]):
        self.dir = Path(root) / identity
        self.about = about
        self.vectors: dict[str, np.ndarray] = {}
        self._pending: dict[str, np.ndarray] = {}
        self._last_flush = time.monotonic()
        self._load()

    def __contains__(self, sha256: str) -> bool:
        return sha256 in self.vectors

    def get(self, sha256: str) -> np.ndarray:
        return self.vectors[sha256]

    def add(self, sha256: str, vector: np.ndarray) -> None:
        self.vectors[sha256] = vector
        self._pending[sha256] = vector
        if len(self._pending) >= FLUSH_EVERY or time.monotonic() - self._last_flush > FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        about = self.dir / "model.json"
        if not about.exists():
            _write_atomic(about, (json.dumps(self.about, indent=1) + "\n").encode())
        _write_part(self.dir, self._pending)
        self._pending = {}
        parts = sorted(self.dir.glob("part-*.npz"))
        if len(parts) > MAX_PARTS:
            _write_part(self.dir, self.vectors)  # first the merged part, then the old ones go
            for part in parts:
                part.unlink(missing_ok=True)

    def _load(self) -> None:
        for part in sorted(self.dir.glob("part-*.npz")):
            try:
                with np.load(part, allow_pickle=False) as data:
                    hashes, vectors = data["sha256"], data["vectors"]
            except (OSError, ValueError, KeyError, EOFError):
                continue  # another process merged it away, or it is not ours: recompute instead
            for digest, vector in zip(hashes, vectors, strict=True):
                self.vectors[digest.decode("ascii")] = vector


def _write_part(folder: Path, vectors: dict[str, np.ndarray]) -> None:
    hashes = np.array([h.encode("ascii") for h in vectors], dtype="S64")
    rows = np.stack(list(vectors.values())).astype(np.float32)
    name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.npz"
    temporary = folder / f".{name}.tmp"
    with temporary.open("wb") as handle:
        np.savez(handle, sha256=hashes, vectors=rows)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, folder / name)


def _write_atomic(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


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
                    rejected[file.sha256] = Rejected(file.name, _without_name(file.path, exc))
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
