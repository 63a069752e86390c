"""Answer extraction: a reply and an answer kind in, `Parsed(value, status)` out, read the way a
careful person reads it, never guessed.

Deterministic, and linear in the reply's length. The order, for every kind:
1. Clean the reply (`echoes.py`): NFKC, no `<think>` block, no markup, no copy of the question's
   own sentences, examples or answer templates ("Yes/No", "rows={5} columns={6}" after "For
   example", "<answer>").
2. Cut it at its self-corrections (`hedges.py`: "Wait, looking again ...", "no wait", "いや"): the
   last part that holds an answer is read; a last part that only doubts withdraws the answer.
3. In that part, the last committed answer: after a final-answer marker ("Answer: X", "the answer
   is X", "答えは X"), in braces (`{X}`, `\\boxed{X}`), or a line that is only an answer; else the
   kind's own reading of the text (`yes_no.py`, `numbers.py`, `pairs.py`, `letters.py`,
   `choices.py`).
4. An answer that is offered with another ("3 or 4", "either b or c"), said inexactly ("about
   5"), or contradicted by what follows it is a hedge: unparsed.
5. A refusal ("I'm sorry, I can't help with that") with no marked answer: refused.
Otherwise unparsed. Never a random or default answer.

Where the question says what it asks (its predicate, "touching?"; what it counts, "how many
squares?"), `parse_item_reply` passes it on, so "they do not overlap" answers "overlapping?".
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from probes.core.types import AnswerKind, Item, Parsed, Status
from probes.reading.common import HEDGE, Context, Found, Spans, sentence_start, sentences
from probes.reading.echoes import clean
from probes.reading.hedges import corrections, doubts, is_refusal_text

MAX_TAIL = 400  # characters read after an answer marker

_MARKER = re.compile(
    r"\b(?:final\s+answer|correct\s+(?:answer|option|choice)|answer|final\s+(?:count|result)|result|solution)\b"
    r"\s*(?:is|would\s+be|will\s+be|should\s+be)?\s*(?:[:=\-–]\s*)?"
    r"|\b(?:i(?:'d|\s+would|\s+will|'ll)?\s+(?:choose|pick|select|go\s+with)|my\s+(?:choice|pick|selection)\s+is)"
    r"\s*(?:[:\-]\s*)?"
    r"|(?:最終(?:的な)?)?(?:答え|回答|解答|正解|選択|番号|結論)\s*(?:は|[:：])?\s*(?:[:：]\s*)?",
    re.IGNORECASE,
)
_BRACES = re.compile(r"\{([^{}\n]{1,80})\}")
_ASKED = re.compile(r"[ \t\"'”’)\]}*]*\?")

# Each kind's reader, imported the first time a reply of its kind is read: their patterns take
# 5-20 ms each to compile, and a run reads one or two kinds.
_READERS: dict[AnswerKind, str] = {
    AnswerKind.YES_NO: "probes.reading.yes_no",
    AnswerKind.NUMBER: "probes.reading.numbers",
    AnswerKind.LETTER: "probes.reading.letters",
    AnswerKind.PAIR: "probes.reading.pairs",
    AnswerKind.CHOICE: "probes.reading.choices",
}


_LOADED: dict[AnswerKind, ModuleType] = {}


def _reader(kind: AnswerKind) -> ModuleType:
    module = _LOADED.get(kind)  # import_module's own look-up costs more than a reply's reading of a "Yes"
    if module is None:
        module = _LOADED[kind] = importlib.import_module(_READERS[kind])
    return module


def normalise(reply: str) -> str:
    """NFKC (full-width digits, Japanese punctuation), no reasoning blocks, no markdown or LaTeX
    decoration, no echoed examples or answer templates."""
    return clean(reply)


def is_refusal(reply: str) -> bool:
    """Whether the model declined to answer ("I'm sorry, I can't help with that", "お答えできません")."""
    return is_refusal_text(clean(reply))


def parse_item_reply(reply: str, item: Item) -> Parsed:
    return parse(reply, item.kind, options=item.options, labels=item.labels, question=item.question)


def parse(
    reply: str, kind: AnswerKind, options: Sequence[str] = (), labels: Sequence[str] = (), *, question: str = ""
) -> Parsed:
    """Read one reply. `question` (the item's own wording) lets a reply answer in the question's
    words; without it only the kind's general forms are read."""
    text = clean(reply, question)
    if not text:
        return Parsed(None, Status.UNPARSED)
    if kind in (AnswerKind.WORDS, AnswerKind.TEXT):
        return _free(text, kind)
    context = Context(
        kind=kind,
        options=tuple(options),
        labels=tuple(label.lower() for label in labels),
        question=question,
        predicate=_reader(kind).question_predicate(question) if kind is AnswerKind.YES_NO else None,
        counted=_reader(kind).counted_nouns(question) if kind is AnswerKind.NUMBER and question else None,
    )
    reading = _read(text, _reader(kind), context)
    if reading.value is not None and reading.value is not HEDGE:
        if reading.marked or not is_refusal_text(text):
            return Parsed(reading.value, Status.ANSWERED)
    if is_refusal_text(text):
        return Parsed(None, Status.REFUSED)
    return Parsed(None, Status.UNPARSED)


@dataclass(frozen=True)
class _Reading:
    value: Any  # an answer, HEDGE, or None
    marked: bool = False  # said after a marker, in braces, or as a line of its own


_NOTHING = _Reading(None)


def _read(text: str, reader: ModuleType, context: Context) -> _Reading:
    """The last committed answer: each part after a self-correction is read from the last."""
    cues = corrections(text)
    if cues and hasattr(reader, "protected"):
        protected = Spans(reader.protected(text, context))
        cues = [cue for cue in cues if not protected.hold(cue[0])]
    # Part i runs from the end of cue i-1 to the start of cue i; the cue's own words ("no wait")
    # belong to no part.
    starts = [0] + [end for _, end, _ in cues]
    ends = [start for start, _, _ in cues] + [len(text)]
    retracting = [False] + [retract for _, _, retract in cues]
    for index in range(len(starts) - 1, -1, -1):
        part = text[starts[index] : ends[index]]
        if not part.strip(" \t\n,.;:—–-…"):
            if retracting[index]:
                return _Reading(HEDGE)
            continue
        reading = _read_part(part, reader, context)
        if reading.value is not None:
            return reading
        # Nothing readable after "no wait", or only doubt ("Hmm, actually I'm not sure"): the
        # answer before is withdrawn.
        if retracting[index] or doubts(part):
            return _Reading(HEDGE)
    return _NOTHING


def _marked_answers(part: str, reader: ModuleType, context: Context) -> list[Found]:
    """The latest answer after a marker, the latest in braces, the latest line that is only an
    answer, and a short last sentence that is only an answer (the latest of them is chosen, so
    each is searched from the end)."""
    found: list[Found] = []
    markers = list(_MARKER.finditer(part))
    for index in range(len(markers) - 1, -1, -1):
        marker = markers[index]
        # A bounded look after each marker, never past the next one: linear in the reply.
        limit = markers[index + 1].start() if index + 1 < len(markers) else len(part)
        limit = min(limit, marker.end() + MAX_TAIL)
        after = part[marker.end() : limit]
        lead = len(after) - len(after.lstrip())
        line = after[lead:].split("\n", 1)[0]
        value = reader.strict(line, context) if line else None
        if value is not None:
            found.append(Found(value, marker.start(), marker.end() + lead + len(line)))
            break
    for braces in reversed(list(_BRACES.finditer(part))):
        value = reader.strict(braces.group(1), context)
        if value is not None:
            found.append(Found(value, braces.start(), braces.end()))
            break
    end = len(part)
    while end > 0:
        start = part.rfind("\n", 0, end) + 1
        line = part[start:end]
        if line.strip() and len(line) <= 200:
            value = reader.whole(line, context)
            if value is not None:
                found.append(Found(value, start, end))
                break
        end = start - 1
    # A short last sentence that is only an answer: "... it's the right one that is impossible. b"
    if context.kind in (AnswerKind.CHOICE, AnswerKind.LETTER):
        spans = sentences(part[-400:])
        offset = max(0, len(part) - 400)
        if len(spans) > 1:
            start, end = spans[-1]
            if len(part[offset + start : offset + end].strip()) <= 12:
                value = reader.whole(part[offset + start : offset + end], context)
                if value is not None:
                    found.append(Found(value, offset + start, offset + end))
    return found


def _line_disagrees(part: str, chosen: Found, reader: ModuleType, context: Context) -> bool:
    """Whether the rest of the chosen answer's line is itself a different answer ("Neither
    object. (c)", "a. The right object")."""
    line_start = part.rfind("\n", 0, chosen.start) + 1
    line_end = part.find("\n", chosen.end)
    line_end = len(part) if line_end < 0 else line_end
    for piece in (part[line_start : chosen.start], part[chosen.end : line_end]):
        if piece.strip() and len(piece) <= 200:
            other = reader.whole(piece, context)
            if other is HEDGE or (other is not None and not reader.same(other, chosen.value)):
                return True
    return False


def _read_part(part: str, reader: ModuleType, context: Context) -> _Reading:
    marked = _marked_answers(part, reader, context)
    if marked:
        chosen = max(marked, key=lambda f: (f.start, f.end))
        if chosen.value is HEDGE or reader.hedged(part[sentence_start(part, chosen.start) :], context):
            return _Reading(HEDGE, True)
        if _ASKED.match(part, chosen.end):  # "{2}? {1}?": an answer asked, not given
            return _Reading(HEDGE, True)
        if _line_disagrees(part, chosen, reader, context):
            return _Reading(HEDGE, True)
        if hasattr(reader, "consistent_before") and not reader.consistent_before(
            part[: chosen.start], chosen.value, context
        ):
            return _Reading(HEDGE, True)
        after = reader.confirms(part[chosen.end :], context)
        if after is HEDGE or (
            isinstance(after, Found) and (after.value is HEDGE or not reader.same(after.value, chosen.value))
        ):
            return _Reading(HEDGE, True)
        return _Reading(chosen.value, True)
    found = reader.loose(part, context)
    if found is None:
        return _NOTHING
    if found is HEDGE or found.value is HEDGE:
        return _Reading(HEDGE)
    if reader.hedged(part[sentence_start(part, found.start) :], context) or _ASKED.match(part, found.end):
        return _Reading(HEDGE)
    return _Reading(found.value)


# --- word lists and free text (texture generation, custom short answers) -------------------------


def _strict_words(text: str) -> list[str] | None:
    words = [re.sub(r"^\s*(?:\d+[.)]|[-•・*])\s*", "", w).strip(" 。.「」\"'") for w in re.split(r"[、,，;\n]", text)]
    words = [w for w in words if w]
    return words or None


def _strict_text(text: str) -> str | None:
    answer = text.strip().strip("\"'“”‘’").rstrip(".!。").strip()
    return answer or None


def _free(text: str, kind: AnswerKind) -> Parsed:
    """A word list or a short text: after the last marker that holds one, else the reply (its
    first line, for text)."""
    strict = _strict_words if kind is AnswerKind.WORDS else _strict_text
    markers = list(_MARKER.finditer(text))
    for index in range(len(markers) - 1, -1, -1):
        marker = markers[index]
        limit = markers[index + 1].start() if index + 1 < len(markers) else len(text)
        tail = text[marker.end() : min(limit, marker.end() + MAX_TAIL)].split("\n", 1)[0]
        value = strict(tail)
        if value is not None:
            return Parsed(value, Status.ANSWERED)
    if is_refusal_text(text):
        return Parsed(None, Status.REFUSED)
    value = strict(text) if kind is AnswerKind.WORDS else strict(text.split("\n", 1)[0])
    return Parsed(value, Status.ANSWERED) if value is not None else Parsed(None, Status.UNPARSED)
