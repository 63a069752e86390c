"""Answerers that need the item: chance over its answers, pixels by geometry.

The `baseline` provider is declared here, beside the baselines (they know benchmarks, so they
cannot live in models/): `baseline/chance`, `baseline/pixels`.
"""

from __future__ import annotations

from collections.abc import Callable

from models.registry import ModelIdError
from probes.baselines.base import ItemBaseline

PROVIDER = "baseline"
TITLE = "Offline baselines"


def _chance() -> ItemBaseline:
    from probes.baselines.chance import ChanceBaseline

    return ChanceBaseline()


def _pixels() -> ItemBaseline:
    from probes.baselines.pixels import PixelsBaseline

    return PixelsBaseline()


BASELINES: dict[str, Callable[[], ItemBaseline]] = {"chance": _chance, "pixels": _pixels}
CATALOGUE = tuple(f"{PROVIDER}/{name}" for name in BASELINES)


def is_baseline(model_id: str) -> bool:
    return model_id.partition("/")[0] == PROVIDER


def create(model_id: str) -> ItemBaseline:
    name = model_id.partition("/")[2]
    if name not in BASELINES:
        known = ", ".join(CATALOGUE)
        raise ModelIdError(f"unknown baseline {name!r}: known baselines are {known}")
    return BASELINES[name]()
