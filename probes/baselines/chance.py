"""Offline answerers that need no weights, no key and no network."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence

from models.types import GenerateConfig, Message, Output, ProviderError, canonical


class ChanceBackend:
    """A seeded uniform guess over the item's well-formed answers: the chance row, made real.

    The same seed and the same prompt always give the same guess, so a chance run is as
    repeatable (and as cacheable) as a greedy model's.
    """

    model_id = "baseline/chance"
    endpoint = "local"
    default_concurrency = 64

    def check(self) -> None:
        return None

    async def generate(
        self,
        messages: Sequence[Message],
        config: GenerateConfig,
        answer_space: Sequence[str] | None = None,
    ) -> Output:
        if not answer_space:
            raise ProviderError("baseline/chance needs the item's answer space; this item has none")
        prompt = hashlib.sha256(json.dumps(canonical(messages), sort_keys=True).encode()).hexdigest()
        rng = random.Random(f"{config.seed}:{prompt}")
        return Output(text=rng.choice(list(answer_space)), latency=0.0)
