"""The Probe tab's Examples: striking items across the families, each one click from the stage.

People find each of these trivial and models often do not: two circles that almost touch, lines
that cross twice, rings that interlock, squares in squares, a circled letter, a table's rows, a
subway map, and two illusions (the lines and discs are what differs, the inducers mislead); plus
one of our own pictures asked as an upload would be.
"""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

from probes.demo.examples import ASSETS, BY_TITLE, EXAMPLES, FIRST, Example, example_choice
from ui.items import ItemSpec, benchmark_of, resolve

__all__ = ["BY_TITLE", "EXAMPLES", "FIRST", "Example", "gallery", "spec_of"]
# Drawn once and kept with the app (`python -m ui.examples` draws them again; a test checks
# they match): building an illusion needs pyllusion, whose import alone takes seconds, and the
# page must show itself at once.
THUMBNAILS = ASSETS / "examples"
THUMBNAIL = 240


def spec_of(example: Example) -> ItemSpec:
    """The Example on the stage: the same item `probes.demo.examples.example_item` builds (so
    the requests a prepared demo answered are the ones a visitor sends)."""
    if example.upload:
        return ItemSpec("upload", paths=(str(example.upload_path),), question=example.question,
                        answer=example.answer)  # fmt: skip
    params, index = example_choice(example, lambda task, chosen: benchmark_of(task, params=chosen))
    return ItemSpec("generated", example.benchmark, index, params=params)


def thumbnail_path(example: Example) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", example.title.lower()).strip("-")
    return THUMBNAILS / f"{slug}.png"


def draw_thumbnail(example: Example) -> Image.Image:
    """The example's first picture, as small as the gallery shows it."""
    _, item = resolve(spec_of(example))
    image = item.images[0].load().convert("RGB")
    image.thumbnail((THUMBNAIL, THUMBNAIL), Image.Resampling.LANCZOS)
    return image


def gallery() -> list[tuple[str, str]]:
    """(thumbnail path, title) for every example."""
    return [(str(thumbnail_path(example)), example.title) for example in EXAMPLES]


def write_thumbnails() -> None:
    THUMBNAILS.mkdir(parents=True, exist_ok=True)
    for example in EXAMPLES:
        draw_thumbnail(example).save(thumbnail_path(example), optimize=True)


if __name__ == "__main__":
    write_thumbnails()
