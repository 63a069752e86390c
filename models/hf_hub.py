"""What the Hugging Face Hub says about a local model before it is loaded, and fetching its files.

- `reachable()`: whether the Hub answers at all, asked once with a short timeout and remembered
  (a minute when it did not answer, ten when it did), so an offline machine learns it in seconds
  instead of paying huggingface_hub's retries (2.5 minutes per file) on every model.
- `listing(repo)`: the files a load needs (configs, tokenizer, chat template and the weights
  transformers reads by default: `model*.safetensors`, else `pytorch_model*.bin`; never ONNX,
  GGUF or other folders) with their sizes, from `HfApi.model_info(files_metadata=True)`; cached per id.
- `cached_folder(repo)`: the snapshot in the local cache when its config and weights are all there.
- `download(repo, listing)`: `snapshot_download` of exactly those files, reporting bytes to
  models/hf_progress.py.

Sources: huggingface_hub 2.4 (`snapshot_download`, `HfApi.model_info`, cache layout
`models--org--name/{refs,snapshots}`), read in site-packages.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from models.hf_progress import DownloadBytes
from models.types import Unavailable

HUB_TIMEOUT = 3.0  # seconds: how long one question to the Hub may take
REMEMBER_UNREACHABLE = 60.0  # seconds before asking again after the Hub did not answer
REMEMBER_REACHABLE = 600.0

_WEIGHTS = re.compile(r"^(model|pytorch_model)(-\d{5}-of-\d{5})?\.(safetensors|bin)$")
_SMALL_FILES = (".json", ".jinja", ".txt", ".model", ".tiktoken")


@dataclass(frozen=True)
class Listing:
    """The files of one Hub model a load fetches, at one commit."""

    repo: str
    sha: str
    files: tuple[tuple[str, int], ...]  # (name, bytes)

    @property
    def size(self) -> int:
        return sum(size for _, size in self.files)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.files]


_lock = threading.Lock()
_probe: tuple[float, bool, str] | None = None  # (when, reachable, why not)
_listings: dict[str, Listing] = {}


def endpoint() -> str:
    from huggingface_hub import constants

    return os.environ.get("HF_ENDPOINT", constants.ENDPOINT).rstrip("/")


def cache_dir() -> Path:
    """The hub cache as huggingface_hub finds it, read now (tests and operators may move it)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def offline_by_setting() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")


def reachable() -> tuple[bool, str]:
    """(True, "") when the Hub answers; (False, why) when it is switched off or did not answer."""
    global _probe
    if offline_by_setting():
        return False, "HF_HUB_OFFLINE is set"
    with _lock:  # one probe at a time: the others wait for its answer
        if _probe is not None:
            when, answered, why = _probe
            if time.monotonic() - when < (REMEMBER_REACHABLE if answered else REMEMBER_UNREACHABLE):
                return answered, why
        try:
            from huggingface_hub import get_session

            get_session().head(endpoint(), timeout=HUB_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - any failure to get an answer means offline
            _probe = (time.monotonic(), False, _unreachable(exc))
        else:
            _probe = (time.monotonic(), True, "")
        return _probe[1], _probe[2]


def forget() -> None:
    """Ask the Hub again next time (tests; an operator who fixed the network)."""
    global _probe
    with _lock:
        _probe = None
        _listings.clear()


def _unreachable(exc: Exception) -> str:
    return f"the Hugging Face Hub ({endpoint()}) cannot be reached ({type(exc).__name__})"


def _remember_unreachable(exc: Exception) -> str:
    global _probe
    why = _unreachable(exc)
    with _lock:
        _probe = (time.monotonic(), False, why)
    return why


def listing(repo: str) -> Listing | None:
    """The files a load of `repo` fetches, with their sizes; None when the Hub cannot be asked.
    Raises Unavailable when the Hub says there is no such model or it is gated."""
    with _lock:
        if repo in _listings:
            return _listings[repo]
    if not reachable()[0]:
        return None
    from huggingface_hub import HfApi
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        info = HfApi(endpoint=endpoint()).model_info(repo, files_metadata=True, timeout=HUB_TIMEOUT)
    except GatedRepoError:
        raise Unavailable(f"{repo} is gated on the Hugging Face Hub: accept its terms there and set HF_TOKEN") from None
    except (RepositoryNotFoundError, RevisionNotFoundError):
        raise Unavailable(
            f"there is no model {repo} on the Hugging Face Hub (a private one needs HF_TOKEN): check the id"
        ) from None
    except HfHubHTTPError as exc:
        if exc.response is not None and exc.response.status_code < 500:
            raise Unavailable(f"the Hugging Face Hub refused to list {repo}: {exc}") from None
        _remember_unreachable(exc)
        return None
    except Exception as exc:  # noqa: BLE001 - connection errors, timeouts: offline
        _remember_unreachable(exc)
        return None
    files = [(s.rfilename, int(s.size or 0)) for s in info.siblings or [] if "/" not in s.rfilename]
    chosen = _chosen(files)
    if not any(_WEIGHTS.match(name) for name, _ in chosen):
        raise Unavailable(f"{repo} on the Hugging Face Hub has no transformers weights (model*.safetensors)")
    found = Listing(repo, info.sha or "main", tuple(chosen))
    with _lock:
        _listings[repo] = found
    return found


def _chosen(files: list[tuple[str, int]]) -> list[tuple[str, int]]:
    safetensors = any(_WEIGHTS.match(name) and name.endswith(".safetensors") for name, _ in files)
    chosen = []
    for name, size in files:
        weights = _WEIGHTS.match(name)
        if weights and (name.endswith(".safetensors") or not safetensors):
            chosen.append((name, size))
        elif not weights and name.endswith(_SMALL_FILES):
            if name.endswith(".bin.index.json") and safetensors:
                continue
            chosen.append((name, size))
    return sorted(chosen)


def _storage(repo: str) -> Path:
    return cache_dir() / ("models--" + repo.replace("/", "--"))


def cached_folder(repo: str) -> Path | None:
    """The cached snapshot of `repo` when its config and all its default weights are on disk."""
    storage = _storage(repo)
    snapshots = storage / "snapshots"
    if not snapshots.is_dir():
        return None
    candidates = []
    ref = storage / "refs" / "main"
    if ref.is_file():
        candidates.append(snapshots / ref.read_text().strip())
    candidates += sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    for folder in candidates:
        if folder.is_dir() and complete(folder):
            return folder
    return None


def complete(folder: Path) -> bool:
    """A config.json and the weights transformers would read (every shard an index names)."""
    if not (folder / "config.json").is_file():
        return False
    for index_name in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        index = folder / index_name
        if index.is_file():
            try:
                shards = set(json.loads(index.read_text())["weight_map"].values())
            except (OSError, ValueError, KeyError, AttributeError):
                return False
            return all((folder / shard).is_file() for shard in shards)
    return (folder / "model.safetensors").is_file() or (folder / "pytorch_model.bin").is_file()


def folder_size(folder: Path) -> int:
    """Bytes of the files in a folder (a cache snapshot's links followed to their blobs)."""
    total = 0
    for file in folder.rglob("*"):
        try:
            if file.is_file():
                total += file.stat().st_size
        except OSError:
            continue
    return total


def missing_bytes(found: Listing) -> int:
    """What a download of `found` still has to fetch (files already cached cost nothing)."""
    snapshot = _storage(found.repo) / "snapshots" / found.sha
    return sum(size for name, size in found.files if not (snapshot / name).is_file())


def download(found: Listing) -> Path:
    """Fetch the listed files into the cache (reporting bytes) and return the snapshot folder."""
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(
            found.repo,
            revision=found.sha,
            allow_patterns=found.names,
            cache_dir=str(cache_dir()),
            endpoint=endpoint(),
            etag_timeout=HUB_TIMEOUT,
            tqdm_class=DownloadBytes.for_download(found.repo, missing_bytes(found) or None),
        )
    except Exception as exc:  # noqa: BLE001 - any failure to fetch: the model is unavailable
        raise Unavailable(f"downloading {found.repo} failed: {type(exc).__name__}: {exc}") from None
    return Path(folder)
