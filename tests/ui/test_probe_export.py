"""A probe's grid exported for slides, from the Probe tab after Ask: a PNG (picture, question,
each model's answer per condition) and a CSV (one row per model x condition) that say exactly
what the grid on the page says, under short file names."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
from PIL import Image
from playwright.sync_api import expect

from probes.files.spreadsheet import inert
from tests.ui.conftest import screenshot
from tests.ui.test_probe_tab import choose_model, tick
from ui.probe import export as probe_export
from ui.probe.export import COLOURS, WIDTH, cut_words

GRID_CELLS = """() => [...document.querySelectorAll('#probe-grid tbody tr')].flatMap((row) => {
  const heads = [...document.querySelectorAll('#probe-grid thead th.condition')].map((th) => th.childNodes[0].textContent.trim());
  const model = row.querySelector('th.model').textContent.trim();
  return [...row.querySelectorAll('td.cell')].map((td, i) => ({model, condition: heads[i],
    classes: td.className, head: td.querySelector('b').textContent.trim(),
    small: [...td.querySelectorAll('small')].map((s) => s.textContent.trim())}));
})"""
VERDICT_CLASS = {"right": "right", "wrong": "wrong", "ungraded": "ungraded", "failed": "failed",
                 "no reply": "failed", "does not apply": "na", "refused": "refused", "cannot answer": "cannot"}  # fmt: skip


def _download(page, selector: str, tmp_path):
    with page.expect_download() as info:
        page.click(selector)
    download = info.value
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    return download.suggested_filename, path


def test_a_grid_exports_as_a_png_for_slides_and_a_csv_row_per_cell(serve, page, tmp_path):
    page.goto(serve())
    expect(page.locator("#probe-item-text")).to_contain_text("Are the two circles touching")
    expect(page.locator("#probe-png")).to_be_hidden()  # nothing to export before Ask
    choose_model(page, 2, "nosuch/model")  # a model no provider knows: its row fails
    tick(page, "upside down")
    page.click("#probe-ask")
    # The unknown model's cells fail at once and are counted as failed, not as answered.
    expect(page.locator("#probe-status")).to_contain_text(re.compile(r"\b4 of 6 answered\b.* · 2 failed · "))
    expect(page.locator("#probe-png")).to_be_visible()
    expect(page.locator("#probe-csv")).to_be_visible()
    screenshot(page, tmp_path, "export-buttons")
    cells = page.evaluate(GRID_CELLS)
    assert len(cells) == 6

    csv_name, csv_path = _download(page, "#probe-csv", tmp_path)
    png_name, png_path = _download(page, "#probe-png", tmp_path)
    for name in (csv_name, png_name):
        assert len(name) < 60 and name.startswith("probe-blind-touching-circles-item"), name
    assert csv_name.removesuffix(".csv") == png_name.removesuffix(".png")

    rows = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8"))))
    assert [(r["model"], r["condition"]) for r in rows] == [(c["model"], c["condition"]) for c in cells]
    for row, cell in zip(rows, cells, strict=True):
        # The verdict is the cell's colour; the answer is what the cell shows after its mark.
        assert VERDICT_CLASS[row["verdict"]] in cell["classes"].split(), (row, cell)
        if row["verdict"] in ("right", "wrong", "ungraded"):
            assert cell["head"][1:].strip() == row["answer"] and row["answer"] in ("Yes", "No"), (row, cell)
            assert any(s.startswith(f"{float(row['latency_s']):.2f} s") for s in cell["small"]), (row, cell)
        else:
            assert row["answer"] == "" and row["note"] and row["note"] in cell["small"], (row, cell)
    assert {r["verdict"] for r in rows if r["model"] == "nosuch/model"} == {"failed"}
    assert {r["verdict"] for r in rows if r["model"] == "baseline/pixels"} == {"right"}  # it measures the gap

    picture = Image.open(png_path)
    picture.load()
    assert picture.format == "PNG" and picture.width == WIDTH and 500 <= picture.height <= 2000
    pixels = np.asarray(picture.convert("RGB")).astype(int)
    # Top left: the item's picture, its blue and magenta circles.
    top_left = pixels[:560, :560]
    blue = ((top_left[..., 2] > 200) & (top_left[..., 0] < 60) & (top_left[..., 1] < 160)).sum()
    magenta = ((top_left[..., 0] > 200) & (top_left[..., 2] > 200) & (top_left[..., 1] < 60)).sum()
    assert blue > 1000 and magenta > 1000, (blue, magenta)
    # Below it, the grid: a green cell for each right answer (pixels' two) and an amber one for each failure.
    grid = pixels[560:]
    green = (np.abs(grid - np.array(COLOURS["right"])).sum(axis=2) == 0).sum()
    amber = (np.abs(grid - np.array(probe_export.OTHER)).sum(axis=2) == 0).sum()
    assert green > 2 * 10_000 and amber > 2 * 10_000, (green, amber)
    # And text: dark pixels in the question's place beside the picture and in every row.
    dark = pixels.sum(axis=2) < 200
    assert dark[:200, 600:].sum() > 500
    rows_dark = [dark[y : y + 40].sum() for y in range(560, picture.height - 40, 40)]
    assert sum(1 for d in rows_dark if d > 100) >= 3


def test_file_names_are_cut_between_words():
    words = ["probe", "illusion", "mueller", "lyer", "very", "long", "name", "item123", "4models"]
    assert cut_words(words, 30) == "probe-illusion-mueller-lyer"  # "-very" would pass 30: cut before it
    assert cut_words(["probe", "blind", "touching-circles", "item3", "2models"], 56) == (
        "probe-blind-touching-circles-item3-2models"
    )
    assert cut_words(["x" * 80], 56) == "x" * 56  # a single word longer than the limit is cut, once


def test_model_text_never_becomes_a_spreadsheet_formula():
    # The rule is the one every CSV download shares (tests/probes/test_spreadsheet.py, and each
    # download through its handler in tests/ui/test_csv_downloads.py).
    assert inert('=HYPERLINK("http://example.invalid")').startswith("'=")
    assert inert("-1+2") == "'-1+2"
    assert inert("Yes") == "Yes"
