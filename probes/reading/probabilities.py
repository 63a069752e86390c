"""Probabilities over an item's own answers, from what a backend gave (models/types.Output):

- local models: the probability of each candidate spelling of each answer, scored by the model
  at the answer's place (`candidates` names them; `Backend.score` scores them), summed per
  answer and normalised over the item's answers; `mass` is the share that fell on them;
- OpenAI-compatible servers: the alternatives at the token where the reply gives its answer,
  each read as the answer it spells (" A", "A", "a)", "(a" are all answer a; "Yes", " yes" are
  yes), summed per answer and normalised; `mass` the share of the token's probability that
  spelled one of the item's answers (alternatives beyond the top ones the server sent count as
  none of them); `top` the alternatives as sent, for a person to read. The alternatives at a
  token are distinct tokens, one of which came next: their probabilities add up to 1 at most.
  Where a server's add up to more (several at log probability 0, a token listed twice at a high
  one: a server that lies, or is broken) they are no distribution, and which of them is right
  cannot be told, so the reply has no probabilities at all rather than numbers rescaled into
  looking like some. A token text listed twice (two tokens that decode alike, as byte tokens
  do) counts twice: both were offered.

Where the answer was given: after the last answer marker ("Answer:", "I choose"), the first
token that spells the parsed answer; without a marker the last such token. So a chain-of-thought
reply is read at its final answer, not at its first mention of an option. Without a parsed answer,
or where the reply's tokens never spell it (an answer split over several tokens), there are no
probabilities: never any derived from the choice.

Answers are keyed as `answer_key` writes the parsed value and the target (an option's index,
"yes"/"no", a count, a letter), so calibration and fits read them beside the stored target.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from models.types import Output, TokenChoice
from probes.core.types import AnswerKind, Item, Result
from probes.reading.common import NUMBER_WORDS
from probes.reading.parsing import _MARKER  # the markers the parser reads an answer after

_PUNCTUATION = " \t\n()[]{}*.:,;'\"`_-"
# How far past 1 the alternatives at one token may add up: a server rounds each log probability
# (float32, printed to a few digits), which puts an honest top-20 at most some 1e-5 past 1; a
# thousandth is room for that and far below a percent anyone would read.
SUM_SLACK = 1e-3
_WORD_OF = {value: word for word, value in NUMBER_WORDS.items() if word != "none"}


def answer_key(value: Any) -> str:
    """An answer (a parsed value or a target) as the key of a probability."""
    return str(value).strip().casefold()


@dataclass(frozen=True)
class Probabilities:
    p: dict[str, float]  # answer key -> probability, normalised over the item's answers
    mass: float  # the share of probability that fell on the item's answers, before normalising
    top: tuple[tuple[str, float], ...] = ()  # the alternatives at the answer token (tokens only)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"p": self.p, "mass": self.mass}
        if self.top:
            data["top"] = [list(pair) for pair in self.top]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Probabilities | None:
        if not isinstance(data, dict) or not isinstance(data.get("p"), dict):
            return None
        top = tuple((str(t), float(p)) for t, p in data.get("top") or ())
        return cls({str(k): float(v) for k, v in data["p"].items()}, float(data.get("mass") or 0.0), top)


def answer_forms(item: Item) -> dict[str, tuple[str, ...]]:
    """Each of the item's answers (by key) with the words that say it, lower case."""
    if item.kind is AnswerKind.CHOICE:
        forms = {}
        for index, (label, option) in enumerate(zip(item.labels, item.options, strict=False)):
            words = [label.lower()]
            if option.strip() and len(option.split()) == 1:  # "Top", "Left": a token can say it
                words.append(option.strip().lower())
            forms[answer_key(index)] = tuple(dict.fromkeys(words))
        return forms
    if item.kind is AnswerKind.YES_NO:
        return {"yes": ("yes",), "no": ("no",)}
    if item.kind is AnswerKind.NUMBER:
        counts = sorted({int(a) for a in item.possible_answers() if a.strip().isdigit()})
        return {answer_key(n): tuple(w for w in (str(n), _WORD_OF.get(n)) if w) for n in counts}
    if item.kind is AnswerKind.LETTER:
        letters = [a.strip().lower() for a in item.possible_answers() if len(a.strip()) == 1]
        return {letter: (letter,) for letter in dict.fromkeys(letters)}
    return {}


def candidates(item: Item) -> list[tuple[str, str]]:
    """(answer key, text) of every spelling a local model is scored on: each word as written,
    capitalised and upper case, with and without the space a tokenizer may put before it, and
    a label in its opening bracket."""
    found: list[tuple[str, str]] = []
    for key, words in answer_forms(item).items():
        for word in words:
            spellings = [word, word.capitalize(), word.upper()]
            if item.kind is AnswerKind.CHOICE and len(word) == 1:
                spellings += [f"({word}", f"({word.upper()}"]
            for spelling in dict.fromkeys(spellings):
                found += [(key, spelling), (key, " " + spelling)]
    return found


def from_scores(item: Item, scores: Mapping[str, float]) -> Probabilities | None:
    """Candidate scores (`Backend.score`, disjoint events) summed per answer and normalised."""
    per_answer = dict.fromkeys(answer_forms(item), 0.0)
    for key, text in candidates(item):
        per_answer[key] += scores.get(text, 0.0)
    return _normalised(per_answer)


def from_tokens(item: Item, reply: str, parsed: Any, tokens: Sequence[TokenChoice]) -> Probabilities | None:
    """The alternatives at the token where `reply` gives the parsed answer (module docstring)."""
    forms = answer_forms(item)
    if parsed is None or answer_key(parsed) not in forms:
        return None
    place = answer_place(reply, forms[answer_key(parsed)], [(t.offset, t.token) for t in tokens])
    if place is None:
        return None
    token = tokens[place]
    alternatives = [(text, math.exp(logprob)) for text, logprob in token.top]
    if token.token not in {text for text, _ in alternatives}:
        alternatives.append((token.token, math.exp(token.logprob)))
    if sum(p for _, p in alternatives) > 1 + SUM_SLACK:
        return None  # not a distribution: no share of it can be told true (module docstring)
    word_of = {word: key for key, words in forms.items() for word in words}
    per_answer = dict.fromkeys(forms, 0.0)
    for text, p in alternatives:
        key = word_of.get(_normal(text))
        if key is not None:
            per_answer[key] += p
    found = _normalised(per_answer)
    if found is None:
        return None
    return Probabilities(found.p, found.mass, tuple(sorted(alternatives, key=lambda pair: -pair[1])))


def answer_place(reply: str, words: Sequence[str], tokens: Sequence[tuple[int, str]]) -> int | None:
    """Which of `tokens` ((offset, text) each) gives the answer spelled by `words`: the first
    after the reply's last answer marker, else the last in the reply; None if none spells it."""
    spelling = [index for index, (_, text) in enumerate(tokens) if _normal(text) in words]
    if not spelling:
        return None
    markers = list(_MARKER.finditer(reply))
    if markers:
        after = [index for index in spelling if tokens[index][0] >= markers[-1].end() - 1]
        if after:
            return after[0]
    return spelling[-1]


def answer_offset(reply: str, item: Item, parsed: Any) -> int | None:
    """Where in `reply` the parsed answer is said (as `answer_place` finds it, over the reply's
    words): a local model's candidates are scored after the reply up to there."""
    forms = answer_forms(item)
    if parsed is None or answer_key(parsed) not in forms:
        return None
    words = [(match.start(), match.group()) for match in re.finditer(r"\w+", reply)]
    place = answer_place(reply, forms[answer_key(parsed)], words)
    return None if place is None else words[place][0]


def read(item: Item, reply: str, parsed: Any, output: Output | None) -> Probabilities | None:
    """The probabilities of `item`'s answers that `output` carries, if any."""
    if output is None:
        return None
    if output.scores is not None:
        return from_scores(item, output.scores)
    if output.tokens is not None:
        return from_tokens(item, reply, parsed, output.tokens)
    return None


def attach(result: Result, item: Item, output: Output | None) -> None:
    """`result` with the probabilities its reply `output` carries (a run's fresh or cached reply,
    a replayed link's): the same reading wherever a reply is graded."""
    found = read(item, output.text if output is not None else "", result.parsed, output)
    if found is not None:
        result.probabilities, result.probability_mass = found.p, found.mass
        result.alternatives = found.top or None


def answer_names(item: Item) -> dict[str, str | None]:
    """What a log may call each of the item's answers, lower case, with the answer's key: the
    words `answer_forms` gives (a label, a one-word option, yes/no, a count, a letter) and, for a
    choice, each option's whole text. A name two answers share is kept with None."""
    names: dict[str, str | None] = {}

    def add(name: str, key: str) -> None:
        name = " ".join(name.split()).casefold()
        if name:
            names[name] = key if names.get(name, key) == key else None

    for key, words in answer_forms(item).items():
        for word in words:
            add(word, key)
    if item.kind is AnswerKind.CHOICE:
        for index, option in enumerate(item.options):
            add(option, answer_key(index))
    return names


def given_answers(item: Item, given: Any, names: Mapping[str, str | None] | None = None) -> Probabilities:
    """Probabilities a log gives for the item's answers, `{answer: probability}` (an answer as
    a reply names it: an option's label or text, yes/no, a count), as the store keeps a model's:
    every answer of the item, normalised over them, `mass` the share the log gave them (an
    answer it leaves out had none). ValueError, saying why, for anything else: a name that is
    not one of the item's answers (or names two), an answer named twice, a value that is not a
    probability, values that add up to more than 1 or to nothing."""
    forms = answer_forms(item)
    if not forms:
        raise ValueError(f"the answers of {item.benchmark} items are not a fixed set here, so none can be kept")
    if not isinstance(given, Mapping) or not given:
        raise ValueError("must be an object of {answer: probability}")
    names = answer_names(item) if names is None else names
    per_answer = dict.fromkeys(forms, 0.0)
    said: dict[str, str] = {}
    for name, value in given.items():
        plain = " ".join(str(name).strip(_PUNCTUATION).split()).casefold()
        whole = " ".join(str(name).split()).casefold()
        key = names[plain] if plain in names else names.get(whole)
        if key is None:
            if plain in names or whole in names:
                raise ValueError(f"{str(name)[:40]!r} names two of this item's answers (a label and another's text)")
            shown = ", ".join(n for n, k in names.items() if k is not None and len(n) <= 20)
            raise ValueError(f"{str(name)[:40]!r} is not one answer of this item (its answers: {shown})")
        if key in said:
            raise ValueError(f"{said[key]!r} and {str(name)[:40]!r} name the same answer")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValueError(f"{str(name)[:40]!r}: {str(value)[:24]} is not a probability (a number from 0 to 1)")
        said[key] = str(name)
        per_answer[key] += float(value)
    total = sum(per_answer.values())
    if total > 1 + 1e-6:
        raise ValueError(f"they add up to {total:.6g}, more than 1 (one probability per answer, not scores)")
    found = _normalised(per_answer)
    if found is None:
        raise ValueError("they add up to 0")
    return found


def from_choice_scores(item: Item, values: Sequence[float]) -> Probabilities | None:
    """A toolkit's score of each option of a multiple-choice item, in the options' order
    (lmms-eval's multiple_choice tasks: the model's log-likelihood of each continuation, or, as
    most of its models return it, the loss, the mean negative log-likelihood per token, which
    it takes the smallest of): each option's probability, normalised over the options, `mass`
    the share the options had (exact for one-token continuations such as " A"; for longer ones,
    of the per-token mean). Values that are all zero or below are log-likelihoods, all zero or
    above losses; a mix is neither (None), as is a count that is not the options'."""
    if item.kind is not AnswerKind.CHOICE or len(values) != len(item.options) or not values:
        return None
    if not all(math.isfinite(v) for v in values):
        return None
    if all(v >= 0 for v in values):
        logs = [-v for v in values]
    elif all(v <= 0 for v in values):
        logs = list(values)
    else:
        return None
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    total = sum(weights)
    mass = min(1.0, math.exp(top) * total)
    return Probabilities({answer_key(i): w / total for i, w in enumerate(weights)}, mass)


def _normal(token: str) -> str:
    return token.strip(_PUNCTUATION).casefold()


def _normalised(per_answer: dict[str, float]) -> Probabilities | None:
    mass = sum(per_answer.values())
    if not per_answer or not mass > 0 or not math.isfinite(mass):
        return None
    return Probabilities({key: value / mass for key, value in per_answer.items()}, min(1.0, mass))
