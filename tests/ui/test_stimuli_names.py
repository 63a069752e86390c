"""The Stimulus lab's downloaded PNGs have short names (at most 60 characters) made of whole
parameters, the swept ones first, and two different pictures never share one."""

import re

import pytest

from probes.core.registry import generated_families, get_benchmark
from ui.stimuli import MAX_NAME, file_name


@pytest.mark.parametrize("task", list(generated_families()))
def test_names_are_short_whole_and_distinct(task):
    items = get_benchmark(task).items()[:40]
    names = [file_name(task, item) for item in items]
    images = {item.images[0].ref for item in items}
    assert len(set(names)) >= len(images)  # different pictures, different names
    for item, name in zip(items, names, strict=True):
        assert len(name) <= MAX_NAME == 60 and name.endswith(".png")
        head, *parts = name.removesuffix(".png").split("_")
        assert head == task.rpartition("/")[2]
        written = {re.sub(r"[^A-Za-z0-9=.+-]", "", f"{k}={v}") for k, v in item.params.items()}
        assert re.fullmatch(r"[0-9a-f]{4}", parts.pop())  # the item's own mark
        assert parts and all(part in written for part in parts), name  # never a parameter cut mid-word


def test_the_swept_parameter_comes_before_the_fixed_ones():
    item = get_benchmark("illusion/mueller-lyer").items()[0]
    name = file_name("illusion/mueller-lyer", item)
    assert name.startswith(f"mueller-lyer_difference={item.params['difference']}_")
