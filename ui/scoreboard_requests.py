"""What every Scoreboard handler does first: check the request's fields against the bounds
(public mode: tighter), read which origins it counts and which benchmark it shows, and give each
model its colour."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from probes.core.errors import LimitExceeded
from probes.running.limits import current as limits
from ui.scoreboard_data import EVERY_ORIGIN, Tally, benchmarks, counted_by, derived
from ui.scoreboard_style import Colours

MAX_CHOSEN = 64  # values one multiple choice may hold (models, B's)


def check(texts: Sequence[str | None] = (), lists: Sequence[Sequence[str] | None] = ()) -> None:
    """Every field of a request within bounds, before any work (public mode: tighter bounds)."""
    bounds = limits()
    for text in texts:
        bounds.text("scoreboard field", text if isinstance(text, str) else None)
    for chosen in lists:
        chosen = list(chosen or [])
        if len(chosen) > MAX_CHOSEN:
            raise LimitExceeded(f"{len(chosen):,} values chosen in one field; at most {MAX_CHOSEN} here")
        for value in chosen:
            bounds.text("scoreboard choice", value if isinstance(value, str) else str(value))


def wanted_origins(value: Sequence[str] | None) -> frozenset[str]:
    return EVERY_ORIGIN if value is None else frozenset(value) & EVERY_ORIGIN


def colours_of(tally: Tally, origins: Iterable[str]) -> Colours:
    """One colour per model of everything shown, the same in every chart (kept with the counts)."""
    wanted = frozenset(origins)
    return derived(tally, f"colours\x1f{sorted(wanted)}", lambda t: Colours(counted_by(t, wanted, 1)))


def chosen_benchmark(tally: Tally, origins: Iterable[str], benchmark: str | None) -> str | None:
    names, default = benchmarks(tally, origins)
    return benchmark if benchmark in names else default
