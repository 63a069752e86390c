"""A single letter: "e", "The circled letter is 'e'.", "The character highlighted with a red oval
is k" (BlindTest's second wording), "The red oval is around the 'w'".

An article or a pronoun is not a letter: in "The circled letter is a vowel" and "Answer: I think
it's 'n'" the "a" and the "I" are words. Two letters named ("the letters 'd' and 'e'", "'l' or
'I'") are no single answer.
"""

from __future__ import annotations

import re

from probes.reading.common import Context, Found

_OPEN = r"[\"'“‘«「]"
_CLOSE = r"[\"'”’»」]"
_TOKEN = rf"(?:{_OPEN}([A-Za-z]){_CLOSE}|([A-Za-z])(?![\w'’]))"
_LEAD = r"(?:(?:an?|the)\s+)?(?:(?:capital|upper-?case|lower-?case|small|big|single)\s+)?(?:(?:letter|character)\s+)?"
_DESCRIBED = (
    r"(?:\s+(?:that\s+is|which\s+is|being|that's|that\s+was))?"
    r"(?:\s+(?:circled|highlighted|marked|enclosed|encircled|selected|surrounded))?"
    r"(?:\s+(?:with|by|in|inside|within)\s+(?:a\s+|the\s+)?(?:red\s+)?(?:oval|circle|ellipse|ring|red|marker))?"
)
_NAMED = re.compile(
    r"\b(?:letter|character)(?=[\s:])"
    + _DESCRIBED
    + r"(?:\s+(?:is|was|would\s+be|appears\s+to\s+be|seems\s+to\s+be))?\s*:?\s*"
    + _LEAD
    + _TOKEN
    + r"|\b(?:oval|circle|ellipse|ring)\s+(?:is\s+)?(?:drawn\s+|placed\s+|located\s+)?"
    r"(?:around|surrounds|encloses|encircles|highlights|covers|contains|marks|is\s+on|over)\s+"
    + _LEAD
    + _TOKEN
    + r"|\b(?:circled|highlighted|answer)\s*:\s*"
    + _LEAD
    + _TOKEN,
    re.IGNORECASE,
)
_QUOTED = re.compile(rf"{_OPEN}([A-Za-z]){_CLOSE}")
_STRICT = re.compile(r"[\s\"'“‘«「(\[{:*-]*([A-Za-z])(?=[\"'”’»」)\]}.,!:;\s]|$)")
_WHOLE = re.compile(r"[\s\"'“‘«「(\[{*]*([A-Za-z])[\"'”’»」)\]}.!\s]*")
_ALTERNATIVES = re.compile(
    rf"(?:{_OPEN}[A-Za-z]{_CLOSE}|\b[A-Za-z]\b)\s*,?\s*(?:or(?:\s+(?:maybe|possibly|perhaps))?|/)\s*"
    rf"(?:{_OPEN}[A-Za-z]{_CLOSE}|\b[A-Za-z]\b)(?![\w'])"
    rf"|\b(?:maybe|perhaps|possibly)\s+(?:the\s+)?(?:letter\s+)?{_OPEN}[A-Za-z]{_CLOSE}"
    # "around the 'n' and 'o'": two letters (but "between 'c' and 'n'" places one).
    rf"|(?<!between\s){_OPEN}[A-Za-z]{_CLOSE}\s*(?:,|and|&)\s*(?:the\s+)?{_OPEN}[A-Za-z]{_CLOSE}",
    re.IGNORECASE,
)


# What may follow a letter named bare: "the letter a or the letter b", "the letter a in ...".
_WORD_FOLLOWS = re.compile(r"\s+(?!(?:or|and|in|is|was|of|from|which|that|at|on|with|as|near|next)\b)[A-Za-z]", re.I)


def _is_word(text: str, match: re.Match[str], group: int) -> bool:
    """A bare "a", "A" or "I" followed by a word is an article or a pronoun, not a letter."""
    return match.group(group) in ("a", "A", "I") and bool(_WORD_FOLLOWS.match(text, match.end(group)))


def _named(text: str) -> list[Found]:
    found = []
    for match in _NAMED.finditer(text):
        index = next(i for i in range(1, (match.lastindex or 0) + 1) if match.group(i))
        quoted = index % 2 == 1  # each token is (quoted letter, bare letter)
        if not quoted and _is_word(text, match, index):
            continue
        found.append(Found(match.group(index), match.start(index), match.end(index)))
    return found


def strict(text: str, _: Context) -> str | None:
    match = _STRICT.match(text)
    if match and not _is_word(text, match, 1):
        return match.group(1)
    head = text[:200]
    named = _named(head)
    if named:
        return named[0].value
    quoted = _QUOTED.search(head)
    return quoted.group(1) if quoted else None


def whole(text: str, _: Context) -> str | None:
    match = _WHOLE.fullmatch(text)
    return match.group(1) if match else None


def loose(text: str, ctx: Context) -> Found | object | None:
    named = _named(text)
    if named:
        return named[-1]
    quoted = list(_QUOTED.finditer(text))
    if quoted and len({m.group(1).casefold() for m in quoted}) == 1:
        return Found(quoted[-1].group(1), quoted[-1].start(1), quoted[-1].end(1))
    return None


def confirms(text: str, ctx: Context) -> Found | object | None:
    return loose(text, ctx)


def hedged(zone: str, _: Context) -> bool:
    if _ALTERNATIVES.search(zone):
        return True
    # "the letter 'e' or maybe the letter 'm'": two named letters offered as alternatives.
    named = _named(zone)
    for first, second in zip(named, named[1:], strict=False):
        between = zone[first.end : second.start]
        if not same(first.value, second.value) and len(between) < 40 and re.search(r"\bor\b", between, re.I):
            return True
    return False


def same(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()
