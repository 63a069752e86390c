"""The Look-alikes tab in a real browser: a handful of uploaded images, tiny random CLIP and
DINOv2 models built by the test, the quadruples shown as contact sheets with their similarities
and the DiscriBench-layout folder offered as a zip; off in public mode."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from tests.support.tiny_encoders import build_tiny_clip, build_tiny_dino
from tests.ui.conftest import screenshot


@pytest.fixture(scope="module")
def encoders(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("encoders")
    return build_tiny_clip(root / "clip"), build_tiny_dino(root / "dino")


def photos(folder: Path, count: int) -> list[str]:
    folder.mkdir(parents=True)
    base = np.random.default_rng(1).integers(0, 255, (40, 48, 3))
    paths = []
    for i in range(count):
        noise = np.random.default_rng(100 + i).normal(0, 10 + 5 * i, base.shape)
        path = folder / f"p{i:02d}.png"
        Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8)).save(path)
        paths.append(str(path))
    return paths


def fill(page, elem_id: str, value: str) -> None:
    page.locator(f"#{elem_id} input, #{elem_id} textarea").first.fill(value)


def test_uploaded_images_give_quadruples_with_their_sheets_and_a_zip(serve, page, tmp_path, encoders):
    clip, dino = encoders
    page.goto(serve())
    page.get_by_role("tab", name="Look-alikes").click()
    page.locator("#mine-files input[type=file]").set_input_files(photos(tmp_path / "photos", 8))
    expect(page.locator("#mine-files")).to_contain_text("p07")
    fill(page, "mine-clip", str(clip))
    fill(page, "mine-dino", str(dino))
    fill(page, "mine-clip-min", "-1")  # every set qualifies: the search itself is tested on planted vectors
    fill(page, "mine-dino-max", "1")
    page.click("#mine-start")
    expect(page.locator("#mine-status")).to_contain_text("2 quadruple(s)")
    expect(page.locator("#mine-sheets img")).to_have_count(2)
    link = page.locator("#mine-zip a").first
    expect(link).to_be_visible()
    with page.expect_download() as started:
        link.click()
    archive = tmp_path / "lookalikes.zip"
    started.value.save_as(archive)
    names = zipfile.ZipFile(archive).namelist()
    assert "discribench_en_200.jsonl" in names and sum(n.startswith("contact_sheets/") for n in names) == 2
    screenshot(page, tmp_path, "mining")


def test_the_tab_is_off_in_public_mode(serve, page):
    page.goto(serve(PROBE_PUBLIC="1"))
    page.get_by_role("tab", name="Look-alikes").click()
    expect(page.locator("#mine-off")).to_contain_text("off on this public playground")
    expect(page.locator("#mine-start")).to_have_count(0)
