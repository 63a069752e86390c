"""The command line's own checks: every option in range and every path usable before any work
starts, each mistake one line (`error: ...`) and exit status 2, never a traceback.

- Numbers: `--max-tokens` 1 to 1,000,000; `--temperature` a finite number from 0 to 2 (the widest
  range a provider takes: OpenAI's); `--concurrency` 1 to 64 (the bound every request is held
  to); `--limit`, `--n` at least 1 (a limit past the benchmark's size just means all of it).
- Paths: `--models-file` (or $PROBE_MODELS) a readable file whose every field is checked like the
  flag it stands for (models/models_file.py); `generate --out` a folder that can be made and
  written. A results store that cannot be opened is refused by `Store` itself (a read-only one
  is read, and refused only by the commands that write); one damaged where opening did not look
  (a data page), or a disk that fills up, is named when it happens (`store_problem`,
  `system_problem`), each with what is true of it.
- Variables `run` reads (PROBE_IMAGE_CACHE_MB, PROBE_DRAWING_PROCESS, the base URL of a provider it
  asks) are checked with its options.
- argparse's own mistakes (an unknown option, `--temperature abc`) print one line too, with
  where to find the command's help, instead of the usage block.
"""

from __future__ import annotations

import argparse
import errno
import math
import re
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

from models import registry as model_registry
from models.registry import Endpoint
from probes.core.errors import UsageError
from probes.running import drawing_process, image_cache, settings
from probes.running.limits import MAX_CONCURRENCY
from probes.running.store import default_path
from probes.running.store_access import disk_full, is_full

MAX_TOKENS = 1_000_000
MAX_TEMPERATURE = 2.0


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one `error:` line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message} (see: {self.prog} --help)\n")
        sys.exit(2)


def check_asking_options(args: argparse.Namespace) -> None:
    """What every command that asks models checks first: the variables it reads, the providers'
    addresses, --limit and --concurrency."""
    image_cache.max_bytes_from_env()
    drawing_process.enabled()
    for provider in {model.partition("/")[0] for model in args.model}:
        settings.base_url(provider)
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    if args.concurrency is not None and not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise UsageError(f"--concurrency must be from 1 to {MAX_CONCURRENCY}, got {args.concurrency}")


def check_run_options(args: argparse.Namespace) -> None:
    """`run`'s numeric options and the variables it reads, all before anything is built or sent."""
    check_asking_options(args)
    if args.shots < 0:
        raise UsageError("--shots must be 0 or more")
    if args.max_tokens is not None and not 1 <= args.max_tokens <= MAX_TOKENS:
        raise UsageError(f"--max-tokens must be from 1 to {MAX_TOKENS:,}, got {args.max_tokens}")
    if not math.isfinite(args.temperature) or not 0 <= args.temperature <= MAX_TEMPERATURE:
        raise UsageError(f"--temperature must be a number from 0 to {MAX_TEMPERATURE:g}, got {args.temperature}")


def load_endpoints(path: str | None) -> tuple[Endpoint, ...]:
    """The models file's endpoints (`--models-file`, else $PROBE_MODELS), checked field by field
    as the flags they stand for are: any mistake is a ModelsFileError, one line naming the file,
    the line and what to write (models/models_file.py)."""
    return model_registry.load_endpoints(path)


def writable_folder(path: str, option: str) -> Path:
    """`path` as a folder that exists (made if need be) and can be written, or a UsageError."""
    folder = Path(path).expanduser()
    try:
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(0, "it is a file, not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):  # root may write where permissions say no
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there ({_reason(exc)}); give a folder you can write") from None
    return folder


# SQLite's codes for a store the user must repair, replace or make room for, each with what is
# true of it: only a damaged file is worth `.recover`; a full disk or a read-only file is not damaged.
STORE_PROBLEMS = {
    "SQLITE_CORRUPT": "it is damaged ({}); give --store a new file name, or repair it (sqlite3 FILE .recover)",
    "SQLITE_NOTADB": "it is not a results store ({}); give --store a new file name",
    "SQLITE_IOERR": "it cannot be read or written (an I/O error: {}); check the disk it is on, or give --store a "
    "file on another",
    "SQLITE_READONLY": "it cannot be written ({}); give --store a file you can write",
    "SQLITE_CANTOPEN": "it cannot be opened ({}); check that its folder is there and writable, or give --store "
    "another file",
}


def store_problem(exc: sqlite3.DatabaseError, store: str | None) -> str | None:
    """The one-line message for a store that fails after it opened (damage in a data page shows
    only when that page is read; a disk fills up while results are written), or None when the
    error is not the store's state (a bug)."""
    where = Path(store) if store else default_path()
    if is_full(exc):
        return disk_full(where, exc)
    code = getattr(exc, "sqlite_errorname", "") or ""
    for prefix, what in STORE_PROBLEMS.items():
        if code.startswith(prefix):
            return f"results store {where}: {what.format(exc)}"
    return None


def system_problem(exc: OSError) -> str | None:
    """The one line for a disk that filled up or a file system that cannot be written, wherever
    the command met it (a drawing written, a log, an export), or None when the error is not the
    machine's state."""
    where = f": {exc.filename}" if exc.filename else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"the disk is full ({_reason(exc)}{where}): free some space and run the same command again "
            "(what was saved is kept)"
        )
    if exc.errno == errno.EROFS:
        return f"cannot write ({_reason(exc)}{where}): choose a folder on a file system you can write"
    return None


def _reason(exc: OSError) -> str:
    """The reason without the OSError's own copy of the path."""
    return exc.strerror or type(exc).__name__


# A provider's "set OPENAI_API_KEY (or paste a key for this session)" speaks to the playground,
# whose key boxes a shell does not have: here a key is an environment variable.
_PASTE = re.compile(r"\s*\(or paste a key[^)]*\)")


def shell_words(message: str) -> str:
    """A provider's message as the command line says it: the environment variable to set, no
    key box to paste into."""
    return _PASTE.sub(" in the environment", message) if _PASTE.search(message) else message
