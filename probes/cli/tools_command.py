"""`python -m probes mine` and `python -m probes ease`: DiscriBench's construction method as a tool
(look-alike quadruples that CLIP cannot tell apart and DINOv2 can; drafts of their text by a
model; the easing subsets). The work lives in `probes.tools`; this module reads the options and
draws the progress bars."""

from __future__ import annotations

import argparse
import asyncio
import math
from collections.abc import Sequence

from models.types import GenerateConfig, Message
from probes.cli.checks import load_endpoints
from probes.cli.progress import ProgressBar
from probes.core.errors import UsageError
from probes.running import answerers
from probes.tools.drafting import draft_folder
from probes.tools.easing import ease
from probes.tools.embeddings import DEFAULT_CLIP, DEFAULT_DINO
from probes.tools.mining import mine

DRAFT_TOKENS = 2048  # a situation, a conversation and a question


def add_tool_commands(commands: argparse._SubParsersAction) -> None:
    miner = commands.add_parser("mine", help="find look-alike image quadruples (DiscriBench's method) in a folder")
    miner.add_argument("folder", help="a folder of images (searched recursively)")
    miner.add_argument("--out", required=True, help="a new or empty folder for the DiscriBench-layout result")
    miner.add_argument(
        "--clip", default=DEFAULT_CLIP, help=f"CLIP: a Hub id or a local folder (default {DEFAULT_CLIP})"
    )
    miner.add_argument(
        "--dino", default=DEFAULT_DINO, help=f"DINOv2: a Hub id or a local folder (default {DEFAULT_DINO})"
    )
    miner.add_argument("--clip-min", type=float, default=0.95, help="every pair at least this CLIP similarity")
    miner.add_argument("--dino-max", type=float, default=0.6, help="some pair below this DINOv2 similarity")
    miner.add_argument("--reuse", action="store_true", help="let one image appear in several quadruples")
    miner.add_argument("--limit", type=int, help="keep at most this many quadruples (the best ranked)")
    miner.add_argument("--lang", default="en", help="records language: en or ja (default en)")
    miner.add_argument("--draft", metavar="MODEL", help="draft each quadruple's text with this model (provider/model)")
    miner.add_argument("--models-file", help="TOML file of OpenAI-compatible endpoints (default: $PROBE_MODELS)")
    miner.set_defaults(handler=cmd_mine)

    easer = commands.add_parser("ease", help="write DiscriBench's easing subsets (vis_easy, lan_easy, ...) of a folder")
    easer.add_argument("folder", help="a DiscriBench-layout folder (e.g. one written by mine, texts filled in)")
    easer.add_argument("--clip", default=DEFAULT_CLIP, help="CLIP, to find the distractor least like the answer")
    easer.set_defaults(handler=cmd_ease)


def cmd_mine(args: argparse.Namespace) -> int:
    for name, value in (("--clip-min", args.clip_min), ("--dino-max", args.dino_max)):
        if not math.isfinite(value) or not -1 <= value <= 1:
            raise UsageError(f"{name} is a cosine similarity: between -1 and 1, got {value}")
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    ask = _asker(args.draft, args.models_file) if args.draft else None  # a missing key stops us before embedding
    bar = ProgressBar(1, "embed")
    report = mine(args.folder, args.out, clip=args.clip, dino=args.dino, clip_min=args.clip_min,
                  dino_max=args.dino_max, reuse=args.reuse, limit=args.limit, lang=args.lang,
                  progress=_drawing(bar))  # fmt: skip
    bar.close()
    print("\n".join(report.lines()))
    if ask is not None and report.found:
        bar = ProgressBar(1, f"draft with {args.draft}")
        drafted = draft_folder(report.out, ask, args.draft, lang=args.lang, progress=_drawing(bar))
        bar.close()
        print("\n".join(drafted.lines()))
    return 0


def cmd_ease(args: argparse.Namespace) -> int:
    bar = ProgressBar(1, "embed")
    report = ease(args.folder, clip=args.clip, progress=_drawing(bar))
    bar.close()
    print("\n".join(report.lines()))
    return 0


def _drawing(bar: ProgressBar):
    def update(done: int, total: int) -> None:
        bar.total = max(total, 1)
        bar.update(done)

    return update


def _asker(model_id: str, models_file: str | None):
    """A synchronous `ask(messages) -> reply` on any model the playground can call."""
    backend = answerers.resolve(model_id, load_endpoints(models_file))
    backend.check()
    config = GenerateConfig(max_tokens=DRAFT_TOKENS)

    def ask(messages: Sequence[Message]) -> str:
        async def once() -> str:
            backend.hold()
            try:
                return (await backend.generate(list(messages), config)).text
            finally:
                await backend.release()

        return asyncio.run(once())

    return ask
