"""Model ids -> answerers, for the command line and the playground alike: the providers declared
in `models.registry` (OpenAI, Anthropic, local models, the models file's servers) and the
baselines declared in `probes.baselines` (which read the item and so live here)."""

from __future__ import annotations

import threading

from models import registry
from models.base import Backend
from models.registry import Endpoint, ModelInfo
from models.types import BackendError
from probes import baselines


def create(model_id: str, endpoints: tuple[Endpoint, ...] = (), api_key: str | None = None) -> Backend:
    """A new answerer for `model_id`; `api_key` is a visitor's own key, for this answerer only."""
    if baselines.is_baseline(model_id):
        return baselines.create(model_id)
    return registry.create(model_id, endpoints, api_key=api_key)


_shared: dict[tuple[str, tuple[Endpoint, ...]], Backend] = {}
_shared_lock = threading.Lock()


def resolve(model_id: str, endpoints: tuple[Endpoint, ...] = ()) -> Backend:
    """The process-wide answerer for `model_id` on the server's keys, created on first use (its
    SDK clients and loaded weights are shared by every run)."""
    with _shared_lock:
        key = (model_id, endpoints)
        if key not in _shared:
            _shared[key] = create(model_id, endpoints)
        return _shared[key]


def catalogue(endpoints: tuple[Endpoint, ...] = ()) -> list[ModelInfo]:
    """Every model we can name here, available or not, with the reason. Sends nothing."""
    return registry.catalogue(endpoints) + [describe(model_id) for model_id in baselines.CATALOGUE]


def describe(model_id: str, endpoints: tuple[Endpoint, ...] = ()) -> ModelInfo:
    if not baselines.is_baseline(model_id):
        return registry.describe(model_id, endpoints)
    try:
        answerer = create(model_id)
        answerer.check()
    except BackendError as exc:
        return ModelInfo(model_id, False, str(exc))
    return ModelInfo(model_id, True, answerer.notes())


def paid_by_server(model_id: str, endpoints: tuple[Endpoint, ...] = (), own_keys: frozenset[str] = frozenset()) -> bool:
    """Whether a request for `model_id` costs the operator: a provider declared paid (the named
    servers of the models file among them) whose key the visitor did not bring themselves."""
    if baselines.is_baseline(model_id):
        return False
    provider = registry.provider_of(model_id, endpoints)
    return provider.paid and provider.name not in own_keys


def is_deterministic(model_id: str) -> bool:
    """An offline baseline: the same item always fails (or succeeds) the same way."""
    return baselines.is_baseline(model_id)
