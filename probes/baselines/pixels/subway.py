"""Subway maps: how many single-coloured paths join two stations?

1. The stations are the black letters. Each is read by its topology, as a child learns them:
   A stands on two legs (they point up on a map turned upside down); of the others, B has two
   holes, D one and C none.
2. The path colours are the saturated colours that fill many pixels and are not just a paler
   (anti-aliased) edge of another one.
3. Each colour's ink is followed as connected components. Where another path crosses on top,
   the colour is cut by that path's width, so each colour's mask is first grown by about one
   stroke width: the cut closes, while separate paths stay a grid cell apart.
4. A path belongs to a station when its ink comes close to the letter: a path ends one grid
   step from its station's letter (at most 1.4 steps away, counting the diagonal start points),
   while any other path keeps two steps away. The grid step is read from the letters' own
   height (a letter is about one step tall).
5. On a grey copy two paths may show the same grey, so the paths are followed instead of their
   colours (`trace_grey_paths`): the letters are the black ink, the paths the lighter greys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from probes.baselines.pixels.imaging import (
    AnalysisError,
    channel_extremes,
    colour_coverage,
    colourless,
    components,
    dilate,
    nearest_colour,
    runs_1d,
)

LETTER_GREY = 60  # in a grey map the letters are black, every path colour a lighter grey (91 and up)
PATH_GREY = 204  # half the ink of the palest path colour's grey (orange, 152)
REACH = 1.5  # letter heights: a path whose ink comes this close to a letter ends there
SATURATED = 0.2  # channel spread over ink above which a pixel is coloured (not black or grey)
BLEND_MISFIT = 0.1  # an anti-aliased edge is a blend of its colour and white, up to rounding
MIN_SHARE = 0.05  # a path colour fills at least this share of the most common colour's pixels


@dataclass(frozen=True)
class Letter:
    name: str
    centre: tuple[float, float]  # x, y in px
    height: float  # px


def count_paths(image: Image.Image, start: str, end: str) -> int:
    if colourless(image):
        letters, ends = trace_grey_paths(image)
    else:
        letters, paths = trace_paths(image)
        ends = [stations for pieces in paths.values() for stations in pieces]
    for station in (start, end):
        if station not in letters:
            raise AnalysisError(f"no station {station} found on the map (found {', '.join(sorted(letters))})")
    return sum(1 for stations in ends if stations == {start, end})


def trace_paths(image: Image.Image) -> tuple[dict[str, Letter], dict[tuple[int, ...], list[set[str]]]]:
    """The station letters, and for each path colour (0..255 RGB) the stations each of its
    connected pieces of ink comes close to."""
    rgb = np.asarray(image.convert("RGB"))
    darkest, lightest = channel_extremes(image)
    level = 255 - darkest
    spread = lightest.astype(np.int16) - darkest
    letters = {letter.name: letter for letter in read_station_letters(level, spread)}
    coloured = (level > 76) & (spread >= SATURATED * level)
    width = stroke_width(coloured)
    # Paths are several px wide and a grid cell apart: every `step`-th pixel, a stroke is still
    # two pixels wide and keeps its exact colour, and the same connections show for a fraction
    # of the work.
    step = max(1, int(width // 2))
    coloured, rgb = coloured[::step, ::step], rgb[::step, ::step]
    ys, xs = np.nonzero(coloured)
    colours = path_colours(rgb, coloured)
    which, coverage = nearest_colour(rgb[ys, xs], colours, tolerance=BLEND_MISFIT)
    paths = {}
    for index, colour in enumerate(colours):
        mine = (which == index) & (coverage > 0.5)
        mask = np.zeros(coloured.shape, dtype=bool)
        mask[ys[mine], xs[mine]] = True
        key = tuple(int(v) for v in np.rint(colour * 255))
        paths[key] = _path_ends(mask, int(np.ceil(width / step)) + 1, letters, step)
    return letters, paths


def read_station_letters(level: np.ndarray, spread: np.ndarray) -> list[Letter]:
    """The black letters on the map, each named by its shape."""
    return letters_in((level > 127) & (spread < 0.15 * level))


def letters_in(black: np.ndarray) -> list[Letter]:
    """The letters whose ink is `black`, each named by its shape."""
    found = components(black)
    if not len(found):
        raise AnalysisError("no black station letters on the map")
    letters = []
    for index in np.flatnonzero(found.area >= 0.2 * found.area[0]):
        top, bottom, left, right = found.top[index], found.bottom[index], found.left[index], found.right[index]
        shape = found.crop(index)
        centre = ((left + right + 1) / 2, (top + bottom + 1) / 2)
        letters.append(Letter(name_letter(shape), centre, float(bottom - top + 1)))
    names = sorted(letter.name for letter in letters)
    if len(set(names)) != len(names) or "?" in names:
        raise AnalysisError(f"the station letters do not read as distinct A, B, C, D (read {', '.join(names)})")
    return letters


def name_letter(shape: np.ndarray) -> str:
    """A, B, C or D from a letter's ink (rows top to bottom); "?" for anything else. Read as a
    person reads a map turned upside down or in a mirror: the letters are the same letters."""
    inset = max(1, shape.shape[0] // 20)
    foot, head = shape[max(0, shape.shape[0] - 1 - inset)], shape[min(shape.shape[0] - 1, inset)]
    if any(len(runs_1d(row)[0]) == 2 for row in (foot, head)):
        return "A"  # the only one on two legs, upright or upside down (small bold type may fill its hole)
    return {0: "C", 1: "D", 2: "B"}.get(_holes(shape), "?")


def _holes(shape: np.ndarray) -> int:
    """White regions enclosed by the ink (not reaching the letter's box)."""
    padded = np.pad(~shape, 1, constant_values=True)
    white = components(padded, diagonal=False)
    enclosed = (white.top > 0) & (white.left > 0)
    enclosed &= (white.bottom < padded.shape[0] - 1) & (white.right < padded.shape[1] - 1)
    return int((enclosed & (white.area >= 4)).sum())


def trace_grey_paths(image: Image.Image) -> tuple[dict[str, Letter], list[set[str]]]:
    """The station letters, and for each path the stations it comes close to, on a map without
    colour, where two paths may show the same grey. A person follows each line instead, and so
    does this: the paths run along the grid in horizontal and vertical bars, and where two
    bars meet they either turn (both end there: a corner of one path) or cross (both go on:
    two paths, the way the map is drawn, which never lets a path turn on another or run along
    it). Bars joined corner to corner are one path."""
    grey = np.asarray(image.convert("L"), dtype=np.int16)
    black = grey < LETTER_GREY
    letters = {letter.name: letter for letter in letters_in(black)}
    drawn = (grey < PATH_GREY) & ~dilate(black, 2)  # the letters' soft edges are no path
    width = stroke_width(drawn)
    bar = 2 * width + 3  # a bar is longer than twice its width; another bar across is as wide as it
    across = components(_long_runs(drawn, bar), diagonal=False)
    down = components(_long_runs(drawn.T, bar).T, diagonal=False)
    if not len(across) and not len(down):
        raise AnalysisError("no paths on the map")
    # Bars that overlap either turn into each other (each ends within its soft edge of the
    # other's far side) or cross (each goes on for a grid step or more past the other).
    slack = width + 2
    overlap = (
        (across.left[:, None] <= down.right[None]) & (down.left[None] <= across.right[:, None])
        & (across.top[:, None] <= down.bottom[None]) & (down.top[None] <= across.bottom[:, None])
    )  # fmt: skip
    across_ends = (down.left[None] - across.left[:, None] <= slack) | (
        across.right[:, None] - down.right[None] <= slack
    )
    down_ends = (across.top[:, None] - down.top[None] <= slack) | (down.bottom[None] - across.bottom[:, None] <= slack)
    corners = np.argwhere(overlap & across_ends & down_ends)
    parent = list(range(len(across) + len(down)))

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, d in corners:
        parent[root(int(a))] = root(len(across) + int(d))
    boxes = [(across, i) for i in range(len(across))] + [(down, i) for i in range(len(down))]
    paths: dict[int, set[str]] = {}
    for node, (found, i) in enumerate(boxes):
        stations = paths.setdefault(root(node), set())
        for letter in letters.values():
            x, y = letter.centre
            dx = max(found.left[i] - x, x - (found.right[i] + 1), 0.0)
            dy = max(found.top[i] - y, y - (found.bottom[i] + 1), 0.0)
            if np.hypot(dx, dy) <= REACH * letter.height:
                stations.add(letter.name)
    ends = list(paths.values())
    if any(len(stations) != 2 for stations in ends):
        raise AnalysisError("a path on the map could not be followed from one station to another")
    return letters, ends


def _long_runs(mask: np.ndarray, length: float) -> np.ndarray:
    """The pixels of `mask` in runs along a row at least `length` long."""
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    steps = np.diff(padded, axis=1)
    rows, starts = np.nonzero(steps == 1)
    _, ends = np.nonzero(steps == -1)
    keep = ends - starts >= length
    marks = np.zeros((mask.shape[0], mask.shape[1] + 1), dtype=np.int32)
    np.add.at(marks, (rows[keep], starts[keep]), 1)
    np.add.at(marks, (rows[keep], ends[keep]), -1)
    return np.cumsum(marks, axis=1)[:, :-1] > 0


def path_colours(rgb: np.ndarray, coloured: np.ndarray) -> list[np.ndarray]:
    """The paths' colours (0..1 RGB): the commonest exact colours, darkest first, dropping the
    paler blends of one already taken (a stroke's anti-aliased edge)."""
    picked = rgb[coloured].astype(np.int32)
    if not len(picked):
        raise AnalysisError("no coloured paths on the map")
    keys, counts = np.unique(picked[:, 0] << 16 | picked[:, 1] << 8 | picked[:, 2], return_counts=True)
    keys = keys[counts >= MIN_SHARE * counts.max()]
    values = np.stack([keys >> 16, (keys >> 8) & 255, keys & 255], axis=1).astype(np.float32) / 255
    order = np.argsort(values.min(axis=1) + values.max(axis=1))  # darkest (fullest ink) first
    taken: list[np.ndarray] = []
    for value in values[order]:
        if not any(colour_coverage(value[None] * 255, tuple(colour), BLEND_MISFIT)[0] > 0 for colour in taken):
            taken.append(value)
    return taken


def _path_ends(mask: np.ndarray, bridge: int, letters: dict[str, Letter], scale: int) -> list[set[str]]:
    """For each path in `mask` (one colour, every `scale`-th pixel): the stations its ink comes
    close to. Breaks up to `bridge` pixels wide (another path crossing on top) are closed."""
    found = components(dilate(mask, bridge))
    labels = found.labels(mask.shape) * mask
    ends: list[set[str]] = [set() for _ in range(len(found))]
    for letter in letters.values():
        centre = (letter.centre[0] / scale, letter.centre[1] / scale)
        for label in _labels_near(labels, centre, REACH * letter.height / scale):
            ends[label - 1].add(letter.name)
    return ends


def _labels_near(labels: np.ndarray, centre: tuple[float, float], radius: float) -> set[int]:
    height, width = labels.shape
    x0, x1 = max(0, int(centre[0] - radius)), min(width, int(centre[0] + radius) + 1)
    y0, y1 = max(0, int(centre[1] - radius)), min(height, int(centre[1] + radius) + 1)
    ys, xs = np.ogrid[y0:y1, x0:x1]
    inside = np.hypot(xs + 0.5 - centre[0], ys + 0.5 - centre[1]) <= radius
    return set(np.unique(labels[y0:y1, x0:x1][inside]).tolist()) - {0}


def stroke_width(mask: np.ndarray, every: int = 4) -> float:
    """A stroke's width: the typical length of runs across the strokes, on every few rows and
    columns (vertical strokes cross rows in runs as long as they are wide; horizontal ones
    cross columns)."""
    widths = []
    for lines in (mask[::every], mask[:, ::every].T):
        padded = np.pad(lines, ((0, 0), (1, 1)))
        steps = np.diff(padded.astype(np.int8), axis=1)
        lengths = np.nonzero(steps == -1)[1] - np.nonzero(steps == 1)[1]
        if lengths.size:
            widths.append(float(np.median(lengths)))
    return min(widths) if widths else 1.0
