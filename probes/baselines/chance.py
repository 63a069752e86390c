"""baseline/chance: a seeded uniform guess over the item's well-formed answers, the chance row
made real.

The same seed and the same prompt always give the same guess, so a chance run is as repeatable
(and as cacheable) as a greedy model's.
"""

from __future__ import annotations

import random

from models.types import GenerateConfig, Output, ProviderError
from probes.asking.prompting import Prompt
from probes.baselines.base import ItemBaseline
from probes.core.types import Item


class ChanceBaseline(ItemBaseline):
    model_id = "baseline/chance"
    default_concurrency = 64

    async def answer(self, item: Item, prompt: Prompt, config: GenerateConfig) -> Output:
        answers = item.possible_answers()
        if not answers:
            raise ProviderError("baseline/chance needs the item's answer space; this item has none")
        rng = random.Random(f"{config.seed}:{prompt.hash}")
        return Output(text=rng.choice(list(answers)), latency=0.0)
