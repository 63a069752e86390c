"""The Probe tab's Examples: striking items across the families, each one click from the stage.

People find each of these trivial and models often do not: two circles that almost touch, lines
that cross twice, rings that interlock, squares in squares, a circled letter, a table's rows, a
subway map, and two illusions (the lines and discs are what differs, the inducers mislead); plus
one of our own pictures asked as an upload would be.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from probes.core.params import parse_params
from ui.items import ItemSpec, benchmark_of, generated_spec, resolve

ASSETS = Path(__file__).resolve().parent.parent / "assets"
# Drawn once and kept with the app (`python -m ui.probe_examples` draws them again; a test checks
# they match): building an illusion needs pyllusion, whose import alone takes seconds, and the
# page must show itself at once.
THUMBNAILS = ASSETS / "examples"
THUMBNAIL = 240


@dataclass(frozen=True)
class Example:
    title: str
    benchmark: str = ""
    params: str = ""  # NAME=VALUE pairs fixing the stimulus (the rest drawn with the seed)
    seed: int = 0
    upload: str = ""  # an image under assets/, asked as an upload
    question: str = ""
    answer: str = ""


EXAMPLES = (
    Example("Two circles that almost touch", "blind/touching-circles",
            "gap=0.05 diameter=1/5 canvas=769 orientation=horizontal prompt=touching"),
    Example("How often do the lines cross?", "blind/line-intersections", "intersections=2 thickness=2 resolution=768"),
    Example("Count the interlocking rings", "blind/olympic-circles", "count=7 canvas=769 colour=colored"),
    Example("Squares in squares", "blind/nested-squares", "depth=4 thickness=3"),
    Example("Which letter is circled?", "blind/circled-letter", "word=Subdermatoglyphic prompt=circled", seed=3),
    Example("Rows and columns of a table", "blind/grid-count", "grid=text n=6 shape=wide canvas=1250"),
    Example("Paths on a subway map", "blind/subway-paths", "paths=3 canvas=512 thickness=10"),
    Example("Mueller-Lyer: which line is longer?", "illusion/mueller-lyer",
            "difference=0.06565 illusion_strength=42 inducers=with canvas=768"),
    Example("Ebbinghaus: which disc is bigger?", "illusion/ebbinghaus",
            "difference=0.11066 illusion_strength=1.74 inducers=with canvas=768"),
    Example("Your own picture (an upload)", upload="samples/shitsukan/glass.png",
            question="Is the object in the picture transparent? Answer yes or no.", answer="yes"),
)  # fmt: skip
BY_TITLE = {example.title: example for example in EXAMPLES}
FIRST = EXAMPLES[0]


def spec_of(example: Example) -> ItemSpec:
    if example.upload:
        return ItemSpec("upload", paths=(str(ASSETS / example.upload),), question=example.question,
                        answer=example.answer)  # fmt: skip
    spec = generated_spec(example.benchmark, example.params, example.seed)
    # Every parameter the example names is kept; the index picks the prompt it names, if any.
    named = parse_params(example.params)
    items = benchmark_of(spec.benchmark, params=spec.params).items()
    wanted = named.get("prompt", [None])[0]
    index = next((i for i, item in enumerate(items) if wanted is None or item.params.get("prompt") == wanted), 0)
    return ItemSpec("generated", spec.benchmark, index, params=spec.params)


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
