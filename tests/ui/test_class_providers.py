"""A provider declared once (tests/ui/test_extension_points.py's Toy) reaches the Class tab too:
the app builds without Gradio's "Expected maximum N arguments" warning (the open-a-class event's
parameters are named after this build's key boxes), the tab shows the provider's key box, and a
key typed there is the one the model beside the class is asked with."""

from __future__ import annotations

import inspect
import re
import time
import warnings

import pytest
from playwright.sync_api import expect

import app
from models import registry
from probes.core.types import Result, Status
from tests.ui.conftest import reset_caches, screenshot
from tests.ui.navigation import open_tab
from tests.ui.test_extension_points import TOY_PROVIDER
from ui.classroom import teacher
from ui.classroom.lessons import CLASSES


@pytest.fixture
def toy_provider(monkeypatch):
    monkeypatch.setitem(registry.PROVIDERS, TOY_PROVIDER.name, TOY_PROVIDER)
    monkeypatch.delenv("TOY_API_KEY", raising=False)


def test_a_provider_declared_after_import_builds_without_gradios_argument_warning(toy_provider, tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_HOME", str(tmp_path / "home"))
    reset_caches()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        demo = app.build_demo()
    counted = [str(w.message) for w in caught if re.search(r"Expected .*arguments for function", str(w.message))]
    assert counted == []
    [opening] = [block for block in demo.fns.values() if block.fn is teacher.open_lesson]
    parameters = inspect.signature(opening.fn).parameters.values()
    assert "toy_key" in [p.name for p in parameters]
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters)  # no *args left for Gradio to guess
    assert len(parameters) - 1 == len(opening.inputs)  # each input a parameter of its own, and the request


def answered(room, model: str, index: int = 0, ceiling: float = 120.0) -> Result | str:
    """The model's answer to item `index` (or why it has none) once it is in: it is asked in
    the background, "asking…" meanwhile."""
    deadline = time.monotonic() + ceiling  # a generous ceiling: the wait ends on the condition
    while time.monotonic() < deadline:
        found = room.model_answers.get((model, index))
        if found is not None and found != "asking…":
            return found
        time.sleep(0.2)
    raise AssertionError(f"{model} was still being asked after {ceiling:.0f} s")


def test_a_key_typed_in_the_class_tab_is_the_one_its_provider_uses(toy_provider, serve, page, tmp_path):
    """No TOY_API_KEY in the server's environment: the toy answers only with the key typed."""
    page.goto(serve())
    open_tab(page, "Class")
    open_tab(page, "Teach")
    page.locator("#class-benchmark input").fill("blind/touching-circles")
    page.locator("#class-benchmark input").press("Enter")
    page.locator("#class-params textarea, #class-params input").first.fill("gap=0.2 canvas=384 prompt=touching")
    page.locator("#class-count input").fill("1")
    page.locator("#class-models input").click()
    page.get_by_role("option", name="toy/tiny (unavailable: needs a key)", exact=True).click()
    page.keyboard.press("Escape")
    page.locator("#class-open-form").get_by_text("API keys", exact=False).click()
    box = page.locator("#class-toy-key input, #class-toy-key textarea").first
    expect(box).to_be_visible()
    box.fill("toy-key-typed-in-the-class-tab")
    page.click("#class-open")
    code = page.locator("#class-presenter .class-code b")
    expect(code).to_have_text(re.compile(r"^[A-Z2-9]{8}$"))
    room = CLASSES.by_code(code.inner_text())
    assert room.lesson.models == ("baseline/pixels", "toy/tiny")
    toy = answered(room, "toy/tiny")
    assert isinstance(toy, Result), toy  # a text says why it has no answer ("set TOY_API_KEY ...")
    assert toy.status is not Status.ERROR and toy.reply == "1", (toy.status, toy.error)
    page.click("#class-next")
    page.click("#class-reveal")
    revealed = page.locator("#class-revealed")
    expect(revealed).to_contain_text("toy/tiny")
    expect(revealed).not_to_contain_text("TOY_API_KEY")
    screenshot(page, tmp_path, "class-toy-provider")
