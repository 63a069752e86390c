"""(rows, columns): "rows={4} columns={5}", "(4, 5)", "4 rows and 5 columns", "4 x 5", "Rows: 4\\n
Columns: 5". A row count and a column count said next to each other make one answer; one alone
("There are 5 rows") answers nothing. A reply that names its own order ("6 × 5 (columns × rows)")
is read in that order.
"""

from __future__ import annotations

import re

from probes.reading.common import NUM, WORDS, Context, Found, to_int

_SEP = r"[\"']?\s*(?:[:=|–—-]|\bis\b|\bare\b|\bcount\s+is\b)?\s*[{(\[]?\s*"
_AFTER_KEY = r"(?<![=:{|])(?<![=:{|]\s)"  # "Rows=9 Columns=9": the 9 before "Columns" is the rows'
_ROW = re.compile(
    r"\brows?\b" + _SEP + NUM + r"|" + _AFTER_KEY + NUM + r"[ \t]*(?:[\w-]+[ \t]+)?rows?\b", re.IGNORECASE
)
_COLUMN = re.compile(
    r"\b(?:columns?|cols?)\b" + _SEP + NUM + r"|" + _AFTER_KEY + NUM + r"[ \t]*(?:[\w-]+[ \t]+)?(?:columns?|cols?)\b",
    re.IGNORECASE,
)
_PAREN = re.compile(r"\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)")
_TIMES = re.compile(
    r"(?<![\w.])(\d{1,3}|" + WORDS + r")\s*(?:x|×|\*|-?\s*by\s*-?)\s*(\d{1,3}|" + WORDS + r")(?![\w])"
    r"(?P<swapped>\s*\(?\s*(?:columns?|cols?|width)\s*(?:x|×|\*|by)\s*(?:rows?|height)\s*\)?)?",
    re.IGNORECASE,
)
_MAX_GAP = 60  # characters between a row count and its column count
_NOT_EXACT = re.compile(
    r"\b(?:about|around|approximately|roughly|maybe|perhaps|possibly|at\s+least)\s+[({]?\s*\d"
    r"|\d\s*[)}]?\s*(?:or|/)\s*[({]?\s*(?:rows?\s*=\s*\{?\s*)?\d|\beither\b[^.\n]{0,80}\bor\b",
    re.IGNORECASE,
)


def _number(match: re.Match[str]) -> int:
    return to_int(next(g for g in match.groups() if g))


def _keyword_pairs(text: str) -> list[Found]:
    """A row count and a column count (either order) with no other count between them."""
    mentions = [(m.start(), m.end(), "row", _number(m)) for m in _ROW.finditer(text)]
    mentions += [(m.start(), m.end(), "column", _number(m)) for m in _COLUMN.finditer(text)]
    mentions.sort()
    found = []
    for first, second in zip(mentions, mentions[1:], strict=False):
        if first[2] != second[2] and second[0] - first[1] <= _MAX_GAP and second[0] >= first[1]:
            rows, columns = (first[3], second[3]) if first[2] == "row" else (second[3], first[3])
            found.append(Found((rows, columns), first[0], second[1]))
    return found


def _candidates(text: str) -> list[Found]:
    found = _keyword_pairs(text)
    for match in _PAREN.finditer(text):
        found.append(Found((int(match.group(1)), int(match.group(2))), match.start(), match.end()))
    for match in _TIMES.finditer(text):
        a, b = to_int(match.group(1)), to_int(match.group(2))
        found.append(Found((b, a) if match.group("swapped") else (a, b), match.start(), match.end()))
    found.sort(key=lambda f: (f.start, -f.end))
    # A pair inside another (the "(4, 5)" of "rows (4, 5)...") is the same mention.
    kept: list[Found] = []
    for f in found:
        if kept and f.start < kept[-1].end:
            continue
        kept.append(f)
    return kept


def strict(text: str, _: Context) -> tuple[int, int] | None:
    """A pair that opens the text (after a marker, inside braces)."""
    head = text[:200]
    found = _candidates(head)
    if found and not head[: found[0].start].strip(" \t\"'“‘[{:*-"):
        return found[0].value
    return None


def whole(text: str, ctx: Context) -> tuple[int, int] | None:
    found = _candidates(text)
    if (
        len(found) == 1
        and re.fullmatch(r"[\s\"'“‘(\[{:*.-]*", text[: found[0].start])
        and re.fullmatch(r"[\s\"'”’)\]}.!*]*", text[found[0].end :])
    ):
        return found[0].value
    return None


def loose(text: str, _: Context) -> Found | object | None:
    found = _candidates(text)
    return found[-1] if found else None


def confirms(text: str, ctx: Context) -> Found | object | None:
    return loose(text, ctx)


def hedged(zone: str, _: Context) -> bool:
    return bool(_NOT_EXACT.search(zone))


def same(a, b) -> bool:
    return tuple(a) == tuple(b)
