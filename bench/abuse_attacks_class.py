"""Attacks on a class (the Class tab's named endpoints, ui/classroom/api.py), made as a script
makes them: one JSON request each to `/gradio_api/run/<name>`, past the queue, as the phones'
pages call (those endpoints are served without it, so nothing but the app's own work bounds them).

- forged tokens: random, empty, of any JSON type, a real one with its last letter changed, the
  class code as a token, a student's token at the teacher's endpoints; each must be refused,
  and the words a forger reads must be the same before and after a class is open (they must not
  tell which classes exist); none may be an internal error in the app's log;
- a polling flood: 20 students of one class ask for the item 100 times each as fast as they can
  (2,000 polls, the picture asked for again every time), each under its own page's session, while
  the bench's other visitor asks for a stimulus as usual;
- fresh sessions: 1,000 calls, each naming a session never seen (as a script that sends none
  does): Gradio builds and keeps the state of every component for each (up to 10,000 sessions),
  whatever the endpoint; measured here on the cheapest one, how much memory each one keeps.
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench.abuse_attacks_common import Context, Outcome, first_words

STUDENT = {"class_item": [None], "class_answer": ["Yes"]}  # each endpoint's arguments after the token
TEACHER = ("class_status", "class_next", "class_reveal", "class_results")
LESSON = ("blind/touching-circles", "gap=0.2 canvas=768", 2, 0, "")  # class_open's benchmark ... models
FLOOD_STUDENTS = 20
FLOOD_POLLS = 100  # each: 2,000 in all
FRESH_SESSIONS = 1_000
INTERNAL = "internal error in a handler"  # what the app logs for a bug (ui/common.py user_message)

_pool: httpx.Client | None = None
_pool_lock = threading.Lock()


def post(url: str, name: str, data: list, session: str = "", address: str = "") -> tuple[dict, int]:
    """One direct call, as a phone's page makes it: (its reply, the reply's bytes). `address`: the
    one a trusted proxy would append to X-Forwarded-For (the app trusting one)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = httpx.Client(limits=httpx.Limits(max_connections=64), timeout=120)
    body = json.dumps({"data": data, "session_hash": session or secrets.token_hex(8)})
    headers = {"Content-Type": "application/json", **({"X-Forwarded-For": address} if address else {})}
    response = _pool.post(f"{url}/gradio_api/run/{name}", content=body, headers=headers)
    if response.status_code == 413:  # refused at the door (ui/body_bound.py), never read
        return {"error": "413: the request's body is past the bound"}, len(response.content)
    if response.status_code == 429:  # refused at the door (ui/session_bound.py): a new session too many
        return {"error": "429: " + response.json()["error"]}, len(response.content)
    response.raise_for_status()
    return response.json()["data"][0], len(response.content)


def open_class(ctx: Context, students: int) -> tuple[dict, list[tuple[str, str]]]:
    """A class as a teacher's script opens it (class_open goes through the queue), `students`
    joined, each from a page of its own ((token, session) each), its first item on screen."""
    opened = ctx.visitor().predict(*LESSON, api_name="/class_open")
    if "error" in opened:
        raise RuntimeError(f"class_open refused: {opened['error']}")
    joined = []
    for number in range(students):
        session = secrets.token_hex(8)
        reply, _ = post(ctx.url, "class_join", [opened["code"], f"s{number}"], session)
        joined.append((reply["student_token"], session))
    post(ctx.url, "class_next", [opened["teacher_token"]])
    return opened, joined


def _internal_errors(ctx: Context) -> int:
    return ctx.app.log().count(INTERNAL) if ctx.app else 0


def _forged_values() -> list[object]:
    return [secrets.token_urlsafe(18), "", None, 7, 2.5, True, ["token"], {"token": "x"}, "t" * 100_000]


def _try_all(url: str, values: list[object], session: str) -> list[tuple[str, object, dict]]:
    tried = []
    for value in values:
        for name, rest in STUDENT.items():
            tried.append((name, value, post(url, name, [value, *rest], session)[0]))
        for name in TEACHER:
            tried.append((name, value, post(url, name, [value], session)[0]))
    return tried


def forged_tokens(ctx: Context) -> Outcome:
    """Every token endpoint x forged tokens of nine kinds, before and after a class is open; then
    tokens taken from the open class (its code, a real token one letter off, a student's token at
    the teacher's endpoints)."""
    logged = _internal_errors(ctx)
    forger = secrets.token_hex(8)  # one script's session (fresh sessions: their own attack below)
    before = _try_all(ctx.url, _forged_values(), forger)
    opened, [(token, session)] = open_class(ctx, 1)
    after = _try_all(ctx.url, _forged_values(), forger)
    near = [opened["code"], token[:-1] + ("A" if token[-1] != "A" else "B"),
            opened["teacher_token"][:-1] + ("A" if opened["teacher_token"][-1] != "A" else "B")]  # fmt: skip
    derived = _try_all(ctx.url, near, forger)
    as_teacher = [(name, token, post(ctx.url, name, [token], session)[0]) for name in TEACHER]
    tried = before + after + derived + as_teacher
    let_in = [f"{name}({first_words(repr(value), 1, 20)})" for name, value, reply in tried if "error" not in reply]
    words = {reply.get("error") for _, _, reply in before + after + derived}
    leaked = [name for name, _, reply in tried if opened["code"] in json.dumps(reply) or token in json.dumps(reply)]
    internal = _internal_errors(ctx) - logged
    same = len(words) == 1
    note = (f"{len(tried) - len(let_in)} of {len(tried)} refused; forgers read {len(words)} message(s) with or "
            f"without a class; student at teacher's: {first_words(as_teacher[0][2].get('error', 'LET IN'), 6)}; "
            f"{internal} internal errors")  # fmt: skip
    if let_in:
        note += f"; LET IN: {', '.join(let_in[:4])}"
    if leaked:
        note += f"; CLASS NAMED in {', '.join(leaked[:4])}"
    refused = not let_in and not leaked and same and not internal
    return Outcome((next(iter(words)) or "") if refused else "", note=note)


def poll_flood(ctx: Context) -> Outcome:
    """20 students x 100 polls of class_item, as fast as each can, with `shown` empty so that
    every reply carries the item's picture; each student answers once on its first poll."""
    _, students = open_class(ctx, FLOOD_STUDENTS)
    logged = _internal_errors(ctx)

    def student(joined: tuple[str, str]) -> tuple[list[float], int, int]:
        token, session = joined  # one page: its calls under one session, as a browser's are
        times, sent, failed = [], 0, 0
        post(ctx.url, "class_answer", [token, "Yes"], session)
        for _ in range(FLOOD_POLLS):
            started = time.perf_counter()
            reply, size = post(ctx.url, "class_item", [token, None], session)
            times.append(time.perf_counter() - started)
            sent += size
            failed += "error" in reply or reply.get("image") is None
        return times, sent, failed

    started = time.perf_counter()
    with ThreadPoolExecutor(FLOOD_STUDENTS) as pool:
        done = list(pool.map(student, students))
    took = time.perf_counter() - started
    times = sorted(t for polls, _, _ in done for t in polls)
    failed = sum(f for _, _, f in done)
    sent = sum(s for _, s, _ in done)
    internal = _internal_errors(ctx) - logged
    p95 = times[max(0, int(0.95 * len(times)) - 1)]
    note = (f"{len(times):,} polls in {took:.1f} s ({len(times) / took:,.0f}/s), poll p50 "
            f"{statistics.median(times) * 1000:.0f} ms p95 {p95 * 1000:.0f} ms, {sent / 2**20:,.0f} MB sent, "
            f"{failed} without the item, {internal} internal errors")  # fmt: skip
    return Outcome("", note=note)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# The fresh-sessions attack comes from an address of its own (the app trusting one proxy, as on a
# Space), so the other visitor measured meanwhile (127.0.0.1) is not the attacker.
ATTACKER = "203.0.113.66"
FRESH_SESSIONS_ENV = {"PROBE_TRUSTED_PROXIES": "1", "PROBE_NEW_SESSIONS": ""}  # "": the Space's bound


def new_sessions(ctx: Context) -> Outcome:
    """1,000 calls of class_status (a forged token: refused at once), each under a session the
    app has never seen, from one address: how many the app lets in, what each costs it, and what
    it keeps."""
    assert ctx.app is not None
    rss, cpu, started = ctx.app.rss(), _cpu_seconds(ctx.app.pid), time.perf_counter()
    replies = [post(ctx.url, "class_status", [secrets.token_urlsafe(18)], address=ATTACKER)[0]
               for _ in range(FRESH_SESSIONS)]  # fmt: skip
    took, used = time.perf_counter() - started, _cpu_seconds(ctx.app.pid) - cpu
    kept = ctx.app.rss() - rss
    at_door = [reply["error"] for reply in replies if reply.get("error", "").startswith("429")]
    admitted = FRESH_SESSIONS - len(at_door)
    note = (f"{admitted:,} of {FRESH_SESSIONS:,} let in, {len(at_door):,} refused at the door, in {took:.0f} s; app CPU "
            f"{1000 * used / FRESH_SESSIONS:.0f} ms a call; RSS +{kept / 2**20:,.0f} MB kept after")  # fmt: skip
    return Outcome(at_door[0] if at_door else "", note=note)
