"""Attacks that ask for work the app allows, at its largest: the largest uploads asked of four
models under every condition, previews and exports at the largest size, session stores filled
to their bound, a 9,800-item illusion design built for one item, an illusion parameter with no
bound. Each must stay within memory and leave the other visitor served."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from gradio_client import handle_file
from PIL import Image

from bench.abuse_attacks_common import ATTEMPT_TIMEOUT, PAID, VISITOR_KEY, Context, Outcome, ask, first_words
from tests.ui.attacker import call, choices, refusal, submit, texts, warning


def huge_png(folder: Path) -> Path:
    path = folder / "huge-6300.png"
    if not path.exists():
        Image.new("L", (6300, 6300), 255).save(path, optimize=True)  # 40 MP in a few hundred KB
    return path


def largest_png(folder: Path, index: int) -> Path:
    """4000 x 4000 (16 MP, the most a public upload may have), a few MB: smooth colour ramps."""
    path = folder / f"largest-{index}.png"
    if not path.exists():
        y, x = np.mgrid[0:4000, 0:4000]
        pixels = np.stack([(x + index) % 256, y % 256, (x + y) % 256], axis=-1).astype(np.uint8)
        Image.fromarray(pixels, "RGB").save(path)
    return path


def twenty_uploads(ctx: Context) -> Outcome:
    path = handle_file(str(huge_png(ctx.folder)))
    upload = refusal(ctx.client, "/use_upload", files=[path] * 20, question="How many?")
    asked = ask(ctx, ["baseline/chance"])
    shown = warning(asked) or first_words(" ".join(texts(asked[:1])), 6)
    return Outcome(upload, note=f"then Ask: {shown}")


def largest(conditions: str) -> Callable[[Context], Outcome]:
    """4 uploads of 4000 x 4000 (16 MP each, the most allowed), then Ask 4 models on the
    visitor's own keys (no budget), under one condition or every one the tab offers."""

    def attack(ctx: Context) -> Outcome:
        before = ctx.requests()
        files = [handle_file(str(largest_png(ctx.folder, i))) for i in range(4)]
        upload = refusal(ctx.client, "/use_upload", files=files, question="Which is brightest?")
        offered = choices(ctx.client, "/probe", "chosen_conditions") if conditions == "all" else ["as asked"]
        asked = ask(ctx, PAID, key=VISITOR_KEY, conditions=offered)
        sent = ctx.requests() - before
        return Outcome(upload or warning(asked[:1]), note=f"{len(offered)} condition(s); {sent} requests sent")

    return attack


_designs = iter(range(10**6))


def illusion_designs(ctx: Context) -> Outcome:
    """4 sessions at once, each evaluating 1 item of a new 9,800-item illusion design (49 differences
    x 50 strengths x 2 seeds x 2 prompts): the whole design is built and measured first."""

    def one(_: int) -> str:
        shift = next(_designs)  # values never asked before: nothing comes from a cache
        differences = ",".join(f"{-0.7 + 0.02 * i + shift * 1e-5:.5f}" for i in range(50) if i != 35)
        strengths = ",".join(f"{0.05 * i + shift * 1e-5:.5f}" for i in range(50))
        params = f"difference={differences} illusion_strength={strengths} inducers=with canvas=384 seed=0,1"
        outputs = call(ctx.visitor(), "/run_eval", benchmarks=["illusion/delboeuf"], params=params,
                       models=["baseline/chance"], limit=1)  # fmt: skip
        return warning(outputs) or first_words(" ".join(texts(outputs[:1])), 5)

    with ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(one, range(4)))
    refused = [s for s in statuses if s.startswith("⚠")]
    return Outcome(refused[0] if refused else "", note=statuses[0])


def previews(canvas: int, count: int = 80) -> Callable[[Context], Outcome]:
    def attack(ctx: Context) -> Outcome:
        messages = []
        for number in range(count):
            gap = f"{-0.4 + number * 0.01:.2f}"  # a new picture each time: nothing comes from a cache
            spec = {"task": "blind/touching-circles", "params": {"canvas": str(canvas), "gap": gap}}
            messages.append(warning(call(ctx.client, "/stimulus_preview", spec=spec, variant=number)))
        refused = [m for m in messages if m]
        return Outcome(refused[0] if refused else "", note=f"{count - len(refused)} of {count} drawn")

    return attack


def exports(ctx: Context) -> Outcome:
    """Two exports at once of 1000 items drawn at 2048 px (the most in public mode)."""
    spec = {"task": "blind/line-intersections", "params": {"resolution": "2048"}}
    jobs = [submit(ctx.visitor(), "/export_stimuli", spec=spec, fixed=["resolution"], n=1000, seed=s) for s in (1, 2)]
    outputs = [job.result(timeout=600) for job in jobs]
    notes = [warning(out)[:12] or first_words(" ".join(texts(out[1:2])), 4) for out in outputs]
    return Outcome(warning(outputs), note="; ".join(notes))


def session_stores(ctx: Context) -> Outcome:
    """4 fresh sessions at once, each evaluating baseline/chance on 5,000 items (the most a session
    store may hold): the server draws and hashes every picture for free."""
    canvases = ",".join(str(384 + 16 * n) for n in range(12))  # 12 x 4 x 14 x 4 x 2 prompts = 5,376 items
    form = {"benchmarks": ["blind/touching-circles"], "params": f"canvas={canvases}", "limit": 5000}

    def one(_: int) -> str:
        visitor = ctx.visitor()
        outputs = call(visitor, "/run_eval", **{"models": ["baseline/chance"], **form})
        return warning(outputs) or first_words(" ".join(texts(outputs[:1])), 5)

    with ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(one, range(4)))
    refused = [s for s in statuses if s.startswith("⚠")]
    return Outcome(refused[0] if refused else "", note=statuses[0])


def unbounded_illusion(ctx: Context) -> Outcome:
    """illusion/delboeuf size_min=1e4 (a parameter with no bound): four at once."""
    params = "size_min=1e4 canvas=768 inducers=flipped difference=0.23378 illusion_strength=1.24 seed=0"
    visitors = [ctx.visitor() for _ in range(4)]
    deadline = time.monotonic() + ATTEMPT_TIMEOUT
    try:
        jobs = [submit(v, "/generate_stimulus", task="illusion/delboeuf", params=params, seed=0) for v in visitors]
        answers = [job.result(timeout=max(1.0, deadline - time.monotonic())) for job in jobs]
    except Exception as exc:  # noqa: BLE001 - TimeoutError, or the HTTP client's own
        waited = ATTEMPT_TIMEOUT - (deadline - time.monotonic())
        return Outcome("", note=f"not answered ({type(exc).__name__} after {waited:.0f} s)", stuck=True)
    return Outcome(warning(answers))
