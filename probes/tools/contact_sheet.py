"""A contact sheet for one mined quadruple: the four images numbered as in the record, and their
pairwise CLIP and DINOv2 similarities printed beneath, so an author can see at a glance why the
set qualified (DiscriBench's erroneous-agreement conditions; see `probes.tools.quadruples`).

Similarities are printed cut (not rounded) to three decimals, `shown(x)`: cutting never moves a
value across either condition (a CLIP pair >= 0.95 never prints below 0.950; a DINOv2 pair
< 0.6 never prints as 0.600), so the sheet always agrees with the test it records. Uses PIL's
default font.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_FLOOR, Decimal

from PIL import Image, ImageDraw, ImageFont, ImageOps

THUMB = 256
PAD = 12
FONT_SIZE = 15
CELL = 64  # width of one table column
BACKGROUND = (255, 255, 255)
INK = (20, 20, 20)
MARK = (200, 30, 30)


def shown(value: float) -> str:
    """A similarity as printed: cut toward minus infinity to three decimals."""
    return str(Decimal(repr(float(value))).quantize(Decimal("0.001"), rounding=ROUND_FLOOR))


def render(
    title: str,
    images: Sequence[Image.Image],
    names: Sequence[str],
    clip: Sequence[Sequence[float]],
    dino: Sequence[Sequence[float]],
    clip_min: float,
    dino_max: float,
) -> Image.Image:
    """The sheet: a 2 x 2 grid of the images labelled 1-4 with their names, then two 4 x 4 tables.
    DINOv2 pairs under `dino_max` are marked with `*` in red."""
    font = _font(FONT_SIZE)
    small = _font(FONT_SIZE - 3)
    line = FONT_SIZE + 6
    grid_w = 2 * THUMB + 3 * PAD
    grid_h = 2 * (THUMB + line) + 3 * PAD
    table_h = 6 * line
    sheet = Image.new("RGB", (grid_w, line + PAD + grid_h + 2 * table_h + PAD), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    draw.text((PAD, PAD // 2), title, fill=INK, font=font)
    top = line + PAD
    for index, (image, name) in enumerate(zip(images, names, strict=True)):
        x = PAD + (index % 2) * (THUMB + PAD)
        y = top + PAD + (index // 2) * (THUMB + line + PAD)
        thumb = ImageOps.contain(image.convert("RGB"), (THUMB, THUMB))
        sheet.paste(thumb, (x + (THUMB - thumb.width) // 2, y + (THUMB - thumb.height) // 2))
        draw.rectangle((x, y, x + 28, y + line), fill=INK)
        draw.text((x + 9, y + 2), str(index + 1), fill=BACKGROUND, font=font)
        draw.text((x, y + THUMB + 3), _fit(name, draw, small, THUMB), fill=INK, font=small)
    y = top + grid_h
    y = _table(draw, y, f"CLIP cosine (every pair >= {clip_min:g})", clip, None, font, line)
    _table(draw, y, f"DINOv2 cosine (some pair < {dino_max:g}, marked *)", dino, dino_max, font, line)
    return sheet


def _table(draw, y, heading, values, below, font, line) -> int:
    draw.text((PAD, y), heading, fill=INK, font=font)
    y += line
    for column in range(4):
        draw.text((PAD + (column + 1) * CELL, y), str(column + 1), fill=INK, font=font)
    for row in range(4):
        y += line
        draw.text((PAD, y), str(row + 1), fill=INK, font=font)
        for column in range(4):
            if row == column:
                continue
            value = values[row][column]
            marked = below is not None and value < below
            text = shown(value) + ("*" if marked else "")
            draw.text((PAD + (column + 1) * CELL, y), text, fill=MARK if marked else INK, font=font)
    return y + line


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError, ImportError):  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def _fit(text: str, draw: ImageDraw.ImageDraw, font, width: int) -> str:
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength("..." + text, font=font) > width:
        text = text[1:]
    return "..." + text
