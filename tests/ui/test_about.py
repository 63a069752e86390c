"""The About tab lists every probe family the playground runs, the illusions and the offline
answerers among them, from the code (a new figure appears without an edit)."""

from probes.baselines.pixels.questions import KNOWN
from probes.core.registry import benchmark_ids
from ui.about import about_text


def test_about_lists_every_family_and_both_offline_answerers():
    text = about_text()
    table = [line for line in text.splitlines() if line.startswith("| **")]
    families = {benchmark.split("/")[0] for benchmark in benchmark_ids()}
    for family in families:
        assert any(f"`{family}" in row for row in table), family
    illusions = [b for b in benchmark_ids() if b.startswith("illusion/")]
    assert len(illusions) == 7
    row = next(row for row in table if "Parametric illusions" in row)
    assert all(f"`{benchmark}`" in row for benchmark in illusions) and "7 figures" in row
    pixels = next(line for line in text.splitlines() if line.startswith("- `baseline/pixels`"))
    paragraph = text[text.index(pixels) :].split("\n- ")[0]
    assert all(benchmark in paragraph for benchmark in illusions) and KNOWN.split(",")[0] in paragraph
    assert "`baseline/chance`" in text
