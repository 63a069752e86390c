"""Issue 22, links and identities: a share link naming a server folder, a person's tag found by a
collision, and three hundred sessions opened while another visitor's evaluation runs. These call
what a browser calls (the page's own events, by fn_index), not only the named endpoints."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from PIL import Image

from bench.abuse_attacks_common import VISITOR_KEY, Context, Outcome, first_words
from tests.ui.attacker import private_event, queue_call, submit, texts, warning

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
