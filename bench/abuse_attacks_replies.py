"""Replies: model servers that lie (issue 22). The bench's servers run with hostile=True
(tests/support/hostile_servers.py): a model named after an attack gets it, any other its answer."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from bench.abuse_attacks_common import VISITOR_KEY, Context, Outcome, ask
from tests.support.hostile_servers import leaks
from tests.ui.attacker import texts, warning


def lying_servers(models: list[str]) -> Callable[[Context], Outcome]:
    """Ask `models`, whose servers lie, beside `openai/fine`, whose server answers, all with the
    visitor's own key (any model of a provider then). The outcome: the first lying model's cell
    error (what a visitor reads there), and each model's cell in the note."""

    def attack(ctx: Context) -> Outcome:
        outputs = ask(ctx, [*models, "openai/fine"], key=VISITOR_KEY)
        status = warning(outputs[:1])
        if status:
            return Outcome(status, note="the whole probe was refused")
        asked = [*models, "openai/fine"]
        cells = _cells(str(outputs[1]), asked)
        cells = {m: cells.get(m, "⚠ failed: no cell for it in the grid") for m in asked}
        # A failed cell reads "model ⚠ no reply <error>" (or "⚠ failed <why>" when the run stopped).
        failed = {
            m: re.split(r"no reply|failed", cell, maxsplit=1)[-1].strip() for m, cell in cells.items() if "⚠" in cell
        }
        shown = "; ".join(f"{m}: {'failed' if m in failed else 'answered'}" for m in asked)
        leaked = any(leaks(text, VISITOR_KEY) for text in texts(outputs))
        first = next((failed[m] for m in models if m in failed), "")
        return Outcome(first, note=shown + ("; KEY SHOWN" if leaked else "; no key shown"))

    return attack


def _cells(grid: str, models: list[str]) -> dict[str, str]:
    """Each model's row of the Probe grid, as a visitor reads it."""
    found: dict[str, str] = {}
    for row in re.findall(r"<tr>(.*?)</tr>", grid, flags=re.S):
        plain = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split())
        for model in models:
            if plain.startswith(model) and model not in found:
                found[model] = plain
    return found
