"""The third attack round (issue 33), as one visitor of a public Space (and one user with hostile
files) would make them, each bounded in count and time, traffic to 127.0.0.1 only:

- class-hoard: one session opens classes until refused (45 tries): the places it holds;
- class-publish: a script opens a class, 120 made-up students (a page each, one address) answer
  every item against the truth, and the teacher publishes: the answers that reach everyone's
  people rows (the operator's store), with class publishing off (a Space's default) and on;
- link-flush: another visitor asks with their own key and keeps the link; the attacker presses Ask
  200 times on answers from their own cache, then asks 20 probes of their own with their own key:
  the names the other visitor's link still holds;
- student-routes: the class page's own routes called with made-up codes, a body past
  the bound, a picture ahead of the class and more streams on one seat than a phone opens;
- export-traps: `generate --format hf|lmms-eval|png` into a folder holding someone's dataset and
  links planted to a folder outside: the files lost or changed outside `--out` and inside it.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path

from bench.abuse_attacks_class import post
from bench.abuse_attacks_common import VISITOR_KEY, Context, Outcome, ask, first_words
from tests.ui.attacker import generate, private_event, queue_call, texts

LESSON = ("blind/touching-circles", "gap=-0.1,0.2 canvas=384 prompt=touching", 3, 0, "")
HOARD_TRIES = 45
STUDENTS = 120
PRESSES = 200
OWN_PROBES = 20
REPO = Path(__file__).resolve().parent.parent


def class_hoard(ctx: Context) -> Outcome:
    """One session opening class after class: how many it holds, and the words of the refusal."""
    hoarder = ctx.visitor()
    opened = [hoarder.predict(*LESSON, api_name="/class_open") for _ in range(HOARD_TRIES)]
    held = [reply for reply in opened if "teacher_token" in reply]
    refusals = [reply["error"] for reply in opened if "error" in reply]
    other = ctx.visitor().predict(*LESSON, api_name="/class_open")
    for reply in [*held, other]:  # the bench's next attacks find the places free
        if "teacher_token" in reply:
            post(ctx.url, "class_close", [reply["teacher_token"]])
    note = (f"{len(held)} of {HOARD_TRIES} opened by one session (40 places on the server); another "
            f"visitor then {'opened one' if 'code' in other else 'was refused: ' + first_words(other.get('error'), 8)}")  # fmt: skip
    return Outcome(refusals[0] if refusals else "", note=note)


def _people_rows(ctx: Context) -> int:
    path = ctx.app.folder / "home" / "results.sqlite" if ctx.app else None
    if path is None or not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM results WHERE model LIKE 'human/%'").fetchone()[0]


def class_publish(ctx: Context) -> Outcome:
    """120 made-up students of one address answer every item wrong; the teacher publishes."""
    before = _people_rows(ctx)
    teacher = ctx.visitor()
    opened = teacher.predict(*LESSON, api_name="/class_open")
    if "error" in opened:
        return Outcome(opened["error"], note="class_open refused")
    pages = [secrets.token_hex(8) for _ in range(STUDENTS)]
    tokens = [post(ctx.url, "class_join", [opened["code"], f"bot{n}"], page)[0].get("student_token")
              for n, page in enumerate(pages)]  # fmt: skip
    answered = 0
    for _ in range(LESSON[2]):
        post(ctx.url, "class_next", [opened["teacher_token"]], teacher.session_hash)
        for token, page in zip(tokens, pages, strict=True):
            for guess in ("Yes", "No"):  # the script does not know the truth: it answers until one is taken
                reply, _ = post(ctx.url, "class_answer", [token, guess], page)
                if reply.get("received"):
                    answered += 1
                    break
    publish = private_event(ctx.url, "class-publish")
    said = " ".join(texts(queue_call(ctx.url, teacher.session_hash, *publish, [opened["teacher_token"]])))
    post(ctx.url, "class_close", [opened["teacher_token"]], teacher.session_hash)
    pooled = _people_rows(ctx) - before
    note = (
        f"{pooled} of {answered} answers reached everyone's people rows; the teacher read: {first_words(said, 14, 110)}"
    )
    return Outcome("" if pooled else "kept out of the people rows", note=note)


def _link_names(ctx: Context, query: str) -> int:
    link = json.loads(_b64(query.removeprefix("?probe="))).get("k")
    path = ctx.app.folder / "home" / "links.sqlite" if ctx.app else None
    if not link or path is None or not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM link_names WHERE link = ?", (link,)).fetchone()[0]


def _b64(value: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def link_flush(ctx: Context) -> Outcome:
    """Another visitor's link, then 200 free presses and 20 own-key probes by the attacker."""
    victim = ctx.visitor()
    generate(victim, 7)
    *_, query = ask(ctx, ["openai/gpt-4o-mini"], key=VISITOR_KEY, conditions=["as asked", "upside down"], client=victim)
    kept = _link_names(ctx, query)
    attacker = ctx.visitor()
    generate(attacker, 8)
    sent = ctx.requests()
    for _ in range(PRESSES):
        ask(ctx, ["openai/gpt-4o-mini"], key=VISITOR_KEY, conditions=["as asked", "upside down"], client=attacker)
    free = ctx.requests() - sent
    for seed in range(OWN_PROBES):
        generate(attacker, 100 + seed, params=f"gap={0.01 * (seed + 1):.2f}")
        ask(ctx, ["openai/gpt-4o-mini"], key=VISITOR_KEY, conditions=["as asked", "upside down"], client=attacker)
    left = _link_names(ctx, query)
    note = (f"the other visitor's link holds {left} of its {kept} answers after {PRESSES} presses "
            f"({free} sent) and {OWN_PROBES} own-key probes")  # fmt: skip
    return Outcome("kept" if left == kept and kept else "", note=note)


def _tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` itself (not through a link), with its digest."""
    inside = folder.resolve()
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink() and p.resolve().is_relative_to(inside)}  # fmt: skip


def export_traps(ctx: Context) -> Outcome:
    """generate into someone's dataset folder, and into folders with links planted to outside."""
    base = ctx.folder / f"export-traps-{secrets.token_hex(4)}"
    outside = base / "outside"
    (outside / "data").mkdir(parents=True)
    (outside / "data" / "test-00000-of-00001.parquet").write_bytes(b"someone's shard")
    (outside / "my_task.yaml").write_text("task: mine\n")
    (outside / "notes.txt").write_text("keep me\n")
    lost = changed = 0
    refusals = []
    for form in ("hf", "lmms-eval", "png"):
        traps = {
            "dataset": {
                "data/test-00000-of-00002.parquet": b"a",
                "data/test-00001-of-00002.parquet": b"b",
                "README.md": b"# my dataset",
                "lmms_eval_task/my_task.yaml": b"task: x",
            },  # fmt: skip
            "link-data": {"data": outside / "data"},
            "link-task": {"lmms_eval_task": outside},
            "link-readme": {"README.md": outside / "notes.txt"},
        }
        for trap, planted in traps.items():
            out = base / f"{form}-{trap}"
            out.mkdir(parents=True)
            for name, what in planted.items():
                target = out / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(what) if isinstance(what, Path) else target.write_bytes(what)
            before_outside, before_inside = _tree(outside), _tree(out)
            done = subprocess.run(
                [sys.executable, "-m", "probes", "generate", "blind/touching-circles", "--n", "3", "--seed", "1",
                 "--out", str(out), "--format", form],
                cwd=REPO, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            after_outside, after_inside = _tree(outside), _tree(out)
            for before, after in ((before_outside, after_outside), (before_inside, after_inside)):
                lost += sum(name not in after for name in before)
                changed += sum(name in after and after[name] != digest for name, digest in before.items())
            if done.returncode != 0:
                refusals.append(
                    done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
                )
    note = f"{lost} files lost and {changed} changed that generate did not write ({len(refusals)} of 12 refused)"
    return Outcome(refusals[0] if refusals and not lost and not changed else "", note=note)


def student_routes(ctx: Context) -> Outcome:
    """The class's own page's routes (ui/classroom/student_page.py), called with any value by one
    address: 150 made-up codes, a body past the bound, a picture ahead of the class, more event
    streams on one seat than a phone opens. What got through, and the first refusal's words."""
    import httpx  # noqa: PLC0415 - only this attack speaks to the routes directly

    opened = ctx.visitor().predict(*LESSON, api_name="/class_open")
    url = ctx.url
    with httpx.Client(timeout=60) as client:
        seat = client.post(f"{url}/class/api/join", json={"code": opened["code"], "page": secrets.token_hex(16)}).json()
        token = seat["student_token"]
        guesses = [
            client.post(f"{url}/class/api/join", json={"code": secrets.token_hex(4).upper()}) for _ in range(150)
        ]
        throttled = [r for r in guesses if "too many wrong" in r.text]
        big = client.post(f"{url}/class/api/answer", content=b'{"token": "' + b"x" * 100_000 + b'"}')
        ahead = client.get(f"{url}/class/api/picture", params={"token": token, "index": 2})
        streams, refused_streams = [], 0
        try:
            for _ in range(8):
                response = client.send(client.build_request("GET", f"{url}/class/api/events",
                                                            params={"token": token}), stream=True)  # fmt: skip
                if response.status_code == 200:
                    streams.append(response)
                else:
                    refused_streams += 1
                    response.close()
        finally:
            for response in streams:
                response.close()
    post(url, "class_close", [opened["teacher_token"]])
    first = next((r.json()["error"] for r in [*throttled, *guesses] if "error" in r.json()), "")
    note = (f"{len(throttled)} of 150 made-up codes throttled ({150 - len(throttled)} answered 'no such class'); "
            f"a 100 KB body: {big.status_code}; a picture ahead of the class: {ahead.status_code}; "
            f"{len(streams)} of 8 streams on one seat opened, {refused_streams} refused")  # fmt: skip
    return Outcome(first, note=note)
