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
  `system_problem` in probes/cli/outcome.py), each with what is true of it.
- Variables `run` reads (PROBE_IMAGE_CACHE_MB, PROBE_DRAWING_PROCESS, the base URL of a provider it
  asks) are checked with its options.
- argparse's own mistakes (an unknown option, `--temperature abc`) print one line too, with
  where to find the command's help, instead of the usage block (`OneLineParser`, probes/cli/outcome.py).
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from models import registry as model_registry
from models.registry import Endpoint
from probes.cli.outcome import reason
from probes.core.errors import UsageError
from probes.running import drawing_process, image_cache, settings
from probes.running.limits import MAX_CONCURRENCY

MAX_TOKENS = 1_000_000
MAX_TEMPERATURE = 2.0


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
        raise UsageError(f"{option} {path}: cannot write there ({reason(exc)}); give a folder you can write") from None
    return folder
