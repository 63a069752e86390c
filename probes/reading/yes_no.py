"""Yes or no: said as a word ("Yes.", "..., so no.", "I don't think so"), or said with the
question's own predicate ("they do not overlap", "there is a gap between them").

The predicate comes from the question (`question_predicate`): for "Are the two circles touching
each other?" the reply's "they touch", "the circles are in contact", "there is no gap" say yes and
"not touching", "the two circles are separate" say no. What follows from what is the geometry of
two shapes: overlapping shapes touch; shapes apart neither touch nor overlap; "no gap" says they
touch but not whether they overlap; "they touch" does not say whether they overlap. So "they touch
but do not overlap" answers "touching?" yes and "overlapping?" no.

A reply whose words and descriptions disagree ("Yes, they are separate") is not read: a careful
person cannot tell which was meant. Descriptions in a question ("Touching?"), a label
("Overlapping: No"), a condition ("if they were touching, ..."), or a guess ("they might touch")
commit to nothing.
"""

from __future__ import annotations

import re

from probes.reading.common import HEDGE, Context, Found, sentence_start, sentences

_WORD = {
    "yes": "yes",
    "yeah": "yes",
    "yep": "yes",
    "yup": "yes",
    "no": "no",
    "nope": "no",
    "はい": "yes",
    "いいえ": "no",
}
# "no" before a noun is a determiner ("no gap", "no idea"), not an answer; as an answer it ends
# its clause or opens the next one.
_NO_FOLLOWERS = (
    r"(?=\s*(?:[.,!?;:)\]}\"'”’\-–—…\n、。]|$)"
    r"|\s+(?:they|the|there|it|i|not|because|since|as|this|that|these|those|we|both|neither|wait|actually|but"
    r"|definitely|absolutely|certainly|sir)\b)"
)
_ANSWER_WORD = r"(yes|yeah|yep|yup|はい|いいえ|(?:no|nope)" + _NO_FOLLOWERS + r")"

_STRICT = re.compile(r"[\s\"'“‘(\[{:.\-–—*]*" + _ANSWER_WORD + r"(?![\w'])", re.IGNORECASE)
# A yes/no standing alone as a clause: "..., so no.", "Based on the image, no."
_STANDALONE = re.compile(
    r"(?:^|[.!?\n:;,—–\-(]\s*)(?:so|thus|therefore|hence|then|but|and|my\s+answer\s+is|i(?:'d|\s+would)?\s+say)?\s*,?\s*"
    r"(yes|no|yeah|yep|yup|nope)\s*(?=[.!?\n,;)]|$)",
    re.IGNORECASE,
)
_PHRASES = re.compile(
    r"\b(?P<no>i\s+don'?t\s+think\s+so|(?:probably|likely|most\s+likely|definitely|certainly|clearly)\s+not"
    r"|not\s+really|not\s+at\s+all|absolutely\s+not|of\s+course\s+not)\b"
    r"|\b(?P<yes>i\s+(?:do\s+)?think\s+so|i\s+believe\s+so|of\s+course|absolutely|definitely)\b(?!\s+not)",
    re.IGNORECASE,
)
_BOTH_WORDS = re.compile(r"\b(?:yes|no)\s*(?:,?\s*(?:or|and)\s*|/)\s*(?:yes|no)\b|\bmaybe\s+yes,?\s+maybe\s+no\b", re.I)


def question_predicate(question: str) -> str | None:
    """ "touch" or "overlap" when the question asks exactly one of them."""
    text = question.lower()
    touch = bool(re.search(r"\btouch", text))
    overlap = bool(re.search(r"\boverlap", text))
    if touch != overlap:
        return "touch" if touch else "overlap"
    return None


def strict(text: str, _: Context) -> str | None:
    match = _STRICT.match(text)
    return _WORD[match.group(1).lower()] if match else None


def whole(text: str, ctx: Context) -> str | None:
    match = re.fullmatch(r"[\s\"'“‘(\[{:.\-–—*]*" + _ANSWER_WORD + r"[\s\"'”’)\]}.!。]*", text, re.IGNORECASE)
    return _WORD[match.group(1).lower()] if match else None


# --- what the reply says about the shapes -----------------------------------------------------

# Each statement: (pattern, what it says). TOUCH/OVERLAP/APART are said positively here; a negation
# before them flips them.
_STATEMENTS = re.compile(
    r"(?P<overlap>\boverlap(?:s|ping|ped)?\b|\bintersect(?:s|ing|ed)?\b|\b(?:edges|outlines|borders|boundaries)\s+cross\b"
    r"|\bcross(?:es)?\s+(?:each\s+other|over)\b)"
    r"|(?P<touch>\btouch(?:es|ing|ed)?\b|\bin\s+contact\b|\bmak(?:e|es|ing)\s+contact\b|\btangent\b"
    r"|\b(?:edges|outlines|borders|boundaries|perimeters|circles|they)\s+(?:just\s+|barely\s+|do\s+)?meet\b)"
    r"|(?P<contact>\bcontact\b)"
    r"|(?P<apart>\bseparate[ds]?\b|\bseparated\b|\bseparating\b|\bapart\b|\bdisjoint\b"
    r"|(?:\b(?:a|an|some|no|any|the\s+slightest)\s+(?:\w+\s+){0,2}|(?:there(?:'s|\s+is|\s+appears\s+to\s+be|\s+seems\s+to\s+be)"
    r"|with|by|leaving|see|shows?)\s+(?:\w+\s+){0,2})(?:gap|separation|distance\s+between|space\s+between)\b"
    r"|\bwhite\s+space\b|\bspace\s+(?:in\s+)?between\b)",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"(?:\bnot\b|n't\b|\bnever\b|\bno\b|\bwithout\b|\bneither\b|\bnor\b|\bno\s+longer\b)", re.IGNORECASE
)
_NEARLY = re.compile(r"\b(?:almost|nearly|close\s+to|about\s+to|not\s+quite|just\s+short\s+of)\b", re.IGNORECASE)
_MODAL = re.compile(r"\b(?:might|may|could|would|possibly|perhaps|maybe)\b", re.IGNORECASE)
# A clause ends at punctuation or at a word that starts another clause.
_CLAUSE_BREAK = re.compile(
    r"[,;:.!?\n—–()]|\s-\s|\b(?:but|and|while|whereas|although|though|so|yet|however|because|since)\b", re.IGNORECASE
)
_CONDITION_START = re.compile(r"\b(?:if|whether|unless|when|to\s+(?:see|check|determine|tell))\b", re.IGNORECASE)


def _clause_before(text: str, start: int) -> str:
    """The words of the clause before `start` (at most 60 characters back)."""
    window = text[max(0, start - 60) : start]
    breaks = list(_CLAUSE_BREAK.finditer(window))
    return window[breaks[-1].end() :] if breaks else window


def _statements(sentence: str) -> list[tuple[int, str, bool | None]]:
    """(position, what, positive) for each description in a sentence; positive None is a guess."""
    found = []
    for match in _STATEMENTS.finditer(sentence):
        what = match.lastgroup or ""
        after = sentence[match.end() : match.end() + 3]
        if re.match(r"\s*[:?]", after):  # "Overlapping: No", "Touching?"
            continue
        before = _clause_before(sentence, match.start())
        if _CONDITION_START.search(before):
            continue
        phrase = before + match.group(0)
        negated = bool(_NEGATION.search(phrase))
        if what == "contact":  # "no contact" only: "contact" alone says nothing
            if not negated:
                continue
            what = "touch"
        if _MODAL.search(before):
            found.append((match.start(), what, None))
        elif _NEARLY.search(before):
            # "almost touching": not touching (so not overlapping); "almost overlapping": not
            # overlapping; "almost apart" says nothing firm.
            found.append((match.start(), what, None if what == "apart" else False))
        else:
            found.append((match.start(), what, not negated))
    return found


def _answer(what: str, positive: bool, predicate: str) -> str | None:
    """What a description answers to the question's predicate, or None when it does not."""
    if what == "overlap":
        if positive:
            return "yes"
        return "no" if predicate == "overlap" else None
    if what == "touch":
        if not positive:
            return "no"
        return "yes" if predicate == "touch" else None
    # apart
    if positive:
        return "no"
    return "yes" if predicate == "touch" else None


def _descriptions(text: str, ctx: Context) -> tuple[list[Found], list[int]]:
    """What the text's descriptions answer (Found), and where it only guesses."""
    said: list[Found] = []
    guesses: list[int] = []
    if not ctx.predicate:
        return said, guesses
    for start, end in sentences(text):
        sentence = text[start:end]
        if sentence.rstrip().endswith("?"):
            continue
        either = bool(re.search(r"\beither\b", sentence, re.IGNORECASE))
        for position, what, positive in _statements(sentence):
            if positive is None or either:
                guesses.append(start + position)
                continue
            answer = _answer(what, positive, ctx.predicate)
            if answer is not None:
                said.append(Found(answer, start + position, start + position))
    return said, guesses


def consistent_before(text: str, value: str, ctx: Context) -> bool:
    """Whether the last description before a marked answer agrees with it ("... the circles touch.
    Answer: No" is no answer)."""
    said, _ = _descriptions(text, ctx)
    return not said or said[-1].value == value


def loose(text: str, ctx: Context) -> Found | object | None:
    """The reply's yes or no: its word, else its descriptions; HEDGE when they disagree or do not
    commit."""
    words: list[Found] = []
    opening = _STRICT.match(text)
    if opening:
        words.append(Found(_WORD[opening.group(1).lower()], opening.start(1), opening.end(1)))
    for match in _STANDALONE.finditer(text):
        if not opening or match.start(1) > opening.start(1):
            words.append(Found(_WORD[match.group(1).lower()], match.start(1), match.end(1)))
    for match in _PHRASES.finditer(text):
        words.append(Found("no" if match.group("no") else "yes", match.start(), match.end()))
    words.sort(key=lambda f: f.start)
    if _BOTH_WORDS.search(text):
        return HEDGE

    said, guesses = _descriptions(text, ctx)

    if words:
        if len({w.value for w in words}) > 1:
            return HEDGE
        first, last = words[0], words[-1]
        # Descriptions after the first word, in the last word's own sentence, and the latest one
        # before it must agree with it ("They are touching, no gap at all. No." is no answer; "At
        # first they seem to touch. Zooming in, there is a gap. No." is).
        own = sentence_start(text, last.start)
        before = [d for d in said if d.start < first.start]
        checked = [d for d in said if d.start > first.start or d.start >= own] + before[-1:]
        if any(d.value != first.value for d in checked):
            return HEDGE
        return Found(last.value, last.start, last.end)
    if said:
        if len({s.value for s in said}) > 1:
            return HEDGE
        if any(g > said[-1].start for g in guesses):
            return HEDGE
        return Found(said[-1].value, said[-1].start, said[-1].end)
    if guesses:
        return HEDGE
    return None


def confirms(text: str, ctx: Context) -> Found | object | None:
    """What text after a committed answer says (its words and descriptions)."""
    return loose(text, ctx)


def same(a: str, b: str) -> bool:
    return a == b


_UNSURE_WORD = re.compile(r"\b(?:maybe|perhaps|possibly)\s*,?\s*(?:yes|no)\b", re.IGNORECASE)


def hedged(zone: str, _: Context) -> bool:
    """Both answers offered ("yes or no", "Yes and no") or one only guessed ("maybe yes")."""
    return bool(_BOTH_WORDS.search(zone) or _UNSURE_WORD.search(zone))
