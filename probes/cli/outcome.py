"""How a command ends, in modules light enough for every command to load first: argparse's
mistakes as one line (`OneLineParser`), a user's mistake as one `error:` line and exit status 2,
a damaged store, a full or read-only disk named with what is true of it (`store_problem`,
`system_problem`), an interrupt as 130, and anything else as a bug: one line saying so and where
its traceback was written, exit status 1. `python -m probes report` loads only this and what a
report needs (probes/cli/__init__.py); every other command goes through probes.cli.commands."""

from __future__ import annotations

import argparse
import errno
import re
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from models.types import BackendError
from probes.core.errors import InputRejected, ProbeError
from probes.running.store import default_path
from probes.running.store_access import disk_full, is_full

EXIT_INTERRUPTED = 130  # as a shell reports a command stopped by Ctrl-C
PROG, DESCRIPTION = "python -m probes", "Probe how vision-language models perceive."


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one `error:` line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message} (see: {self.prog} --help)\n")
        sys.exit(2)


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
            f"the disk is full ({reason(exc)}{where}): free some space and run the same command again "
            "(what was saved is kept)"
        )
    if exc.errno == errno.EROFS:
        return f"cannot write ({reason(exc)}{where}): choose a folder on a file system you can write"
    return None


def reason(exc: OSError) -> str:
    """The reason without the OSError's own copy of the path."""
    return exc.strerror or type(exc).__name__


# A provider's "set OPENAI_API_KEY (or paste a key for this session)" speaks to the playground,
# whose key boxes a shell does not have: here a key is an environment variable.
_PASTE = re.compile(r"\s*\(or paste a key[^)]*\)")


def shell_words(message: str) -> str:
    """A provider's message as the command line says it: the environment variable to set, no
    key box to paste into."""
    return _PASTE.sub(" in the environment", message) if _PASTE.search(message) else message


def handled(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """`args.handler(args)`, its failures each said in one line with its exit status."""
    try:
        try:
            return args.handler(args)
        except sqlite3.DatabaseError as exc:
            # A store damaged where opening it did not look (a data page), or a full disk: the
            # user's to fix. Any other database error is a bug and goes on to be logged as one.
            problem = store_problem(exc, getattr(args, "store", None))
            if problem is None:
                raise
            raise InputRejected(problem) from None
        except OSError as exc:
            # A disk that filled up or a read-only file system, wherever it was met: not a bug.
            problem = system_problem(exc)
            if problem is None:
                raise
            raise InputRejected(problem) from None
    except (ProbeError, BackendError) as exc:
        print(f"error: {shell_words(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before a run's own handler is in place (while building items)
        print("interrupted: nothing was sent", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # a bug: say so in one line; the traceback goes to a file, not the screen
        from probes.cli.internal_errors import log_internal_error

        where = log_internal_error(" ".join(sys.argv[1:] if argv is None else argv))
        print(f"internal error (a bug, not your mistake): the details are in {where}", file=sys.stderr)
        return 1
