"""The circled letter: which letter of a word has an oval drawn around it?

1. The oval. In colour it is the red ink. In a grey copy it is the ink that is neither a letter's
   black core nor the soft edge around one: the oval's own grey (red turns a dark grey) never
   reaches black, except where it crosses a letter.
2. An ellipse is fitted to those pixels (a least-squares conic, each pixel weighted by its ink),
   which gives the oval's centre line; the stroke's width comes from how far its ink spreads
   across that line. Each pixel's signed distance to the line is then the conic's value over
   its gradient.
3. The circled letter is the black ink wholly inside the oval and clear of its stroke. A
   neighbour the oval crosses is cut by the stroke: the piece of it left inside runs up to the
   stroke, so it is not taken.
4. Which letter that ink is: it is compared with every letter of the alphabet, upper and lower
   case, set in the typeface the words are printed in (Pillow's bundled font, which any reader
   of these pictures can name), each at the size that makes it as tall as the ink, and the
   closest match wins. A person reads the letter the same way, knowing the alphabet; nothing of
   the item is read but its picture.
"""

from __future__ import annotations

import functools
import string

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from probes.baselines.pixels.imaging import AnalysisError, colourless, components, dilate

ALPHABET = string.ascii_letters
CORE = 51  # a letter's core is darker than this (0..255), darker than red's grey (76) in a grey copy
FAINT = 235  # ink of the oval: lighter than this; the white ground is above it
RED_INK = 0.3  # in colour, a pixel this far towards red is oval
DARK = 128  # a letter's ink, half covered or more (0..255)
CLEAR = 0.5  # px: the circled letter keeps at least this far inside the stroke's inner edge
MIN_RING = 0.1  # arcs of the oval below this share of the longest are specks, not oval
SOLID = 0.25  # a letter's extent (its height sets the size it is read at) counts pixels this dark
WELL_READ = 0.02  # a glyph this close to the ink is the letter (the typeface's own glyph matches exactly)
REFLECTED_MARGIN = 0.5  # a reflected reading must leave under this share of the upright one's mismatch
SIZES = range(6, 401)  # font px sizes a letter may be read at
REFERENCE = 100  # px size at which each letter's proportions are measured


def read_circled_letter(image: Image.Image) -> str:
    rgb = np.asarray(image.convert("RGB"), dtype=np.int16)
    lightest = rgb.max(axis=2)
    if colourless(image):
        ring_ink = np.clip((255 - lightest) / 255, 0.0, 1.0) * ((lightest < FAINT) & ~dilate(lightest < CORE, 1))
    else:
        redness = (rgb[..., 0] - np.maximum(rgb[..., 1], rgb[..., 2])) / 255
        ring_ink = np.where(redness >= RED_INK, redness, 0.0)
    distance, width = _fit_oval(ring_ink)
    # Ink joined to the oval's stroke (a neighbour it crosses, cut by it) or outside it is not
    # the circled letter. Joined side by side only: a letter clear of the stroke by a pixel and
    # a half touches it at no side.
    dark = lightest < DARK
    shapes = dark | ((ring_ink > 0) & (np.abs(distance) <= width / 2 + 1))
    found = components(shapes, diagonal=False)
    labels = found.labels(shapes.shape)
    reach = np.full(len(found) + 1, -np.inf)
    np.maximum.at(reach, labels[shapes], distance[shapes])
    clear = np.flatnonzero(reach[1:] < -(width / 2 + CLEAR)) + 1
    chosen = np.isin(labels, clear) & dark
    if not chosen.any():
        raise AnalysisError("no letter lies wholly inside the oval")
    near = dilate(chosen, 1) & (distance < -(width / 2 + CLEAR))  # and the soft edge around its ink
    return _closest_letter(_cropped(np.where(near, (255 - lightest) / 255, 0.0)))


def _fit_oval(ink: np.ndarray) -> tuple[np.ndarray, float]:
    """Each pixel's signed distance (px, negative inside) to the centre line of the oval drawn
    with `ink` (0..1 per pixel), and the stroke's width."""
    mask = ink > 0
    found = components(mask)
    if not len(found):
        raise AnalysisError("there is no oval on the picture")
    labels = found.labels(mask.shape)
    keep = np.flatnonzero(found.area >= MIN_RING * found.area[0]) + 1
    ys, xs = np.nonzero(np.isin(labels, keep))
    weights = ink[ys, xs]
    conic = None
    for _ in range(3):  # refit on the pixels near the oval: stray ink does not pull it
        conic = _conic(xs + 0.5, ys + 0.5, weights)
        near = np.abs(_distance(conic, xs + 0.5, ys + 0.5)) <= max(3.0, 4 * _width(conic, xs, ys, weights))
        if near.all():
            break
        xs, ys, weights = xs[near], ys[near], weights[near]
    width = _width(conic, xs, ys, weights)
    # Only around the oval's ink is the distance needed: elsewhere it reads as far outside.
    margin = int(2 * width) + 4
    top, left = max(0, ys.min() - margin), max(0, xs.min() - margin)
    bottom, right = min(ink.shape[0], ys.max() + margin + 1), min(ink.shape[1], xs.max() + margin + 1)
    gy, gx = np.mgrid[top:bottom, left:right]
    distance = np.full(ink.shape, np.inf)
    distance[top:bottom, left:right] = _distance(conic, gx + 0.5, gy + 0.5)
    return distance, width


def _conic(xs: np.ndarray, ys: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(A, B, C, D, E, F) of the ellipse A x^2 + B xy + C y^2 + D x + E y + F = 0 nearest the
    weighted points in least squares, negative inside."""
    if len(xs) < 6:
        raise AnalysisError("too little of the oval is visible to follow it")
    cx, cy = np.average(xs, weights=weights), np.average(ys, weights=weights)
    scale = float(np.sqrt(np.average((xs - cx) ** 2 + (ys - cy) ** 2, weights=weights))) or 1.0
    u, v = (xs - cx) / scale, (ys - cy) / scale
    design = np.stack([u * u, u * v, v * v, u, v, np.ones_like(u)], axis=1) * np.sqrt(weights)[:, None]
    a, b, c, d, e, f = np.linalg.svd(design, full_matrices=False)[2][-1]
    if b * b - 4 * a * c >= 0:
        raise AnalysisError("the red ink is not an oval")
    if a < 0:  # negative at the centre, as inside
        a, b, c, d, e, f = -a, -b, -c, -d, -e, -f
    # Back from (u, v) to pixel coordinates.
    s2 = scale * scale
    big_a, big_b, big_c = a / s2, b / s2, c / s2
    big_d = d / scale - 2 * big_a * cx - big_b * cy
    big_e = e / scale - 2 * big_c * cy - big_b * cx
    big_f = f + big_a * cx * cx + big_b * cx * cy + big_c * cy * cy - d * cx / scale - e * cy / scale
    return np.array([big_a, big_b, big_c, big_d, big_e, big_f])


def _distance(conic: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The conic's value over its gradient: the signed distance to it, close to the curve."""
    a, b, c, d, e, f = conic
    value = a * xs * xs + b * xs * ys + c * ys * ys + d * xs + e * ys + f
    gradient = np.hypot(2 * a * xs + b * ys + d, b * xs + 2 * c * ys + e)
    return value / np.maximum(gradient, 1e-12)


def _width(conic: np.ndarray, xs: np.ndarray, ys: np.ndarray, weights: np.ndarray) -> float:
    """A band of width w around a line holds its ink at a mean distance of w / 4 from it."""
    spread = np.abs(_distance(conic, xs + 0.5, ys + 0.5))
    return float(4 * np.average(spread, weights=weights))


def _cropped(darkness: np.ndarray) -> np.ndarray:
    rows, columns = np.nonzero(darkness > SOLID)
    return darkness[rows.min() : rows.max() + 1, columns.min() : columns.max() + 1]


def _closest_letter(ink: np.ndarray) -> str:
    """The letter whose glyph, as tall as `ink`, looks most like it; read as it stands first,
    then, when no letter fits it well, also as reflected (a mirrored 'k' is still a 'k')."""
    centre = _centre(ink)
    pad = 2 * max(ink.shape) + 4  # room for any glyph as tall as the ink laid on it
    canvas = np.pad(ink, pad)
    shown = float((ink**2).sum())

    def best(reflection: str | None) -> tuple[float, str]:
        scores = []
        for letter in ALPHABET:
            guess = REFERENCE * ink.shape[0] / _glyph(letter, REFERENCE)[0].shape[0]
            for size in range(int(guess) - 1, int(guess) + 3):
                if size in SIZES:
                    glyph, glyph_centre = _glyph(letter, size, reflection)
                    scores.append(
                        (_mismatch(canvas, shown, (centre[0] + pad, centre[1] + pad), glyph, glyph_centre), letter)
                    )
        return min(scores, default=(np.inf, ""))

    upright = best(None)
    if upright[0] == np.inf:
        raise AnalysisError(f"the circled ink, {ink.shape[0]} px tall, is too small to read as a letter")
    if upright[0] <= WELL_READ:
        return upright[1]
    # A reflection is taken only when it fits far better: an upright 'd' stays a 'd', never a mirrored 'b'.
    reflected = min(best("rows"), best("columns"))
    return reflected[1] if reflected[0] < REFLECTED_MARGIN * upright[0] else upright[1]


def _mismatch(
    canvas: np.ndarray, shown: float, centre: tuple[float, float], glyph: np.ndarray, glyph_centre: tuple[float, float]
) -> float:
    """Squared difference between the ink on `canvas` (its squares summing to `shown`, its
    centre of ink at `centre`) and a glyph, as a share of both inks, with the two laid on each
    other by their centres of ink and then shifted a pixel either way to the best fit."""
    total = shown + float((glyph**2).sum())
    best = -np.inf
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            y0, x0 = round(centre[0] - glyph_centre[0]) + dy, round(centre[1] - glyph_centre[1]) + dx
            window = canvas[y0 : y0 + glyph.shape[0], x0 : x0 + glyph.shape[1]]
            best = max(best, float((window * glyph).sum()))
    return (total - 2 * best) / total


def _centre(ink: np.ndarray) -> tuple[float, float]:
    total = float(ink.sum())
    rows, columns = ink.sum(axis=1), ink.sum(axis=0)
    return float(rows @ np.arange(len(rows))) / total, float(columns @ np.arange(len(columns))) / total


@functools.lru_cache(maxsize=8192)
def _glyph(letter: str, size: int, reflection: str | None = None) -> tuple[np.ndarray, tuple[float, float]]:
    """A letter's ink (0..1) in the bundled font at `size` px, cropped as `_cropped` crops and
    reflected across `reflection` ("rows": upside down; "columns": mirrored), and its centre of ink."""
    side = 3 * size
    scratch = Image.new("L", (side, side), 0)
    ImageDraw.Draw(scratch).text((size, 2 * size), letter, font=_font(size), fill=255, anchor="ls")
    glyph = _cropped(np.asarray(scratch, dtype=np.float64) / 255)
    if reflection is not None:
        glyph = np.ascontiguousarray(np.flip(glyph, axis=0 if reflection == "rows" else 1))
    glyph.flags.writeable = False
    return glyph, _centre(glyph)


@functools.lru_cache(maxsize=512)
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)
