"""The attacks bench/abuse.py measures, each a visitor's calls to the public app's API, bounded in
count and time, traffic to 127.0.0.1 only. `ATTACKS` lists them in the order they run."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gradio_client import Client, handle_file
from PIL import Image

from tests.support.hostile_servers import leaks
from tests.ui.attacker import (
    AppProcess,
    call,
    choices,
    generate,
    parameters,
    private_event,
    queue_call,
    refusal,
    submit,
    texts,
    warning,
)

MB = 1024 * 1024
GOAL_RSS = 1536 * MB
GOAL_RATIO = 3.0
SERVER_KEY = "sk-abuse-bench-server-key-0123456789"
VISITOR_KEY = "sk-abuse-bench-visitor-key-ABCDEFGH"
BUDGETS = {"PROBE_SESSION_BUDGET": "5", "PROBE_CLIENT_BUDGET": "12", "PROBE_GLOBAL_BUDGET": "40"}
PAID = ["openai/gpt-4o", "openai/gpt-4o-mini", "openai/gpt-4.1", "anthropic/claude-haiku-4-5"]


@dataclass
class Outcome:
    """One attempt of an attack: the warning it got ("" if none), and what else is worth saying."""

    message: str
    note: str = ""
    stuck: bool = False  # a request of the attack was still being worked on when given up

    @property
    def refused(self) -> bool:
        return bool(self.message)


@dataclass
class Context:
    url: str
    folder: Path
    requests: Callable[[], int]  # requests the model server has answered so far
    client: Client | None = None  # the attacker's own session (fresh for each attack)
    app: AppProcess | None = None

    def visitor(self, **headers: str) -> Client:
        return Client(self.url, verbose=False, download_files=False, headers=headers or None)


@dataclass
class Attack:
    name: str
    run: Callable[[Context], Outcome]
    repeat: bool = True  # attempts again while the other visitor is measured
    shown: str = ""  # what the table calls it, if not the name
    timeout: float | None = None  # seconds an attempt may take before the app is restarted (--attempt-timeout)


# --- the attacks -------------------------------------------------------------------------------


def sweep(values: dict[str, list]) -> str:
    return " ".join(f"{name}={','.join(map(str, listed))}" for name, listed in values.items())


SWEEP_3X50 = sweep({"gap": [f"{v / 1000:.3f}" for v in range(-70, 430, 10)],
                    "diameter": [f"1/{n}" for n in range(4, 54)], "canvas": list(range(1000, 1050))})  # fmt: skip
SWEEP_3X100 = sweep({"gap": [f"{v / 1000:.3f}" for v in range(-20, 980, 10)],
                     "diameter": [f"1/{n}" for n in range(4, 104)], "canvas": list(range(1000, 1100))})  # fmt: skip


def evaluate(ctx: Context, **form) -> Outcome:
    defaults = {"benchmarks": ["blind/touching-circles"], "models": ["baseline/chance"], "limit": 1}
    outputs = call(ctx.client, "/run_eval", **{**defaults, **form})
    return Outcome(warning(outputs), note="" if warning(outputs) else first_words(outputs[0], 60))


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
    return _all_refused(messages)


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


def ask(
    ctx: Context,
    models: list[str | None],
    key: str = "",
    conditions: list[str] | None = None,
    client: Client | None = None,
) -> tuple:
    """Ask in the Probe tab: up to 4 models (the other slots emptied), under `conditions` where
    the tab offers them, with the visitor's own keys if `key`."""
    client = client or ctx.client
    slots = {f"model_{i + 1}": model for i, model in enumerate([*models, None, None, None, None][:4])}
    named = {p["parameter_name"] for p in parameters(client, "/probe")}
    extra = {"chosen_conditions": conditions or ["as asked"]} if "chosen_conditions" in named else {}
    keys = {name: key for name in ("openai_key", "anthropic_key") if name in named}
    return call(client, "/probe", **slots, **extra, **keys)


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


def hub_models(ctx: Context) -> Outcome:
    generate(ctx.client, 3)
    messages = [warning(ask(ctx, [model])) for model in ("hf/someone/any-model", "hf//etc", f"hf/{Path.home()}")]
    messages.append(evaluate(ctx, models=["hf/Qwen/Qwen2-VL-2B-Instruct"]).message)
    return _all_refused(messages)


def fresh_sessions(ctx: Context) -> Outcome:
    """5 fresh sessions, each asking 4 paid models twice on the server's key."""
    before, messages = ctx.requests(), []
    for number in range(5):
        visitor = ctx.visitor()
        generate(visitor, 100 + number)
        for _ in range(2):
            messages.append(warning(ask(ctx, PAID, client=visitor)[:1]))
    sent = ctx.requests() - before
    budgets = ", ".join(f"{k.removeprefix('PROBE_').removesuffix('_BUDGET').lower()} {v}" for k, v in BUDGETS.items())
    refused = [m for m in messages if m]
    return Outcome(refused[0] if refused else "", note=f"{sent} of 40 wanted sent ({budgets})")


def five_evaluations(ctx: Context) -> Outcome:
    """Five visitors start an evaluation at once (300 items of a paid model each, on their own
    keys): how long each waits before its run starts, and how long each takes in all."""
    visitors = [ctx.visitor() for _ in range(5)]
    started = time.perf_counter()
    jobs = [submit(v, "/run_eval", benchmarks=["blind/touching-circles"], models=["openai/gpt-4o-mini"], limit=300,
                   seed=number, openai_key=VISITOR_KEY) for number, v in enumerate(visitors)]  # fmt: skip
    waits: list[float | None] = [None] * 5
    ends: list[float | None] = [None] * 5
    while any(end is None for end in ends) and time.perf_counter() - started < 600:
        for index, job in enumerate(jobs):
            shown = " ".join(texts(job.outputs()))
            if waits[index] is None and "Running" in shown:
                waits[index] = time.perf_counter() - started
            if ends[index] is None and job.done():
                ends[index] = time.perf_counter() - started
                waits[index] = waits[index] if waits[index] is not None else ends[index]
        time.sleep(0.05)
    finished = [" ".join(texts(job.result(timeout=60)[:1])) for job in jobs]
    fine = sum("Finished" in text for text in finished)
    said = ", ".join(f"{w:.1f}" for w in sorted(w for w in waits if w is not None))
    took = ", ".join(f"{e:.1f}" for e in sorted(e for e in ends if e is not None))
    return Outcome("", note=f"waits before running: {said} s; done after: {took} s; {fine} of 5 finished")


def thousand_clicks(ctx: Context) -> Outcome:
    """4 paid models x 1000 clicks of Ask from one session."""
    before = ctx.requests()
    generate(ctx.client, 7)
    messages = [warning(ask(ctx, PAID)[:1]) for _ in range(1000)]
    refused = [m for m in messages if m]
    return Outcome(
        refused[0] if refused else "", note=f"{ctx.requests() - before} requests sent, {len(refused)} refused"
    )


def spoofed_addresses(ctx: Context) -> Outcome:
    """10 fresh sessions from one machine, each naming another address in X-Forwarded-For."""
    before, messages = ctx.requests(), []
    for number in range(10):
        visitor = ctx.visitor(**{"X-Forwarded-For": f"198.51.100.{number + 1}"})
        generate(visitor, 200 + number)
        messages.append(warning(ask(ctx, PAID, client=visitor)[:1]))
    sent = ctx.requests() - before
    refused = [m for m in messages if m]
    return Outcome(refused[0] if refused else "", note=f"{sent} sent from one address (its budget: 12 an hour)")


def long_texts(ctx: Context) -> Outcome:
    """20 MB in a text field: the Probe tab's parameters, Evaluate's parameters, an upload's question."""
    text = "gap=" + "9" * (20 * MB)
    messages = [
        warning(call(ctx.client, "/generate_stimulus", task="blind/touching-circles", params=text, seed=0)),
        evaluate(ctx, params=text).message,
        warning(call(ctx.client, "/use_upload", files=[], question=text)),
    ]
    longest = max(len(m) for m in messages)
    outcome = _all_refused(messages)
    outcome.note = f"longest message {longest:,} chars"
    return outcome


def choice_echo(ctx: Context) -> Outcome:
    """20 MB as a list field's value (the Probe tab's task): Gradio checks it against the choices."""
    logged = ctx.app.log_path.stat().st_size if ctx.app else 0
    message = refusal(ctx.client, "/generate_stimulus", task="x" * (20 * MB), params="", seed=0)
    grown = (ctx.app.log_path.stat().st_size - logged) / MB if ctx.app else 0.0
    return Outcome(message, note=f"message {len(message) / MB:.0f} MB; app log +{grown:.0f} MB")


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


def numbers(ctx: Context) -> Outcome:
    """Counts and indices far out of range: human_start 10^9 items, load_item 10^18, export 10^9."""
    messages = [
        refusal(ctx.client, "/human_start", name="Ada", count=10**9),
        refusal(ctx.client, "/load_item", benchmark_id="blind/touching-circles", index=10**18),
        refusal(ctx.client, "/export_stimuli", n=10**9),
    ]
    return _all_refused(messages)


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
    outcome = _all_refused(messages)
    outcome.note = f"scoreboard: {first_words(' '.join(str(t) for t in board[:1]), 6)}"
    return outcome


def _all_refused(messages: list[str]) -> Outcome:
    passed = sum(1 for m in messages if not m)
    first = next((m for m in messages if m), "")
    return Outcome(first if not passed else "", note=f"{len(messages) - passed} of {len(messages)} refused")


def first_words(text: object, words: int, limit: int = 70) -> str:
    """The first `words` words, at most `limit` characters (a message may repeat megabytes)."""
    plain = " ".join(str(text)[: 4 * limit].replace("*", "").split())
    parts = plain.split(" ")
    shown = " ".join(parts[:words])
    if len(shown) > limit:
        shown = shown[:limit]
    return shown + (" ..." if shown != plain else "")


# --- issue 22, links and identities: the public-mode gate, people's tags, session stores -----------


SECRET_QUESTION = "What does the operator keep in this private folder?"


def _page_event(url: str, api_name: str | None = None, load_with: str | None = None) -> tuple[int, int]:
    """(fn_index, inputs) of a named endpoint, or of the page-load event that writes into the
    component `load_with` (elem_id): what a browser calls, and so what anyone can call."""
    import json
    import urllib.request

    with urllib.request.urlopen(url + "/config", timeout=60) as response:
        config = json.loads(response.read())
    target = next((c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == load_with), None)
    for index, dependency in enumerate(config["dependencies"]):
        named = api_name is not None and dependency.get("api_name") == api_name
        loads = target is not None and [0, "load"] in dependency.get("targets", []) and target in dependency["outputs"]
        if named or loads:
            return dependency.get("id", index), len(dependency["inputs"])
    raise LookupError(api_name or load_with)


def _open_link(url: str, session: str, link: str) -> list:
    """What a browser opening `url/?probe=<link>` runs: the page's load event, the page's query
    on the queue's join (as Gradio's own client sends it)."""
    import json
    import urllib.request

    fn, _ = _page_event(url, load_with="probe-status")
    body = {"data": [], "event_data": None, "fn_index": fn, "trigger_id": None, "session_hash": session}
    join = urllib.request.Request(f"{url}/gradio_api/queue/join?probe={link}", json.dumps(body).encode(),
                                  {"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(join, timeout=60) as response:
        response.read()
    with urllib.request.urlopen(f"{url}/gradio_api/queue/data?session_hash={session}", timeout=120) as response:
        for raw in response:
            line = raw.decode("utf-8", errors="replace").strip()
            if line.startswith("data:") and (message := json.loads(line[5:])).get("msg") == "process_completed":
                return (message.get("output") or {}).get("data", [])
    return []


def links_server_folder(ctx: Context) -> Outcome:
    """A ?probe= link naming custom:<a folder of the server> (and one naming a folder that is not
    there), then Ask in the same session: is the folder's item shown or asked, and do the two
    refusals differ?"""
    import base64
    import json

    folder = ctx.folder / "operator-private"
    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 64), "red").save(folder / "a.png")
    record = {"id": "q1", "image": "a.png", "question": SECRET_QUESTION, "answer": "yes"}
    (folder / "items.jsonl").write_text(json.dumps(record) + "\n")
    shown, refusals = [], []
    for target in (folder, folder / "missing"):
        session = f"link-{time.monotonic_ns()}"
        # The link as the page writes it (ui/probe/share.py), crafted by hand as an attacker would.
        named = {"s": "benchmark", "b": f"custom:{target}", "i": 0, "m": ["baseline/chance"], "c": ["as asked"]}
        link = base64.urlsafe_b64encode(json.dumps(named).encode()).decode().rstrip("=")
        outputs = _open_link(ctx.url, session, link)
        refusals.append(warning(outputs))
        fn, inputs = _page_event(ctx.url, api_name="probe")
        data = [None, "baseline/chance", None, None, None, ["as asked"], *[""] * (inputs - 6)]
        asked = queue_call(ctx.url, session, fn, None, data)
        shown.append(" ".join(texts(outputs)) + " ".join(texts(asked)))
    leaked = any(SECRET_QUESTION in text or str(ctx.folder) in text for text in shown)
    alike = refusals[0] == refusals[1]
    note = f"folder's item {'SHOWN' if leaked else 'not shown'}; missing folder {'same' if alike else 'other'} message"
    return Outcome(refusals[0] if refusals[0] and not leaked and alike else "", note=note)


def identity_collision(ctx: Context) -> Outcome:
    """A person answers 3 items as Alice; a session whose sha256 starts like theirs (the old
    four-digit tag, found offline) answers the same items as Alice: are the first one's kept?"""
    import hashlib
    import itertools
    import re

    from probes.running.store import Store

    fn, _ = _page_event(ctx.url, api_name="human_start")
    submit_event = private_event(ctx.url, "human-submit")
    victim = f"victim-{time.monotonic_ns()}"

    def take(session: str, reply: str) -> str:
        started = " ".join(texts(queue_call(ctx.url, session, fn, None, ["Alice", "blind/touching-circles", "", 3, 0])))
        for _ in range(3):
            queue_call(ctx.url, session, *submit_event, [None, reply, ""])
        found = re.search(r"human/Alice #([0-9a-f]+)", started)
        return found.group(1) if found else "?"

    tag = take(victim, "Yes")
    old = hashlib.sha256(victim.encode()).hexdigest()[:4]
    attacker = next(c for n in itertools.count() if hashlib.sha256((c := f"a-{n}").encode()).hexdigest()[:4] == old)
    theirs = take(attacker, "No")
    home = (ctx.app.folder if ctx.app else ctx.folder) / "home"
    with Store(home / "results.sqlite") as shared:
        kept = [r.reply for r in shared.results(model=f"human/Alice #{tag}")]
    intact = kept == ["Yes"] * 3
    note = f"victim #{tag}, collider #{theirs}; {kept.count('Yes')} of 3 answers kept"
    return Outcome(f"kept: the collider is tagged #{theirs}" if intact else "", note=note)


def sessions_during_evaluation(ctx: Context) -> Outcome:
    """One session evaluates every item of touching circles (1,344) with a paid model on its own
    key, one at a time, while 300 other sessions each Ask once: does it keep every result?"""
    import re

    evaluator = ctx.visitor()
    job = submit(evaluator, "/run_eval", benchmarks=["blind/touching-circles"], models=["openai/gpt-4o"],
                 limit=2000, concurrency=1, openai_key=VISITOR_KEY)  # fmt: skip
    fn, inputs = _page_event(ctx.url, api_name="probe")
    data = [None, "baseline/chance", None, None, None, ["as asked"], *[""] * (inputs - 6)]
    during = []

    def one(number: int) -> str:
        outputs = queue_call(ctx.url, f"crowd-{time.monotonic_ns()}-{number}", fn, None, data)
        during.append(not job.done())
        return warning(outputs)

    with ThreadPoolExecutor(4) as pool:
        refused = [m for m in pool.map(one, range(300)) if m]
    status = " ".join(texts(job.result(timeout=900)[:1]))
    counted = re.search(r"(\d+) / (\d+) results", status)
    saved = f"{counted.group(1)} of {counted.group(2)}" if counted else "?"
    whole = bool(counted) and counted.group(1) == counted.group(2) and "closed" not in status and "⚠" not in status
    note = f"{sum(during)} of 300 sessions opened while it ran; {len(refused)} refused; {saved} results saved"
    return Outcome(f"evaluation whole: {saved} saved" if whole else "", note=f"{note}; {first_words(status, 6)}")


# --- replies: model servers that lie (issue 22; the app's servers run with hostile=True, see
# tests/support/hostile_servers.py: a model named after an attack gets it, any other its answer).


def lying_servers(models: list[str]) -> Callable[[Context], Outcome]:
    """Ask `models`, whose servers lie, beside `openai/fine`, whose server answers, all with the
    visitor's own key (any model of a provider then). The outcome: the first lying model's cell
    error (what a visitor reads there), and each model's cell in the note."""

    def attack(ctx: Context) -> Outcome:
        outputs = ask(ctx, [*models, "openai/fine"], key=VISITOR_KEY)
        status = warning(outputs[:1])
        if status:
            return Outcome(status, note="the whole probe was refused")
        asked = [*models, "openai/fine"]
        cells = _cells(str(outputs[1]), asked)
        cells = {m: cells.get(m, "⚠ failed: no cell for it in the grid") for m in asked}
        # A failed cell reads "model ⚠ no reply <error>" (or "⚠ failed <why>" when the run stopped).
        failed = {
            m: re.split(r"no reply|failed", cell, maxsplit=1)[-1].strip() for m, cell in cells.items() if "⚠" in cell
        }
        shown = "; ".join(f"{m}: {'failed' if m in failed else 'answered'}" for m in asked)
        leaked = any(leaks(text, VISITOR_KEY) for text in texts(outputs))
        first = next((failed[m] for m in models if m in failed), "")
        return Outcome(first, note=shown + ("; KEY SHOWN" if leaked else "; no key shown"))

    return attack


def _cells(grid: str, models: list[str]) -> dict[str, str]:
    """Each model's row of the Probe grid, as a visitor reads it."""
    found: dict[str, str] = {}
    for row in re.findall(r"<tr>(.*?)</tr>", grid, flags=re.S):
        plain = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split())
        for model in models:
            if plain.startswith(model) and model not in found:
                found[model] = plain
    return found


ATTACKS = [
    Attack("idle", lambda ctx: Outcome("")),
    Attack("concurrency", concurrency, shown="Evaluate, concurrency 10^9"),
    Attack("sweep-819", sweep_819, shown=f"Evaluate, sweep of {len(SWEEP_3X50):,} chars (3 params x 50 values)"),
    Attack("sweep-1619", sweep_1619, shown=f"Evaluate, sweep of {len(SWEEP_3X100):,} chars (3 params x 100 values)"),
    Attack("images", counting("blind/line-intersections", "images=100000000"), shown="line-intersections images=10^8"),
    Attack("maps", counting("blind/subway-paths", "maps=100000000"), shown="subway-paths maps=10^8"),
    Attack("repeats", counting("blind/nested-squares", "repeats=100000000"), shown="nested-squares repeats=10^8"),
    Attack("data", data_folders, shown="data folder / Hub dataset (Probe, Evaluate, Human)"),
    Attack("uploads", twenty_uploads, shown="20 uploads of 6300 x 6300 PNG, then Ask"),
    Attack("largest-uploads", largest("one"), shown="4 uploads of 4000 x 4000 (allowed), Ask 4 models (own keys)"),
    Attack("largest-all", largest("all"), repeat=False, shown="the same, Ask 4 models x every condition"),
    Attack("hf", hub_models, shown="hf/<any hub id>, hf//path, hf/<home> as models"),
    Attack("texts", long_texts, shown="20 MB text fields (3 endpoints)"),
    Attack("choice-echo", choice_echo, shown="20 MB as a list field's value (Gradio's choice check)"),
    Attack("previews-4096", previews(4096), shown="80 previews at 4096 px"),
    Attack("previews-2048", previews(2048), repeat=False, shown="80 previews at 2048 px (largest allowed)"),
    Attack("numbers", numbers, shown="counts 10^9, item index 10^18"),
    Attack("lists", huge_lists, shown="10,000-param spec, 100,000 fixed names, 100,000 scoreboard models"),
    Attack("exports", exports, repeat=False, shown="2 exports at once, 1000 items at 2048 px"),
    Attack("stores", session_stores, repeat=False, shown="4 sessions at once, 5,000 baseline results each"),
    Attack(
        "designs",
        illusion_designs,
        repeat=False,
        shown="4 sessions at once, 1 item of a new 9,800-item illusion design",
    ),
    Attack("illusion", unbounded_illusion, repeat=False, shown="4 x illusion/delboeuf size_min=1e4 (no bound)"),
    Attack("budget", fresh_sessions, repeat=False, shown="budgets: 5 fresh sessions x 4 paid models x 2"),
    Attack("clicks", thousand_clicks, repeat=False, shown="4 paid models x 1000 clicks", timeout=600),
    Attack("five-evaluations", five_evaluations, repeat=False, timeout=600,
           shown="5 visitors start a 300-item evaluation at once"),  # fmt: skip
    Attack("spoofed", spoofed_addresses, repeat=False, shown="10 sessions, spoofed X-Forwarded-For"),
    # --- issue 22, links and identities ---
    Attack(
        "links-server-folder",
        links_server_folder,
        repeat=False,
        shown="?probe= link naming custom:<server folder> (and a missing one), then Ask",
    ),
    Attack(
        "links-tag-collision",
        identity_collision,
        repeat=False,
        shown="Human tab: a session colliding with the old 4-digit tag answers as Alice",
    ),
    Attack(
        "links-300-sessions",
        sessions_during_evaluation,
        repeat=False,
        timeout=900,
        shown="300 sessions Ask during another visitor's 1,344-result evaluation",
    ),
    # --- replies: model servers that lie (issue 22) ---
    Attack("reply-shapes", lying_servers(["openai/number", "anthropic/parts", "openai/object"]),
           shown="replies: content a number / a list of parts / an object, + 1 honest model"),
    Attack("reply-bombs", lying_servers(["openai/bomb", "anthropic/bomb", "openai/bomb-nested"]),
           shown="replies: 3 gzip bombs (1 MB -> 1 GB), + 1 honest model"),
    Attack("reply-huge", lying_servers(["openai/huge-chunked", "anthropic/huge", "openai/huge-error"]),
           shown="replies: 50 MB chunked / announced / as a 500 page, + 1 honest model"),
    Attack("reply-long", lying_servers(["openai/long", "anthropic/long", "openai/values"]),
           shown="replies: 1 MB of text x 2, 1M JSON values, + 1 honest model"),
    Attack("reply-keys", lying_servers(["openai/echo", "anthropic/echo-error", "openai/echo-id"]),
           shown="replies: the key echoed in 15 forms (text, error, ids), + 1 honest model"),
    Attack("reply-drip", lying_servers(["openai/drip"]), repeat=False, timeout=400,
           shown="reply: a byte every 0.5 s (a 200 s reply), + 1 honest model"),
]  # fmt: skip
ATTEMPT_TIMEOUT = 90.0


# --- issue 22, every decode bounded (part "decode"): uploads whose structure costs a decoder
# minutes, each made once in the bench's folder (tests/support/decode_bombs.py) ------------------


def decode_bomb(filename: str) -> Callable[[Context], Outcome]:
    def attack(ctx: Context) -> Outcome:
        from tests.support.decode_bombs import UPLOAD_BOMBS

        bomb = next(bomb for bomb in UPLOAD_BOMBS if bomb.filename == filename)
        path = ctx.folder / f"decode-{bomb.filename}"
        if not path.exists():
            bomb.write(path)
        return Outcome(refusal(ctx.client, "/use_upload", files=[handle_file(str(path))], question="Which?"))

    return attack


ATTACKS += [
    Attack("decode-tiff", decode_bomb("pages.tiff"), shown="TIFF of 20,000 chained directories that loop (1.9 MB)"),
    Attack("decode-png", decode_bomb("chunks.png"), shown="PNG of 1,000,000 empty chunks (11 MB)"),
    Attack("decode-gif", decode_bomb("frames.gif"), shown="GIF of 300,000 frames (6.6 MB)"),
    Attack("decode-jpeg", decode_bomb("scans.jpg"), shown="progressive JPEG, 4000 x 4000, 2,000 extra scans (0.1 MB)"),
]
