"""Named transforms of an item before prompting, and what each does to the truth.

- `none`: the item as it is.
- `no-image`: every image removed, the examples' too (what the language prior alone answers);
  graded against the item's answer.
- `flip-vertical` (upside down): the picture mirrored top to bottom (IllusionVQA Table 2), so left
  stays left. The truth follows the picture sent: places along the flip swap (a longer top line
  is now the bottom one), counts stay counted, and where it cannot be known the reply is kept
  ungraded with the reason (`probes.core.truth`; each family declares its rule).
- `flip-horizontal` (mirror): the picture mirrored left to right; the truth follows as above
  (left and right swap).
- `grayscale`: the picture without colour; a question about a colour is left ungraded.
- `resize-256`: the longer side scaled to 256 px, aspect kept; the truth stands.
- `rotate-options-k`: options shifted k places (option i is shown at place i - k), the target
  follows its option: a consistent model's accuracy does not move;
- `rotate-options-all`: every rotation of each multiple-choice item, asked as `rotate-options-0`
  (the stored order) to `rotate-options-(k-1)` (`expand`), so the report can say which items a
  model gets right in every order (consistency) and which places it favours (position bias).

Image transforms apply to the item under test only; few-shot examples stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from PIL import Image, ImageOps

from probes.core.benchmark import Benchmark
from probes.core.errors import PerturbationError
from probes.core.truth import PICTURE_TRANSFORMS
from probes.core.types import POSITIVE_ANSWER, AnswerKind, ImageSource, Item

FIXED = ("none", "no-image", "flip-vertical", "flip-horizontal", "grayscale", "resize-256")
_ROTATE = re.compile(r"rotate-options-(\d+)")


ALL_ROTATIONS = "rotate-options-all"


def check(name: str) -> str:
    if name in FIXED or _ROTATE.fullmatch(name) or name == ALL_ROTATIONS:
        return name
    raise PerturbationError(
        f"unknown perturbation {name!r}: one of {', '.join(FIXED)}, rotate-options-K, {ALL_ROTATIONS}"
    )


def expand(name: str, items: Sequence[Item]) -> list[tuple[str, list[Item]]]:
    """The perturbations a name stands for, each with the items it applies to: itself with every
    item, or for `rotate-options-all` each rotation r with the multiple-choice items that have
    more than r options."""
    check(name)
    if name != ALL_ROTATIONS:
        return [(name, list(items))]
    choice = [item for item in items if item.kind is AnswerKind.CHOICE and len(item.options) > 1]
    if not choice:
        raise PerturbationError(f"{ALL_ROTATIONS} needs multiple-choice items; these have no options")
    most = max(len(item.options) for item in choice)
    return [(f"rotate-options-{r}", [item for item in choice if len(item.options) > r]) for r in range(most)]


def drops_all_images(name: str) -> bool:
    return name == "no-image"


def _resize_256(image: Image.Image) -> Image.Image:
    scale = 256 / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


_IMAGE_TRANSFORMS: dict[str, Callable[[Image.Image], Image.Image]] = {
    "flip-vertical": ImageOps.flip,
    "flip-horizontal": ImageOps.mirror,
    "grayscale": ImageOps.grayscale,
    "resize-256": _resize_256,
}
assert set(_IMAGE_TRANSFORMS) == set(PICTURE_TRANSFORMS)


def _transformed(source: ImageSource, name: str) -> ImageSource:
    transform = _IMAGE_TRANSFORMS[name]
    return ImageSource(f"{source.ref}|{name}", lambda: transform(source.load()))


def images(item: Item, name: str) -> tuple[ImageSource, ...]:
    """The images `item` is sent with under perturbation `name` (its truth left aside)."""
    check(name)
    if name == "no-image":
        return ()
    if name in _IMAGE_TRANSFORMS:
        return tuple(_transformed(s, name) for s in item.images)
    return item.images


def apply(benchmark: Benchmark, item: Item, name: str) -> Item:
    """`item` as asked under perturbation `name`: its images, options and truth as sent (a
    picture transform's truth as `benchmark` declares it, `Benchmark.truth_under`)."""
    check(name)
    if name == ALL_ROTATIONS:
        raise PerturbationError(f"{ALL_ROTATIONS} stands for several rotations: expand it into them first")
    if name == "none":
        return item
    if name == "no-image":
        return item.with_changes(images=())
    if name in _IMAGE_TRANSFORMS:
        return benchmark.truth_under(item.with_changes(images=images(item, name)), name)
    shift = int(_ROTATE.fullmatch(name).group(1))
    if item.kind is not AnswerKind.CHOICE or not item.options:
        raise PerturbationError(f"{name} needs multiple-choice items; {item.benchmark} item {item.id} has no options")
    count = len(item.options)
    options = tuple(item.options[(i + shift) % count] for i in range(count))
    target = None if item.target is None else (item.target - shift) % count
    params = dict(item.params)
    # An option named by its place in the item's parameters (the illusions' `positive_answer`,
    # which psychometric fits read) moves with its option.
    if isinstance(params.get(POSITIVE_ANSWER), int) and not isinstance(params[POSITIVE_ANSWER], bool):
        params[POSITIVE_ANSWER] = (params[POSITIVE_ANSWER] - shift) % count
    return item.with_changes(options=options, target=target, params=params)
