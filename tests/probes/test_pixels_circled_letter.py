"""baseline/pixels reads the circled letter from the picture (issue 34): the oval found by its
ink, the letter wholly inside it matched against the alphabet in the words' typeface. Right on
every graded item upright, mirrored and upside down (a reflected letter is read as itself), on
a picture the generator did not draw, and never a guess where there is no oval."""

from __future__ import annotations

import asyncio
import random

import pytest
from PIL import Image, ImageDraw, ImageFont

from models.types import GenerateConfig, ImagePart, ProviderError, TextPart, user
from probes.asking.prompting import Prompt, prompt_hash
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind, Item, Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store


@pytest.fixture(scope="module")
def pixels():
    return create("baseline/pixels")


@pytest.mark.parametrize("condition", ["none", "flip-horizontal", "flip-vertical", "grayscale"])
def test_every_graded_item_is_read_right(pixels, condition, tmp_path):
    benchmark = get_benchmark("blind/circled-letter")
    items = random.Random(f"circled:{condition}").sample(benchmark.items(), 30)
    with Store(tmp_path / "results.sqlite") as store:
        results = asyncio.run(run(RunPlan(benchmark, items, [pixels], perturbation=condition), store))
    assert all(r.status is Status.ANSWERED for r in results), [r.error for r in results if r.error][:3]
    graded = [r for r in results if r.correct is not None]
    assert len(graded) >= 20 and all(r.correct for r in graded), [(r.item_id, r.reply) for r in graded if not r.correct]
    # Ungraded only where a reflection makes the letter another one (a mirrored b is a d).
    assert all("reads as" in r.ungraded for r in results if r.correct is None)


def _word_with_oval(word: str, circled: int, grey: bool = False) -> Image.Image:
    """Drawn here with Pillow alone, not by the generator: the word, a red ellipse around one letter."""
    font = ImageFont.load_default(size=40)
    image = Image.new("RGB", (420, 160), "white")
    draw = ImageDraw.Draw(image)
    draw.text((20, 100), word, font=font, fill="black", anchor="ls")
    left = 20 + font.getlength(word[:circled])
    right = 20 + font.getlength(word[: circled + 1])
    draw.ellipse((left - 6, 52, right + 6, 118), outline=(255, 0, 0), width=3)
    return image.convert("L") if grey else image


def _reply(backend, image: Image.Image, question: str) -> str:
    """Asked as an upload: only the picture and the question say what it is."""
    message = user(ImagePart(image), TextPart(question))
    prompt = Prompt((message,), prompt_hash((message,)))
    item = Item("upload", "q", question, (), AnswerKind.TEXT, None)
    return asyncio.run(backend.answer(item, prompt, GenerateConfig())).text


@pytest.mark.parametrize("grey", [False, True])
def test_a_picture_the_generator_did_not_draw_is_read(pixels, grey):
    assert _reply(pixels, _word_with_oval("Playground", 2, grey), "Which letter is being circled?") == "a"
    highlighted = "Which character is being highlighted with a red oval?"
    assert _reply(pixels, _word_with_oval("Playground", 5, grey), highlighted) == "r"


def test_without_an_oval_it_raises_instead_of_guessing(pixels):
    image = Image.new("RGB", (300, 120), "white")
    ImageDraw.Draw(image).text((20, 80), "Word", font=ImageFont.load_default(size=40), fill="black", anchor="ls")
    with pytest.raises(ProviderError, match="could not read the image as circled-letter"):
        _reply(pixels, image, "Which letter is being circled?")
