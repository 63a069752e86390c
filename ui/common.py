"""What every tab shares: the results store, the model list, backends with a visitor's own keys,
the per-session request budget, and safe formatting of model output."""

from __future__ import annotations

import functools
import html
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from models import registry
from models.base import Backend
from models.types import BackendError, ImagePart
from probes.core.types import Result, Status
from probes.running.store import Store

# Providers whose requests cost money on the server's keys (and so count against the budget).
PAID_PROVIDERS = ("openai", "anthropic")
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@functools.cache
def store() -> Store:
    """One store for the app (thread-safe), under $PROBE_HOME."""
    return Store()


@functools.cache
def endpoints() -> tuple[registry.Endpoint, ...]:
    return registry.load_endpoints()


def model_choices() -> list[tuple[str, str]]:
    """(label, id) for every model we can name, unavailable ones with their reason."""
    choices = []
    for info in registry.catalogue(endpoints()):
        label = info.id if info.available else f"{info.id} (unavailable: {info.reason})"
        choices.append((label, info.id))
    return choices


def session_keys(openai_key: str | None, anthropic_key: str | None) -> dict[str, str]:
    """A visitor's own keys, from password boxes: held only for the request that carries them."""
    keys = {"openai": (openai_key or "").strip(), "anthropic": (anthropic_key or "").strip()}
    return {provider: key for provider, key in keys.items() if key}


def backend_for(model_id: str, keys: dict[str, str]) -> Backend:
    """The backend for a model: with the visitor's own key if they gave one for its provider
    (a new backend, never shared), else the process-wide one on the server's keys."""
    provider = model_id.partition("/")[0]
    if provider in keys:
        return registry.create(model_id, endpoints(), api_key=keys[provider])
    return registry.resolve(model_id, endpoints())


def paid_by_server(model_id: str, keys: dict[str, str]) -> bool:
    provider = model_id.partition("/")[0]
    return provider in PAID_PROVIDERS and provider not in keys


class BudgetExceeded(BackendError):
    pass


class SessionBudget:
    """At most `limit` requests per browser session on the server's keys (PROBE_SESSION_BUDGET);
    no limit when unset. Counted under a lock: concurrent clicks of one session cannot overdraw."""

    def __init__(self, limit: int | None):
        self.limit = limit
        self._spent: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls) -> SessionBudget:
        raw = os.environ.get("PROBE_SESSION_BUDGET", "").strip()
        return cls(int(raw) if raw.isdigit() else None)

    def take(self, session: str, requests: int) -> None:
        if self.limit is None or requests == 0:
            return
        with self._lock:
            spent = self._spent.get(session, 0)
            if spent + requests > self.limit:
                left = max(0, self.limit - spent)
                raise BudgetExceeded(
                    f"this session has used its budget of {self.limit} requests on the server's keys "
                    f"({left} left, {requests} needed): paste your own key under 'API keys' to go on"
                )
            self._spent[session] = spent + requests

    def left(self, session: str) -> int | None:
        if self.limit is None:
            return None
        with self._lock:
            return self.limit - self._spent.get(session, 0)


BUDGET = SessionBudget.from_environment()


def escape(text: str) -> str:
    """Model text for a Markdown component: every character shown as itself, nothing rendered
    (no HTML, no images, no links, no emphasis)."""
    escaped = text or ""
    for character in "\\`*_{}[]()#+-.!|~":
        escaped = escaped.replace(character, "\\" + character)
    # Entities last, so their own `&`, `#` and `;` are never backslashed (a quote would show as
    # "&#x27;"); `>` needs no backslash since it becomes `&gt;`, which starts no quote block.
    escaped = html.escape(escaped, quote=True)
    return escaped.replace("\n", "  \n")


MARKS = {True: "✓ correct", False: "✗ wrong", None: "– not graded"}


def result_summary(result: Result, shown_target: str | None) -> str:
    """One model's verdict as Markdown: status, parsed answer, correctness, latency, tokens.
    Everything the model wrote is escaped."""
    if result.status is Status.ERROR:
        return f"**{escape(result.model)}** · ⚠ error\n\n{escape(result.error or '')}"
    parsed = "—" if result.parsed is None else escape(str(result.parsed))
    lines = [
        f"**{escape(result.model)}** · {MARKS[result.correct]}",
        f"parsed: {parsed} ({result.status.value})",
    ]
    if shown_target is not None:
        lines.append(f"expected: {escape(shown_target)}")
    timing = f"{result.latency:.2f} s" if result.latency is not None else "—"
    tokens = "—" if result.input_tokens is None else f"{result.input_tokens} in / {result.output_tokens} out"
    lines.append(f"latency: {timing} · tokens: {tokens}" + (" · from cache" if result.cached else ""))
    return "  \n".join(lines)


def join_errors(messages: Sequence[str]) -> str:
    return "\n".join(f"⚠ {escape(m)}" for m in messages)


IMAGE_FILES = Path(tempfile.gettempdir()) / "probe-images"


def image_file(part: ImagePart) -> str:
    """A PNG file of an image part, named by its content hash and written once."""
    IMAGE_FILES.mkdir(parents=True, exist_ok=True)
    path = IMAGE_FILES / f"{part.sha256}.png"
    if not path.exists():
        temporary = path.with_suffix(f".{threading.get_ident()}.tmp")
        temporary.write_bytes(part.png_bytes)
        temporary.replace(path)  # atomic: a concurrent reader never sees half a file
    return str(path)
