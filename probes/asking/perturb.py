"""Named transforms of an item before prompting.

- `none`
- `no-image`: every image removed, the examples' too (what the language prior alone answers);
- `flip-vertical`: upside down by a top-bottom mirror (IllusionVQA Table 2), so left stays left;
- `grayscale`;
- `resize-256`: the longer side scaled to 256 px, aspect kept;
- `rotate-options-k`: options shifted k places (option i is shown at place i - k), the target
  follows its option: a consistent model's accuracy does not move.

Image transforms apply to the item under test only; few-shot examples stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PIL import Image, ImageOps

from probes.core.errors import PerturbationError
from probes.core.types import AnswerKind, ImageSource, Item

FIXED = ("none", "no-image", "flip-vertical", "grayscale", "resize-256")
_ROTATE = re.compile(r"rotate-options-(\d+)")


def check(name: str) -> str:
    if name in FIXED or _ROTATE.fullmatch(name):
        return name
    raise PerturbationError(f"unknown perturbation {name!r}: one of {', '.join(FIXED)}, rotate-options-K")


def drops_all_images(name: str) -> bool:
    return name == "no-image"


def _resize_256(image: Image.Image) -> Image.Image:
    scale = 256 / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


_IMAGE_TRANSFORMS: dict[str, Callable[[Image.Image], Image.Image]] = {
    "flip-vertical": ImageOps.flip,
    "grayscale": ImageOps.grayscale,
    "resize-256": _resize_256,
}


def _transformed(source: ImageSource, name: str) -> ImageSource:
    transform = _IMAGE_TRANSFORMS[name]
    return ImageSource(f"{source.ref}|{name}", lambda: transform(source.load()))


def apply(item: Item, name: str) -> Item:
    check(name)
    if name == "none":
        return item
    if name == "no-image":
        return item.with_changes(images=())
    if name in _IMAGE_TRANSFORMS:
        return item.with_changes(images=tuple(_transformed(s, name) for s in item.images))
    shift = int(_ROTATE.fullmatch(name).group(1))
    if item.kind is not AnswerKind.CHOICE or not item.options:
        raise PerturbationError(f"{name} needs multiple-choice items; {item.benchmark} item {item.id} has no options")
    count = len(item.options)
    options = tuple(item.options[(i + shift) % count] for i in range(count))
    return item.with_changes(options=options, target=(item.target - shift) % count)
