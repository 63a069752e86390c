"""What every attack of the abuse bench (bench/abuse.py) shares: the goals, the keys and budgets
the app is started with, an attempt's `Outcome`, the `Context` an attack runs in, the `Attack`
itself, and the calls several families make (Ask in the Probe tab, an evaluation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gradio_client import Client

from tests.ui.attacker import AppProcess, call, parameters, warning

MB = 1024 * 1024
GOAL_RSS = 1536 * MB
GOAL_RATIO = 3.0
SERVER_KEY = "sk-abuse-bench-server-key-0123456789"
VISITOR_KEY = "sk-abuse-bench-visitor-key-ABCDEFGH"
BUDGETS = {"PROBE_SESSION_BUDGET": "5", "PROBE_CLIENT_BUDGET": "12", "PROBE_GLOBAL_BUDGET": "40"}
# Every attack and the other visitor come from 127.0.0.1, which a Space's bound on new sessions per
# address (240 in ten minutes) would soon close to all of them: the bench raises it, and the attack
# on new sessions measures the Space's own bound from an address of its own (Attack.env).
SESSIONS = {"PROBE_NEW_SESSIONS": "1000000"}
PAID = ["openai/gpt-4o", "openai/gpt-4o-mini", "openai/gpt-4.1", "anthropic/claude-haiku-4-5"]
ATTEMPT_TIMEOUT = 90.0  # --attempt-timeout by default: seconds an attempt may take before the app is restarted


@dataclass
class Outcome:
    """One attempt of an attack: the warning it got ("" if none), and what else is worth saying."""

    message: str
    note: str = ""
    stuck: bool = False  # a request of the attack was still being worked on when given up

    @property
    def refused(self) -> bool:
        return bool(self.message)


@dataclass
class Context:
    url: str
    folder: Path
    requests: Callable[[], int]  # requests the model server has answered so far
    client: Client | None = None  # the attacker's own session (fresh for each attack)
    app: AppProcess | None = None

    def visitor(self, **headers: str) -> Client:
        return Client(self.url, verbose=False, download_files=False, headers=headers or None)


@dataclass
class Attack:
    name: str
    run: Callable[[Context], Outcome]
    repeat: bool = True  # attempts again while the other visitor is measured
    shown: str = ""  # what the table calls it, if not the name
    timeout: float | None = None  # seconds an attempt may take before the app is restarted (--attempt-timeout)
    env: dict[str, str] | None = None  # the app restarted with these set for this attack (and back after)


def evaluate(ctx: Context, **form) -> Outcome:
    defaults = {"benchmarks": ["blind/touching-circles"], "models": ["baseline/chance"], "limit": 1}
    outputs = call(ctx.client, "/run_eval", **{**defaults, **form})
    return Outcome(warning(outputs), note="" if warning(outputs) else first_words(outputs[0], 60))


def ask(
    ctx: Context,
    models: list[str | None],
    key: str = "",
    conditions: list[str] | None = None,
    client: Client | None = None,
) -> tuple:
    """Ask in the Probe tab: up to 4 models (the other slots emptied), under `conditions` where
    the tab offers them, with the visitor's own keys if `key`."""
    client = client or ctx.client
    slots = {f"model_{i + 1}": model for i, model in enumerate([*models, None, None, None, None][:4])}
    named = {p["parameter_name"] for p in parameters(client, "/probe")}
    extra = {"chosen_conditions": conditions or ["as asked"]} if "chosen_conditions" in named else {}
    keys = {name: key for name in ("openai_key", "anthropic_key") if name in named}
    return call(client, "/probe", **slots, **extra, **keys)


def all_refused(messages: list[str]) -> Outcome:
    passed = sum(1 for m in messages if not m)
    first = next((m for m in messages if m), "")
    return Outcome(first if not passed else "", note=f"{len(messages) - passed} of {len(messages)} refused")


def first_words(text: object, words: int, limit: int = 70) -> str:
    """The first `words` words, at most `limit` characters (a message may repeat megabytes)."""
    plain = " ".join(str(text)[: 4 * limit].replace("*", "").split())
    parts = plain.split(" ")
    shown = " ".join(parts[:words])
    if len(shown) > limit:
        shown = shown[:limit]
    return shown + (" ..." if shown != plain else "")
