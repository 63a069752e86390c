"""A simulated observer with a known PSE behind the OpenAI protocol (a `FakeOpenAIServer`): it
recognises each Mueller-Lyer picture it is shown by its pixels, and gives "the top line is
longer" with probability logistic((difference + jitter - pse) / slope), replying with the more
likely option's letter and giving both letters' logprobs. `jitter`: the sd of a per-picture
shift of the difference it perceives (seeded by the picture, so the same picture always looks
the same), as the illusions' jittered nuisance parameters make a real observer's answers vary.
Used by tests/test_cli_adaptive.py and bench/psychometric.py --graded."""

from __future__ import annotations

import base64
import hashlib
import io
import math
import random
import re
import threading
from collections.abc import Mapping, Sequence

from PIL import Image

from probes.core.registry import get_benchmark
from tests.support.fake_servers import FakeOpenAIServer


def pixels_key(image: Image.Image) -> str:
    return hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()


def drawn_differences(params: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Each picture of a Mueller-Lyer sweep (by its pixels) -> the difference it was drawn with."""
    items = get_benchmark("illusion/mueller-lyer", params={k: list(v) for k, v in params.items()}).items()
    return {pixels_key(item.images[0].load()): float(item.params["difference"]) for item in items}


class Observer(FakeOpenAIServer):
    """See the module docstring. `pses`: the PSE of each model name asked; `logprobs="omit"`
    makes it answer with its choice alone."""

    def __init__(self, drawn: dict[str, float], pses: Mapping[str, float], slope: float, jitter: float = 0.0, **kwargs):
        super().__init__(responder=self.reply, alternatives=self.both, **kwargs)
        self.drawn, self.pses, self.slope, self.jitter = drawn, dict(pses), slope, jitter
        self.asking = threading.local()  # the request this handler thread answers (models ask side by side)

    def picture(self, body: dict) -> str:
        parts = body["messages"][-1]["content"]
        url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
        return pixels_key(Image.open(io.BytesIO(base64.b64decode(url.partition(",")[2]))))

    def difference(self, body: dict) -> float:
        return self.drawn[self.picture(body)]

    def p_top(self, body: dict) -> tuple[float, str, str]:
        """P(top longer), and the letters of Top and Bottom as this prompt shows them."""
        key = self.picture(body)
        seen = self.drawn[key] + (random.Random(key).gauss(0, self.jitter) if self.jitter else 0.0)
        text = next(p["text"] for p in body["messages"][-1]["content"] if p["type"] == "text")
        top = re.search(r"^(\w)\. Top$", text, re.M).group(1)
        bottom = re.search(r"^(\w)\. Bottom$", text, re.M).group(1)
        return 1 / (1 + math.exp(-(seen - self.pses[body["model"]]) / self.slope)), top, bottom

    def reply(self, body: dict) -> str:
        p, top, bottom = self.p_top(body)
        return top if p > 0.5 else bottom

    def _logprobs(self, body: dict, text: str) -> dict | None:
        self.asking.body = body
        return super()._logprobs(body, text)

    def both(self, index: int, token: str, tokens: list[str]) -> list[tuple[str, float]]:
        p, top, bottom = self.p_top(self.asking.body)
        p = min(max(p, 1e-9), 1 - 1e-9)
        return sorted([(top, math.log(p)), (bottom, math.log(1 - p))], key=lambda pair: -pair[1])
