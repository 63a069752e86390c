"""blind/circled-letter: the paper's design, and ground truth that the pixels agree with."""

import io
import random
from collections import Counter

import numpy as np
import pytest
from PIL import Image

from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind
from probes.reading.parsing import parse
from probes.stimuli.circled_letter import CircledLetter

WORDS = {"Acknowledgement": 15, "Subdermatoglyphic": 17, "tHyUiKaRbNqWeOpXcZvM": 20}
PROMPTS = {"Which letter is being circled?", "Which character is being highlighted with a red oval?"}


@pytest.fixture(scope="module")
def circled():
    return get_benchmark("blind/circled-letter")


def test_size_and_design_follow_the_paper(circled):
    items = circled.items()
    assert len(items) == 2 * 1248
    assert circled.size_note() == "2496 items (1248 images x 2 prompts)"
    images = {item.images[0].ref: item for item in items}
    assert Counter(item.params["word"] for item in images.values()) == {
        "Acknowledgement": 360,
        "Subdermatoglyphic": 408,
        "tHyUiKaRbNqWeOpXcZvM": 480,
    }
    # 3 thicknesses x 2 font sizes x 4 positions = 24 images per (word, circled letter)
    per_letter = Counter((i.params["word"], i.params["letter"]) for i in images.values())
    assert len(per_letter) == sum(WORDS.values()) and set(per_letter.values()) == {24}
    assert {item.question for item in items} == PROMPTS
    assert circled.chance is None


def test_targets_ids_and_groups(circled):
    items = circled.items()
    assert len({item.id for item in items}) == len(items)
    for item in items:
        word, letter = item.params["word"], item.params["letter"]
        assert item.target == word[letter]
        assert f"letter={letter}," in item.id  # "e" is circled at three places of Acknowledgement
        assert item.answer_space == tuple(dict.fromkeys(word))
        assert set(item.groups) == {"prompt", "word", "letter", "thickness", "font_size", "position"}
    assert {i.groups["thickness"] for i in items} == {"0.04", "0.08", "0.12"}
    assert {i.groups["font_size"] for i in items} == {"0.6", "0.8"}


def _red(pixels: np.ndarray) -> np.ndarray:
    return pixels[..., 0] - np.maximum(pixels[..., 1], pixels[..., 2]) > 40


def _between_runs(red: np.ndarray) -> np.ndarray:
    """Per row: the pixels between the first and the last red run (none if one run)."""
    inside = np.zeros_like(red)
    for row in np.nonzero(red.any(axis=1))[0]:
        columns = np.nonzero(red[row])[0]
        gaps = np.nonzero(np.diff(columns) > 1)[0]
        if gaps.size:
            inside[row, columns[gaps[0]] + 1 : columns[gaps[-1] + 1]] = True
    return inside & ~red


def _enclosed(red: np.ndarray) -> np.ndarray:
    """What the red ring encloses, from the image alone: the pixels that lie between red
    pixels both along their row and along their column (the ring is one closed convex curve)."""
    return _between_runs(red) & _between_runs(red.T).T


def _ink(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("L")) < 250


def _check_pixels(spec: CircledLetter) -> None:
    pixels = np.asarray(spec.render()).astype(int)
    red = _red(pixels)
    assert red.any()
    # the oval is wholly on the canvas, clear of its edges
    assert not (red[:2].any() or red[-2:].any() or red[:, :2].any() or red[:, -2:].any())
    inside = _enclosed(red)
    assert inside.sum() > 20
    target_ink = _ink(spec.render_letter_alone(spec.letter))
    assert target_ink.any() and inside[target_ink].all(), "the circled letter is not wholly inside the oval"
    ink_centres = {}
    for index in range(len(spec.word)):
        ink = _ink(spec.render_letter_alone(index))
        ink_centres[index] = np.argwhere(ink).mean(0)
        if index != spec.letter:
            # never enclosed, and never erased: some of its ink shows, and not all of that inside
            shown = ink & ~red
            assert shown.any(), f"letter {index} ({spec.word[index]!r}) is hidden under the oval"
            assert not inside[ink].all(), f"letter {index} ({spec.word[index]!r}) is enclosed too"
    # and the oval is centred on the circled letter, not on a neighbour
    centre = np.argwhere(inside).mean(0)
    nearest = min(ink_centres, key=lambda i: np.hypot(*(ink_centres[i] - centre)))
    assert nearest == spec.letter


def test_pixels_agree_with_the_label_on_a_sample(circled):
    stimuli = circled.design()
    for spec in random.Random(3).sample(stimuli, 10):
        _check_pixels(spec)
        assert spec.target == spec.word[spec.letter]


@pytest.mark.parametrize("word", list(WORDS))
def test_a_letter_at_the_canvas_edge(word):
    """The first letter with the word pushed left, the last with it pushed right (and to the
    top and bottom): the word moves so that the oval stays whole on the canvas."""
    first = CircledLetter(word, 0, 0.12, 0.8, x=0.0, y=0.0)
    last = CircledLetter(word, len(word) - 1, 0.12, 0.8, x=1.0, y=1.0)
    for spec in (first, last):
        _check_pixels(spec)
        boxes = spec.letter_boxes()
        left, top = min(b[0] for b in boxes), min(b[1] for b in boxes)
        right, bottom = max(b[2] for b in boxes), max(b[3] for b in boxes)
        assert 0 <= left and right <= 512 and 0 <= top and bottom <= 512  # the whole word is on the canvas
    red_first = np.argwhere(_red(np.asarray(first.render()).astype(int)))
    red_last = np.argwhere(_red(np.asarray(last.render()).astype(int)))
    assert red_first[:, 1].min() <= 8  # the oval really is at the left edge ...
    assert red_last[:, 1].max() >= 512 - 9  # ... and at the right edge
    assert red_first[:, 0].min() <= 30 and red_last[:, 0].max() >= 512 - 31


def test_words_that_cannot_fit_are_refused():
    with pytest.raises(ValueError, match="does not fit"):
        CircledLetter("Acknowledgement", 0, 0.12, 1.0, 0.5, 0.5)
    with pytest.raises(ValueError, match="outside"):
        CircledLetter("Acknowledgement", 15, 0.04, 0.6, 0.5, 0.5)


def test_rendering_is_deterministic_and_antialiased(circled):
    spec = circled.design()[100]
    first, second = io.BytesIO(), io.BytesIO()
    spec.render().save(first, "PNG")
    CircledLetter(spec.word, spec.letter, spec.thickness, spec.font_size, spec.x, spec.y).render().save(second, "PNG")
    assert first.getvalue() == second.getvalue()
    assert len(spec.render().getcolors(1 << 20)) > 20  # grey text edges and pink oval edges
    again = get_benchmark("blind/circled-letter").design()[100]
    assert again == spec  # the placements come from the seed, not from global randomness


def test_seed_moves_the_words():
    one = get_benchmark("blind/circled-letter", params={"word": ["Acknowledgement"], "seed": ["1"]}).design()
    zero = get_benchmark("blind/circled-letter", params={"word": ["Acknowledgement"]}).design()
    assert len(one) == len(zero) == 360
    assert sum((a.x, a.y) != (b.x, b.y) for a, b in zip(one, zero, strict=True)) > 350


def test_few_shot_examples_are_off_the_test_set(circled):
    test_refs = {item.images[0].ref for item in circled.items()}
    examples = circled.examples()
    assert examples and not any(e.images[0].ref in test_refs for e in examples)
    assert not {e.params["word"] for e in examples} & set(WORDS)
    item = circled.items()[0]
    chosen = circled.select_examples(item, 4)
    assert [e.question for e in chosen] == [item.question] * 4
    assert len({e.target for e in chosen}) == 4
    assert all(e.reasoning and f"'{e.target}'" in e.reasoning for e in chosen)
    assert circled.render_answer(chosen[0], cot=False) == chosen[0].target


def test_parameters_can_be_fixed_or_swept():
    swept = get_benchmark(
        "blind/circled-letter", params={"word": ["Acknowledgement"], "letter": ["0", "14"], "thickness": ["0.04"]}
    )
    items = swept.items()
    assert len(items) == 2 * 1 * 2 * 4 * 2
    assert {i.target for i in items} == {"A", "t"}
    with pytest.raises(BenchmarkError, match="outside"):
        get_benchmark("blind/circled-letter", params={"word": ["Acknowledgement"], "letter": ["15"]})
    with pytest.raises(BenchmarkError, match="no parameter gap"):
        get_benchmark("blind/circled-letter", params={"gap": ["1"]})


@pytest.mark.parametrize(
    "reply, letter",
    [
        ("The circled letter is 'e'.", "e"),
        ("e", "e"),
        ("W", "W"),
        ('The letter being circled is "w".', "w"),
        ('The character highlighted with a red oval is "K".', "K"),
        ("The red oval is around the letter 'd' in \"Acknowledgement\".", "d"),
        ("In the word Subdermatoglyphic, the letter circled is g.", "g"),
        ("The letter inside the red oval is **m**.", "m"),
        ("Answer: k", "k"),
    ],
)
def test_replies_to_the_prompts_parse(reply, letter):
    parsed = parse(reply, AnswerKind.LETTER)
    assert parsed.value == letter
