"""A table of rows and columns, blank or with one word per cell ("VLMs are blind", task 6).

Looks like the paper's released images: black grid lines from edge to edge of a white square
canvas (the outer border lies on the canvas edge), cells of equal size, and in the text version
one short English word in the middle of every cell. The released images were drawn at 2000 px
and resized to 500, 1250 and 2000, so their line width "10" or "20" is in px at 2000 and scales
with the canvas (2.5 or 5 px at 500); the words' font size is 0.2 of the smaller cell side
(floored to whole px at 2000, then scaled). We draw at the target size directly: lines
anti-aliased by exact pixel coverage, words with Pillow's bundled FreeType font.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from probes.stimuli.lazy_numpy import np

# Bump when the drawing changes: image references (and so cached answers) are keyed by it.
VERSION = 1
REFERENCE_CANVAS = 2000  # px at which the paper's line widths and font sizes are given
FONT_FRACTION = 0.2  # font size over the smaller cell side, as the released generator
GRID_TYPES = ("blank", "text")
SHAPES = ("square", "wide", "tall")  # N x N, N x (N+1), (N+1) x N (rows x columns)

# Common short English words (3 to 6 letters, no repeats: a 15 x 15 grid needs 225).
WORDS = tuple(
    """
    able acid aged also area army away baby back ball band bank base bath bear beat bell belt
    best bird blue boat body bone book boot born both bowl box bread brick bridge brown build
    bush busy cake call calm camp card care cart case cash cat chair chalk cheese chess city
    clay clock cloud coal coat coin cold cook cool corn cost cow crab crow cup dance dark day
    deer desk dish dog doll door dove draw dream dress drink drum duck dust eagle earth east egg
    eight fact fair farm fast fish five flag floor flower fog food foot fork fox frog fruit game
    gate gift girl glass glove goat gold grape grass green hair hand happy hat heart hill home
    honey horse house ice idea iron jam jar jelly joke juice key kind king kite knee lake lamp
    leaf lemon light lime line lion lock long lunch map mango maple milk mint money moon mouse
    mouth music nail name nest net night nose note ocean olive onion orange owl paint paper
    park party peach pear pen piano pig pink plant plate pond queen quiet rain red rice ring
    river road robot rock roof room rope rose salt sand seed sheep ship shoe shop silk silver
    sing sky sleep snow soap sock sofa song soup spoon star stone storm sugar sun table tea
    tent tiger toast tooth towel town toy train tree truck tulip uncle van vase voice wall
    water wave whale wheel white wind window wing winter wolf wood wool world yard yarn yellow
    zebra zero zoo
    """.split()
)


@functools.lru_cache(maxsize=256)
def font(size: float) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


@dataclass(frozen=True)
class Grid:
    rows: int
    columns: int
    canvas: int  # side of the square canvas, px
    thickness: int  # line width in px at a 2000 px canvas (the paper's 10 and 20)
    grid: str = "blank"  # "blank", or "text": one word per cell
    seed: int = 0  # which words (text grids only)

    def __post_init__(self) -> None:
        if self.grid not in GRID_TYPES:
            raise ValueError(f"grid must be one of {', '.join(GRID_TYPES)}; got {self.grid!r}")
        if not (1 <= self.rows <= 40 and 1 <= self.columns <= 40):
            raise ValueError(f"rows and columns must be 1 to 40; got {self.rows} x {self.columns}")
        if self.grid == "text" and self.rows * self.columns > len(WORDS):
            raise ValueError(f"a text grid holds at most {len(WORDS)} cells (one distinct word each)")
        if not 64 <= self.canvas <= 4096:
            raise ValueError(f"canvas must be 64 to 4096 px; got {self.canvas}")
        if not 1 <= self.thickness <= 100:
            raise ValueError(f"thickness must be 1 to 100 (px at 2000 px); got {self.thickness}")
        if self.line_width < 1:
            raise ValueError(f"thickness {self.thickness} at {self.canvas} px draws lines under 1 px wide")
        for gap in (self.cell_width, self.cell_height):
            if gap < 3 * self.line_width:
                raise ValueError(
                    f"{self.rows} x {self.columns} cells at {self.canvas} px leave cells under 3 line widths"
                )

    @property
    def ref(self) -> str:
        return (
            f"grid-count/v{VERSION}:grid={self.grid},rows={self.rows},columns={self.columns},"
            f"canvas={self.canvas},thickness={self.thickness},seed={self.seed}"
        )

    @property
    def scale(self) -> float:
        return self.canvas / REFERENCE_CANVAS

    @property
    def line_width(self) -> float:
        return self.thickness * self.scale

    @property
    def size(self) -> str:
        return f"{self.rows}x{self.columns}"

    @property
    def n(self) -> int:
        return min(self.rows, self.columns)

    @property
    def shape(self) -> str:
        if self.rows == self.columns:
            return "square"
        if self.columns == self.rows + 1:
            return "wide"
        if self.rows == self.columns + 1:
            return "tall"
        return "other"

    # --- geometry -------------------------------------------------------------------------

    def lines(self, count: int) -> list[tuple[float, float]]:
        """Bands [start, end) in px of `count` cells' count + 1 lines: the first on the canvas'
        leading edge, the last on its trailing edge, equal cells between."""
        pitch = (self.canvas - self.line_width) / count
        return [(i * pitch, i * pitch + self.line_width) for i in range(count + 1)]

    def horizontal_lines(self) -> list[tuple[float, float]]:
        return self.lines(self.rows)

    def vertical_lines(self) -> list[tuple[float, float]]:
        return self.lines(self.columns)

    @property
    def counted(self) -> tuple[int, int]:
        """(rows, columns) from the lines drawn: the gaps between consecutive lines."""
        return len(self.horizontal_lines()) - 1, len(self.vertical_lines()) - 1

    @property
    def cell_width(self) -> float:
        return (self.canvas - self.line_width) / self.columns - self.line_width

    @property
    def cell_height(self) -> float:
        return (self.canvas - self.line_width) / self.rows - self.line_width

    @property
    def font_px(self) -> float:
        """As the released generator: 0.2 of the smaller cell side at 2000 px, floored, then
        scaled with the canvas."""
        reference_cell = min(self.cell_width, self.cell_height) / self.scale
        return max(1, math.floor(reference_cell * FONT_FRACTION)) * self.scale

    def words(self) -> list[list[str]]:
        """One distinct word per cell, drawn with the seed; the same for every canvas and line
        width, so those conditions show the same table."""
        rng = random.Random(f"grid-count/{self.seed}/{self.rows}x{self.columns}")
        chosen = rng.sample(WORDS, self.rows * self.columns)
        return [chosen[r * self.columns : (r + 1) * self.columns] for r in range(self.rows)]

    # --- drawing --------------------------------------------------------------------------

    def render(self) -> Image.Image:
        rows = _coverage(self.canvas, self.horizontal_lines())
        columns = _coverage(self.canvas, self.vertical_lines())
        # A pixel's share of the union of a horizontal and a vertical band is h + v - h v, so
        # its white is 255 (1 - h)(1 - v). Rows no horizontal line touches all equal the row
        # of vertical lines alone: fill with that, then redo only the few rows under a line.
        white = 255 * (1 - columns)
        grey = np.empty((self.canvas, self.canvas), dtype=np.uint8)
        grey[:] = np.rint(white).astype(np.uint8)
        touched = np.nonzero(rows)[0]
        grey[touched] = np.rint(np.outer(1 - rows[touched], white)).astype(np.uint8)
        image = Image.fromarray(grey, "L")
        if self.grid == "text":
            self._draw_words(image)  # black on grey levels: drawing before RGB is 3x less work
        return Image.merge("RGB", (image, image, image))

    def word_boxes(self) -> list[tuple[str, tuple[float, float], tuple[float, float, float, float]]]:
        """(word, anchor, ink box) per cell: the ink box (left, top, right, bottom) is centred
        in the cell's interior."""
        face = font(self.font_px)
        horizontal, vertical = self.horizontal_lines(), self.vertical_lines()
        placed = []
        for r, row in enumerate(self.words()):
            for c, word in enumerate(row):
                cx = (vertical[c][1] + vertical[c + 1][0]) / 2
                cy = (horizontal[r][1] + horizontal[r + 1][0]) / 2
                left, top, right, bottom = face.getbbox(word)
                x, y = round(cx - (left + right) / 2), round(cy - (top + bottom) / 2)
                placed.append((word, (x, y), (x + left, y + top, x + right, y + bottom)))
        return placed

    def _draw_words(self, image: Image.Image) -> None:
        draw, face = ImageDraw.Draw(image), font(self.font_px)
        for word, anchor, _ in self.word_boxes():
            draw.text(anchor, word, font=face, fill=0)


def _coverage(canvas: int, bands: list[tuple[float, float]]) -> np.ndarray:
    """Share of each pixel row (or column) covered by the bands: exact area anti-aliasing."""
    edges = np.arange(canvas + 1, dtype=np.float64)
    covered = np.zeros(canvas, dtype=np.float64)
    for start, end in bands:
        covered += np.clip(np.minimum(edges[1:], end) - np.maximum(edges[:-1], start), 0, None)
    return np.clip(covered, 0.0, 1.0)
