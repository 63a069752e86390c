"""What the Probe stage holds of a large upload: a copy at most STAGE_MAX_SIDE a side (the models
get the original file), and the prompts' thumbnails leave no decoded picture behind."""

from __future__ import annotations

from PIL import Image

from probes.benchmarks.custom import UploadSet
from ui import probe
from ui.probe import STAGE_MAX_SIDE


def test_a_large_upload_is_shown_smaller_and_sent_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_HOME", str(tmp_path / "home"))
    paths = []
    for number, size in enumerate([(4000, 3000), (600, 400)]):
        paths.append(tmp_path / f"upload{number}.png")
        Image.new("RGB", size, (number * 90, 40, 200)).save(paths[-1])
    stage = probe.upload_item([str(p) for p in paths], "Which is bluer?", "", "")
    shown = [update["value"] for update in stage[1:3]]
    assert shown[0].size == (STAGE_MAX_SIDE, STAGE_MAX_SIDE * 3 // 4)
    assert shown[1].size == (600, 400)  # small enough: as it is

    benchmark = UploadSet.from_files(paths, "Which is bluer?", [], "")
    item = benchmark.items()[0]
    view = probe.sent_by_condition(benchmark, item, ["as asked"])
    parts = [part for message in view["as asked"].messages for part in message.images]
    assert [p.sha256 for p in parts] and all(not p._memo.get("image") for p in parts)
    html = probe.prompts_html(view)
    assert html.count('class="prompt-image"') == 2
    assert all("image" not in p._memo and "rows" not in p._memo for p in parts)
