"""Answer extraction: a reply and an answer kind in, `Parsed(value, status)` out.

Deterministic and explicit. The order, for every kind:
1. a final-answer marker ("Answer: X", "the answer is X", "{X}", "**X**"): the LAST one wins, so
   a chain of thought's conclusion beats numbers mentioned on the way;
2. a refusal ("I'm sorry, I can't help with that") -> status refused;
3. the kind's loose reading (a reply that starts with "Yes", a lone number, "5 rows and 6
   columns", an option's text ...);
4. otherwise unparsed. Never a random or default answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from probes.core.types import AnswerKind, Item, Parsed, Status

NUMBER_WORDS = {
    "zero": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20,
}  # fmt: skip
_NUM = r"(\d+|" + "|".join(NUMBER_WORDS) + r")"
MAX_TAIL = 400  # characters read after an answer marker

# A reply that repeats the question's own example ("e.g., {3}") must not be read as answering 3.
_ECHOED_EXAMPLE = re.compile(
    r"(?:e\.\s?g\.|for example|for instance)\s*[,:]?\s*"
    r"(?:rows\s*=\s*\{\d+\}\s*,?\s*columns\s*=\s*\{\d+\}|\(\s*\d+\s*,\s*\d+\s*\)|\{[^{}\n]*\})",
    re.IGNORECASE,
)
_THINK_BLOCK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_MARKER = re.compile(
    r"(?:final\s+answer|correct\s+answer|answer|回答|答え)\s*(?:is|would\s+be|will\s+be|should\s+be)?\s*(?:[:=\-]\s*)?",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:can(?:no|')?t|cannot|won'?t(?:\s+be\s+able\s+to)?|will\s+not|unable\s+to|not\s+able\s+to)\s+"
    r"(?:help|assist|comply|fulfil+|engage|do\s+that|answer\s+that|respond\s+to\s+that|provide\s+(?:that|this|assistance|help))"
    r"|\bI\s+(?:must|have\s+to)\s+(?:decline|refuse)"
    r"|\bI(?:'m|\s+am)\s+not\s+(?:comfortable|going\s+to)\s"
    r"|\bagainst\s+(?:my|the)\s+(?:guidelines|polic(?:y|ies))",
    re.IGNORECASE,
)
# Hedges whose words would otherwise read as answers ("no idea" is not "no").
_HEDGES = re.compile(
    r"\bno\s+(?:idea|way\s+to\s+(?:tell|know|say))\b|\bhard\s+to\s+say\b|\bnot\s+sure\b", re.IGNORECASE
)


def is_refusal(reply: str) -> bool:
    """Whether the model declined to answer ("I'm sorry, I can't help with that")."""
    return bool(_REFUSAL.search(normalise(reply)))


def parse_item_reply(reply: str, item: Item) -> Parsed:
    return parse(reply, item.kind, options=item.options, labels=item.labels)


def parse(reply: str, kind: AnswerKind, options: Sequence[str] = (), labels: Sequence[str] = ()) -> Parsed:
    text = normalise(reply)
    if not text:
        return Parsed(None, Status.UNPARSED)
    strict, loose = _READERS[kind]
    context = _Context(options=tuple(options), labels=tuple(lab.lower() for lab in labels))
    value = _marked(text, strict, loose, context)
    if value is None:
        if _REFUSAL.search(text):
            return Parsed(None, Status.REFUSED)
        value = loose(_HEDGES.sub(" ", text), context)
    if value is None:
        return Parsed(None, Status.UNPARSED)
    return Parsed(value, Status.ANSWERED)


def normalise(reply: str) -> str:
    """NFKC (full-width digits, Japanese punctuation), no reasoning blocks, no markdown
    emphasis, no echoed examples."""
    text = unicodedata.normalize("NFKC", reply or "")
    text = _THINK_BLOCK.sub(" ", text)
    text = re.sub(r"\*\*|__|`|^#+\s*", "", text, flags=re.MULTILINE)
    text = re.sub(r"(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)", "", text)
    text = _ECHOED_EXAMPLE.sub(" ", text)
    return text.strip()


class _Context:
    def __init__(self, options: tuple[str, ...], labels: tuple[str, ...]):
        self.options = options
        self.labels = labels


Reader = Callable[[str, _Context], Any]


def _marked(text: str, strict: Reader, loose: Reader, context: _Context) -> Any:
    """The value after the last answer marker that holds a well-formed answer, or in braces."""
    for match in reversed(list(_MARKER.finditer(text))):
        # A bounded look after each marker: an answer is short, and a reply full of markers
        # must not cost quadratic time.
        tail = text[match.end() : match.end() + MAX_TAIL].split("\n", 1)[0]
        value = strict(tail, context)
        if value is not None:
            return value
    braces = re.findall(r"\{([^{}\n]{1,80})\}", text)
    for inner in reversed(braces):
        value = strict(inner, context)
        if value is not None:
            return value
    return None


# --- yes / no ---------------------------------------------------------------------------

_YES = {"yes", "yeah", "yep", "yup", "correct", "true"}
_NO = {"no", "nope", "false", "incorrect"}


def _yes_no_word(word: str) -> str | None:
    word = word.lower()
    if word in _YES:
        return "yes"
    if word in _NO:
        return "no"
    return None


def _strict_yes_no(text: str, _: _Context) -> str | None:
    match = re.match(r"[\s\"'“‘(\[{:.-]*(yes|no|yeah|yep|nope)\b", text, re.IGNORECASE)
    return _yes_no_word(match.group(1)) if match else None


def _loose_yes_no(text: str, context: _Context) -> str | None:
    first = _strict_yes_no(text, context)
    if first is not None:
        return first
    # Elsewhere, only a yes/no that stands alone as a sentence or clause ("..., so no.") counts:
    # "there is no gap" must not read as "no".
    standalone = re.findall(
        r"(?:^|[.!?\n:;,]\s*)(?:so|thus|therefore|hence|then|but)?\s*,?\s*(yes|no|yeah|yep|nope)\s*(?=[.!?\n,;]|$)",
        text,
        re.IGNORECASE,
    )
    return _yes_no_word(standalone[-1]) if standalone else None


# --- numbers ----------------------------------------------------------------------------


def _to_int(token: str) -> int:
    token = token.lower()
    return NUMBER_WORDS[token] if token in NUMBER_WORDS else int(token)


def _strict_number(text: str, _: _Context) -> int | None:
    match = re.match(r"[\s\"'“‘(\[{:*-]*" + _NUM + r"\b(?![.,]\d)", text, re.IGNORECASE)
    return _to_int(match.group(1)) if match else None


_COUNT_PHRASES = re.compile(
    r"(?:there\s+(?:are|is|appear\s+to\s+be|seem\s+to\s+be)|i\s+(?:can\s+)?(?:count|see)|(?:shows|contains|has)\s+|"
    r"total\s*(?:of|is|:|=)|totals?|count\s+is|number\s+(?:of\s+\w+(?:\s+\w+)?\s+)?is)\s*(?:exactly\s+|only\s+)?"
    + _NUM
    + r"\b(?![.,]\d)"
    + r"|\b"
    + _NUM
    + r"\s+(?:\w+\s+)?in\s+total\b",
    re.IGNORECASE,
)


# How often lines meet, said in words: "they cross twice", "they never touch".
_TIMES = re.compile(
    r"\b(?:cross|crosses|meet|meets|touch|touches|intersect|intersects)\s+(?:each\s+other\s+)?"
    r"(once|twice|thrice|" + "|".join(NUMBER_WORDS) + r"|\d+)(?:\s+times?)?\b"
    r"|\b(never)\s+(?:cross|meet|touch|intersect)|\bthere\s+(?:are|is)\s+(no)\s+\w+",
    re.IGNORECASE,
)
_TIMES_WORDS = {"once": 1, "twice": 2, "thrice": 3, "never": 0, "no": 0}


def _loose_number(text: str, context: _Context) -> int | None:
    whole = re.fullmatch(r"[\s\"'“‘(\[{]*" + _NUM + r"[\s\"'”’)\]}.!]*", text, re.IGNORECASE)
    if whole:
        return _to_int(whole.group(1))
    phrases = list(_COUNT_PHRASES.finditer(text))
    if phrases:
        last = phrases[-1]
        return _to_int(last.group(1) or last.group(2))
    # A reply that opens with the count: "Seven circles.", "Zero paths go from A to C", "No paths ..."
    opening = re.match(r"[\s\"'“‘(\[{]*(" + _NUM[1:-1] + r"|no)\s+[a-z]", text, re.IGNORECASE)
    if opening:
        word = opening.group(1).lower()
        return 0 if word == "no" else _to_int(word)
    times = list(_TIMES.finditer(text))
    if times:
        word = next(g for g in times[-1].groups() if g).lower()
        return _TIMES_WORDS[word] if word in _TIMES_WORDS else _to_int(word)
    digits = {int(d) for d in re.findall(r"(?<![\d.])\d+(?![\d.]\d)", text)}
    if len(digits) == 1:
        return digits.pop()
    return None


# --- single letters ---------------------------------------------------------------------

_QUOTED_LETTER = re.compile(r"[\"'“‘`«]([A-Za-z])[\"'”’`»]")
_LETTER_PHRASE = re.compile(
    r"\b(?:letter|character)(?=[\s:])(?:\s+(?:that\s+is|which\s+is|being|that's))?"
    r"(?:\s+(?:circled|highlighted|marked|inside\s+the\s+(?:red\s+)?oval))?(?:\s+is)?\s*:?\s*(?:the\s+)?"
    r"[\"'“‘`«]?([A-Za-z])[\"'”’`»]?(?![\w'’])",
    re.IGNORECASE,
)


def _strict_letter(text: str, _: _Context) -> str | None:
    match = re.match(r"[\s\"'“‘`«(\[{:*-]*([A-Za-z])(?:[\"'”’`»)\]}.,!:;\s]|$)", text)
    if match:
        return match.group(1)
    match = _QUOTED_LETTER.search(text) or _LETTER_PHRASE.search(text)
    return match.group(1) if match else None


def _loose_letter(text: str, context: _Context) -> str | None:
    whole = re.fullmatch(r"[\s\"'“‘`«(\[{]*([A-Za-z])[\"'”’`»)\]}.!\s]*", text)
    if whole:
        return whole.group(1)
    phrases = list(_LETTER_PHRASE.finditer(text))
    if phrases:
        return phrases[-1].group(1)
    quoted = _QUOTED_LETTER.findall(text)
    if quoted:
        return quoted[-1]
    return None


# --- (rows, columns) --------------------------------------------------------------------

_PAIR_PAREN = re.compile(r"\(\s*" + _NUM + r"\s*,\s*" + _NUM + r"\s*\)", re.IGNORECASE)
_PAIR_TIMES = re.compile(r"\b" + _NUM + r"\s*(?:x|×|\*|by)\s*" + _NUM + r"\b", re.IGNORECASE)
_ROWS = re.compile(r"\brows?\s*(?:=|:|is|are)?\s*\{?\s*" + _NUM + r"\b|\b" + _NUM + r"[ \t]+rows?\b", re.IGNORECASE)
_COLUMNS = re.compile(
    r"\b(?:columns?|cols?)\s*(?:=|:|is|are)?\s*\{?\s*" + _NUM + r"\b|\b" + _NUM + r"[ \t]+(?:columns?|cols?)\b",
    re.IGNORECASE,
)


def _keyword_pair(text: str) -> tuple[int, int] | None:
    rows, columns = list(_ROWS.finditer(text)), list(_COLUMNS.finditer(text))
    if not rows or not columns:
        return None
    row, column = rows[-1], columns[-1]
    return _to_int(row.group(1) or row.group(2)), _to_int(column.group(1) or column.group(2))


def _strict_pair(text: str, _: _Context) -> tuple[int, int] | None:
    keyword = _keyword_pair(text)
    if keyword:
        return keyword
    match = re.match(r"[\s\"'“‘\[{:*-]*" + _PAIR_PAREN.pattern, text, re.IGNORECASE) or re.match(
        r"[\s\"'“‘\[{:*-]*" + _PAIR_TIMES.pattern, text, re.IGNORECASE
    )
    return (_to_int(match.group(1)), _to_int(match.group(2))) if match else None


def _loose_pair(text: str, context: _Context) -> tuple[int, int] | None:
    keyword = _keyword_pair(text)
    if keyword:
        return keyword
    for pattern in (_PAIR_PAREN, _PAIR_TIMES):
        found = list(pattern.finditer(text))
        if found:
            return _to_int(found[-1].group(1)), _to_int(found[-1].group(2))
    return None


# --- multiple choice --------------------------------------------------------------------


def _simplify(text: str) -> str:
    return re.sub(r"[\s\W_]+", " ", text.casefold()).strip()


def _label_at_start(text: str, context: _Context) -> int | None:
    if not context.labels:
        return None
    alternatives = "|".join(re.escape(label) for label in context.labels)
    match = re.match(
        r"[\s\"'“‘*(\[:-]*(?:option\s+|choice\s+)?\(?(" + alternatives + r")(?:[.):\]]|\s*$|[ \t]*\n|\s+(?=[-–—:]))",
        text,
        re.IGNORECASE,
    )
    if match:
        return context.labels.index(match.group(1).lower())
    return None


def _light(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip().strip("\"'“”‘’").rstrip(".").strip()


def _option_text(text: str, context: _Context) -> int | None:
    """The one option whose text the reply gives: exactly (symbols kept, so "1 = 2 = 3." and
    "1 > 2 = 3." stay apart), else loosely (punctuation ignored) when that is unambiguous."""
    light = [_light(o) for o in context.options]
    exact = [i for i, o in enumerate(light) if o == _light(text)]
    if len(exact) == 1:
        return exact[0]
    simple = _simplify(text)
    options = [_simplify(o) for o in context.options]
    # Options that read the same once punctuation is gone cannot be told apart loosely.
    distinct = [i for i, o in enumerate(options) if o and options.count(o) == 1]
    if simple in [options[i] for i in distinct]:
        return options.index(simple)
    found = [i for i in distinct if re.search(rf"(?<!\w){re.escape(options[i])}(?!\w)", simple)]
    # An option whose text sits inside another found option's text ("object" in "both
    # objects") is not a separate mention.
    found = [i for i in found if not any(j != i and options[i] in options[j] for j in found)]
    return found[0] if len(found) == 1 else None


def _strict_choice(text: str, context: _Context) -> int | None:
    label = _label_at_start(text, context)
    if label is not None:
        return label
    return _option_text(text.split(".")[0], context) if context.options else None


def _loose_choice(text: str, context: _Context) -> int | None:
    label = _label_at_start(text, context)
    if label is not None:
        return label
    if context.labels:
        alternatives = "|".join(re.escape(label) for label in context.labels)
        mentions = re.findall(
            r"\b(?:option|choice)\s*\(?(" + alternatives + r")\)?(?!\w)|\((" + alternatives + r")\)",
            text,
            re.IGNORECASE,
        )
        named = {(a or b).lower() for a, b in mentions}
        if len(named) == 1:
            return context.labels.index(named.pop())
    return _option_text(text, context) if context.options else None


# --- word lists and free text -----------------------------------------------------------


def _strict_words(text: str, _: _Context) -> list[str] | None:
    words = [re.sub(r"^\s*(?:\d+[.)]|[-•・*])\s*", "", w).strip(" 。.「」\"'") for w in re.split(r"[、,，;\n]", text)]
    words = [w for w in words if w]
    return words or None


def _loose_words(text: str, context: _Context) -> list[str] | None:
    return _strict_words(text, context)


def _strict_text(text: str, _: _Context) -> str | None:
    answer = text.strip().strip("\"'“”‘’").rstrip(".!。").strip()
    return answer or None


def _loose_text(text: str, context: _Context) -> str | None:
    return _strict_text(text.split("\n", 1)[0], context)


_READERS: dict[AnswerKind, tuple[Reader, Reader]] = {
    AnswerKind.YES_NO: (_strict_yes_no, _loose_yes_no),
    AnswerKind.NUMBER: (_strict_number, _loose_number),
    AnswerKind.LETTER: (_strict_letter, _loose_letter),
    AnswerKind.PAIR: (_strict_pair, _loose_pair),
    AnswerKind.CHOICE: (_strict_choice, _loose_choice),
    AnswerKind.WORDS: (_strict_words, _loose_words),
    AnswerKind.TEXT: (_strict_text, _loose_text),
}
