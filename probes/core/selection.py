"""Which items a run asks: all of a benchmark's items, or a seeded sample of them.

Shared by the command line (`run --limit N --seed S`, `generate --n N`) and the playground's
Evaluate tab, so the same limit and seed pick the same items everywhere (and so hit the same
cached answers).
"""

from __future__ import annotations

import random

from probes.core.types import Item


def select_items(items: list[Item], limit: int | None, seed: int) -> list[Item]:
    """All items, or `limit` of them sampled with `seed`. A larger limit with the same seed
    keeps the smaller sample and adds to it, so runs can grow without re-asking."""
    if limit is None or limit >= len(items):
        return list(items)
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    return [items[i] for i in sorted(order[:limit])]
