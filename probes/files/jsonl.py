"""JSON Lines and text written by people (custom folders, uploads, imported replies): read line
by line within limits, and checked to be real text, so that a hostile or broken file gets a
message naming its line instead of a traceback, a hang or a store that cannot save it.

The limits are shared, so a custom folder, an upload and an import say the same thing:

- numbers: finite. NaN, Infinity and numbers past a double's range (1e400) are refused where
  they are read, so no answer, target or option becomes the text "nan" or "inf".

- a line: 2,000,000 bytes. Read with that cap, so a 500 MB file without newlines is refused
  after 2 MB rather than read whole. No valid record comes near it (see the limits below).
- a question: 20,000 characters (about 5,000 tokens). It is sent to every model for every item;
  more than that is a pasted file, not a question.
- an option: 2,000 characters. Options are matched against replies by the parser.
- an imported reply: 100,000 characters (about 25,000 tokens, more than any reply a run asks
  for). The reply parser is not linear in the length of some replies (see `probes/reading/parsing.py`),
  so longer replies would not be graded in reasonable time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_LINE_BYTES = 2_000_000
MAX_QUESTION_CHARS = 20_000
MAX_OPTION_CHARS = 2_000
MAX_RESPONSE_CHARS = 100_000


def read_lines(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, parsed value, None), or (line number, None, the problem), for each
    non-blank line. Reading stops at a line over MAX_LINE_BYTES. Raises OSError if the file
    cannot be opened."""
    with path.open("rb") as handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), start=1):
            if len(raw) > MAX_LINE_BYTES:
                yield number, None, f"longer than {MAX_LINE_BYTES:,} bytes; reading stopped here"
                return
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield number, None, "not valid UTF-8"
                continue
            if text.strip():
                yield number, *_parse(text)


class _NotFinite(ValueError):
    pass


def _finite(number: str) -> float:
    value = float(number)
    if not math.isfinite(value):  # 1e400 reads as infinity
        raise _NotFinite(number)
    return value


def _no_constant(name: str) -> Any:
    raise _NotFinite(name)  # NaN, Infinity, -Infinity: Python's json reads them, JSON has none


# One decoder for every line (json.loads with hooks makes one per call), with json.loads' own check.
_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant)
_BOM = "\ufeff"


def _parse(text: str) -> tuple[Any, str | None]:
    try:
        if text.startswith(_BOM):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except _NotFinite as exc:
        return None, f"holds {exc.args[0][:24]}, which is not a finite number (JSON numbers must be finite)"
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except RecursionError:  # [[[[... thousands deep
        return None, "not valid JSON (nested too deeply)"
    except ValueError:  # an integer of more than 4,300 digits (Python refuses to convert it)
        return None, "not valid JSON (a number too long to read)"
    # The line is UTF-8 text already, so only a \u escape can spell a surrogate: other lines need no check.
    if ("\\ud" in text or "\\uD" in text) and not is_text(json.dumps(value, ensure_ascii=False)):
        # JSON may spell a lone surrogate ("\udcff"), which no UTF-8 text can hold: the store,
        # the prompt hash and the providers' HTTP bodies would all fail on it later.
        return None, "not valid UTF-8 (an unpaired surrogate escape such as \\udcff)"
    return value, None


def is_text(value: str) -> bool:
    """Whether `value` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def too_long(field: str, value: str, limit: int) -> str | None:
    """The message for a text field over its limit, or None."""
    if len(value) <= limit:
        return None
    return f"`{field}` is {len(value):,} characters, over the {limit:,}-character limit"


MAX_PROBLEMS_SHOWN = 10


def read_objects(
    path: Path, errors: list[str], hint: str = "", label: str | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each JSON object line of `path`; every other line's problem is
    added to `errors` as "LABEL line N: ..." (LABEL: the file's name unless given). Raises
    OSError if the file cannot be opened."""
    label = label or path.name
    records = []
    for number, value, problem in read_lines(path):
        if problem is None and not isinstance(value, dict):
            problem = f"expected a JSON object{' like ' + hint if hint else ''}, got {type(value).__name__}"
        if problem is not None:
            errors.append(f"{label} line {number}: {problem}")
            continue
        records.append((number, value))
    return records


def problems(where: object, errors: list[str]) -> str:
    """One message for several problems: how many, then the first few, one per line."""
    shown = "\n  ".join(errors[:MAX_PROBLEMS_SHOWN])
    more = f"\n  ... and {len(errors) - MAX_PROBLEMS_SHOWN} more" if len(errors) > MAX_PROBLEMS_SHOWN else ""
    return f"{where}: {len(errors)} problem(s):\n  {shown}{more}"
