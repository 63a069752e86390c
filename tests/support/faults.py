"""A seeded plan of provider faults for the fake servers: which requests fail, and how."""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections import Counter

from tests.support.fake_servers import Fault, Reply

KINDS = ("429", "500", "503", "slow", "drop", "invalid-json", "empty")


class FaultPlan:
    """`rate` of requests get a fault of one of `kinds`, decided by the request's content and its
    retry attempt (so the same item fails the same way on the same attempt, run after run, while a
    retry can succeed). Counts what it injected."""

    def __init__(self, rate: float, seed: int = 0, kinds: tuple[str, ...] = KINDS, slow_seconds: float = 3.0,
                 retry_after: int = 1, protocol: str = "openai"):  # fmt: skip
        self.rate = rate
        self.seed = seed
        self.kinds = kinds
        self.slow_seconds = slow_seconds
        self.retry_after = retry_after
        self.protocol = protocol
        self.injected: Counter = Counter()
        self._lock = threading.Lock()
        self.enabled = True

    def __call__(self, record: dict) -> Fault | None:
        if not self.enabled:
            return None
        body = record["body"] or {}
        key = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
        rng = random.Random(f"{self.seed}:{key}:{record['attempt']}")
        if rng.random() >= self.rate:
            return None
        kind = rng.choice(self.kinds)
        with self._lock:
            self.injected[kind] += 1
        if kind == "429":
            return Fault("reply", reply=self._error(429, "rate_limit", {"retry-after": str(self.retry_after)}))
        if kind in ("500", "503"):
            return Fault("reply", reply=self._error(int(kind), "server", {}))
        if kind == "slow":
            return Fault("slow", seconds=self.slow_seconds)
        return Fault(kind)

    def _error(self, status: int, kind: str, headers: dict) -> Reply:
        if self.protocol == "anthropic":
            kinds = {"rate_limit": "rate_limit_error", "server": "api_error"}
            body = {"type": "error", "error": {"type": kinds[kind], "message": f"injected {status}"}}
        else:
            body = {"error": {"message": f"injected {status}", "type": kind, "param": None, "code": None}}
        return Reply(status, body, headers)
