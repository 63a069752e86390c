"""The two ways the playground grows, each one declaration with no UI edit: a new provider (its
model in `python -m probes models`, its key box in the Probe and Evaluate tabs) and a new
generated family outside blind/ (in the Probe, Stimulus lab and Human tabs)."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from PIL import Image, ImageDraw
from playwright.sync_api import expect

from models import registry
from models.base import Backend
from models.types import GenerateConfig, Message, Output, Unavailable
from probes.benchmarks.generated import EXAMPLE_SEED_BASE, GeneratedBenchmark, Param
from probes.cli import commands
from probes.core import registry as benchmarks
from probes.core.types import AnswerKind
from tests.ui.conftest import screenshot


class ToyBackend(Backend):
    """A provider's backend in a dozen lines: it needs TOY_API_KEY and echoes "1"."""

    endpoint = "toy://nowhere"

    def __init__(self, model_id: str, api_key: str | None):
        self.model_id = model_id
        self.api_key = api_key

    def check(self) -> None:
        if not (self.api_key or os.environ.get("TOY_API_KEY")):
            raise Unavailable("set TOY_API_KEY (or paste a key for this session)")

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Output:
        return Output("1", 0.0)


TOY_PROVIDER = registry.Provider(
    "toy", "Toy", lambda model_id, model, key: ToyBackend(model_id, key), "TOY_API_KEY", paid=True,
    catalogue=("toy/tiny",),
)  # fmt: skip


@dataclass(frozen=True)
class Dots:
    """N black dots in a row: a stimulus family nobody wrote a tab for."""

    dots: int
    canvas: int = 240

    @property
    def ref(self) -> str:
        return f"toy-dots-v1:{self.dots}:{self.canvas}"

    def render(self) -> Image.Image:
        image = Image.new("RGB", (self.canvas, self.canvas // 2), "white")
        draw = ImageDraw.Draw(image)
        for index in range(self.dots):
            x = (index + 1) * self.canvas // (self.dots + 1)
            draw.ellipse((x - 8, self.canvas // 4 - 8, x + 8, self.canvas // 4 + 8), fill="black")
        return image


class ToyDots(GeneratedBenchmark):
    id = "toy/dots"
    title = "How many dots?"
    chance = 33.3
    kind = AnswerKind.NUMBER
    prompts = {"count": "How many black dots are in the image? Answer with a number."}
    params = {"dots": Param((1, 2, 3), int), "canvas": Param((240,), int)}

    def design(self) -> list[Dots]:
        return [Dots(n, canvas) for n in self.grid["dots"] for canvas in self.grid["canvas"]]

    def example_design(self) -> list[Dots]:
        return [Dots(4 + i % 2, 240 + EXAMPLE_SEED_BASE % 7) for i in range(4)]

    def truth(self, stimulus: Dots, prompt: str) -> int:
        return stimulus.dots


@pytest.fixture
def toy_provider(monkeypatch):
    monkeypatch.setitem(registry.PROVIDERS, TOY_PROVIDER.name, TOY_PROVIDER)
    monkeypatch.delenv("TOY_API_KEY", raising=False)


@pytest.fixture
def toy_family(monkeypatch):
    benchmarks.benchmark_ids()  # load the real ones first, so ours is added, not replaced
    monkeypatch.setitem(benchmarks.FACTORIES, ToyDots.id, lambda data=None, params=None: ToyDots(params))
    monkeypatch.setitem(benchmarks.GENERATED, ToyDots.id, ToyDots)


def test_a_provider_declared_once_is_listed_by_the_models_command(toy_provider):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert commands.main(["models"]) == 0
    [line] = [line for line in out.getvalue().splitlines() if line.startswith("toy/tiny")]
    assert "unavailable" in line and "set TOY_API_KEY" in line
    assert "toy/NAME" in out.getvalue()  # the id forms the command teaches include it


def test_a_provider_declared_once_gets_a_key_box_in_the_probe_and_evaluate_tabs(toy_provider, serve, page, tmp_path):
    page.goto(serve())
    page.get_by_text("API keys", exact=False).first.click()
    box = page.locator("#probe-toy-key input, #probe-toy-key textarea").first
    expect(box).to_be_visible()
    assert box.get_attribute("type") == "password"
    expect(page.locator("#probe-toy-key")).to_contain_text("Toy key")
    # Its model is offered, marked unavailable until a key is given.
    page.locator("#probe-model-1 input").click()
    expect(page.get_by_role("option", name="toy/tiny (unavailable: needs a key)", exact=True)).to_be_visible()
    page.keyboard.press("Escape")
    page.get_by_role("tab", name="Evaluate").click()
    page.locator("#eval-models").get_by_text("API keys", exact=False).or_(page.get_by_text("API keys")).last.click()
    expect(page.locator("#eval-toy-key input, #eval-toy-key textarea").first).to_be_attached()
    screenshot(page, tmp_path, "toy-provider")


def test_a_generated_family_outside_blind_appears_in_every_stimulus_tab(toy_family, serve, page, tmp_path):
    page.goto(serve())
    # Probe: the task list offers it, and a stimulus is generated with its own question.
    page.locator("#probe-task input").click()
    page.get_by_role("option", name=ToyDots.id, exact=True).click()
    page.locator("#probe-params input, #probe-params textarea").first.fill("dots=3")
    page.click("#probe-generate")
    expect(page.locator("#probe-item-text")).to_contain_text("How many black dots")
    expect(page.locator("#probe-stage-images img").first).to_be_visible()

    # Stimulus lab: listed, with a control for its own parameter and the generator's truth.
    page.get_by_role("tab", name="Stimulus lab").click()
    page.locator("#stim-task input").click()
    page.get_by_role("option", name=ToyDots.id, exact=True).click()
    expect(page.locator("#stim-param-dots")).to_be_visible()
    expect(page.locator("#stim-question")).to_contain_text("How many black dots")
    expect(page.locator("#stim-answer")).to_contain_text("Ground truth: 1")

    # Human: a person can take its items.
    page.get_by_role("tab", name="Human", exact=True).click()
    page.locator("#human-name input, #human-name textarea").first.fill("Ada")
    page.locator("#human-benchmark input").click()
    page.get_by_role("option", name=ToyDots.id, exact=True).click()
    page.locator("#human-count input").fill("2")
    page.click("#human-start")
    expect(page.locator("#human-question")).to_contain_text("How many black dots")
    expect(page.locator("#human-progress")).to_contain_text("Item 1 of 2")
    screenshot(page, tmp_path, "toy-family")
