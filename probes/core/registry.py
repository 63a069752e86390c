"""Benchmark ids -> factories: a dict and a decorator."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from probes.core.types import Benchmark

# A factory takes `data` (a local copy to read, or None) and `params` (NAME -> values to use
# instead of the defaults) and raises BenchmarkError for what it cannot honour.
Factory = Callable[..., Benchmark]
FACTORIES: dict[str, Factory] = {}
CUSTOM_PREFIX = "custom:"


class BenchmarkError(ValueError):
    """A benchmark cannot be built as asked; the message says what to change."""


class UnknownBenchmark(BenchmarkError):
    pass


def register(benchmark_id: str) -> Callable[[Factory], Factory]:
    def wrap(factory: Factory) -> Factory:
        FACTORIES[benchmark_id] = factory
        return factory

    return wrap


def _load_all() -> None:
    """Import every module under probes/benchmarks: each registers itself on import, so a new
    benchmark is one new file and no list to edit."""
    import probes.benchmarks as package

    for module in pkgutil.walk_packages(package.__path__, prefix="probes.benchmarks."):
        importlib.import_module(module.name)


def benchmark_ids() -> list[str]:
    _load_all()
    return sorted(FACTORIES)


def get_benchmark(benchmark_id: str, data: str | None = None, params: dict[str, Any] | None = None) -> Benchmark:
    """Build a benchmark. `data` points at a local copy where the benchmark reads one;
    `params` fixes or sweeps generator parameters (NAME -> list of values)."""
    _load_all()
    if benchmark_id.startswith(CUSTOM_PREFIX):
        from probes.benchmarks.custom import CustomFolder

        return CustomFolder(benchmark_id[len(CUSTOM_PREFIX) :])
    factory = FACTORIES.get(benchmark_id)
    if factory is None:
        known = ", ".join(sorted(FACTORIES))
        raise UnknownBenchmark(
            f"unknown benchmark {benchmark_id!r}; known: {known}, or custom:PATH for your own folder"
        )
    return factory(data=data, params=params or {})
