"""Benchmark ids -> factories, and which benchmarks are generated with which parameters.

Every module under `probes/benchmarks/` registers itself on import, so a new benchmark is one new
file and no list to edit; a generated family registers its class too, and every tab of the
playground lists it (with a control per parameter) without a UI edit.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Callable
from typing import Any

from probes.core.benchmark import Benchmark
from probes.core.errors import UnknownBenchmark

# A factory takes `data` (a local copy to read, or None) and `params` (NAME -> values to use
# instead of the defaults) and raises BenchmarkError for what it cannot honour.
Factory = Callable[..., Benchmark]
FACTORIES: dict[str, Factory] = {}
GENERATED: dict[str, type[Benchmark]] = {}  # id -> the generated family's class (its params, prompts)
# Ids with a prefix and a free part (`custom:PATH`): prefix -> factory taking the free part.
PREFIXES: dict[str, tuple[Callable[[str], Benchmark], str]] = {}
_loaded = False


def register(benchmark_id: str, generated: type[Benchmark] | None = None) -> Callable[[Factory], Factory]:
    """Register a factory; `generated` names the class of a generated family, so the Probe,
    Stimulus lab and Human tabs can list it with its parameters."""

    def wrap(factory: Factory) -> Factory:
        FACTORIES[benchmark_id] = factory
        if generated is not None:
            GENERATED[benchmark_id] = generated
        return factory

    return wrap


def register_prefix(prefix: str, factory: Callable[[str], Benchmark], hint: str) -> None:
    """Ids that start with `prefix`; `hint` tells users how to write one (`custom:PATH for ...`)."""
    PREFIXES[prefix] = (factory, hint)


def _load_all() -> None:
    """Import every module under probes/benchmarks once: each registers itself on import."""
    global _loaded
    if _loaded:
        return
    import probes.benchmarks as package

    for module in pkgutil.walk_packages(package.__path__, prefix="probes.benchmarks."):
        importlib.import_module(module.name)
    _loaded = True


_MODULE_SHAPED = re.compile(r"[a-z][a-z0-9_-]*(/[a-z][a-z0-9_-]*)*")


def _load_for(benchmark_id: str) -> None:
    """Load what `benchmark_id` needs: the module named after it when there is one
    (`blind/touching-circles` registers in probes/benchmarks/blind/touching_circles.py,
    `custom:PATH` in probes/benchmarks/custom.py), else every module. A run of one family then
    does not import the others first (about 90 ms, 4% of a run against a server answering in
    10 ms); an id registered elsewhere is still found, by loading everything."""
    if _loaded or _registered(benchmark_id):
        return
    head = benchmark_id.split(":", 1)[0]
    if _MODULE_SHAPED.fullmatch(head):
        name = "probes.benchmarks." + head.replace("/", ".").replace("-", "_")
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # a parent package that does not exist
            found = False
        if found:
            importlib.import_module(name)
            if _registered(benchmark_id):
                return
    _load_all()


def _registered(benchmark_id: str) -> bool:
    return benchmark_id in FACTORIES or any(benchmark_id.startswith(prefix) for prefix in PREFIXES)


def is_benchmark(benchmark_id: str) -> bool:
    """Whether `benchmark_id` names a registered benchmark (not a prefix's): loads only what
    the id needs, as `get_benchmark` does."""
    _load_for(benchmark_id)
    return benchmark_id in FACTORIES


def benchmark_ids() -> list[str]:
    _load_all()
    return sorted(FACTORIES)


def generated_families() -> dict[str, type[Benchmark]]:
    """Generated benchmarks (id -> class), in id order: what the stimulus tabs list."""
    _load_all()
    return dict(sorted(GENERATED.items()))


def generated_family(benchmark_id: str) -> type[Benchmark] | None:
    """The class of the generated family `benchmark_id` (its params), None for any other id;
    loads only what the id needs, as `get_benchmark` does."""
    _load_for(benchmark_id)
    return GENERATED.get(benchmark_id)


def get_benchmark(benchmark_id: str, data: str | None = None, params: dict[str, Any] | None = None) -> Benchmark:
    """Build a benchmark. `data` points at a local copy where the benchmark reads one;
    `params` fixes or sweeps generator parameters (NAME -> list of values)."""
    _load_for(benchmark_id)
    for prefix, (from_prefix, _) in PREFIXES.items():
        if benchmark_id.startswith(prefix):
            return from_prefix(benchmark_id[len(prefix) :])
    factory = FACTORIES.get(benchmark_id)
    if factory is None:
        known = ", ".join(sorted(FACTORIES))
        hints = "".join(f", or {hint}" for _, hint in PREFIXES.values())
        raise UnknownBenchmark(f"unknown benchmark {benchmark_id!r}; known: {known}{hints}")
    return factory(data=data, params=params or {})
