"""The stores bench/scoreboard.py measures, filled here: 100,000 results of one benchmark
(blind/touching-circles, 8 models x 3 modes, grouped by gap; a quarter with answer probabilities)
and a researcher's sweep of a million (the seven illusion/* families x 4 models x every condition,
1,500 items each; a quarter with probabilities), with what each scenario's views are asked."""

from __future__ import annotations

import math
import random

MODELS = [f"provider/model-{n}" for n in range(8)]
MODES = ["0-shot", "4-shot", "4-shot+CoT"]
GAPS = [f"{-0.15 + 0.05 * i:+.2f}" for i in range(14)]
FAMILIES = ["delboeuf", "ebbinghaus", "mueller-lyer", "poggendorff", "ponzo", "vertical-horizontal", "zoellner"]
SWEEP_MODELS = ["openai/gpt-4o", "anthropic/claude-sonnet-4-5", "hf/Qwen/Qwen2.5-VL-7B-Instruct", "ollama/llava:7b"]
SWEEP_MODES = ["0-shot", "4-shot", "0-shot+CoT", "4-shot+CoT"]
PERTURBATIONS = ["none", "no-image", "flip-vertical", "flip-horizontal", "grayscale", "resize-256"]
DIFFERENCES = [round(-0.3 + 0.04 * i, 2) for i in range(16)]
STRENGTHS = ["-30", "-15", "+15", "+30", "+45"]


# --- the stores ------------------------------------------------------------------------------------


PROBABILITY_MODELS = MODELS[:2]  # of the 100,000-result store: the ones whose replies carry probabilities
PROBABILITY_SWEEP_MODEL = "hf/Qwen/Qwen2.5-VL-7B-Instruct"  # of the sweep's: a local model gives them


def _probabilities(rng: random.Random, chosen: str, other: str, sure: float) -> dict:
    """A reply's probabilities as the store keeps them: the chosen answer at `sure`, the mass on
    the item's answers and the alternatives at the answer token (their size, as stored)."""
    mass = rng.uniform(0.9, 0.999)
    return {"probabilities": {chosen: sure, other: 1 - sure}, "probability_mass": mass,
            "alternatives": ((chosen.title(), sure * mass), (other.title(), (1 - sure) * mass), ("The", 0.001))}  # fmt: skip


def fill_circles(store, count: int) -> None:
    """The 100,000-result store: one benchmark, 8 models x 3 modes, two of them with probabilities."""
    from probes.core.types import Result, Status

    rng = random.Random(0)
    sure = random.Random(5)  # the probabilities' own draws: the other results stay as they were
    batch = []
    for n in range(count):
        model, mode = MODELS[n % len(MODELS)], MODES[(n // len(MODELS)) % len(MODES)]
        correct = rng.random() < 0.6
        graded = {}
        if model in PROBABILITY_MODELS:  # an over-confident model: sure of its answer, right 60% of the time
            graded = _probabilities(sure, "yes" if correct else "no", "no" if correct else "yes", sure.uniform(0.55, 1))
        result = Result(
            benchmark="blind/touching-circles", item_id=f"item-{n // (len(MODELS) * len(MODES))}", model=model,
            mode=mode, perturbation="none", status=Status.ANSWERED, reply="Yes" if correct else "No",
            parsed="yes" if correct or not graded else "no", correct=correct, score=float(correct), target="yes",
            latency=rng.uniform(0.2, 3.0), groups={"prompt": "touching", "gap": GAPS[n % 14], "canvas": "384"},
            cache_key=f"k{n}", **graded,
        )  # fmt: skip
        batch.append((result, None, ""))
        if len(batch) == 5000:
            store.record_many(batch)
            batch = []
    store.record_many(batch)


def sweep_results(count: int, seed: int = 1):
    """The researcher's sweep, as the runner stores it: `count` results over the seven illusions,
    every model in every condition, answers from an observer fooled by the inducers."""
    from probes.core.types import ItemRef, Origin, Result, Status

    rng = random.Random(seed)
    sure = random.Random(seed + 100)  # the probabilities' own draws: the other results stay as they were
    per_item = len(SWEEP_MODELS) * len(SWEEP_MODES) * len(PERTURBATIONS)
    items = math.ceil(count / (len(FAMILIES) * per_item))
    made = 0
    for family in FAMILIES:
        benchmark = f"illusion/{family}"
        for item in range(items):
            difference = DIFFERENCES[item % len(DIFFERENCES)]
            inducers = ("with", "flipped", "none")[(item // len(DIFFERENCES)) % 3]
            polarity = {"with": 1, "flipped": -1, "none": 0}[inducers]
            strength = "none" if inducers == "none" else STRENGTHS[(item // 48) % len(STRENGTHS)]
            groups = {"prompt": ("longer", "shorter")[item % 2], "design": "grid", "difference": f"{difference:+.2f}",
                      "illusion_strength": strength, "inducers": inducers, "canvas": "384",
                      "congruence": "neutral" if polarity == 0 else ("congruent" if polarity * difference > 0
                                                                     else "incongruent")}  # fmt: skip
            params = {"difference": difference, "polarity": polarity, "positive_answer": 0}
            for model in SWEEP_MODELS:
                for mode in SWEEP_MODES:
                    for perturbation in PERTURBATIONS:
                        if made == count:
                            return
                        made += 1
                        status = Status.ANSWERED
                        seen = 1 / (1 + math.exp(-(difference - 0.05 * polarity) / 0.06))
                        chosen = rng.random() < seen
                        roll = rng.random()
                        if roll < 0.01:
                            status = Status.ERROR
                        elif roll < 0.03:
                            status = Status.UNPARSED
                        elif roll < 0.035:
                            status = Status.REFUSED
                        ungraded = "no right answer under this condition" if (
                            perturbation == "flip-vertical" and family in ("mueller-lyer", "ponzo")) else None  # fmt: skip
                        right = status is Status.ANSWERED and chosen == (difference > 0)
                        graded = status is not Status.ERROR and ungraded is None
                        p = {}
                        if model == PROBABILITY_SWEEP_MODEL and status is not Status.ERROR:
                            # The observer's own probability of the positive target, a little noisy.
                            positive = min(0.999, max(0.001, seen + sure.uniform(-0.05, 0.05)))
                            p = _probabilities(sure, "0", "1", positive)
                        yield Result(
                            benchmark, f"ml-{item}", model, mode, perturbation, status,
                            reply="Top" if chosen else "Bottom", parsed=0 if chosen else 1,
                            correct=right if graded else None, score=float(right) if graded else None,
                            target=0 if difference > 0 else 1, groups=groups,
                            latency=None if status is Status.ERROR else rng.uniform(0.3, 9.0),
                            ungraded=ungraded, error="timeout" if status is Status.ERROR else None,
                            item_ref=ItemRef(benchmark, f"ml-{item}", Origin.RUN, params=params),
                            cache_key=f"{benchmark}/{item}/{model}/{mode}/{perturbation}", **p,
                        )  # fmt: skip


def fill_sweep(store, count: int) -> None:
    """The million-result store: the sweep, then three people on two families and a few probe clicks."""
    from probes.core.types import ItemRef, Origin, Result, Status

    batch = []
    for result in sweep_results(count):
        batch.append((result, None, ""))
        if len(batch) == 5000:
            store.record_many(batch)
            batch = []
    rng = random.Random(2)
    for person in ("Ada", "Bo", "Cy"):
        for family in ("mueller-lyer", "ponzo"):
            for item in range(96):
                difference = DIFFERENCES[item % len(DIFFERENCES)]
                right = rng.random() < 0.8
                batch.append((Result(f"illusion/{family}", f"ml-{item}", f"human/{person}", "human", "none",
                                     Status.ANSWERED, correct=right, score=float(right), latency=rng.uniform(1, 4),
                                     groups={"difference": f"{difference:+.2f}", "inducers": "with"},
                                     item_ref=ItemRef(f"illusion/{family}", f"ml-{item}", Origin.HUMAN,
                                                      params={"difference": difference, "polarity": 1,
                                                              "positive_answer": 0})), None, ""))  # fmt: skip
    for n in range(5):
        batch.append((Result("illusion/ponzo", f"ml-{n}", "openai/gpt-4o-mini", "0-shot", "none", Status.ANSWERED,
                             correct=True, score=1.0, item_ref=ItemRef("illusion/ponzo", f"ml-{n}", Origin.PROBE)),
                      None, ""))  # fmt: skip
    store.record_many(batch)


SCENARIOS = {
    "circles": {
        "fill": fill_circles, "benchmark": "blind/touching-circles", "other": None, "group": "gap",
        "models": MODELS[:2], "mode": "4-shot", "perturbation": "none", "curves": ("difference", "gap"),
        "compare": ("modes", "0-shot", ["4-shot", "4-shot+CoT"]), "agreement": (MODELS[0], ["0-shot", "4-shot"]),
        "fit": None,  # its items hold no numeric parameter to fit against
    },
    "sweep": {
        "fill": fill_sweep, "benchmark": None, "other": "illusion/zoellner", "group": "difference",
        "models": SWEEP_MODELS[:2], "mode": "0-shot+CoT", "perturbation": "grayscale", "curves": ("difference",),
        "compare": ("models", SWEEP_MODELS[0], SWEEP_MODELS[1:3]), "agreement": (SWEEP_MODELS[0], SWEEP_MODES[:2]),
        "fit": "difference",
    },
}  # fmt: skip


def scenario_of(size: int) -> dict:
    """The 100,000-result store is the harness's older one (one benchmark); any other size is the sweep."""
    return SCENARIOS["circles" if size == 100_000 else "sweep"]
