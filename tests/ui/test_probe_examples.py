"""The Probe tab's Examples: each one builds an item of its family, and the thumbnails kept in
assets/examples are what the generators draw today (`python -m ui.examples` redraws them)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from ui import examples
from ui.items import resolve


@pytest.mark.parametrize("example", examples.EXAMPLES, ids=[e.title for e in examples.EXAMPLES])
def test_each_example_is_an_item_of_its_family_and_its_thumbnail_is_current(example):
    benchmark, item = resolve(examples.spec_of(example))
    if example.benchmark:
        assert benchmark.id == example.benchmark
        assert item.target is not None  # generated: an answer key to grade against
    kept = np.asarray(Image.open(examples.thumbnail_path(example)).convert("RGB"), dtype=np.int16)
    drawn = np.asarray(examples.draw_thumbnail(example), dtype=np.int16)
    assert kept.shape == drawn.shape
    assert np.abs(kept - drawn).max() <= 2, "assets/examples is stale: run python -m ui.examples"


def test_there_are_at_least_eight_across_the_families():
    families = {e.benchmark.split("/")[0] for e in examples.EXAMPLES if e.benchmark}
    assert len(examples.EXAMPLES) >= 8 and {"blind", "illusion"} <= families
    assert any(e.upload for e in examples.EXAMPLES)
