"""What every Scoreboard handler does first: check the request's fields against the bounds
(public mode: tighter) and read the stores' counts (`opened`, refusing with the reason, which
`refused_as` turns into the handler's answer), read which origins it counts and which benchmark
it shows, and give each model its colour."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import gradio as gr

from probes.core.errors import LimitExceeded
from probes.running.limits import current as limits
from ui.common import user_message
from ui.scoreboard.data import EVERY_ORIGIN, Tally, benchmarks, counted_by, derived, stored_tally
from ui.scoreboard.style import Colours

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


# --- what every handler starts with -----------------------------------------------------------


class Refused(Exception):
    """A request refused before any work (a field past its bound, a store that cannot be read):
    the message a visitor sees, already logged where it is a bug."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def opened(request: Any, texts: Sequence[str | None] = (), lists: Sequence[Sequence[str] | None] = (),
           reload: bool = False) -> Tally:  # fmt: skip
    """Every field checked, then the counts this visitor's scoreboard reads; Refused otherwise."""
    try:
        check(texts, lists)
        return stored_tally(reload, request)
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        raise Refused(user_message(exc)) from None


def refused_as(
    answer: Callable[[str], Any], *, every_failure: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The handler's answer to a request `opened` refused: `answer(message)` (a warning and no
    change, or the message where the view shows it). Anything else the handler meets goes on as
    before, unless `every_failure`: a view that shows every failure in its place answers it too
    (`user_message` logs what is not the visitor's mistake). The handler's signature is kept
    (Gradio reads it: the request parameter)."""
    caught = Exception if every_failure else Refused

    def decorate(handler: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(handler)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                return handler(*args, **kwargs)
            except caught as exc:  # noqa: BLE001 - with every_failure, shown where the view would be
                return answer(exc.message if isinstance(exc, Refused) else user_message(exc))

        return wrapped

    return decorate


def warned(skips: int) -> Callable[[str], Any]:
    """A warning toast, and every output left as it was."""

    def answer(message: str) -> Any:
        gr.Warning(message)
        return gr.skip() if skips == 1 else [gr.skip()] * skips

    return answer
