import pytest
from PIL import Image

from probes.asking import perturb
from probes.core.benchmark import Benchmark
from probes.core.types import AnswerKind, ImageSource, Item


class _Plain(Benchmark):
    """A benchmark with the default rule for a transformed picture's truth (its words)."""

    def load_items(self) -> list[Item]:
        return []


PLAIN = _Plain()


def _item(kind=AnswerKind.CHOICE):
    image = Image.new("RGB", (40, 20), "white")
    image.putpixel((0, 0), (255, 0, 0))
    return Item("b", "1", "Which?", (ImageSource("img", lambda: image),), kind,
                target=1, options=("left", "right", "both", "neither"))  # fmt: skip


def test_flip_vertical_puts_the_top_row_at_the_bottom():
    flipped = perturb.apply(PLAIN, _item(), "flip-vertical").images[0].load()
    assert flipped.getpixel((0, 19)) == (255, 0, 0) and flipped.getpixel((0, 0)) == (255, 255, 255)


def test_grayscale_and_resize():
    assert perturb.apply(PLAIN, _item(), "grayscale").images[0].load().mode == "L"
    assert perturb.apply(PLAIN, _item(), "resize-256").images[0].load().size == (256, 128)


def test_no_image_removes_images():
    assert perturb.apply(PLAIN, _item(), "no-image").images == ()
    assert perturb.drops_all_images("no-image")


@pytest.mark.parametrize("shift", [0, 1, 2, 3, 5])
def test_rotating_options_keeps_the_target_on_its_option(shift):
    item = _item()
    rotated = perturb.apply(PLAIN, item, f"rotate-options-{shift}")
    assert rotated.options[rotated.target] == item.options[item.target] == "right"
    assert sorted(rotated.options) == sorted(item.options)
    if shift % 4:
        assert rotated.options != item.options


def test_rotating_options_of_a_yes_no_item_is_refused():
    with pytest.raises(perturb.PerturbationError, match="multiple-choice"):
        perturb.apply(PLAIN, _item(AnswerKind.YES_NO), "rotate-options-1")


def test_unknown_perturbation_lists_the_known_ones():
    with pytest.raises(perturb.PerturbationError, match="flip-vertical"):
        perturb.check("upside-down")


def test_rotating_the_options_moves_the_positive_answer_with_its_option():
    from probes.asking import perturb
    from probes.core.registry import get_benchmark

    item = next(i for i in get_benchmark("illusion/mueller-lyer").items() if i.target is not None)
    positive = item.options[item.params["positive_answer"]]
    for shift in range(1, len(item.options)):
        rotated = perturb.apply(PLAIN, item, f"rotate-options-{shift}")
        assert rotated.options[rotated.params["positive_answer"]] == positive
        assert rotated.options[rotated.target] == item.options[item.target]
