"""Attacks in the values of a form: counts, sweeps and texts far past what a page offers,
server folders, Hub datasets and Hub models named where a public Space reads none, and lists
of a hundred thousand names. Each is refused before work starts, with a short message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bench.abuse_attacks_common import MB, Context, Outcome, all_refused, ask, evaluate, first_words
from tests.ui.attacker import call, generate, refusal, warning


def sweep(values: dict[str, list]) -> str:
    return " ".join(f"{name}={','.join(map(str, listed))}" for name, listed in values.items())


SWEEP_3X50 = sweep({"gap": [f"{v / 1000:.3f}" for v in range(-70, 430, 10)],
                    "diameter": [f"1/{n}" for n in range(4, 54)], "canvas": list(range(1000, 1050))})  # fmt: skip
SWEEP_3X100 = sweep({"gap": [f"{v / 1000:.3f}" for v in range(-20, 980, 10)],
                     "diameter": [f"1/{n}" for n in range(4, 104)], "canvas": list(range(1000, 1100))})  # fmt: skip


def concurrency(ctx: Context) -> Outcome:
    return evaluate(ctx, concurrency=10**9)


def sweep_819(ctx: Context) -> Outcome:
    return evaluate(ctx, params=SWEEP_3X50)


def sweep_1619(ctx: Context) -> Outcome:
    return evaluate(ctx, params=SWEEP_3X100)


def counting(task: str, params: str) -> Callable[[Context], Outcome]:
    def attack(ctx: Context) -> Outcome:
        return Outcome(warning(call(ctx.client, "/generate_stimulus", task=task, params=params, seed=1)))

    return attack


def data_folders(ctx: Context) -> Outcome:
    """A server folder and a Hub dataset as data, in the Probe tab, Evaluate and the Human tab."""
    messages = []
    for data in (str(Path.home()), "csebuetnlp/illusionVQA-Comprehension"):
        messages.append(warning(call(ctx.client, "/load_item", benchmark_id="illusionvqa/comprehension", data=data)))
        messages.append(evaluate(ctx, benchmarks=["illusionvqa/comprehension"], data=data).message)
        outputs = call(ctx.client, "/human_start", name="Ada", benchmark_id="illusionvqa/comprehension", data=data)
        messages.append(warning(outputs))
    return all_refused(messages)


def hub_models(ctx: Context) -> Outcome:
    generate(ctx.client, 3)
    messages = [warning(ask(ctx, [model])) for model in ("hf/someone/any-model", "hf//etc", f"hf/{Path.home()}")]
    messages.append(evaluate(ctx, models=["hf/Qwen/Qwen2-VL-2B-Instruct"]).message)
    return all_refused(messages)


def long_texts(ctx: Context) -> Outcome:
    """20 MB in a text field: the Probe tab's parameters, Evaluate's parameters, an upload's question."""
    text = "gap=" + "9" * (20 * MB)
    messages = [
        warning(call(ctx.client, "/generate_stimulus", task="blind/touching-circles", params=text, seed=0)),
        evaluate(ctx, params=text).message,
        warning(call(ctx.client, "/use_upload", files=[], question=text)),
    ]
    longest = max(len(m) for m in messages)
    outcome = all_refused(messages)
    outcome.note = f"longest message {longest:,} chars"
    return outcome


def choice_echo(ctx: Context) -> Outcome:
    """20 MB as a list field's value (the Probe tab's task): Gradio checks it against the choices."""
    logged = ctx.app.log_path.stat().st_size if ctx.app else 0
    message = refusal(ctx.client, "/generate_stimulus", task="x" * (20 * MB), params="", seed=0)
    grown = (ctx.app.log_path.stat().st_size - logged) / MB if ctx.app else 0.0
    return Outcome(message, note=f"message {len(message) / MB:.0f} MB; app log +{grown:.0f} MB")


def numbers(ctx: Context) -> Outcome:
    """Counts and indices far out of range: human_start 10^9 items, load_item 10^18, export 10^9."""
    messages = [
        refusal(ctx.client, "/human_start", name="Ada", count=10**9),
        refusal(ctx.client, "/load_item", benchmark_id="blind/touching-circles", index=10**18),
        refusal(ctx.client, "/export_stimuli", n=10**9),
    ]
    return all_refused(messages)


def huge_lists(ctx: Context) -> Outcome:
    """A spec of 10,000 parameters, 100,000 names kept fixed, 100,000 models on the scoreboard."""
    spec = {"task": "blind/touching-circles", "params": {f"p{i}": "1" for i in range(10_000)}}
    messages = [
        refusal(ctx.client, "/stimulus_preview", spec=spec),
        refusal(ctx.client, "/export_stimuli", fixed=[f"p{i}" for i in range(100_000)]),
    ]
    board = call(
        ctx.client, "/scoreboard", benchmark="blind/touching-circles", models=[f"m/{i}" for i in range(100_000)]
    )
    outcome = all_refused(messages)
    outcome.note = f"scoreboard: {first_words(' '.join(str(t) for t in board[:1]), 6)}"
    return outcome
