"""A server's reply is untrusted input: how big it may be, and how its fields are read.

Whatever shape a server sends (content as a list of parts, a number, null, an object; usage that
is not a count; an id of a megabyte), a backend either reads it as text where it honestly is text
or raises one `ProviderError` saying what came, for that item alone. What a backend returns is
bounded: the reply's text to MAX_KEPT_CHARS (with a line saying what was cut, and from how
much), the fields of `Output.raw` to MAX_FIELD_CHARS, error messages to one line of
MAX_ERROR_CHARS.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from typing import Any

from models.base import known_secrets, redact, redact_known
from models.types import GenerateConfig, Output, ProviderError, Usage

# The most a reply may weigh on the wire, counted after decompression, streamed or not. Honest
# replies to our requests are far below: a reply of 100,000 tokens is about 400 KB of JSON, and
# twice that if the server writes every non-ASCII character as a \u escape. Above it the memory
# a reply costs grows with it (the bytes, the text, the JSON objects parsed from them), so past
# the bound nothing more is read.
MAX_REPLY_BYTES = 4 * 1024 * 1024
# JSON values (counted as commas and brackets, strings' included) a reply may hold. Parsed, a
# small JSON value costs 20-30 times its bytes (4 MB of "{}," parse into 100 MB of dicts);
# 100,000 values keep that to a few MB, while an honest chat reply holds a few dozen.
MAX_JSON_VALUES = 100_000
# Characters of a reply kept (stored, graded, shown). A chain-of-thought reply of 2,048 tokens
# is about 10,000 characters; 50,000 keep a reply of some 12,000 tokens whole. A longer one keeps
# its start and its end (where a model states its answer) around a line saying what was cut. The
# bound keeps rows small and the work after a reply short: reading an answer out of a reply
# costs about 8 microseconds a character (0.4 s for 50,000; a 50 MB reply took minutes).
MAX_KEPT_CHARS = 50_000
KEPT_TAIL_CHARS = 5_000  # of those, from the reply's end
MAX_FIELD_CHARS = 200  # an id, a finish reason: what `Output.raw` keeps of each
MAX_ERROR_CHARS = 600  # an error message, on one line
_PREVIEW_CHARS = 60  # of an odd value, quoted in the error that says what came
# Redacting a long reply takes a while (about 1 microsecond a character): off the event loop.
_REDACT_IN_THREAD = 20_000
_REDACTED_CHARS = 8_000  # of an error message or a field: redacted, then cut to its bound


class ReplyRefused(Exception):
    """The server's reply was not read to its end: too big or too slow. The message says which,
    in one line."""


class ReplyTooLarge(ReplyRefused):
    """Past MAX_REPLY_BYTES or MAX_JSON_VALUES. Not worth asking again: a server that sent this
    reply sends it again."""


def refusal_in(exc: BaseException) -> ReplyRefused | None:
    """The `ReplyRefused` behind an SDK's error (its cause or context, at any depth), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ReplyRefused):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def text_of(content: Any, what: str = "content") -> str | None:
    """The text of a message's `content`, or None when there is none (null, missing).

    A string is the text. A list of parts (OpenAI's {"type": "text", "text": ...}, Anthropic's
    text blocks, plain strings) is the text of its text parts, joined; its other parts (images,
    tool calls, thinking) are not the reply. One part on its own (an object) is read as a list
    of one. Anything else (a number, true, a list without a text part) is not text: the item's
    error, saying what came."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        texts = [text for part in content if (text := _part_text(part)) is not None]
        if texts:
            return "".join(texts)
        kinds = sorted({_kind(part) for part in content})
        shown = ", ".join(kinds[:5]) + (", ..." if len(kinds) > 5 else "")
        raise ProviderError(f"the reply's {what} held no text ({len(content)} part(s): {shown or 'none'})")
    raise ProviderError(f"the reply's {what} was {_described(content)}, not text")


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    text = part.get("text")
    if isinstance(text, dict):  # {"type": "text", "text": {"value": "..."}}, as some servers write it
        text = text.get("value")
    if part.get("type", "text") in ("text", "output_text") and isinstance(text, str):
        return text
    return None


def _kind(part: Any) -> str:
    if isinstance(part, dict) and isinstance(part.get("type"), str):
        return preview(part["type"], 30)
    return type(part).__name__ if not isinstance(part, dict) else "object without a type"


def _described(value: Any) -> str:
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (int, float)):
        return f"a number ({preview(repr(value))})"
    return f"a {type(value).__name__} ({preview(repr(value))})"


def kept(text: str) -> list[str]:
    """The reply as kept: itself, or its first and last characters (MAX_KEPT_CHARS of them in
    all) to be joined by `cut_note`."""
    if len(text) <= MAX_KEPT_CHARS:
        return [text]
    return [text[: MAX_KEPT_CHARS - KEPT_TAIL_CHARS], text[-KEPT_TAIL_CHARS:]]


def cut_note(length: int) -> str:
    """The line that stands where a long reply was cut."""
    head = MAX_KEPT_CHARS - KEPT_TAIL_CHARS
    return f"\n[reply truncated: {length:,} characters; the first {head:,} and the last {KEPT_TAIL_CHARS:,} kept]\n"


def count(value: Any) -> int | None:
    """A token count, or None when the server sent something that is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value) if 0 <= value <= 10**12 else None


def field(value: Any) -> str | None:
    """A short field of the reply (id, finish reason) as text, or None. Cut to its final
    MAX_FIELD_CHARS by `bounded_output`, after redaction (a cut must not leave part of a key
    where the whole would have been redacted)."""
    if value is None:
        return None
    return (value if isinstance(value, str) else repr(value))[:_REDACTED_CHARS]


def preview(text: str, limit: int = _PREVIEW_CHARS) -> str:
    """`text` cut to `limit` characters (with "..."), on one line."""
    text = " ".join(text[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(message: str) -> str:
    """An error message on one line of at most MAX_ERROR_CHARS (a server's error page can be
    megabytes: its start says what went wrong)."""
    return preview(message, MAX_ERROR_CHARS)


def json_values(body: bytes) -> int:
    """An upper bound on the JSON values in `body` (commas and opening brackets, counted fast)."""
    return body.count(b",") + body.count(b"[") + body.count(b"{")


def json_object(data: Any) -> dict[str, Any]:
    """The reply's top-level JSON object. `data` is what the SDK made of the body: the parsed
    JSON, or the text itself when the body's Content-Type did not say JSON (then read as JSON
    all the same, as the SDK reads its typed replies)."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):
            raise ProviderError(f"the server's reply was not JSON: {preview(data)!r}") from None
    if data is None:
        raise ProviderError("the server's reply was empty (JSON null)")
    if not isinstance(data, dict):
        raise ProviderError(f"the server's reply was {_described(data)}, not a JSON object")
    return data


def error_in(data: dict[str, Any]) -> str | None:
    """The message of an error object a server put in a reply with status 200, if any."""
    error = data.get("error")
    if error is None:
        return None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        error = error["message"]
    return f"the server answered with an error: {preview(error if isinstance(error, str) else repr(error), 300)}"


async def bounded_output(
    text: str, latency: float, usage: Usage, raw: dict[str, Any], secrets: Sequence[str]
) -> Output:
    """The Output a backend returns: the text kept (see `kept`), like every field of `raw`, with
    every secret redacted (each kept piece on its own: a key cut in two is still found in each);
    `raw["reply_chars"]` says how long a cut reply was."""

    everyone = known_secrets(secrets)

    def redacted(pieces: list[str]) -> list[str]:
        return [redact_known(piece, everyone) for piece in pieces]

    pieces = kept(text)
    if sum(map(len, pieces)) > _REDACT_IN_THREAD:
        pieces = await asyncio.to_thread(redacted, pieces)
    else:
        pieces = redacted(pieces)
    raw = {
        name: preview(redact_known(value, everyone), MAX_FIELD_CHARS) if isinstance(value, str) else value
        for name, value in raw.items()
    }
    if len(pieces) > 1:
        raw["reply_chars"] = len(text)
    text = cut_note(len(text)).join(pieces)
    return Output(text=text, latency=latency, usage=usage, raw=raw)


def unreadable(model_id: str, exc: ProviderError, secrets: Sequence[str]) -> ProviderError:
    """A reply the backend could not read, as the item's error (its preview of what came may
    quote anything the server sent: redacted)."""
    return ProviderError(one_line(redact(f"{model_id}: {exc}"[:_REDACTED_CHARS], secrets)))


def failure(model_id: str, exc: Exception, config: GenerateConfig, secrets: Sequence[str]) -> ProviderError:
    """What an SDK call's exception means to the user, on one redacted line."""
    attempts = config.max_retries + 1
    refused = refusal_in(exc)
    if refused is not None:
        message = str(refused)
        if not isinstance(refused, ReplyTooLarge):  # a deadline: the SDK tried again
            message += f"; {attempts} attempt(s): running again retries it"
    elif isinstance(exc, TimeoutError):  # the whole request's deadline (GenerateConfig.deadline)
        message = (
            f"no reply within {config.deadline:g} s, the deadline of one request "
            f"({attempts} attempt(s) of at most {config.timeout:g} s each): running again retries it"
        )
    elif 300 <= (status := getattr(getattr(exc, "response", None), "status_code", 0) or 0) < 400:
        # Not followed (models/bounded_http.py): an API request is not sent on to another place.
        where = preview(exc.response.headers.get("location", ""), 120)  # type: ignore[attr-defined]
        message = (
            f"the server redirected the request (status {status}{', to ' + where if where else ''}), "
            "which is not followed: set the base URL to where the API answers"
        )
    elif isinstance(exc, RecursionError):
        message = "the server's reply was not valid JSON (nested too deeply)"
    elif isinstance(exc, ValueError):  # a 200 whose body is not JSON: the SDK does not retry it
        message = f"the server's reply was not valid JSON ({exc})"
    else:
        message = f"{type(exc).__name__}: {exc}"
    return ProviderError(one_line(redact(f"{model_id}: {message}"[:_REDACTED_CHARS], secrets)))
