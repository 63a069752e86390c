"""Abuse (issue 10): the app in public mode (`python app.py`, PROBE_PUBLIC=1, in its own process on
127.0.0.1, paid models served by a local OpenAI-protocol server answering in 5 ms) attacked through
its API as an anonymous visitor of a Space would, one attack at a time, beside an idle baseline
measured in the same run.

For each attack: whether it was refused (and the message's first words), how long the first
attempt took to be answered, the app's peak RSS while it ran (its process tree sampled every
50 ms, and the process's own VmHWM, reset before each attack), another visitor's
`generate_stimulus` latency (p50, p95 over --calls calls made while the attack repeats) and its
ratio to the idle p95, and what the app wrote to disk meanwhile. An attack whose request is still
being worked on after --attempt-timeout seconds got through: the app is restarted after it (as it
is when its tree passes --kill-above MB). Goals: no attack raises RSS past 1.5 GB; the other
visitor's p95 stays under 3x idle.

Every attack is bounded in count and time; traffic goes to 127.0.0.1 only; the Hub is offline.

Run from the repository root:  python -m bench.abuse [--calls 20] [--only NAME,...] [--fresh] [--list]
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from gradio_client import Client

from bench.abuse_attacks import ATTACKS
from bench.abuse_attacks_common import (
    ATTEMPT_TIMEOUT,
    BUDGETS,
    GOAL_RATIO,
    GOAL_RSS,
    MB,
    PAID,
    SERVER_KEY,
    SESSIONS,
    VISITOR_KEY,
    Attack,
    Context,
    Outcome,
    ask,
    first_words,
)
from tests.support.fake_servers import serve_in_subprocess
from tests.ui.attacker import (
    AppProcess,
    generate,
    has_image,
    submit,
    warning,
)


@dataclass
class Row:
    attack: str
    refused: str
    first: float | None  # seconds the first attempt took (None: never answered)
    peak: int
    p50: float
    p95: float
    ratio: float
    disk: int
    note: str = ""
    censored: int = 0  # the other visitor's calls that hit the call timeout
    attempts: int = 0


# --- measuring ---------------------------------------------------------------------------------


class Sampler:
    """The app's tree RSS every 50 ms (and its process's VmHWM); kills the app past `kill_above`."""

    def __init__(self, app: AppProcess, kill_above: int):
        self.app, self.kill_above = app, kill_above
        self.highest = 0
        self.killed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Sampler:
        self.app.reset_peak()
        self.highest = self.app.rss()
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            if not self.app.alive:
                return
            rss = self.app.rss()
            self.highest = max(self.highest, rss)
            if rss > self.kill_above:
                self.killed = True
                self.app.stop()
                return

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.app.alive:
            self.highest = max(self.highest, self.app.peak())


def latencies(
    url: str, calls: int, seed_base: int, stop: threading.Event, call_timeout: float
) -> tuple[list[float], int]:
    """Seconds each of `calls` normal requests took; one not answered within `call_timeout`
    (or failing on a timeout) counts as the timeout, and three such end the measurement."""
    times, censored = [], 0
    try:
        other = Client(url, verbose=False, download_files=False)
        generate(other, seed_base - 1)  # a first call sets the session up; a visitor's page has done so
    except Exception:  # noqa: BLE001 - the app too busy to let a visitor in: every call failed
        stop.set()
        return [call_timeout], 1
    for number in range(calls):
        started = time.perf_counter()
        try:
            job = submit(other, "/generate_stimulus", task="blind/touching-circles", params="", seed=seed_base + number)
            outputs = job.result(timeout=call_timeout)
        except Exception:  # noqa: BLE001 - TimeoutError, or the HTTP client's own timeout
            times.append(time.perf_counter() - started)
            censored += 1
            if censored >= 3:
                break
            continue
        if not has_image(outputs) or warning(outputs):
            raise RuntimeError(f"the other visitor was not served: {warning(outputs)}")
        times.append(time.perf_counter() - started)
    stop.set()
    return times, censored


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def measure(app: AppProcess, attack: Attack, args, seed_base: int, idle_p95: float | None, requests) -> Row:
    try:
        attacker_client = Client(app.url, verbose=False, download_files=False)
    except Exception:  # noqa: BLE001 - still busy with the last attack: start afresh
        app.restart()
        warm_up(app)
        attacker_client = Client(app.url, verbose=False, download_files=False)
    ctx = Context(app.url, Path(args.folder), requests, attacker_client, app)
    outcomes: list[Outcome] = []
    first: list[float] = []
    done = threading.Event()
    disk_before = app.disk()

    def attacker() -> None:
        while True:
            started = time.perf_counter()
            try:
                outcome = attack.run(ctx)
            except Exception as exc:  # noqa: BLE001 - a failed call is an outcome to report
                if getattr(getattr(exc, "response", None), "status_code", None) == 413:
                    # Refused at the door (ui/body_bound.py): the app never read the body.
                    outcome = Outcome("413: the request's body is past the bound", note="refused before it was read")
                else:
                    # The app may still be working on it: it is restarted after this attack.
                    outcome = Outcome("", note=f"{type(exc).__name__}: {first_words(exc, 12)}", stuck=True)
            if not first:
                first.append(time.perf_counter() - started)
            outcomes.append(outcome)
            if not attack.repeat or done.is_set() or len(outcomes) >= args.max_attempts:
                return

    with Sampler(app, args.kill_above * MB) as sampler:
        thread = threading.Thread(target=attacker, daemon=True)
        thread.start()
        times, censored = latencies(app.url, args.calls, seed_base, done, args.call_timeout)
        waited = attack.timeout or args.attempt_timeout
        thread.join(timeout=waited)
        still = thread.is_alive()
    refused_outcomes = [o for o in outcomes if o.refused]
    if refused_outcomes:
        refused = "yes: " + first_words(refused_outcomes[0].message.lstrip("⚠ "), 7)
    else:
        refused = "no" if attack.name != "idle" else "-"
    note = outcomes[0].note if outcomes else ""
    if still:
        note = f"still working after {waited:.0f} s; app restarted" + (f"; {note}" if note else "")
    if sampler.killed:
        note = f"app killed past {args.kill_above} MB; restarted" + (f"; {note}" if note else "")
    p95 = percentile(times, 0.95)
    row = Row(
        attack.shown or attack.name, refused, first[0] if first else None, sampler.highest,
        statistics.median(times), p95, p95 / idle_p95 if idle_p95 else 1.0, app.disk() - disk_before,
        note, censored, len(outcomes),
    )  # fmt: skip
    if any(o.stuck for o in outcomes):
        note = f"{note}; app restarted".lstrip("; ")
    if still or sampler.killed or not app.alive or any(o.stuck for o in outcomes):
        app.restart()
        warm_up(app)
    return row


def warm_up(app: AppProcess) -> None:
    """What any first visitor does once: the paid providers' SDKs are imported by the first Ask
    (about 4 s here, during which the app answers nobody), so the bench does it before measuring."""
    client = Client(app.url, verbose=False, download_files=False)
    ctx = Context(app.url, Path(app.folder), lambda: 0, client)
    generate(client, 0)
    ask(ctx, PAID, key=VISITOR_KEY)


def print_table(rows: list[Row], idle: Row, args) -> None:
    print(f"other visitor: {args.calls} generate_stimulus calls per attack; idle p50 {idle.p50 * 1000:.0f} ms, "
          f"p95 {idle.p95 * 1000:.0f} ms")  # fmt: skip
    print()
    print("| attack | refused | first answer | app peak RSS | other p50 | other p95 | x idle p95 | disk | note |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        first = "never" if row.first is None else f"{row.first:.2f} s" if row.attack != "idle" else "-"
        p95 = f"{row.p95:.2f} s" + (f" ({row.censored} timed out)" if row.censored else "")
        print(f"| {row.attack} | {row.refused} | {first} | {row.peak / MB:,.0f} MB | {row.p50:.2f} s | {p95} | "
              f"{row.ratio:.1f} | {row.disk / MB:+,.1f} MB | {row.note} |")  # fmt: skip
    over_rss = [r.attack for r in rows if r.peak > GOAL_RSS]
    over_ratio = [r.attack for r in rows if r.ratio > GOAL_RATIO]
    print()
    print(f"goal RSS < 1.5 GB: {'met' if not over_rss else 'missed by ' + '; '.join(over_rss)}")
    print(f"goal other p95 < 3x idle: {'met' if not over_ratio else 'missed by ' + '; '.join(over_ratio)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20, help="the other visitor's calls per attack")
    parser.add_argument("--only", default="", help="comma-separated attack names (idle is always measured)")
    parser.add_argument("--list", action="store_true", help="list the attacks and stop")
    parser.add_argument("--max-attempts", type=int, default=200, help="attempts of one attack at most")
    parser.add_argument("--attempt-timeout", type=float, default=ATTEMPT_TIMEOUT)
    parser.add_argument("--call-timeout", type=float, default=30.0, help="seconds the other visitor waits per call")
    parser.add_argument("--kill-above", type=int, default=4096, help="MB of app RSS past which the app is killed")
    parser.add_argument("--keep-log", default="", help="copy the app's log here at the end")
    parser.add_argument("--folder", default="", help="keep the app's files (home, session stores, log) here")
    parser.add_argument("--fresh", action="store_true",
                        help="restart the app before each attack, so each peak is that attack's own")  # fmt: skip
    args = parser.parse_args()
    if args.list:
        for attack in ATTACKS:
            print(f"{attack.name:16} {attack.shown}")
        return
    chosen = {name.strip() for name in args.only.split(",") if name.strip()}
    unknown = chosen - {a.name for a in ATTACKS}
    if unknown:
        parser.error(f"no attack named {', '.join(sorted(unknown))} (see --list)")
    attacks = [a for a in ATTACKS if a.name == "idle" or not chosen or a.name in chosen]

    # hostile: the reply-* attacks ask models whose server lies (any other model is answered "No").
    server, base_url, openai_requests = serve_in_subprocess("openai", "No", latency=0.005, hostile=True)
    other_server, other_url, anthropic_requests = serve_in_subprocess("anthropic", "No", latency=0.005, hostile=True)

    def requests() -> int:
        return openai_requests() + anthropic_requests()

    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="abuse-") as temp:
            temp = args.folder or temp
            args.folder = temp
            env = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": SERVER_KEY, "ANTHROPIC_BASE_URL": other_url,
                   "ANTHROPIC_API_KEY": SERVER_KEY.replace("sk-", "sk-ant-"), **BUDGETS, **SESSIONS}  # fmt: skip
            app = AppProcess(Path(temp) / "app", env).start()
            warm_up(app)
            try:
                rows: list[Row] = []
                idle_p95 = None
                for index, attack in enumerate(attacks):
                    if (args.fresh and index) or attack.env:
                        app.extra = {**env, **(attack.env or {})}
                        app.restart()
                        warm_up(app)
                    row = measure(app, attack, args, seed_base=1000 * (index + 1), idle_p95=idle_p95, requests=requests)
                    if attack.env:
                        app.extra = dict(env)
                        app.restart()
                        warm_up(app)
                    idle_p95 = idle_p95 or row.p95
                    rows.append(row)
                    print(f"... {attack.name}: {row.refused}, peak {row.peak / MB:,.0f} MB, p95 {row.p95:.2f} s",
                          flush=True)  # fmt: skip
                served = requests()
            finally:
                app.stop()
                if args.keep_log:
                    Path(args.keep_log).write_text(app.log(), encoding="utf-8")
    finally:
        server.kill()
        other_server.kill()
    print()
    print_table(rows, rows[0], args)
    print(f"\nwall time {time.perf_counter() - started:.0f} s; requests the model server answered: {served}")


if __name__ == "__main__":
    main()
