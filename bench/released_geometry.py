"""Our Olympic-like shapes and nested squares against the paper's released images, measured the
same way on both (issue 11): the spacing of the shapes and the logo's vertical centre, and the
inner/outer side ratio of nested squares.

The released images ("VLMs are blind", MIT) are read from ../shared/reference/blindtest/ beside
the checkout and never copied into the repository; each released Olympic image is compared
with ours drawn with the parameters its file name gives. `tests/probes/benchmarks/
test_released_geometry.py` asserts the agreement (within 3%); this prints the figures.

Measures, from the pixels alone plus the shape's size (the file name's, checked on the circles
with a Hough fit: within 1%):
- Olympic: the ink's bounding box gives the first and last shapes' centres (so the step between
  same-row neighbours: they are two half-steps apart per shape) and the two rows' centres (so
  the drop between rows, and the top row's height); the logo's vertical centre is the middle of
  that box, as a fraction of the image height.
- Nested squares: every square's top and bottom edges are long horizontal ink runs of the same
  span; the distance between the two edges' middles is its side.

Run from the repository root:  python -m bench.released_geometry
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from probes.stimuli.olympic import OlympicShapes

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "blindtest"
OLYMPIC_NAME = re.compile(r"pixels_(\d+)_linewidth_([\d.]+)_(diameter|side)_([\d.]+)_numCircles_(\d+)_(black|colored)")
NESTED_NAME = re.compile(r"depth_(\d+)_image_\d+_thickness_(\d+)")


@dataclass(frozen=True)
class Layout:
    step: float  # same-row neighbours' centre distance, in shape sizes
    drop: float  # the bottom row's centres below the top row's, in shape sizes
    top_row: float  # the top row's centres, as a fraction of the image height
    vertical_centre: float  # the middle of the logo's bounding box, as a fraction of the height


def _ink(image: Image.Image, darker_than: int = 200) -> np.ndarray:
    return np.asarray(image.convert("RGB")).min(axis=-1) < darker_than


def shape_reach(shape: str, size: float) -> tuple[float, float, float]:
    """(up, down, across) from a shape's centre to its outline: a circle's radius; a point-up
    pentagon's circumradius up, its base below, its side corners across."""
    if shape == "circle":
        return size / 2, size / 2, size / 2
    radius = size / (2 * math.sin(math.pi / 5))
    return radius, radius * math.cos(math.pi / 5), radius * math.sin(2 * math.pi / 5)


def olympic_layout(image: Image.Image, shape: str, count: int, size_px: float, stroke_px: float) -> Layout:
    ys, xs = np.nonzero(_ink(image))
    height = image.height
    up, down, across = shape_reach(shape, size_px)
    half = stroke_px / 2
    first, last = xs.min() + half + across, xs.max() - half - across
    top, bottom = ys.min() + half + up, ys.max() - half - down
    return Layout(
        step=2 * (last - first) / (count - 1) / size_px,
        drop=(bottom - top) / size_px,
        top_row=top / height,
        vertical_centre=(ys.min() + ys.max()) / 2 / height,
    )


def released_olympic(path: Path) -> tuple[OlympicShapes, Layout, Layout]:
    """The released image's layout and ours, drawn with the parameters its name gives."""
    match = OLYMPIC_NAME.search(path.name)
    if match is None:
        raise ValueError(f"{path.name}: not an Olympic image name of the release")
    canvas, width, _, size, count, colour = match.groups()
    shape = "circle" if "circles" in path.parent.name else "pentagon"
    ours = OlympicShapes(shape, int(count), int(canvas), float(size), float(width), colour)
    with Image.open(path) as released:
        theirs = olympic_layout(released, shape, int(count), float(size) * int(canvas), ours.width_px)
    mine = olympic_layout(ours.render(), shape, int(count), ours.size_px, ours.width_px)
    return ours, theirs, mine


def square_sides(image: Image.Image, min_run: int = 30) -> list[float]:
    """Every nested square's side in px (centre line to centre line), largest first."""
    ink = _ink(image, 128)
    edges: list[tuple[int, int, list[int]]] = []  # (start, end, rows): runs of about one span
    for row in range(ink.shape[0]):
        marks = np.flatnonzero(np.diff(np.concatenate([[0], ink[row].astype(np.int8), [0]])))
        for start, end in zip(marks[::2], marks[1::2], strict=True):
            if end - start < min_run:
                continue
            for left, right, rows in edges:  # anti-aliasing moves an edge's ends by a pixel or two
                if abs(left - start) <= 3 and abs(right - end) <= 3:
                    rows.append(row)
                    break
            else:
                edges.append((int(start), int(end), [row]))
    sides = []
    for _, _, rows in edges:
        bands = [[rows[0]]]
        for row in rows[1:]:
            if row - bands[-1][-1] <= 1:
                bands[-1].append(row)
            else:
                bands.append([row])
        if len(bands) >= 2:
            sides.append(statistics.mean(bands[-1]) - statistics.mean(bands[0]))
    return sorted(sides, reverse=True)


def ratios(sides: list[float]) -> list[float]:
    """Each square's side over the side of the square around it."""
    return [inner / outer for outer, inner in zip(sides, sides[1:], strict=False)]


def released_nested() -> list[tuple[str, list[float]]]:
    """(file name, sides) of each released nested-squares image."""
    found = []
    for path in sorted((REFERENCE / "nested-squares").glob("*.png")):
        match = NESTED_NAME.search(path.name)
        with Image.open(path) as image:
            sides = square_sides(image)
        if match is None or len(sides) < int(match.group(1)):
            raise ValueError(f"{path.name}: found {len(sides)} squares")
        found.append((path.name, sides[: int(match.group(1))]))
    return found


def our_nested(every: int = 1) -> list[list[float]]:
    """Sides measured on our default nested-squares design (every `every`-th image)."""
    from probes.core.registry import get_benchmark

    images = list({item.images[0].ref: item for item in get_benchmark("blind/nested-squares").items()}.values())
    return [square_sides(item.images[0].load())[: item.target] for item in images[::every]]


def main() -> None:
    if not REFERENCE.is_dir():
        print(f"no released images at {REFERENCE}: nothing to compare")
        return
    print("Olympic: released vs ours (sizes: circle diameter, pentagon side)")
    print(f"{'image':<58} {'step':>13} {'drop':>13} {'top row':>13} {'v. centre':>13}")
    for path in sorted(REFERENCE.glob("olympic-*/*.png")):
        _, theirs, mine = released_olympic(path)
        cells = [f"{getattr(theirs, f):.3f}/{getattr(mine, f):.3f}" for f in ("step", "drop", "top_row",
                                                                              "vertical_centre")]  # fmt: skip
        print(f"{path.parent.name[8:] + ' ' + path.name[:48]:<58} " + " ".join(f"{c:>13}" for c in cells))
    released = released_nested()
    theirs = [r for _, sides in released for r in ratios(sides)]
    mine = [r for sides in our_nested() for r in ratios(sides)]
    print(f"\nNested squares, inner/outer side: released {statistics.mean(theirs):.3f} "
          f"(n={len(theirs)}, {min(theirs):.3f}-{max(theirs):.3f}); ours {statistics.mean(mine):.3f} "
          f"(n={len(mine)}, {min(mine):.3f}-{max(mine):.3f})")  # fmt: skip
    padding = [0.75 * outer - inner for _, sides in released for outer, inner in zip(sides, sides[1:], strict=False)]
    print(f"released rule: inner = 0.75 x outer - {statistics.mean(padding):.1f} px at 1000 px")


if __name__ == "__main__":
    main()
