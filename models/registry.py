"""Providers, each declared once, and `provider/model` ids -> backends.

A `Provider` names itself, the environment variable holding its server key, whether its
requests cost the operator (so budgets count them), the models it shows before anyone
configures anything, and a factory. The command line's `models`, the catalogue and the
playground's key boxes all read these declarations: a new provider is one module under
`models/` plus one `declare(...)` here. SDKs and torch are imported lazily, inside the factories.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from models.base import Backend
from models.models_file import Endpoint, read_endpoints
from models.types import BackendError

# A factory builds the backend of one model: (model id, model name, a visitor's own key or None).
Factory = Callable[[str, str, str | None], Backend]


@dataclass(frozen=True)
class Provider:
    name: str  # the id prefix: "openai" in "openai/gpt-4o"
    title: str  # shown beside its key box: "OpenAI"
    factory: Factory
    key_variable: str | None = None  # the server's key; a visitor may paste their own instead
    paid: bool = False  # requests cost the operator: budgets count them
    catalogue: tuple[str, ...] = ()  # model ids listed before anyone configures anything


PROVIDERS: dict[str, Provider] = {}


def declare(provider: Provider) -> Provider:
    PROVIDERS[provider.name] = provider
    return provider


def _openai(model_id: str, model: str, api_key: str | None) -> Backend:
    from models.openai_backend import OpenAIBackend

    return OpenAIBackend(model_id, model, api_key=api_key)


def _anthropic(model_id: str, model: str, api_key: str | None) -> Backend:
    from models.anthropic_backend import AnthropicBackend

    return AnthropicBackend(model_id, model, api_key=api_key)


def _hf(model_id: str, model: str, api_key: str | None) -> Backend:
    from models.hf_backend import HFBackend

    return HFBackend(model_id, model)


declare(
    Provider(
        "openai", "OpenAI", _openai, "OPENAI_API_KEY", paid=True,
        catalogue=("openai/gpt-4o", "openai/gpt-4o-mini", "openai/gpt-4.1"),
    )
)  # fmt: skip
declare(
    Provider(
        "anthropic", "Anthropic", _anthropic, "ANTHROPIC_API_KEY", paid=True,
        catalogue=("anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5"),
    )
)  # fmt: skip
declare(
    Provider(
        "hf", "Hugging Face (local)", _hf,
        # Each one's architecture is built tiny and loaded through its real processor in
        # tests/models/test_hf_architectures.py. Not here: SmolVLM2 (its processor refuses to start
        # without num2words, which is LGPL, and its video half needs torchvision, which our CPU
        # torch cannot import); `hf/HuggingFaceTB/SmolVLM2-2.2B-Instruct` still runs where both are
        # installed, asked by its id.
        catalogue=(
            "hf/HuggingFaceTB/SmolVLM-256M-Instruct",
            "hf/HuggingFaceTB/SmolVLM-500M-Instruct",
            "hf/Qwen/Qwen2.5-VL-3B-Instruct",
        ),
    )
)  # fmt: skip
# Providers declared elsewhere: the baselines need the item and so live in probes/.
ELSEWHERE = ("baseline",)
# Names that a models file may not give an endpoint: those, and people (`human/<name>`).
RESERVED_NAMES = (*ELSEWHERE, "human", "own")  # own: a server a visitor names on the page (ui/common.py)


class ModelIdError(BackendError):
    """The id names no provider we know, or no model."""


@dataclass(frozen=True)
class ModelInfo:
    id: str
    available: bool
    reason: str  # why not, or what to expect (e.g. "downloads on first use")


def load_endpoints(path: str | os.PathLike | None = None) -> tuple[Endpoint, ...]:
    """The servers named in a models file (models/models_file.py): the given path, else
    `$PROBE_MODELS`, else none. Raises ModelsFileError, one line, for anything amiss."""
    taken = (*PROVIDERS, *RESERVED_NAMES)
    if path:
        return read_endpoints(path, taken)
    named = os.environ.get("PROBE_MODELS")
    return read_endpoints(named, taken, named_by="PROBE_MODELS") if named else ()


def endpoint_provider(endpoint: Endpoint) -> Provider:
    """A named OpenAI-compatible server as a provider: its requests use the operator's server
    (and key, if it needs one), so budgets count them."""

    def factory(model_id: str, model: str, api_key: str | None) -> Backend:
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

    catalogue = tuple(f"{endpoint.name}/{m}" for m in endpoint.models)
    return Provider(endpoint.name, endpoint.name, factory, endpoint.api_key_env, paid=True, catalogue=catalogue)


def providers(endpoints: tuple[Endpoint, ...] = ()) -> dict[str, Provider]:
    """Every provider a model id may name here: the declared ones and the models file's servers."""
    return {**PROVIDERS, **{e.name: endpoint_provider(e) for e in endpoints}}


def provider_of(model_id: str, endpoints: tuple[Endpoint, ...] = ()) -> Provider:
    provider, _, model = model_id.partition("/")
    if not model:
        raise ModelIdError(f"{model_id!r} is not a model id: write provider/model, e.g. openai/gpt-4o")
    known = providers(endpoints)
    if provider not in known:
        raise ModelIdError(
            f"unknown provider {provider!r} in {model_id!r}: known providers are {', '.join([*known, *ELSEWHERE])}"
        )
    return known[provider]


def create(model_id: str, endpoints: tuple[Endpoint, ...] = (), api_key: str | None = None) -> Backend:
    """A new backend for `model_id`. `api_key` is a visitor's own key, used for this backend only."""
    provider = provider_of(model_id, endpoints)
    return provider.factory(model_id, model_id.partition("/")[2], api_key)


def catalogue(endpoints: tuple[Endpoint, ...] = ()) -> list[ModelInfo]:
    """Every model we can name here, available or not, with the reason. Sends nothing."""
    ids = [model_id for provider in providers(endpoints).values() for model_id in provider.catalogue]
    return [describe(model_id, endpoints) for model_id in ids]


def describe(model_id: str, endpoints: tuple[Endpoint, ...] = ()) -> ModelInfo:
    try:
        backend = create(model_id, endpoints)
        backend.check()
    except BackendError as exc:  # Unavailable among them
        return ModelInfo(model_id, False, str(exc))
    return ModelInfo(model_id, True, backend.notes())
