"""The models file (`--models-file F` or `PROBE_MODELS=F`): named OpenAI-compatible servers, read as
strictly as the command line reads the flags they stand for.

```toml
[[endpoints]]
name = "ollama"                      # the ids' prefix: ollama/llava:7b
base_url = "http://localhost:11434/v1"
models = ["llava:7b", "qwen2.5vl:7b"]
api_key_env = "OLLAMA_API_KEY"       # optional: the NAME of the variable holding the key
concurrency = 2                      # optional: requests at once per model, 1 to 64
```

Every mistake is one line naming the file, the line where it can be found, the field, and what
to write instead (a `ModelsFileError`). The file is bounded before it is parsed (its size and how
deeply its brackets nest: Python's TOML reader recurses once per level), then every field is
checked for its type and bounds. Unknown fields are refused, as an unknown flag is: a misspelt
`concurrency` silently ignored would run with the default. Nothing a user may have pasted by
mistake (a key in `api_key_env`, a password in `base_url`) is ever repeated in a message.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from models.types import BackendError

# The bound of `--concurrency` and of every request (probes.running.limits.MAX_CONCURRENCY; models/
# cannot import probes/, so a test holds the two equal): a file may not ask what a flag may not.
MAX_CONCURRENCY = 64
DEFAULT_CONCURRENCY = 4
# A models file names a few servers in a few hundred bytes; these bounds leave room for any real
# one and stop a wrong file (a log, a dataset) before it is read into memory and parsed.
MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 8  # brackets inside brackets: a real file needs 2 (a list of models in an endpoint)
MAX_ENDPOINTS = 100
MAX_MODELS = 1000  # per endpoint
MAX_MODEL_NAME = 200
MAX_URL = 2000
FIELDS = ("name", "base_url", "models", "api_key_env", "concurrency")
EXAMPLE = '[[endpoints]] name = "ollama" base_url = "http://localhost:11434/v1" models = ["llava:7b"]'
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_KEY_FIELDS = ("api_key", "apikey", "key", "token", "api_token", "secret", "password")
# What the depth scan steps over: strings and comments (whose brackets do not nest; an unclosed
# one runs to its end, for the parser to name), then the brackets and line ends it counts.
_TOKENS = re.compile(
    r'"""(?:[^\\]|\\.)*?(?:"""|\Z)|\'\'\'.*?(?:\'\'\'|\Z)|"(?:[^"\\\n]|\\.)*(?:"|$)|\'[^\'\n]*(?:\'|$)|#[^\n]*'
    r"|[\[{]|[\]}]|\n",
    re.DOTALL | re.MULTILINE,
)
_HEADER = re.compile(r"\s*\[\[\s*(\"?)endpoints\1\s*\]\]")


class ModelsFileError(BackendError):
    """The models file cannot be used as written; the message says where and what to write."""


@dataclass(frozen=True)
class Endpoint:
    """A named OpenAI-compatible server from the models file."""

    name: str
    base_url: str
    api_key_env: str | None
    models: tuple[str, ...]
    concurrency: int = DEFAULT_CONCURRENCY


def read_endpoints(
    path: str | os.PathLike, taken: Collection[str] = (), named_by: str | None = None
) -> tuple[Endpoint, ...]:
    """The endpoints of the models file at `path`; `taken`: names an endpoint may not have (the
    built-in providers'); `named_by`: the variable that named the file, if one did (messages say
    so: a user who passed no option would look for the file in vain). Raises ModelsFileError,
    one line, for anything amiss."""
    file = Path(path)
    label = f"models file {file}" + (f" (named by {named_by})" if named_by else "")
    text = _read_text(file, label)
    _check_depth(label, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message says the line and column
        raise ModelsFileError(f"{label} is not valid TOML: {exc}") from None
    except RecursionError:  # the depth scan's backstop
        raise ModelsFileError(f"{label}: brackets nest too deeply; a models file needs 2 levels") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise ModelsFileError(f"{label} is not valid TOML: a number has thousands of digits") from None
    return _Reader(label, text).endpoints(data, frozenset(taken))


def _read_text(file: Path, label: str) -> str:
    try:
        with file.open("rb") as handle:  # at most one byte past the bound: never a whole huge file
            raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ModelsFileError(f"{label} does not exist") from None
    except IsADirectoryError:
        raise ModelsFileError(f"{label} is a folder: name the TOML file itself") from None
    except OSError as exc:
        raise ModelsFileError(f"{label} cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ModelsFileError(
            f"{label} is larger than {MAX_FILE_BYTES // 1024:,} KB: a models file names a few servers "
            "(is this the right file?)"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ModelsFileError(f"{label}, line {line}: not UTF-8 text; save the file as UTF-8") from None


def _check_depth(label: str, text: str) -> None:
    """Refuse brackets nested past MAX_DEPTH before the parser recurses into them."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # the usual file: nothing to scan
        return
    depth, line = 0, 1
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ModelsFileError(
                    f"{label}, line {line}: brackets nest more than {MAX_DEPTH} deep; "
                    "a models file needs 2 (a list of models inside [[endpoints]])"
                )
        elif token in "]}":
            depth = max(0, depth - 1)
        else:  # a string or comment, which may span lines
            line += token.count("\n")


class _Reader:
    """Checks the parsed file field by field; every message names the file and, where the text
    shows it, the line."""

    def __init__(self, label: str, text: str):
        self.label = label
        self.lines = text.splitlines()
        headers = [number for number, line in enumerate(self.lines) if _HEADER.match(line)]
        self.headers = headers

    def fail(self, message: str, line: int | None = None) -> ModelsFileError:
        where = f", line {line}" if line else ""
        return ModelsFileError(f"{self.label}{where}: {message}")

    def line_of(self, index: int | None, key: str | None) -> int | None:
        """The 1-based line of `key` in the `index`-th [[endpoints]] table (or of the table, or of
        a top-level key), when the file is written in that form; None where it cannot tell."""
        if index is None:  # a top-level `key = ...` or a `[key]` / `[[key]]` table
            name = re.escape(key or "")
            pattern = re.compile(rf"\s*(\"?{name}\"?\s*=|\[\[?\s*\"?{name}\"?\s*\]\]?)")
            return next((n + 1 for n, line in enumerate(self.lines) if pattern.match(line)), None)
        if index >= len(self.headers):  # endpoints written inline: no line per table
            return None
        start = self.headers[index]
        if key is None:
            return start + 1
        pattern = re.compile(rf"\s*\"?{re.escape(key)}\"?\s*=")
        for number in range(start + 1, len(self.lines)):
            if self.lines[number].lstrip().startswith("["):  # the next table
                break
            if pattern.match(self.lines[number]):
                return number + 1
        return start + 1

    def endpoints(self, data: dict[str, Any], taken: frozenset[str]) -> tuple[Endpoint, ...]:
        for key in data:
            if key != "endpoints":
                raise self.fail(f"unknown setting {_key(key)}{_did_you_mean(key, ('endpoints',))}; "
                                f"a models file holds [[endpoints]] tables only", self.line_of(None, key))  # fmt: skip
        tables = data.get("endpoints")
        if tables is None:
            raise self.fail(f"names no endpoints: write one [[endpoints]] table per server, e.g. {EXAMPLE}")
        if isinstance(tables, dict):
            raise self.fail(
                "`endpoints` is a single table: write [[endpoints]] (two brackets) before each server",
                self.line_of(None, "endpoints"),
            )
        if not isinstance(tables, list):
            raise self.fail(
                f"`endpoints` is {_describe(tables)}: write one [[endpoints]] table per server, e.g. {EXAMPLE}",
                self.line_of(None, "endpoints"),
            )
        if not tables:
            raise self.fail(f"names no endpoints: write one [[endpoints]] table per server, e.g. {EXAMPLE}")
        if len(tables) > MAX_ENDPOINTS:
            raise self.fail(f"{len(tables):,} endpoints; at most {MAX_ENDPOINTS} (one per server)")
        endpoints: list[Endpoint] = []
        for index, table in enumerate(tables):
            if not isinstance(table, dict):
                raise self.fail(
                    f"endpoint {index + 1} is {_describe(table)}: each endpoint is a table with name, base_url "
                    "and models",
                    self.line_of(None, "endpoints"),
                )
            endpoint = self.endpoint(index, table, taken)
            for earlier, other in enumerate(endpoints):
                if other.name == endpoint.name:
                    raise self.fail(
                        f"endpoint {index + 1}: name {endpoint.name!r} is endpoint {earlier + 1}'s already; "
                        "give each server its own name",
                        self.line_of(index, "name"),
                    )
            endpoints.append(endpoint)
        return tuple(endpoints)

    def endpoint(self, index: int, table: dict[str, Any], taken: frozenset[str]) -> Endpoint:
        which = f"endpoint {index + 1}"

        def wrong(key: str | None, message: str) -> ModelsFileError:
            return self.fail(f"{which}: {message}", self.line_of(index, key))

        for key in table:
            if key in FIELDS:
                continue
            if key.lower() in _KEY_FIELDS:  # never repeat the value: it may be a key
                raise wrong(key, f"{_key(key)}: a models file holds no keys; put the key in an environment "
                                 'variable and name it: api_key_env = "MY_SERVER_KEY"')  # fmt: skip
            raise wrong(key, f"unknown field {_key(key)}{_did_you_mean(key, FIELDS)}; the fields are "
                             f"{', '.join(FIELDS)}")  # fmt: skip
        for key in ("name", "base_url", "models"):
            if key not in table:
                raise wrong(None, f"`{key}` is missing; e.g. {EXAMPLE}")

        name = table["name"]
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise wrong("name", f"`name` is {_describe(name)}: write a short name of letters, digits, '.', '_' "
                                'or \'-\' (at most 64), e.g. name = "ollama"; model ids are NAME/model')  # fmt: skip
        if name in taken:
            raise wrong("name", f"name {name!r} is taken by a built-in provider: choose another")

        base_url = table["base_url"]
        problem = url_problem(base_url)
        if problem and "user name or password" in problem:
            problem += "; a models file holds no secrets (use api_key_env)"
        if problem:
            raise wrong("base_url", f"`base_url` {problem}; write the server's http(s) address, "
                                    'e.g. base_url = "http://localhost:11434/v1"')  # fmt: skip

        models = table["models"]
        if not isinstance(models, list) or not models:
            raise wrong("models", f"`models` is {_describe(models)}: write a list of model names, "
                                  'e.g. models = ["llava:7b"]')  # fmt: skip
        if len(models) > MAX_MODELS:
            raise wrong("models", f"`models` lists {len(models):,} names; at most {MAX_MODELS:,} per endpoint")
        seen: set[str] = set()
        for model in models:
            if not isinstance(model, str) or not model or len(model) > MAX_MODEL_NAME or model != model.strip() \
                    or any(unicodedata.category(c) == "Cc" for c in model):  # fmt: skip
                raise wrong("models", f"`models` holds {_describe(model)}: each is a model's name as the server "
                                      f"knows it (1 to {MAX_MODEL_NAME} characters, no spaces around it)")  # fmt: skip
            if model in seen:
                raise wrong("models", f"`models` lists {model!r} twice: list each model once")
            seen.add(model)

        key_env = table.get("api_key_env")
        if key_env is not None:
            # The value is never repeated: a user may have pasted the key itself here.
            if isinstance(key_env, str) and _looks_like_a_key(key_env):
                raise wrong("api_key_env", "`api_key_env` holds what looks like a key, not a variable's name: put "
                                           'the key in a variable (MY_SERVER_KEY=...) and write api_key_env = '
                                           '"MY_SERVER_KEY"; take the key out of this file')  # fmt: skip
            if not isinstance(key_env, str) or not _VARIABLE.fullmatch(key_env):
                raise wrong("api_key_env", "`api_key_env` must be the NAME of an environment variable (letters, "
                                           'digits and _), e.g. api_key_env = "MY_SERVER_KEY"')  # fmt: skip

        concurrency = table.get("concurrency", DEFAULT_CONCURRENCY)
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) \
                or not 1 <= concurrency <= MAX_CONCURRENCY:  # fmt: skip
            raise wrong("concurrency", f"`concurrency` is {_describe(concurrency)}: write a whole number from 1 "
                                       f"to {MAX_CONCURRENCY} (requests at once per model, as --concurrency)")  # fmt: skip
        return Endpoint(name, base_url, key_env, tuple(models), concurrency)


def url_problem(value: Any, credentials: bool = False) -> str | None:
    """What is wrong with `value` as a server's http(s) address, or None. With `credentials`
    False a user name or password in it is wrong too. An address holding one is never shown."""
    if not isinstance(value, str):
        return f"is {_describe(value)}"
    if len(value) > MAX_URL:
        return f"has {len(value):,} characters (at most {MAX_URL:,})"
    if any(c.isspace() or unicodedata.category(c) == "Cc" for c in value):
        return "holds spaces or control characters"
    shown = "an address with a user name or password" if "@" in value else _describe(value)
    try:
        parts = urlsplit(value)
        with_user = parts.username is not None or parts.password is not None
    except ValueError:
        return f"is {shown}, not a URL"
    if with_user and not credentials:
        return "holds a user name or password"
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:
        return f"is {shown}, not a URL with a valid host and port"
    if parts.scheme not in ("http", "https"):
        return f"is {shown}, not http:// or https://"
    if not parts.hostname:
        return f"is {shown}, which names no host"
    return None


def _looks_like_a_key(value: str) -> bool:
    """A secret pasted where a variable's name belongs. Names are words (MY_SERVER_KEY); keys are
    long runs of mixed-case letters and digits (hf_AbC9...), often with a provider's prefix
    (sk-..., sk-ant-...)."""
    if len(value) < 20:
        return False
    letters = re.sub(r"[^A-Za-z]", "", value)
    mixed = letters != letters.upper() and letters != letters.lower()
    random = mixed or any(c.isdigit() for c in value)
    if re.match(r"(sk|pk|rk|hf|gh[pousr]|github_pat|xai|gsk|glpat|AIza)[-_]", value) and random:
        return True
    return mixed and any(c.isdigit() for c in value)


def _describe(value: Any) -> str:
    """`value` as a message may show it: short, on one line, whatever the file held."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        text = str(value) if abs(value) < 10**12 else f"a {len(str(abs(value)))}-digit number"
        return text
    if isinstance(value, float):
        return f"{value!r} (not a whole number)"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return "an empty string" if not value else repr(shown)
    if isinstance(value, list):
        return f"a list of {len(value):,} values" if value else "an empty list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"  # dates and times


def _key(key: str) -> str:
    """A field's name as written, shown safely (TOML allows any characters in a quoted key)."""
    shown = key if len(key) <= 40 else key[:37] + "..."
    return f"`{shown}`" if shown.isprintable() else repr(shown)


def _did_you_mean(key: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(key.lower().replace("-", "_"), list(known), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""
