"""Every setting the engine reads from the environment, checked together: the playground calls
`check()` as it starts, so a variable that does not parse stops it there with one line naming the
variable and what to write, as a flag would, instead of failing a visitor's request later.

Each variable is read where it is used, by one function that refuses what does not parse
(bounds, nan, inf, 1e400, negatives): the command line meets the same refusal before its work
starts (`run` checks its own before opening the store), and here they are all called once.

| variable | read by |
| --- | --- |
| PROBE_PUBLIC, PROBE_MAX_ITEMS, PROBE_*_BUDGET, PROBE_TRUSTED_PROXIES, PROBE_HF_MODELS, PROBE_ALLOWED_MODELS | limits |
| PROBE_IMAGE_CACHE_MB | image_cache.max_bytes_from_env |
| PROBE_DRAWING_PROCESS | drawing_process.enabled |
| PROBE_MAX_LOCAL_MODELS | models.hf_pool.max_loaded |
| PROBE_MODELS (the models file) | models.registry.load_endpoints |
"""

from __future__ import annotations

from models import hf_pool
from models import registry as model_registry
from probes.running import drawing_process, image_cache, limits


def check() -> None:
    """Read every setting now; the first that does not parse raises its one-line error (a
    ProbeError, or a BackendError for the models' own: the models file, PROBE_MAX_LOCAL_MODELS)."""
    limits.current()
    image_cache.max_bytes_from_env()
    drawing_process.enabled()
    hf_pool.max_loaded()
    model_registry.load_endpoints()  # the file PROBE_MODELS names, read whole and checked field by field
