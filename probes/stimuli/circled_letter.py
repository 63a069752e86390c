"""A word with a red oval around one of its letters ("VLMs are blind", task 3).

As the paper describes it (its Fig. 5; no released image of this task is at hand): black
sans-serif text on a white 512 x 512 canvas, a red oval outline drawn over it, tight around one
letter so that it may cross the neighbours.

The font is Pillow's bundled FreeType font (`ImageFont.load_default(size=...)`), so the pixels
do not depend on the fonts of the machine. Each letter is drawn on its own at an integer
origin (the word's advance widths, no kerning), so the ink of every letter is known exactly:
ground truth is the one letter whose ink lies entirely inside the oval's inner edge, read from
those masks, never from the index we meant to circle.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from probes.stimuli.lazy_numpy import np
from probes.stimuli.raster import Drawn, blank, to_image

# Bump when the drawing changes: image references (and so cached answers) are keyed by it.
VERSION = 1
CANVAS = 512
RED = (255, 0, 0)
MARGIN = 4.0  # px of white kept between the oval or the word and the canvas edge
CLEARANCE = 1.5  # px added to the semi-axes beyond the letter's ink (a gap of 1.2 px or more)
OUTSIDE = 0.7  # a neighbour must keep at least this share of its ink outside the oval
VISIBLE = 0.25  # ... and at least this share not covered by the oval's stroke


@dataclass(frozen=True)
class Glyph:
    """One letter's ink: alpha in [0, 1] and where its top-left pixel sits relative to the
    letter's origin (left end of the baseline)."""

    alpha: np.ndarray
    left: int
    top: int

    @property
    def right(self) -> int:
        return self.left + self.alpha.shape[1]

    @property
    def bottom(self) -> int:
        return self.top + self.alpha.shape[0]


@functools.lru_cache(maxsize=512)
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


@functools.lru_cache(maxsize=512)
def glyph(char: str, size: int) -> Glyph:
    """The letter drawn alone (FreeType anti-aliasing), cropped to its ink."""
    side = 3 * size
    scratch = Image.new("L", (side, side), 0)
    ImageDraw.Draw(scratch).text((size, 2 * size), char, font=font(size), fill=255, anchor="ls")
    alpha = np.asarray(scratch, dtype=np.float32) / 255
    rows, columns = np.nonzero(alpha)
    if rows.size == 0:
        raise ValueError(f"{char!r} has no ink in the bundled font")
    top, bottom, left, right = rows.min(), rows.max() + 1, columns.min(), columns.max() + 1
    cropped = alpha[top:bottom, left:right].copy()
    cropped.flags.writeable = False
    return Glyph(cropped, int(left) - size, int(top) - 2 * size)


@functools.lru_cache(maxsize=256)
def font_px(word: str, fill: float, canvas: int) -> int:
    """The largest whole px size at which the word is at most `fill` of the canvas wide (the
    paper fit each word to its canvas, so its letters' size depends on the word's length)."""
    size = 8
    while size < 400 and font(size + 1).getlength(word) <= fill * canvas:
        size += 1
    if font(size).getlength(word) > fill * canvas:
        raise ValueError(f"{word!r} is wider than {fill} of {canvas} px even at {size} px")
    return size


@functools.lru_cache(maxsize=64)
def layout(word: str, size: int) -> tuple[tuple[int, Glyph], ...]:
    face = font(size)
    return tuple((round(face.getlength(word[:i])), glyph(char, size)) for i, char in enumerate(word))


def _corners(origin: int, ink: Glyph, cx: float, cy: float) -> tuple[np.ndarray, np.ndarray]:
    """The corners of every ink pixel of a letter, relative to (cx, cy)."""
    rows, columns = np.nonzero(ink.alpha)
    xs = (origin + ink.left + columns[:, None] + np.array([0, 1, 0, 1]) - cx).ravel()
    ys = (ink.top + rows[:, None] + np.array([0, 0, 1, 1]) - cy).ravel()
    return xs.astype(np.float64), ys.astype(np.float64)


def _share_inside(origin: int, ink: Glyph, cx: float, cy: float, a: float, b: float) -> float:
    """Share of a letter's ink (by alpha) whose pixel squares lie wholly inside an ellipse."""
    xs, ys = _corners(origin, ink, cx, cy)
    inside = ((xs / a) ** 2 + (ys / b) ** 2 < 1).reshape(-1, 4).all(axis=1)
    if inside.all():
        return 1.0
    weights = ink.alpha[np.nonzero(ink.alpha)]
    return min(float(weights[inside].sum() / weights.sum()), 0.999999)


def _share_visible(origin: int, ink: Glyph, cx: float, cy: float, a: float, b: float, width: float) -> float:
    """Share of a letter's ink (by alpha) that a stroke of this width centred outside the inner
    edge (a, b) leaves uncovered: pixel centres inside the inner edge or beyond the outer one,
    with half a pixel of anti-aliased fringe counted as covered."""
    rows, columns = np.nonzero(ink.alpha)
    x = origin + ink.left + columns + 0.5 - cx
    y = ink.top + rows + 0.5 - cy
    within = (x / (a - 0.5)) ** 2 + (y / (b - 0.5)) ** 2 < 1
    beyond = (x / (a + width + 0.5)) ** 2 + (y / (b + width + 0.5)) ** 2 > 1
    weights = ink.alpha[rows, columns]
    return float(weights[within | beyond].sum() / weights.sum())


@functools.lru_cache(maxsize=2048)
def inner_oval(word: str, letter: int, size: int, width: float) -> tuple[float, float, float, float]:
    """The inner edge of the oval around one letter: (cx, cy, a, b) in word coordinates.

    Centred on the letter's ink box; every corner of the letter's ink pixels lies on or inside
    an ellipse whose semi-axes are then grown by CLEARANCE. Among those ellipses (from round to
    tall and narrow), take the smallest by area that leaves at most 30% of each neighbour's
    ink inside it and at least VISIBLE of it uncovered by the stroke (which is drawn over the
    text, as in the paper): tight like the paper's ovals, which may cross a neighbour but
    never swallow or erase it.
    """
    letters = layout(word, size)
    origin, ink = letters[letter]
    cx, cy = origin + ink.left + ink.alpha.shape[1] / 2, ink.top + ink.alpha.shape[0] / 2
    xs, ys = _corners(origin, ink, cx, cy)
    reach = float(np.abs(xs).max())
    neighbours = [letters[i] for i in (letter - 1, letter + 1) if 0 <= i < len(letters)]
    # candidate horizontal semi-axes; for each, the least b with every corner inside (a, b)
    a_all = reach * (1.01 + 0.025 * np.arange(120))
    b_all = np.max(np.abs(ys)[None] / np.sqrt(1 - (xs[None] / a_all[:, None]) ** 2), axis=1)
    areas = (a_all * b_all).tolist()
    shapes = sorted(zip(areas, (a_all + CLEARANCE).tolist(), (b_all + CLEARANCE).tolist(), strict=True))
    for _, a, b in shapes:
        if all(
            _share_inside(o, g, cx, cy, a, b) <= 1 - OUTSIDE and _share_visible(o, g, cx, cy, a, b, width) >= VISIBLE
            for o, g in neighbours
        ):
            return cx, cy, a, b
    raise ValueError(f"no {width:.3g} px oval around letter {letter} of {word!r} leaves its neighbours in sight")


@functools.lru_cache(maxsize=2048)
def inside_shares(word: str, letter: int, size: int, width: float) -> tuple[float, ...]:
    """Each letter's share of ink inside the inner edge of the oval around `letter` (1.0: the
    whole letter is enclosed; every pixel square is tested at its four corners, which is
    enough for a convex ellipse)."""
    cx, cy, a, b = inner_oval(word, letter, size, width)
    return tuple(_share_inside(origin, ink, cx, cy, a, b) for origin, ink in layout(word, size))


@functools.lru_cache(maxsize=64)
def ink_box(word: str, size: int) -> tuple[int, int, int, int]:
    """Bounding box of the whole word's ink, in word coordinates."""
    boxes = [(o + g.left, g.top, o + g.right, g.bottom) for o, g in layout(word, size)]
    return min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)


@dataclass(frozen=True)
class Ellipse:
    cx: float
    cy: float
    a: float  # horizontal semi-axis of the stroke's centre line
    b: float  # vertical semi-axis of the stroke's centre line
    width: float  # stroke width

    def outer_box(self) -> tuple[float, float, float, float]:
        half = self.width / 2 + 1  # +1: the anti-aliased fringe
        return self.cx - self.a - half, self.cy - self.b - half, self.cx + self.a + half, self.cy + self.b + half


@dataclass(frozen=True)
class CircledLetter(Drawn):
    word: str
    letter: int  # index of the circled letter in the word (0-based)
    thickness: float  # oval stroke width as a share of the font's px size (scales with the letters)
    font_size: float  # the word's width as a fraction of the canvas width (sets the font's px size)
    x: float  # word position: 0 = leftmost, 1 = rightmost place where word and oval fit
    y: float  # 0 = topmost, 1 = lowest such place
    position: int = 0  # which of the design's random placements (a label; x and y say where)
    seed: int = 0  # design seed the placement was drawn with (a label, likewise)
    canvas: int = CANVAS

    def __post_init__(self) -> None:
        if not self.word or not all(c.isascii() and c.isalpha() for c in self.word):
            raise ValueError(f"word must be ASCII letters; got {self.word!r}")
        if not 0 <= self.letter < len(self.word):
            raise ValueError(f"letter index {self.letter} is outside {self.word!r} (0 to {len(self.word) - 1})")
        if not 0.01 <= self.thickness <= 0.5:
            raise ValueError(f"thickness is a share of the font size, 0.01 to 0.5; got {self.thickness}")
        if not 0.05 <= self.font_size <= 1:
            raise ValueError(f"font_size is the word's width over the canvas width, 0.05 to 1; got {self.font_size}")
        if not (0 <= self.x <= 1 and 0 <= self.y <= 1):
            raise ValueError(f"x and y are fractions of the free range, 0 to 1; got {self.x}, {self.y}")
        if not 64 <= self.canvas <= 4096:
            raise ValueError(f"canvas must be 64 to 4096 px; got {self.canvas}")
        self.origin()  # raises if the word and its oval cannot fit on the canvas
        circled = self.circled_indices()
        if circled != [self.letter]:
            raise ValueError(f"the oval around letter {self.letter} of {self.word!r} encloses letters {circled}")
        crowded = [i for i, share in enumerate(self.inside_shares()) if i != self.letter and share > 1 - OUTSIDE]
        if crowded:
            raise ValueError(f"the oval around letter {self.letter} of {self.word!r} covers most of letters {crowded}")

    @property
    def ref(self) -> str:
        return (
            f"circled-letter/v{VERSION}:word={self.word},letter={self.letter},thickness={self.thickness!r},"
            f"font_size={self.font_size!r},x={self.x!r},y={self.y!r},position={self.position},seed={self.seed},"
            f"canvas={self.canvas}"
        )

    @property
    def target(self) -> str:
        """The circled character as it appears in the word (read from the geometry)."""
        (index,) = self.circled_indices()
        return self.word[index]

    # --- layout, in word coordinates (origin at the left end of the baseline) -------------

    @property
    def font_px(self) -> int:
        return font_px(self.word, self.font_size, self.canvas)

    @property
    def stroke_px(self) -> float:
        return self.thickness * self.font_px

    def glyphs(self) -> tuple[tuple[int, Glyph], ...]:
        """(origin, ink) of each letter: origins are the advance widths before it, in whole px."""
        return layout(self.word, self.font_px)

    def _oval_in_word(self) -> Ellipse:
        width = self.stroke_px
        cx, cy, a_in, b_in = inner_oval(self.word, self.letter, self.font_px, width)
        return Ellipse(cx, cy, a_in + width / 2, b_in + width / 2, width)

    def _extent(self) -> tuple[float, float, float, float]:
        """Bounding box of all ink and the oval, in word coordinates."""
        left, top, right, bottom = ink_box(self.word, self.font_px)
        x0, y0, x1, y1 = self._oval_in_word().outer_box()
        return min(left, x0), min(top, y0), max(right, x1), max(bottom, y1)

    def origin(self) -> tuple[int, int]:
        """Where the word's origin lands on the canvas: x and y pick a place in the free range,
        which is computed with the oval included, so the word moves to keep the oval on the
        canvas (an oval around the first letter never leaves the left edge)."""
        left, top, right, bottom = self._extent()
        x_lo, x_hi = MARGIN - left, self.canvas - MARGIN - right
        y_lo, y_hi = MARGIN - top, self.canvas - MARGIN - bottom
        if x_hi < x_lo or y_hi < y_lo:
            raise ValueError(
                f"{self.word!r} at {self.font_px} px with its oval does not fit on a {self.canvas} px canvas"
            )
        return math.floor(x_lo + self.x * (x_hi - x_lo)), math.floor(y_lo + self.y * (y_hi - y_lo))

    def oval(self) -> Ellipse:
        """The oval on the canvas."""
        ox, oy = self.origin()
        local = self._oval_in_word()
        return Ellipse(local.cx + ox, local.cy + oy, local.a, local.b, local.width)

    def letter_boxes(self) -> list[tuple[int, int, int, int]]:
        """Each letter's ink box on the canvas: (left, top, right, bottom), right/bottom exclusive."""
        ox, oy = self.origin()
        return [(ox + o + g.left, oy + g.top, ox + o + g.right, oy + g.bottom) for o, g in self.glyphs()]

    # --- ground truth ---------------------------------------------------------------------

    def circled_indices(self) -> list[int]:
        """Letters whose ink lies entirely inside the oval: exactly one in a valid stimulus."""
        return [i for i, share in enumerate(self.inside_shares()) if share == 1.0]

    def inside_shares(self) -> tuple[float, ...]:
        """Share of each letter's ink (by alpha) whose pixel squares lie wholly inside the
        oval's inner edge."""
        return inside_shares(self.word, self.letter, self.font_px, self.stroke_px)

    def visible_shares(self) -> tuple[float, ...]:
        """Share of each letter's ink that the oval's stroke leaves uncovered."""
        cx, cy, a, b = inner_oval(self.word, self.letter, self.font_px, self.stroke_px)
        return tuple(_share_visible(o, g, cx, cy, a, b, self.stroke_px) for o, g in self.glyphs())

    # --- drawing --------------------------------------------------------------------------

    def draw(self) -> np.ndarray:
        canvas = blank(self.canvas, self.canvas)
        ox, oy = self.origin()
        for origin, ink in self.glyphs():
            _ink(canvas, ox + origin + ink.left, oy + ink.top, ink.alpha)
        stroke_ellipse(canvas, self.oval(), RED)
        return canvas

    def render_letter_alone(self, index: int) -> Image.Image:
        """One letter at its place in the word, nothing else: for checking ground truth."""
        canvas = blank(self.canvas, self.canvas)
        ox, oy = self.origin()
        origin, ink = self.glyphs()[index]
        _ink(canvas, ox + origin + ink.left, oy + ink.top, ink.alpha)
        return to_image(canvas)


def _ink(canvas: np.ndarray, x0: int, y0: int, alpha: np.ndarray) -> None:
    """Black ink through an alpha mask (darkening, so overlapping letters stay correct)."""
    height, width = alpha.shape
    region = canvas[y0 : y0 + height, x0 : x0 + width].astype(np.float32)
    region *= 1 - alpha[..., None]
    canvas[y0 : y0 + height, x0 : x0 + width] = np.rint(region).astype(np.uint8)


def stroke_ellipse(canvas: np.ndarray, oval: Ellipse, colour: tuple[int, int, int]) -> None:
    """An axis-aligned ellipse outline of the given width, anti-aliased from an approximate
    signed distance (value over gradient: exact on the curve, good to a small fraction of a
    pixel across a stroke this thin)."""
    height, width = canvas.shape[:2]
    x0, y0, x1, y1 = oval.outer_box()
    x0, y0 = max(0, math.floor(x0) - 1), max(0, math.floor(y0) - 1)
    x1, y1 = min(width, math.ceil(x1) + 2), min(height, math.ceil(y1) + 2)
    if x0 >= x1 or y0 >= y1:
        return
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float64) + 0.5
    px, py = xs - oval.cx, ys - oval.cy
    k0 = np.hypot(px / oval.a, py / oval.b)
    k1 = np.hypot(px / oval.a**2, py / oval.b**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = np.abs(k0 * (k0 - 1) / k1)
    distance[k1 == 0] = min(oval.a, oval.b)  # the exact centre: 0/0 in the formula
    coverage = np.clip(oval.width / 2 + 0.5 - distance, 0.0, 1.0).astype(np.float32)
    region = canvas[y0:y1, x0:x1].astype(np.float32)
    region += (np.asarray(colour, dtype=np.float32) - region) * coverage[..., None]
    canvas[y0:y1, x0:x1] = np.rint(region).astype(np.uint8)


def placement(
    seed: int, word: str, letter: int, thickness: float, font_size: float, position: int
) -> tuple[float, float]:
    """A random place for the word (x and y fractions of the free range), from the design's
    seed and the stimulus' own parameters: each (word, letter, thickness, size) gets its own
    four placements, and the same inputs always give the same place."""
    rng = random.Random(f"circled-letter/{seed}/{word}/{letter}/{thickness}/{font_size}/{position}")
    return round(rng.random(), 4), round(rng.random(), 4)
