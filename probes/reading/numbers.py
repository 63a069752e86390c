"""Whole numbers: a count said as a count ("There are 6 circles", "I count 7", "they cross
twice", "no paths"), as a sum of parts ("4 in the top row and 3 in the bottom row" = 7) or as
an equation ("3 + 3 = 6"), never the first number a reply happens to mention.

The question says what is counted (`counted_nouns`): for "How many squares ...?" "There are 2
lines" is no count, for "How many times do the lines touch?" "There are 2 lines ... they touch 3
times" counts 3. Knowledge about the task ("The Olympic logo has 5 rings") is not a count of the
image. A count that is not exact ("about 5", "at least 3", "5-6", "3 or 4", "it could be 2") is
a hedge; so are parts whose stated total disagrees with their sum.
"""

from __future__ import annotations

import re

from probes.reading.common import HEDGE, NUM, NUM_RE, Context, Found, Spans, sentence_start, sentences, to_int

_MEETING = frozenset(
    {"time", "times", "point", "points", "intersection", "intersections", "crossing", "crossings", "place", "places",
     "spot", "spots", "location", "locations"}
)  # fmt: skip
_GROUPS = (
    (re.compile(r"how\s+many\s+times|intersect|cross(?:es|ing)?\b|\bmeet\b", re.I), _MEETING),
    (re.compile(r"\bcircles?\b", re.I), frozenset({"circle", "circles", "ring", "rings"})),
    (re.compile(r"\bpentagons?\b", re.I), frozenset({"pentagon", "pentagons"})),
    (re.compile(r"\bsquares?\b", re.I), frozenset({"square", "squares"})),
    (re.compile(r"\bpaths?\b|\broutes?\b", re.I), frozenset({"path", "paths", "route", "routes"})),
)
# Words that may sit between a number and its noun ("3 nested squares", "2 distinct
# single-colored paths") or end a count without a noun ("5 in total", "there are 3.").
_FILLERS = frozenset(
    {"in", "on", "at", "of", "and", "or", "total", "altogether", "overall", "here", "there", "which", "that", "with",
     "from", "to", "visible", "so", "i", "it", "they", "this", "these", "is", "are", "but", "for", "as", "if", "the",
     "inside", "within", "along", "across", "all", "each", "shown", "drawn", "nested", "distinct", "different",
     "separate", "overlapping", "interlocking", "concentric", "single-colored", "one-colored", "single-coloured",
     "one-coloured", "colored", "coloured", "unique", "clear", "complete", "whole", "small", "large", "big", "red",
     "blue", "green", "black", "yellow", "orange", "purple", "pink", "magenta", "grey", "gray", "more", "separately"}
)  # fmt: skip


def counted_nouns(question: str) -> frozenset[str] | None:
    """The nouns the question counts; None when it names none we know (then any count reads)."""
    for pattern, nouns in _GROUPS:
        if pattern.search(question):
            return nouns
    return None


_COUNT = re.compile(
    r"(?:\bthere\s+(?:are|is|were|was|appear\s+to\s+be|seem\s+to\s+be)"
    r"|\bi\s+(?:can\s+)?(?:count(?:ed)?|see|saw|find|found|get|got|identif(?:y|ied))"
    r"|\b(?:shows|contains|has|have|had|displays|includes|depicts)"
    r"|\btotal(?:\s+(?:is|of|count\s+is|number\s+is))?|\bcount(?:\s+is)?|\b(?:the\s+)?answer\s+is"
    r"|\bnumber\s+of\s+[\w-]+(?:\s+[\w-]+)?\s*(?:is|are|[:=])"
    r"|\bthat(?:'s|\s+is|\s+makes|\s+gives)|\bwhich\s+(?:makes|gives)|\bmaking|\bgiving|\bfor\s+a\s+total\s+of"
    r"|\ba\s+total\s+of|\bso|\bthus|\btherefore|\bhence|\bin\s+total|\baltogether|\boverall)"
    r"\s*(?:[:=,]\s*)?(?:exactly\s+|only\s+|just\s+|precisely\s+|a\s+total\s+of\s+)?\{?" + NUM,
    re.IGNORECASE,
)
_IN_TOTAL = re.compile(NUM + r"(?:\s+[\w-]+){0,3}?\s+(?:in\s+total|in\s+all|altogether|total)\b", re.IGNORECASE)
_LABELLED = re.compile(r"(?<![\w-])([a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*[:=]\s*\{?" + NUM, re.IGNORECASE)
_OPENING = re.compile(r"[\s\"'“‘(\[{*-]*(?:" + NUM + r"|(no))\s+((?:[\w-]+\s+){0,2}[\w-]+)", re.IGNORECASE)
_MEETS = re.compile(
    r"\b(?:cross(?:es|ed)?|meet(?:s)?|met|touch(?:es|ed)?|intersect(?:s|ed)?)\s+(?:each\s+other\s+)?"
    r"(?:exactly\s+|only\s+)?(?:" + NUM + r"|(once|twice|thrice))(?:\s+times?)?\b"
    r"|\b(?:at|in)\s+(?:exactly\s+|only\s+)?(?:"
    + NUM
    + r"|(a\s+single))\s+(?:[\w-]+\s+)?(?:points?|places?|spots?|locations?)\b"
    r"|(?P<never>\b(?:do|does|did)\s+not|\b(?:don't|doesn't|didn't|never|not)\b)\s+(?:[\w-]+\s+)?"
    r"(?:cross|meet|touch|intersect)",
    re.IGNORECASE,
)
_NONE = re.compile(r"\bno\s+((?:[\w-]+\s+){0,2}[\w-]+)", re.IGNORECASE)
_EQUALS = re.compile(r"=\s*\{?" + NUM, re.IGNORECASE)
# The terms before "=", read in a bounded window (a chain of "+" must not cost quadratic time).
_TERMS = re.compile(r"(?:" + NUM + r"(?:\s+[\w-]+){0,3}?\s*\+\s*)+" + NUM + r"(?:\s+[\w-]+){0,3}?\s*$", re.I)
# Where a part of the picture is: "in the top row", "on the left", "in the second row", "below".
_PART_WORD = r"(?:row|line|column|side|half|part|group|cluster|portion|section|corner|edge|area)"
_WHERE = (
    r"(?:in|on|at|along|across|inside|within|from)\s+the\s+(?:[\w-]+\s+)??"
    r"(?:(?:top|bottom|upper|lower|left|right)\b(?:\s+" + _PART_WORD + r")?"
    r"|(?:first|second|third|fourth|fifth|middle|center|centre|outer|inner|other|last|front|back)\s+"
    + _PART_WORD
    + r")"
    r"|on\s+top|below|above|underneath|beneath"
)
_PART = re.compile(
    r"(?:" + NUM + r"|\b(once|twice|thrice))(?:\s+[\w-]+){0,2}?\s+(?:" + _WHERE + r")\b"
    r"|\b(?:the\s+)?(?:top|bottom|upper|lower|left|right|first|second|third|fourth|middle|outer|inner)\s+"
    + _PART_WORD
    + r"\s+(?:has|have|contains|shows|with|holds)\s+"
    + NUM,
    re.IGNORECASE,
)
_PART_GLUE = re.compile(r"(?:\s+[\w-]+){0,2}?\s*(?:,|;|\band\b|\bplus\b|\+|\bwith\b)\s*(?:\band\b\s*)?", re.I)
# Knowledge about the task, not a count of this image: "The Olympic logo has 5 rings."
_LOGO = re.compile(r"\bolympic\s+(?:logo|rings|symbol|flag)\b|\b(?:usually|normally|typically|traditionally)\b", re.I)
_THIS_IMAGE = re.compile(r"\b(?:this|the)\s+(?:image|picture)\b|\bhere\b", re.IGNORECASE)
_COUNT_LABELS = frozenset({"total", "count", "number", "answer", "result"})
_TIMES_WORDS = {"once": 1, "twice": 2, "thrice": 3}

_NOT_EXACT = re.compile(
    r"\b(?:about|around|approximately|roughly|nearly|almost|at\s+least|at\s+most|more\s+than|less\s+than|fewer\s+than"
    r"|up\s+to|some|maybe|perhaps|possibly)\s+\{?"
    + NUM
    + r"|~\s*"
    + NUM
    + r"|"
    + NUM
    + r"\}? ?[-–] ?\{?"
    + NUM
    + r"|"
    + NUM
    + r"\s+to\s+"
    + NUM
    + r"|\bbetween\s+"
    + NUM
    + r"\s+and\s+"
    + NUM
    + r"|"
    + NUM
    + r"\s*(?:\+(?!\s*\d)|or\s+more|or\s+fewer|or\s+less)"
    + r"|\b(?:could|might|may)\s+(?:also\s+|even\s+)?be\s+\{?"
    + NUM
    + r"|"
    + NUM
    + r"\}?\s*[,;]?\s*(?:or(?:\s+(?:maybe|possibly|perhaps))?|/)\s*\{?"
    + NUM,
    re.IGNORECASE,
)


def _value(groups: tuple[str | None, ...]) -> int | None:
    for group in groups:
        if group:
            group = group.lower()
            if group in _TIMES_WORDS:
                return _TIMES_WORDS[group]
            if group.startswith("a") and "single" in group:
                return 1
            return to_int(group)
    return None


def _noun_fits(after: str, ctx: Context) -> bool:
    """Whether the words after a number leave it a count of what the question counts."""
    if ctx.counted is None:
        return True
    words = re.findall(r"[a-z][\w-]*", after.lower())[:4]
    for word in words:
        if word in ctx.counted:
            return True
        if word not in _FILLERS:
            return False
    return True


def strict(text: str, ctx: Context) -> int | None:
    match = re.match(r"[\s\"'“‘(\[{:*-]*\{?" + NUM, text, re.IGNORECASE)
    if not match:
        return None
    if not _noun_fits(text[match.end() : match.end() + 60], ctx):
        return None
    return to_int(match.group(1))


def whole(text: str, _: Context) -> int | None:
    match = re.fullmatch(r"[\s\"'“‘(\[{*]*" + NUM + r"[\s\"'”’)\]}.!*]*", text, re.IGNORECASE)
    return to_int(match.group(1)) if match else None


def _candidates(text: str, ctx: Context, fallback: bool) -> list[Found]:
    """Every count the text states, in order; each Found starts at its number."""
    knowledge = []
    for start, end in sentences(text):
        sentence = text[start:end]
        if _LOGO.search(sentence) and not _THIS_IMAGE.search(sentence):
            knowledge.append((start, end))
    found: list[Found] = []
    compound: list[Found] = []  # sums of parts and equations: the counts inside them are theirs

    for match in _COUNT.finditer(text):
        if _noun_fits(text[match.end() : match.end() + 60], ctx):
            found.append(Found(to_int(match.group(1)), match.start(1), match.end()))
    for match in _IN_TOTAL.finditer(text):
        found.append(Found(to_int(match.group(1)), match.start(1), match.end()))
    for match in _LABELLED.finditer(text):
        label = match.group(1).lower().split()
        # "Intersection points: 2", "Total: 5"; never "x=5" (a coordinate).
        nouns = ctx.counted if ctx.counted is not None else _COUNT_LABELS
        if any(word in nouns for word in label):
            found.append(Found(to_int(match.group(2)), match.start(2), match.end()))
    opening = _OPENING.match(text)
    if opening:
        noun = opening.group(3).lower().split()
        if ctx.counted is None or any(word in ctx.counted for word in noun):
            value = 0 if opening.group(2) else to_int(opening.group(1))
            found.append(Found(value, opening.start(1) if opening.group(1) else opening.start(2), opening.end()))
    if ctx.counted is None or ctx.counted is _MEETING:
        for match in _MEETS.finditer(text):
            if match.group("never"):
                found.append(Found(0, match.start(), match.end()))
                continue
            index = next(i for i in range(1, 5) if match.group(i))
            found.append(Found(_value((match.group(index),)), match.start(index), match.end()))
    for match in _NONE.finditer(text):
        words = match.group(1).lower().split()
        if ctx.counted is not None:
            fits = any(word in ctx.counted for word in words)
        else:
            fits = bool(re.search(r"\bthere\s+(?:are|is)\s+$", text[max(0, match.start() - 20) : match.start()], re.I))
        if fits:
            found.append(Found(0, match.start(), match.end()))
    for match in _EQUALS.finditer(text):
        window_start = max(0, match.start() - 150)
        terms = _TERMS.search(text, window_start, match.start())
        if terms:
            parts = [to_int(t) for t in NUM_RE.findall(terms.group())]
            total = to_int(match.group(1))
            compound.append(_Sum(total if sum(parts) == total else HEDGE, terms.start(), match.end()))
    for run_start, run_end, values in _part_runs(text):
        # A lone part ("4 in the top row") is no total: it swallows the count it seems to state.
        total = HEDGE if values is None else sum(values) if len(values) > 1 else _PARTIAL
        compound.append(_Sum(total, run_start, run_end))

    inside_compound = Spans((c.start, c.end) for c in compound)
    in_knowledge = Spans(knowledge)
    kept = [f for f in found if not inside_compound.hold(f.start)]
    kept += [c for c in compound if c.value is not _PARTIAL]
    kept = [f for f in kept if not in_knowledge.hold(f.start)]
    if fallback and not kept and not compound:
        digits = [m for m in re.finditer(r"(?<![\w.])\d{1,6}(?![\w]|[.,]\d)", text)]
        digits = [m for m in digits if _noun_fits(text[m.end() : m.end() + 60], ctx)]
        digits = [m for m in digits if not in_knowledge.hold(m.start())]
        # One number, said once or twice ("{3}" aside, "3." alone): not a stream of digits.
        if len({int(m.group()) for m in digits}) == 1 and len(digits) <= 3:
            kept.append(Found(int(digits[-1].group()), digits[-1].start(), digits[-1].end()))
    kept.sort(key=lambda f: (f.start, f.end))
    return kept


class _Sum(Found):
    """A count made of parts (a run of parts, an equation)."""


class _Partial:
    def __repr__(self) -> str:
        return "PARTIAL"


_PARTIAL = _Partial()


def _part_runs(text: str) -> list[tuple[int, int, list[int] | None]]:
    """Runs of parts joined by "and" or commas: (start, end, the parts' counts). A run that
    names one place twice ("4 in the top row and 4 in the top row") is no sum (None)."""
    runs: list[tuple[int, int, list[int] | None, set[str]]] = []
    for match in _PART.finditer(text):
        value = _value((match.group(1), match.group(2), match.group(3)))
        if value is None:
            continue
        place = _place(match.group())
        if runs and _PART_GLUE.fullmatch(text, runs[-1][1], match.start()):
            start, _, values, places = runs[-1]
            repeated = values is None or place in places
            runs[-1] = (start, match.end(), None if repeated else [*values, value], places | {place})
        else:
            runs.append((match.start(), match.end(), [value], {place}))
    return [(start, end, values) for start, end, values, _ in runs]


_PLACE_WORDS = frozenset(
    {"top", "bottom", "upper", "lower", "left", "right", "first", "second", "third", "fourth", "fifth", "middle",
     "center", "centre", "outer", "inner", "other", "last", "front", "back", "below", "above", "underneath", "beneath",
     "row", "line", "column", "side", "half", "part", "group", "cluster", "portion", "section", "corner", "edge", "area"}
)  # fmt: skip


def _place(part: str) -> str:
    """Where a part is ("top row", "left"), without its count or its noun."""
    return " ".join(w for w in re.findall(r"[a-z]+", part.lower()) if w in _PLACE_WORDS)


def loose(text: str, ctx: Context) -> Found | object | None:
    found = _candidates(text, ctx, fallback=True)
    if not found:
        return None
    last = found[-1]
    # A total and its parts said in one sentence must agree ("6 circles: 4 in the top row and 3
    # in the bottom row" is no answer).
    start = sentence_start(text, last.start)
    same_sentence = [f for f in found if f.start >= start]
    if any(isinstance(f, _Sum) for f in same_sentence) and len({f.value for f in same_sentence}) > 1:
        return HEDGE
    return last


def confirms(text: str, ctx: Context) -> Found | object | None:
    found = _candidates(text, ctx, fallback=False)
    return found[-1] if found else None


def hedged(zone: str, ctx: Context) -> bool:
    if _NOT_EXACT.search(zone):
        for match in _NOT_EXACT.finditer(zone):
            values = [g for g in match.groups() if g]
            if len(values) < 2 or len({to_int(v) for v in values}) > 1:
                return True
    for s, e in sentences(zone):
        sentence = zone[s:e]
        if (
            re.search(r"\beither\b", sentence, re.I)
            and re.search(r"\bor\b", sentence, re.I)
            and NUM_RE.search(sentence)
        ):
            return True
    return False


def same(a: int, b: int) -> bool:
    return a == b
