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


@lru_cache(maxsize=256)
def _question_sentences(question: str) -> tuple[re.Pattern[str], ...]:
    """The question's sentences (and lines) as patterns that allow any spacing and case."""
    text = unicodedata.normalize("NFKC", question)
    # Sentence ends: ". " before a capital, any Japanese full stop, a line break; never the
    # periods of "e.g." inside a sentence.
    pieces = re.split(r"(?<=[.?!])\s+(?=[A-Z\"'(])|(?<=[。？])|\n+", text)
    patterns = []
    for piece in pieces:
        piece = piece.strip().rstrip(".?!。？")
        if len(piece) < 10:  # short pieces ("Yes.", "・状態") are too likely to be the reply's own words
            continue
        words = piece.split()
        body = r"\s+".join(re.escape(word) for word in words)
        patterns.append(re.compile(body + r"\s*[.?!。？]?", re.IGNORECASE))
    return tuple(patterns)


def drop_question_echoes(text: str, question: str) -> str:
    """The reply without verbatim copies of the question's sentences (and so their examples)."""
    if not question:
        return text
    for pattern in _question_sentences(question):
        text = pattern.sub(" ", text)
    return text
