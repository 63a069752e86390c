"""baseline/pixels on illusion/*: the geometry-only observer measures the red targets in the
picture, is right on every item whose difference survives rendering, and is not fooled: the
psychometric fit puts its point of subjective equality at 0 under both inducer polarities, where
an observer fooled by the inducers shows an illusion of the right sign."""

from __future__ import annotations

import random

import pytest
from PIL import Image

from probes.analysis.psychometric import magnitude_rows
from probes.baselines.pixels.illusions import answer
from probes.baselines.pixels.imaging import AnalysisError
from probes.core.registry import get_benchmark
from probes.core.types import ItemRef, Result, Status
from probes.reading.parsing import parse_item_reply
from probes.stimuli.illusions import FAMILIES


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_geometry_only_observer_is_right_wherever_the_difference_survives(family):
    benchmark = get_benchmark(f"illusion/{family}")
    items = benchmark.items()[::9]
    for item in items:
        reply, measured = answer(item.benchmark, item.question, item.options, item.images[0].load())
        parsed = parse_item_reply(reply, item)
        assert parsed.status is Status.ANSWERED and parsed.value == item.target, (item.id, reply, measured)
        assert measured["measured_favours"] == item.params["measured_favours"]


def test_equal_targets_get_the_first_option_so_the_orders_split_evenly():
    benchmark = get_benchmark(
        "illusion/ebbinghaus", params={"difference": ["0"], "canvas": ["384"], "illusion_strength": ["1"]}
    )
    items = benchmark.items()
    assert items and all(item.target is None for item in items)
    choices = []
    for item in items:
        reply, _ = answer(item.benchmark, item.question, item.options, item.images[0].load())
        assert reply == item.options[0]
        choices.append(parse_item_reply(reply, item).value == item.params["positive_answer"])
    assert sum(choices) == len(choices) / 2


def test_a_picture_without_two_red_targets_is_refused_with_a_reason():
    blank = Image.new("RGB", (384, 384), "white")
    with pytest.raises(AnalysisError, match="no red target"):
        answer("illusion/ponzo", "Which red line is longer?", ("Top", "Bottom"), blank)
    with pytest.raises(AnalysisError, match="not an illusion benchmark"):
        answer("blind/grid-count", "?", ("Top", "Bottom"), blank)
    with pytest.raises(AnalysisError, match="picture"):
        answer("illusion/ponzo", "?", ("Top", "Bottom"), b"not an image")


def _result(item, value, model: str) -> Result:
    return Result(
        benchmark=item.benchmark,
        item_id=item.id,
        model=model,
        mode="0-shot",
        perturbation="none",
        status=Status.ANSWERED,
        parsed=value,
        item_ref=ItemRef.of(item),
    )


def test_fits_read_these_items_the_observer_is_not_fooled_and_a_fooled_one_is():
    benchmark = get_benchmark(
        "illusion/mueller-lyer",
        params={"illusion_strength": ["28"], "canvas": ["384"], "seed": ["0", "1", "2", "3"]},
    )
    items = [item for item in benchmark.items() if item.params["inducers"] != "none"]
    rng = random.Random(5)
    results = []
    for item in items:
        reply, _ = answer(item.benchmark, item.question, item.options, item.images[0].load())
        results.append(_result(item, parse_item_reply(reply, item).value, "baseline/pixels"))
        # A fooled observer: the inducers subtract 0.1 from the difference it sees under +1.
        seen = item.params["difference"] - 0.1 * item.params["polarity"] + rng.gauss(0, 0.08)
        chosen = item.params["positive_answer"] if seen > 0 else 1 - item.params["positive_answer"]
        results.append(_result(item, chosen, "fooled"))
    rows = {row.model: row for row in magnitude_rows(results, "difference", resamples=200)}
    fooled = rows["fooled"]
    assert fooled.magnitude_low <= 0.1 <= fooled.magnitude_high and fooled.magnitude_low > 0
    observer = rows["baseline/pixels"]
    plus, minus = observer.fits["+1"], observer.fits["-1"]
    # Always right: each curve is a step between the two smallest differences around 0.
    assert plus.pse_low <= 0 <= plus.pse_high and minus.pse_low <= 0 <= minus.pse_high
    assert abs(plus.pse) < 0.1 and abs(minus.pse) < 0.1
