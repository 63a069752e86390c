"""What every backend offers, and the few helpers they share."""

from __future__ import annotations

import asyncio
import os
import re
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from models.secrets import REDACTED, redact_secrets
from models.types import GenerateConfig, Message, Output


class Backend(ABC):
    """One model behind one provider. Subclasses set `model_id` and `endpoint` and write
    `generate`; the optional capabilities below have defaults that do nothing, so a caller never
    needs to ask whether a backend has them."""

    model_id: str  # "provider/model", as users type it
    endpoint: str  # where requests go; part of the cache key, never holds a secret
    default_concurrency: int = 4  # requests in flight at once unless the user says otherwise
    # How images go over the wire: `models.types.PNG_FAST` for the API backends (a runner can then
    # encode an image once, the first time it sees it, and keep only the bytes); None for
    # backends that read pixels (local models, baselines).
    image_encoding: str | None = None
    # Whether replies can carry probabilities (GenerateConfig.probabilities, `score`): a run
    # asks a cached reply again for them only where they can come.
    offers_probabilities: bool = False

    def check(self) -> None:
        """Raise `Unavailable` (with what to do) if this model cannot run here. Sends nothing."""
        return None

    def notes(self) -> str:
        """What to expect of an available model ("weights download on first use"), or ""."""
        return ""

    def probabilities_note(self) -> str:
        """Why this model's replies carry no probabilities, once it is known (a provider that
        offers none, a server that refused them), or ""."""
        return "" if self.offers_probabilities else f"{self.model_id} offers no answer probabilities"

    async def score(
        self, messages: Sequence[Message], prefix: str, candidates: Sequence[str]
    ) -> dict[str, float] | None:
        """The probability that the reply to `messages`, once it has said `prefix`, goes on with
        each candidate, as disjoint events (a candidate another extends counts without it), or
        None where the backend cannot score. Candidates spelled by the same tokens count once
        (the first named)."""
        return None

    def warm_up(self) -> None:
        """Blocking preparation before a run (local models load their weights); raises Unavailable."""
        return None

    def hold(self) -> None:
        """A run starts using this backend's connections on the running loop."""
        return None

    async def release(self) -> None:
        """A run is done with them; the last one out closes them."""
        return None

    @abstractmethod
    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Output:
        """One reply. Raises `BackendError` (typed) when no reply could be had; never returns
        placeholder text."""


T = TypeVar("T")

_KEY_SHAPES = re.compile(r"\b(sk|pk|key|hf|sess)[-_][A-Za-z0-9_\-]{6,}|\bsk-ant-[A-Za-z0-9_\-]{6,}")
# Variables that hold secrets: the providers' (OPENAI_API_KEY, ANTHROPIC_API_KEY, HF_TOKEN) and
# a models file's own (README's example names its variable MY_SERVER_KEY).
_SECRET_VARIABLE_ENDINGS = ("_KEY", "_TOKEN", "_SECRET", "PASSWORD")


def known_secrets(extra_secrets: Sequence[str] = ()) -> list[str]:
    """Every secret in the environment, and `extra_secrets` (a key typed for one session)."""
    found = [v for k, v in os.environ.items() if k.upper().endswith(_SECRET_VARIABLE_ENDINGS) and len(v) >= 6]
    return found + [s for s in extra_secrets if s and len(s) >= 6]


def redact(text: str, extra_secrets: Sequence[str] = ()) -> str:
    """Remove anything that looks like a credential before text reaches a user, log or store:
    every secret in the environment and `extra_secrets` in any form a server could send it back
    (see models/secrets.py), and whatever has the shape of a key."""
    return redact_known(text, known_secrets(extra_secrets))


def redact_known(text: str, secrets: Sequence[str]) -> str:
    """`redact` with the secrets already gathered (`known_secrets`), for many texts at once."""
    return _KEY_SHAPES.sub(REDACTED, redact_secrets(text, secrets))


class LoopLocal(Generic[T]):
    """One SDK client per event loop: async HTTP clients must not cross loops (the CLI and the
    Gradio server each run their own). Runs on one loop share its client; the last run to let go
    closes it, so one run ending never cuts another's requests."""

    def __init__(self, factory: Callable[[], T]):
        self._factory = factory
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()
        self._holders: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, int] = weakref.WeakKeyDictionary()

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._factory()
        return client

    def hold(self) -> None:
        loop = asyncio.get_running_loop()
        self._holders[loop] = self._holders.get(loop, 0) + 1

    async def release(self) -> None:
        """Let go; close this loop's client (its connections) when nobody holds it any more."""
        loop = asyncio.get_running_loop()
        left = self._holders.get(loop, 1) - 1
        if left > 0:
            self._holders[loop] = left
            return
        self._holders.pop(loop, None)
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.close()
