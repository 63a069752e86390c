"""The Stimulus lab in a real browser: controls per parameter, live preview with the generator's
ground truth, the PNG to download, a set exported as a zip in the `generate` layout."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import gradio as gr
from PIL import Image
from playwright.sync_api import expect

from tests.ui.conftest import screenshot


def open_lab(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("tab", name="Stimulus lab").click()
    expect(page.locator("#stim-image img")).to_be_visible()


def choose(page, elem_id: str, value: str) -> None:
    """Pick a dropdown option as a person does: open the list, click the option."""
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=value, exact=True).click()


def set_number(page, elem_id: str, value: float) -> None:
    """Type into a slider's number box (or a number field) and leave it: one redraw, not one
    per step."""
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.blur()


def image_src(page) -> str:
    return page.locator("#stim-image img").get_attribute("src") or ""


def test_touching_circles_preview_truth_download_and_export(serve, page, tmp_path):
    open_lab(page, serve())
    expect(page.locator("#stim-param-gap")).to_be_visible()
    choose(page, "stim-param-prompt", "overlapping")
    expect(page.locator("#stim-question")).to_contain_text("Are the two circles overlapping?")

    set_number(page, "stim-param-canvas", 500)  # between the paper's 384 and 769
    set_number(page, "stim-param-gap", -0.1)
    expect(page.locator("#stim-answer")).to_contain_text("Ground truth: Yes")
    expect(page.locator("#stim-values")).to_contain_text("-0.1")
    overlapping = image_src(page)

    set_number(page, "stim-param-gap", 0.3)
    expect(page.locator("#stim-answer")).to_contain_text("Ground truth: No")
    expect(page.locator("#stim-image img")).not_to_have_attribute("src", overlapping)
    screenshot(page, tmp_path, "stimuli")

    with page.expect_download() as started:
        page.click("#stim-download")
    download = started.value
    assert download.suggested_filename.startswith("touching-circles_canvas=500")
    assert "gap=0.3" in download.suggested_filename and download.suggested_filename.endswith(".png")
    png = Path(download.path()).read_bytes()
    with Image.open(io.BytesIO(png)) as image:
        assert image.format == "PNG" and image.size == (500, 500)

    # The controls moved are ticked to stay fixed; the export draws the rest from the design.
    for name in ("canvas", "gap", "prompt"):
        expect(page.locator("#stim-fixed").get_by_label(name, exact=True)).to_be_checked()
    expect(page.locator("#stim-fixed").get_by_label("orientation", exact=True)).not_to_be_checked()
    page.locator("#stim-fixed").get_by_label("prompt", exact=True).uncheck()  # both wordings, then
    set_number(page, "stim-n", 5)
    page.click("#stim-export")
    expect(page.locator("#stim-export-status")).to_contain_text("Exported 5 items")
    expect(page.locator("#stim-command input, #stim-command textarea").first).to_have_value(
        "python -m probes generate blind/touching-circles --n 5 --seed 0 --param canvas=500 --param gap=0.3 --out OUT"
    )
    with page.expect_download() as started:
        page.locator("#stim-zip a").first.click()
    with zipfile.ZipFile(started.value.path()) as bundle:
        names = bundle.namelist()
        rows = [json.loads(line) for line in bundle.read("metadata.jsonl").decode().splitlines()]
    assert sorted(n for n in names if n.endswith(".png")) == [f"{i:05d}.png" for i in range(5)]
    assert len(rows) == 5 and {r["file_name"] for r in rows} == {f"{i:05d}.png" for i in range(5)}
    assert {(r["canvas"], r["gap"], r["answer"]) for r in rows} == {(500, 0.3, "No")}
    assert len({(r["orientation"], r["diameter"], r["prompt_name"]) for r in rows}) == 5  # the rest vary


def test_another_task_brings_its_own_controls_and_an_invalid_choice_says_why(serve, page):
    open_lab(page, serve())
    choose(page, "stim-task", "blind/nested-squares")
    expect(page.locator("#stim-param-depth")).to_be_visible()
    expect(page.locator("#stim-param-gap")).to_have_count(0)
    expect(page.locator("#stim-question")).to_contain_text("squares")
    set_number(page, "stim-param-depth", 4)
    expect(page.locator("#stim-answer")).to_contain_text("Ground truth: 4")
    expect(page.locator("#stim-status")).to_contain_text("give 10 stimuli")
    first = image_src(page)
    set_number(page, "stim-variant", 3)
    expect(page.locator("#stim-status")).to_contain_text("showing variant 3")
    expect(page.locator("#stim-image img")).not_to_have_attribute("src", first)
    expect(page.locator("#stim-answer")).to_contain_text("Ground truth: 4")

    choose(page, "stim-task", "blind/grid-count")
    expect(page.locator("#stim-param-shape")).to_be_visible()
    choose(page, "stim-param-shape", "tall")
    set_number(page, "stim-param-n", 15)  # a 15-row tall grid is past the generator's limit
    expect(page.locator("#stim-status")).to_contain_text("no grid of these n and shapes stays within 15 rows")
    expect(page.locator("#stim-answer")).not_to_contain_text("Ground truth")
    expect(page.locator("#stim-image img")).to_have_count(0)


def test_every_generated_task_gets_a_control_per_parameter_and_draws_its_defaults():
    from ui import stimuli
    from ui.items import generated_ids

    for task in generated_ids():
        params = stimuli.task_params(task)
        spec = stimuli.default_spec(task)
        assert list(spec["params"]) == list(params) and "prompt" in params
        for name, param in params.items():
            widget = stimuli.control(task, name, param)
            if isinstance(widget, gr.Slider):  # spans the paper's values
                assert (
                    widget.minimum <= min(map(float, param.default)) <= max(map(float, param.default)) <= widget.maximum
                )
        image, question, answer, values, _, status = stimuli.preview(spec, 0)
        assert image and question and answer.startswith("Ground truth:") and not status.startswith("⚠"), task
        assert values["answer"] and Image.open(image).format == "PNG"
