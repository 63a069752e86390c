"""Text a reply carries that is not its answer: reasoning blocks, markup, and echoes of the
question (its sentences, its example answer, its answer template).

A reply that repeats "Answer with Yes/No." or "For example, rows={5} columns={6}" has not
answered yes or (5, 6); what it writes after the echo may be its answer. Everything here removes
text (replacing it with a space), so positions stay meaningful to a reader only within the
cleaned text. All patterns are linear: no nested quantifiers over unbounded text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox)\s*\{([^{}\n]{0,80})\}")
_LATEX_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_LATEX_MATH = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$+")
_MARKDOWN = re.compile(r"\*\*|__|`|^#+\s*", re.MULTILINE)
_EMPHASIS = re.compile(r"(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)")

# An example given as an example: "e.g., {3}", "for example, rows={5} columns={6}", "like (5,6)".
_EXAMPLE = re.compile(
    r"(?:e\.\s?g\.|for\s+example|for\s+instance|such\s+as|\blike)\s*[,:]?\s*"
    r"(?:rows\s*=\s*\{\d+\}\s*,?\s*columns\s*=\s*\{\d+\}|\(\s*\d+\s*,\s*\d+\s*\)|\{[^{}\n]{0,80}\})",
    re.IGNORECASE,
)
# Answer templates copied from an instruction: "Yes/No", "<answer>", "{letter_of_correct_choice}",
# "(row, column)". A single letter in braces is an answer ("{X}" names the letter X), not a template.
_TEMPLATES = re.compile(
    r"\byes\s*/\s*no\b|\bno\s*/\s*yes\b|はい\s*/\s*いいえ"
    r"|<[A-Za-z_][^<>\n]{0,40}>"
    r"|\{\s*(?:[A-Za-z]+_[A-Za-z_]+|answer|your\s+answer|number|letter|choice|option|count|rows?|columns?|reason)\s*\}"
    r"|\(\s*rows?\s*,\s*columns?\s*\)",
    re.IGNORECASE,
)


def clean(reply: str, question: str = "") -> str:
    """NFKC (full-width digits, Japanese punctuation), no reasoning blocks, no LaTeX or markdown
    decoration, no copies of the question's sentences, no examples given as examples, no answer
    templates."""
    text = unicodedata.normalize("NFKC", reply or "")
    text = _THINK_BLOCK.sub(" ", text)
    text = _LATEX_TEXT.sub(r"\1", text)
    text = _LATEX_BOXED.sub("{", text)
    text = _LATEX_MATH.sub(" ", text)
    text = _MARKDOWN.sub("", text)
    text = _EMPHASIS.sub("", text)
    text = drop_question_echoes(text, question)
    text = _EXAMPLE.sub(" ", text)
    text = _TEMPLATES.sub(" ", text)
    return text.strip()


@lru_cache(maxsize=4096)
def _question_sentences(question: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """The question's sentences (and lines), each as its words (`_pattern` finds it with any
    spacing and case) and those of them that are ASCII, in lower case: a reply that lacks one of
    them holds no copy of the sentence, and no pattern is compiled for it (a table of a million
    distinct questions would compile a million patterns)."""
    text = unicodedata.normalize("NFKC", question)
    # Sentence ends: ". " before a capital, any Japanese full stop, a line break; never the
    # periods of "e.g." inside a sentence.
    pieces = re.split(r"(?<=[.?!])\s+(?=[A-Z\"'(])|(?<=[。？])|\n+", text)
    patterns = []
    for piece in pieces:
        piece = piece.strip().rstrip(".?!。？")
        if len(piece) < 10:  # short pieces ("Yes.", "・状態") are too likely to be the reply's own words
            continue
        words = tuple(piece.split())
        patterns.append((tuple(word.lower() for word in words if word.isascii()), words))
    return tuple(patterns)


@lru_cache(maxsize=1024)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """A sentence of these words, with any spacing and case, and its final stop if any."""
    return re.compile(r"\s+".join(re.escape(word) for word in words) + r"\s*[.?!。？]?", re.IGNORECASE)


# The characters that a case-blind pattern matches to an ASCII letter but lower() does not make
# one (dotted and dotless i, the Kelvin sign, the long s): folded first, so that a reply holding
# a copy of a sentence always holds its ASCII words in lower case.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u212a": "k", "\u017f": "s"})


def drop_question_echoes(text: str, question: str) -> str:
    """The reply without verbatim copies of the question's sentences (and so their examples)."""
    if not question:
        return text
    folded = None
    for needed, words in _question_sentences(question):
        if needed:
            if folded is None:
                folded = text.translate(_FOLD).lower()
            if not all(word in folded for word in needed):
                continue  # no copy of this sentence here
        text = _pattern(words).sub(" ", text)
        folded = None
    return text
