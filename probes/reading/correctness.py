"""Whether a parsed answer is right: the one comparison every benchmark's default grade uses."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from probes.core.types import AnswerKind, Parsed, Status


def is_correct(kind: AnswerKind, parsed: Parsed, target: Any) -> bool | None:
    """True/False for a reply; None where correctness is not a yes/no matter (word lists)."""
    if kind is AnswerKind.WORDS:
        return None
    if parsed.status is not Status.ANSWERED:
        return False
    value = parsed.value
    if kind is AnswerKind.LETTER:
        return str(value).casefold() == str(target).casefold()
    if kind is AnswerKind.PAIR:
        return tuple(value) == tuple(target)
    if kind is AnswerKind.TEXT:
        return _plain(str(value)) == _plain(str(target))
    return value == target


def _plain(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\W_]+", " ", text).strip()
