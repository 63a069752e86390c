"""`provider/model` ids to backends. SDKs and torch are imported lazily, inside the backends."""

from __future__ import annotations

import os
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path

from models.base import Backend
from models.types import BackendError, Unavailable

BUILTIN_PROVIDERS = ("openai", "anthropic", "hf", "baseline")

# Shown by `models` even before anyone configures anything, so people see what they could run.
CATALOGUE = (
    "openai/gpt-4o",
    "openai/gpt-4o-mini",
    "openai/gpt-4.1",
    "anthropic/claude-sonnet-4-5",
    "anthropic/claude-haiku-4-5",
    "hf/HuggingFaceTB/SmolVLM-256M-Instruct",
    "hf/HuggingFaceTB/SmolVLM-500M-Instruct",
    "hf/HuggingFaceTB/SmolVLM2-2.2B-Instruct",
    "hf/Qwen/Qwen2.5-VL-3B-Instruct",
    "baseline/chance",
    "baseline/pixels",
)


class ModelIdError(BackendError, ValueError):
    """The id names no provider we know, or no model."""


@dataclass(frozen=True)
class Endpoint:
    """A named OpenAI-compatible server from the models file."""

    name: str
    base_url: str
    api_key_env: str | None
    models: tuple[str, ...]
    concurrency: int = 4


@dataclass(frozen=True)
class ModelInfo:
    id: str
    available: bool
    reason: str  # why not, or what to expect (e.g. "downloads on first use")


def load_endpoints(path: str | os.PathLike | None = None) -> tuple[Endpoint, ...]:
    """Read `[[endpoints]]` tables from a TOML file: the given path, else `$PROBE_MODELS`.

    ```toml
    [[endpoints]]
    name = "ollama"
    base_url = "http://localhost:11434/v1"
    api_key_env = "OLLAMA_API_KEY"   # optional: servers that need no key leave it out
    models = ["llava:7b", "qwen2.5vl:7b"]
    concurrency = 2                  # optional
    ```
    """
    path = path or os.environ.get("PROBE_MODELS")
    if not path:
        return ()
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelIdError(f"models file {file} does not exist") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ModelIdError(f"models file {file} is not valid TOML: {exc}") from None
    endpoints = []
    for index, table in enumerate(data.get("endpoints", []), start=1):
        where = f"models file {file}, endpoint {index}"
        name, base_url, models = table.get("name"), table.get("base_url"), table.get("models")
        if not isinstance(name, str) or not name or "/" in name:
            raise ModelIdError(f"{where}: `name` must be a non-empty string without '/'")
        if name in BUILTIN_PROVIDERS:
            raise ModelIdError(f"{where}: name {name!r} is taken by a built-in provider")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ModelIdError(f"{where}: `base_url` must be an http(s) URL")
        if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
            raise ModelIdError(f"{where}: `models` must be a list of model names")
        key_env = table.get("api_key_env")
        if key_env is not None and not isinstance(key_env, str):
            raise ModelIdError(f"{where}: `api_key_env` must be the NAME of an environment variable")
        concurrency = table.get("concurrency", 4)
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ModelIdError(f"{where}: `concurrency` must be a positive integer")
        endpoints.append(Endpoint(name, base_url, key_env, tuple(models), concurrency))
    return tuple(endpoints)


def create(model_id: str, endpoints: tuple[Endpoint, ...] = (), api_key: str | None = None) -> Backend:
    """A new backend for `model_id`. `api_key` is a visitor's own key, used for this backend only."""
    provider, _, model = model_id.partition("/")
    if not model:
        raise ModelIdError(f"{model_id!r} is not a model id: write provider/model, e.g. openai/gpt-4o")
    if provider == "openai":
        from models.openai_backend import OpenAIBackend

        return OpenAIBackend(model_id, model, api_key=api_key)
    if provider == "anthropic":
        from models.anthropic_backend import AnthropicBackend

        return AnthropicBackend(model_id, model, api_key=api_key)
    if provider == "hf":
        from models.hf_backend import HFBackend

        return HFBackend(model_id, model)
    if provider == "baseline":
        from probes.baselines.chance import ChanceBackend

        if model == "chance":
            return ChanceBackend()
        if model == "pixels":
            from probes.baselines.pixels import PixelsBackend

            return PixelsBackend()
        raise ModelIdError(f"unknown baseline {model!r}: known baselines are baseline/chance, baseline/pixels")
    for endpoint in endpoints:
        if endpoint.name == provider:
            from models.openai_backend import OpenAIBackend

            return OpenAIBackend(
                model_id,
                model,
                base_url=endpoint.base_url,
                api_key_env=endpoint.api_key_env,
                api_key=api_key,
                official_api=False,
                default_concurrency=endpoint.concurrency,
            )
    names = ", ".join([*BUILTIN_PROVIDERS, *(e.name for e in endpoints)])
    raise ModelIdError(f"unknown provider {provider!r} in {model_id!r}: known providers are {names}")


_shared: dict[tuple[str, tuple[Endpoint, ...]], Backend] = {}
_shared_lock = threading.Lock()


def resolve(model_id: str, endpoints: tuple[Endpoint, ...] = ()) -> Backend:
    """The process-wide backend for `model_id` (server keys only), created on first use."""
    with _shared_lock:
        key = (model_id, endpoints)
        if key not in _shared:
            _shared[key] = create(model_id, endpoints)
        return _shared[key]


def catalogue(endpoints: tuple[Endpoint, ...] = ()) -> list[ModelInfo]:
    """Every model we can name here, available or not, with the reason. Sends nothing."""
    ids = list(CATALOGUE)
    ids += [f"{e.name}/{m}" for e in endpoints for m in e.models]
    return [describe(model_id, endpoints) for model_id in ids]


def describe(model_id: str, endpoints: tuple[Endpoint, ...] = ()) -> ModelInfo:
    try:
        backend = create(model_id, endpoints)
        backend.check()
    except Unavailable as exc:
        return ModelInfo(model_id, False, str(exc))
    except BackendError as exc:
        return ModelInfo(model_id, False, str(exc))
    note = getattr(backend, "availability_note", lambda: "")()
    return ModelInfo(model_id, True, note)
