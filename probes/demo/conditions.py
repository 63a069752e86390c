"""The Probe tab's conditions: each one change from the item as asked, with the settings of a
Probe request (as `python -m probes run` with seed 0, so the command line, Evaluate and the Probe
tab share the cache)."""

from __future__ import annotations

from models.types import GenerateConfig
from probes.core.types import Condition, Mode

CONDITIONS: dict[str, Condition] = {
    "as asked": Condition(Mode(), "none"),
    "4-shot": Condition(Mode(4), "none"),
    "chain of thought": Condition(Mode(0, True), "none"),
    "upside down": Condition(Mode(), "flip-vertical"),
    "mirror": Condition(Mode(), "flip-horizontal"),
    "grayscale": Condition(Mode(), "grayscale"),
    "smaller (256 px)": Condition(Mode(), "resize-256"),
    "no image": Condition(Mode(), "no-image"),
    "options rotated": Condition(Mode(), "rotate-options-1"),
}


def probe_config(condition: Condition) -> GenerateConfig:
    """The settings of a Probe tab request."""
    return GenerateConfig(max_tokens=condition.mode.max_tokens, seed=0)
