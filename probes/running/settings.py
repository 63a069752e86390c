"""Every setting the engine reads from the environment, checked together: the playground calls
`check()` as it starts, so a variable that does not parse stops it there with one line naming the
variable and what to write, as a flag would, instead of failing a visitor's request later.

Each variable is read where it is used, by one function that refuses what does not parse
(bounds, nan, inf, 1e400, negatives): the command line meets the same refusal before its work
starts (`run` checks its own before opening the store), and here they are all called once.

| variable | read by |
| --- | --- |
| PROBE_PUBLIC, PROBE_MAX_ITEMS, PROBE_*_BUDGET, PROBE_TRUSTED_PROXIES, PROBE_HF_MODELS, PROBE_ALLOWED_MODELS, PROBE_CLASS_PUBLISH | limits |
| PROBE_IMAGE_CACHE_MB | image_cache.max_bytes_from_env |
| PROBE_DRAWING_PROCESS | drawing_process.enabled |
| PROBE_MAX_LOCAL_MODELS | models.hf_pool.max_loaded |
| PROBE_HF_IMAGES, PROBE_HF_PREPARE_THREADS | models.hf_prepare.images_mode, threads_setting |
| PROBE_MODELS (the models file) | models.registry.load_endpoints |
| OPENAI_BASE_URL, ANTHROPIC_BASE_URL (the SDKs' own) | `base_url` here (the backends take them unchecked) |
"""

from __future__ import annotations

import os

from models import hf_pool, hf_prepare
from models import registry as model_registry
from models.models_file import url_problem
from probes.core.errors import UsageError
from probes.running import drawing_process, image_cache, limits

# The providers whose server address a variable may move (the SDKs' own names).
BASE_URLS = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


def check() -> None:
    """Read every setting now; the first that does not parse raises its one-line error (a
    ProbeError, or a BackendError for the models' own: the models file, PROBE_MAX_LOCAL_MODELS)."""
    limits.current()
    image_cache.max_bytes_from_env()
    drawing_process.enabled()
    hf_pool.max_loaded()
    hf_prepare.images_mode()
    hf_prepare.threads_setting()
    model_registry.load_endpoints()  # the file PROBE_MODELS names, read whole and checked field by field
    for provider in BASE_URLS:
        base_url(provider)


def base_url(provider: str) -> None:
    """The address OPENAI_BASE_URL (or ANTHROPIC_BASE_URL) moves its provider to, if set, must be
    an http(s) URL: otherwise every request fails as a "connection error" that running again
    cannot mend. (A user name and password in it are the operator's to use.)"""
    variable = BASE_URLS.get(provider)
    value = os.environ.get(variable or "", "").strip()
    problem = url_problem(value, credentials=True) if value else None
    if problem:
        raise UsageError(f"{variable} {problem}: write the server's http(s) address, e.g. https://api.example.com/v1")
