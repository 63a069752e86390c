"""Generator parameters as people type them, one reading for the command line and every tab.

`gap=-0.1,0,0.1 canvas=384` fixes `canvas` and sweeps `gap`: pairs are separated by spaces,
semicolons or repeated `--param` options; commas separate a sweep's values (spaces around them
are allowed: `gap=0.1, 0.2`), and a comma followed by `NAME=` starts the next pair
(`gap=0.05,canvas=384`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from probes.core.errors import UsageError

HINT = "write NAME=VALUE or NAME=V1,V2,... e.g. gap=-0.1,0,0.1"


def parse_params(text: str | Sequence[str] | None) -> dict[str, list[str]]:
    """NAME -> values, in the order given; a name given twice keeps its last values."""
    pieces = [text] if isinstance(text, str) or text is None else list(text)
    params: dict[str, list[str]] = {}
    for piece in pieces:
        compact = re.sub(r"\s*,\s*", ",", (piece or "").strip())
        for token in re.split(r"[\s;]+", compact):
            if token:
                _read_token(token, params)
    return params


def _read_token(token: str, params: dict[str, list[str]]) -> None:
    name: str | None = None
    for part in token.split(","):
        if "=" in part:
            name, _, value = part.partition("=")
            if not name:
                raise UsageError(f"parameter {token!r}: {HINT}")
            params[name] = [value] if value else []
        elif name is None:
            raise UsageError(f"parameter {token!r}: {HINT}")
        elif part:
            params[name].append(part)
    for key in list(params):
        if not params[key]:
            raise UsageError(f"parameter {token!r}: {HINT}")


def single_values(params: dict[str, list[str]]) -> dict[str, str]:
    """Where one value per parameter is wanted (one stimulus): refuse a sweep."""
    swept = [name for name, values in params.items() if len(values) != 1]
    if swept:
        raise UsageError(f"give one value for {', '.join(swept)} here (a sweep belongs in a run)")
    return {name: values[0] for name, values in params.items()}
