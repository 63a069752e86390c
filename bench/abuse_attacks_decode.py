"""Issue 22, every decode bounded (part "decode"): uploads whose structure costs a decoder
minutes, each made once in the bench's folder (tests/support/decode_bombs.py)."""

from __future__ import annotations

from collections.abc import Callable

from gradio_client import handle_file

from bench.abuse_attacks_common import Context, Outcome
from tests.ui.attacker import refusal


def decode_bomb(filename: str) -> Callable[[Context], Outcome]:
    def attack(ctx: Context) -> Outcome:
        from tests.support.decode_bombs import UPLOAD_BOMBS

        bomb = next(bomb for bomb in UPLOAD_BOMBS if bomb.filename == filename)
        path = ctx.folder / f"decode-{bomb.filename}"
        if not path.exists():
            bomb.write(path)
        return Outcome(refusal(ctx.client, "/use_upload", files=[handle_file(str(path))], question="Which?"))

    return attack
