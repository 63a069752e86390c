"""What a picture transform does to an item's truth.

A condition that transforms the picture (upside down, mirror, grayscale, smaller) sends another
picture than the one the item's answer was written for. Grading never compares a reply with the
truth of a picture that was not sent, so each benchmark family declares how its answer follows
each transform (`Benchmark.truth_under`), with these building blocks:

- the truth stands: counts, letters and materials do not move when the picture is flipped;
- the truth moves with the picture: a family that knows its geometry re-measures it (the
  parametric illusions), or swaps the answers that name the two places a reflection exchanges
  (IllusionVQA's soft-localization: the left object and the right one);
- the truth is unknown: `unknown` keeps the item asked but ungraded, with the reason shown in the
  cell and stored with the result. `by_words` is the rule for items whose answers we did not draw
  (IllusionVQA comprehension, DiscriBench, a user's folder, an upload): a question, option or
  conversation that names a place the transform moves (left and right in a mirror; top, bottom,
  above, below, up and down upside down; a turning sense in either), or a colour that grayscale
  takes away, makes the truth unknown. The rule is deliberately wide: an item it wrongly leaves
  ungraded costs a point of coverage, one it wrongly grades costs a wrong number.

Grayscale is one rule for every item (`in_grey`): the truth stands unless the words name a
colour; then it is unknown, unless the family drew the picture itself and declares how what its
words name by colour is still told apart in grey (`Benchmark.told_apart_in_grey`), so that a
person could still answer: the illusions' red targets turn a grey no other ink has, BlindTest's
blue and red lines two different greys, its red oval the only ring around black letters, its
subway paths lines that can be followed through every crossing. What grayscale makes of a
colour is Pillow's luma (`grey_of`), as the condition converts the picture.

A reflection is named by the pixel axis it reverses: `rows` (upside down, a top-bottom mirror,
so left stays left) or `columns` (mirror, left-right).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from PIL import Image

from probes.core.types import AnswerKind, Item

# The picture transforms a condition may apply, and the axis a reflection reverses.
REFLECTIONS: dict[str, str] = {"flip-vertical": "rows", "flip-horizontal": "columns"}
PICTURE_TRANSFORMS = ("flip-vertical", "flip-horizontal", "grayscale", "resize-256")
SHOWN_AS = {
    "flip-vertical": "upside down",
    "flip-horizontal": "mirrored",
    "grayscale": "in grayscale",
    "resize-256": "smaller",
}

_TURNING = r"clockwise|counter-?clockwise|anti-?clockwise"
# Words naming a place along the axis a reflection reverses (English whole words in any case; the
# Japanese of DiscriBench and the texture set, 左右 and 上下, wherever they stand).
PLACE_WORDS: dict[str, re.Pattern[str]] = {
    "columns": re.compile(
        rf"\b(left|right|leftmost|rightmost|left-hand|right-hand|lefthand|righthand|{_TURNING})\b|左|右|時計回り", re.I
    ),
    "rows": re.compile(
        r"\b(top|bottom|topmost|bottommost|above|below|upper|lower|uppermost|lowermost|up|down|upward|upwards|"
        rf"downward|downwards|upside|upright|beneath|underneath|higher|highest|lowest|overhead|{_TURNING})\b"
        r"|上|下|時計回り",
        re.I,
    ),
}
# Words naming a hue, which grayscale takes away (English, and the Japanese of the texture set).
COLOUR_WORDS = re.compile(
    r"\b(colou?rs?|colou?red|colou?rful|hues?|red|reds|reddish|green|greenish|blue|bluish|yellow|yellowish|orange|"
    r"purple|violet|pink|brown|cyan|magenta|turquoise|teal|maroon|crimson|scarlet|navy|beige|golden|gold)\b"
    r"|色|カラフル|赤|青|緑|黄|紫|桃|橙|茶",
    re.I,
)


def unknown(item: Item, reason: str) -> Item:
    """The item asked as it is, with no right answer under this condition: stored ungraded."""
    return item.with_changes(target=None, ungraded_because=reason)


def by_words(item: Item, transform: str, texts: Iterable[str] | None = None) -> Item:
    """The truth stands unless `texts` (by default the item's question and options) name what
    `transform` changes: a place it moves, or a colour it takes away."""
    if item.target is None:
        return item
    words = list(texts) if texts is not None else [item.question, *item.options]
    pattern = PLACE_WORDS.get(REFLECTIONS.get(transform, "")) or (COLOUR_WORDS if transform == "grayscale" else None)
    if pattern is None:
        return item
    for text in words:
        found = pattern.search(text or "")
        if found:
            return unknown(item, f"truth unknown {SHOWN_AS[transform]}: the item says {found.group(0)!r}")
    return item


def in_grey(item: Item, told_apart: str | None) -> Item:
    """`item` in grayscale: `by_words`, unless `told_apart` says how the things its words name
    by colour are still told apart in grey (a family's declaration for pictures it drew)."""
    return item if told_apart else by_words(item, "grayscale")


def grey_of(colour: tuple[int, int, int]) -> int:
    """The grey (0..255) a colour (0..255 RGB) turns into in grayscale: Pillow's ITU-R 601-2
    luma, which `ImageOps.grayscale` and `convert("L")` compute."""
    return Image.new("RGB", (1, 1), colour).convert("L").getpixel((0, 0))


def swap_options(item: Item, pairs: Iterable[tuple[str, str]]) -> Item:
    """The target moved to the option that names the other place of a swapped pair (by option
    text): 'The left object' becomes 'The right object' in a mirror."""
    if item.kind is not AnswerKind.CHOICE or item.target is None:
        return item
    chosen = item.options[item.target]
    for first, second in pairs:
        other = {first: second, second: first}.get(chosen)
        if other is not None and other in item.options:
            return item.with_changes(target=item.options.index(other))
    return item


# Letters that read as another letter once reflected: a circled 'b' in a mirror is a 'd'.
LETTER_REFLECTIONS: dict[str, dict[str, str]] = {
    "columns": {"b": "d", "d": "b", "p": "q", "q": "p"},
    "rows": {"b": "p", "p": "b", "d": "q", "q": "d", "n": "u", "u": "n", "m": "w", "w": "m", "M": "W", "W": "M"},
}


def letter_under(item: Item, transform: str) -> Item:
    """A letter stays itself when its picture is reflected, unless its reflection is another
    letter; then which one the item asks for is unknown."""
    axis = REFLECTIONS.get(transform)
    if axis is None or not isinstance(item.target, str):
        return item
    other = LETTER_REFLECTIONS[axis].get(item.target)
    if other is None:
        return item
    return unknown(item, f"truth unknown {SHOWN_AS[transform]}: the letter '{item.target}' reads as '{other}'")
