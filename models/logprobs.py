"""Token probabilities in an OpenAI-compatible reply (`choices[0].logprobs.content`), read as the
untrusted input they are, and kept in line with the reply's text as the backend keeps it.

Each entry of `content` is {"token", "logprob", "top_logprobs": [{"token", "logprob"}, ...]}
(OpenAI, vLLM, llama.cpp's server). Tokens are placed by their offsets in the text, counted
from their own lengths; tokens that do not spell the reply (a server that sends something
else) give no probabilities at all rather than probabilities read at the wrong place.
"""

from __future__ import annotations

import math
from typing import Any

from models.replies import KEPT_TAIL_CHARS, MAX_KEPT_CHARS, cut_note
from models.types import TOP_ALTERNATIVES, TokenChoice

MAX_TOKENS = 16_384  # tokens read: a reply kept whole is at most 50,000 characters (models/replies.py)
MAX_TOKEN_CHARS = 64  # a token longer than this is no token a tokenizer makes


def read_tokens(choice: dict[str, Any], text: str) -> tuple[tuple[TokenChoice, ...] | None, str | None]:
    """(tokens, None) when the choice carries token probabilities that spell `text`, else (None,
    why there are none)."""
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content:
        return None, "the server sent no token probabilities (logprobs)"
    if len(content) > MAX_TOKENS:
        return None, f"the server sent {len(content):,} token probabilities, more than the {MAX_TOKENS:,} read"
    tokens: list[TokenChoice] = []
    offset = 0
    for entry in content:
        token, logprob = _token(entry)
        if token is None or logprob is None:
            return None, "the server's token probabilities were malformed"
        top = []
        for alternative in (entry.get("top_logprobs") or [])[:TOP_ALTERNATIVES] if isinstance(entry, dict) else []:
            name, value = _token(alternative)
            if name is not None and value is not None:
                top.append((name, value))
        tokens.append(TokenChoice(offset, token, logprob, tuple(top)))
        offset += len(token)
    if "".join(t.token for t in tokens) != text:
        return None, "the server's token probabilities did not spell its reply"
    return tuple(tokens), None


def _token(entry: Any) -> tuple[str | None, float | None]:
    if not isinstance(entry, dict):
        return None, None
    token, logprob = entry.get("token"), entry.get("logprob")
    if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
        return None, None
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
        return None, None
    logprob = float(logprob)
    if not math.isfinite(logprob):  # -inf and -9999 stand for "impossible": probability 0
        logprob = -1e4 if logprob < 0 else math.nan
    return (token, logprob) if logprob <= 1e-6 else (None, None)


def realigned(tokens: tuple[TokenChoice, ...], original: str, kept: str) -> tuple[TokenChoice, ...]:
    """The tokens placed in the reply as kept (`models.replies.bounded_output`: a long reply cut
    in the middle, secrets redacted): a token of the cut middle goes, one of the kept tail moves
    with it, and one that no longer reads the same at its place (a redacted key) goes too."""
    if kept == original:
        return tokens
    shift = None
    if len(original) > MAX_KEPT_CHARS:
        head = MAX_KEPT_CHARS - KEPT_TAIL_CHARS
        tail_start = len(original) - KEPT_TAIL_CHARS
        shift = (head, tail_start, head + len(cut_note(len(original))) - tail_start)
    placed = []
    for token in tokens:
        offset = token.offset
        if shift is not None:
            head, tail_start, moved = shift
            if offset + len(token.token) <= head:
                pass
            elif offset >= tail_start:
                offset += moved
            else:
                continue
        if kept[offset : offset + len(token.token)] == token.token:
            placed.append(TokenChoice(offset, token.token, token.logprob, token.top))
    return tuple(placed)
