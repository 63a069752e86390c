"""A class in the room, under load (issue 25): the app in public mode (`python app.py`,
PROBE_PUBLIC=1, its own process on 127.0.0.1), a teacher and `--students` students, through the
named endpoints a class's pages and scripts use, each call one direct POST to
`/gradio_api/run/<name>` as the phones' pages make (`--client gradio`: each student a
`gradio_client` of its own instead, through the queue; that client's own CPU, sixty of them on
these two cores, then weighs on what is measured).

Each student asks where the class is once a second (as the student page's timer does, saying
which picture it has) and answers each item once it shows; the teacher shows `--items` items one after another, asks the
class's status once a second (the presenter's refresh), and reveals each item once every student
has answered (or after `--item-seconds`). Measured: each answer's round trip and each presenter
refresh, p50 and p95, against an idle baseline measured in the same run (one student answering
and the teacher refreshing with nobody else about), and the app's peak RSS (its process tree).
Goal: p95 under 1 s and under 3x idle on this 2-core machine (the bench's own 61 clients share
those cores with the app).

`--hall`: a lecture hall of 300 on one school network through the students' own page, pushed
rather than polled (bench/lecture_hall.py).

Run from the repository root:  python -m bench.classroom [--students 60] [--items 10] [--hall]
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
from gradio_client import Client

from bench import lecture_hall
from bench.abuse import Sampler, percentile
from tests.ui.attacker import AppProcess

SET = ("illusion/mueller-lyer", "difference=-0.2,-0.1,0.1,0.2 inducers=with illusion_strength=30 canvas=768")


class Direct:
    """Calls as the pages make them: one POST each, on a connection pool shared by every student,
    each student's calls under one session (as a page's are: Gradio builds a session's state of
    every component once, about 25 ms of CPU for this app, not on each call)."""

    pool: httpx.Client | None = None

    def __init__(self, url: str) -> None:
        if Direct.pool is None:
            Direct.pool = httpx.Client(limits=httpx.Limits(max_connections=256), timeout=120)
        self.url, self.session = url, secrets.token_hex(8)

    def predict(self, *args, api_name: str) -> dict:
        body = json.dumps({"data": list(args), "session_hash": self.session})
        response = Direct.pool.post(f"{self.url}/gradio_api/run{api_name}", content=body,
                                    headers={"Content-Type": "application/json"})  # fmt: skip
        response.raise_for_status()
        return response.json()["data"][0]


def gradio_client(url: str) -> Client:
    # ssl_verify=False: the app is on plain http://127.0.0.1, where there is nothing to verify;
    # with it on, every call builds an SSL context from the CA bundle (about 60 ms of the client's
    # CPU per call here, measured: 64.5 ms against 5.8), which sixty clients on two cores cannot afford.
    return Client(url, verbose=False, ssl_verify=False)


CLIENT = {"direct": Direct, "gradio": gradio_client}
connect = Direct


def call(client, endpoint: str, *args) -> tuple[dict, float]:
    started = time.perf_counter()
    answer = client.predict(*args, api_name=endpoint)
    return answer, time.perf_counter() - started


def idle(url: str, samples: int) -> tuple[list[float], list[float]]:
    """One student answering, one teacher refreshing, nobody else: the baseline."""
    teacher = gradio_client(url)  # opening a class goes through the queue
    opened, _ = call(teacher, "/class_open", SET[0], SET[1], samples, 0, "baseline/pixels")
    code, token = opened["code"], opened["teacher_token"]
    teacher, student = connect(url), connect(url)
    joined, _ = call(student, "/class_join", code, "idle")
    answers, refreshes = [], []
    for _ in range(min(samples, opened["items"])):
        call(teacher, "/class_next", token)
        call(student, "/class_item", joined["student_token"], None)
        done, seconds = call(student, "/class_answer", joined["student_token"], "a")
        assert done.get("received"), done
        answers.append(seconds)
        refreshes.append(call(teacher, "/class_status", token)[1])
        time.sleep(0.2)
    return answers, refreshes


def student(url: str, code: str, number: int, stop: threading.Event, answers: list, errors: list) -> None:
    rng = random.Random(number)
    client = connect(url)
    joined, _ = call(client, "/class_join", code, f"s{number}")
    token = joined["student_token"]
    answered: set[int] = set()
    shown = None  # the item whose picture this phone has
    while not stop.is_set():
        try:
            view, _ = call(client, "/class_item", token, shown)
        except Exception as exc:  # noqa: BLE001 - a refused poll is counted, and the phone polls again
            errors.append(f"poll: {exc}")
            time.sleep(1.0)
            continue
        index = view.get("index")
        shown = index if view.get("image") or view.get("image_unchanged") else shown
        if view.get("state") == "answering" and index is not None and index not in answered:
            time.sleep(rng.uniform(0.2, 2.0))  # a person reads and taps
            done, seconds = call(client, "/class_answer", token, rng.choice(["a", "b"]))
            if done.get("received"):
                answers.append(seconds)
                answered.add(index)
            else:
                errors.append(done.get("error"))
        time.sleep(1.0)


def lesson(url: str, students: int, items: int, item_seconds: float) -> tuple[list[float], list[float], list]:
    teacher = gradio_client(url)  # opening a class goes through the queue
    opened, _ = call(teacher, "/class_open", SET[0], SET[1], items, 0, "baseline/pixels")
    code, token = opened["code"], opened["teacher_token"]
    teacher = connect(url)
    stop = threading.Event()
    answers: list[float] = []
    errors: list = []
    crowd = [threading.Thread(target=student, args=(url, code, n, stop, answers, errors), daemon=True)
             for n in range(students)]  # fmt: skip
    for thread in crowd:
        thread.start()
    refreshes: list[float] = []
    deadline = time.monotonic() + 120
    while call(teacher, "/class_status", token)[0].get("students", 0) < students and time.monotonic() < deadline:
        time.sleep(0.5)
    for _ in range(items):
        call(teacher, "/class_next", token)
        ends = time.monotonic() + item_seconds
        while time.monotonic() < ends:
            status, seconds = call(teacher, "/class_status", token)
            refreshes.append(seconds)
            if status.get("answered", 0) >= students:
                break
            time.sleep(1.0)
        call(teacher, "/class_reveal", token)
        time.sleep(1.0)
    stop.set()
    for thread in crowd:
        thread.join(timeout=30)
    return answers, refreshes, errors


def row(name: str, values: list[float], idle_p95: float | None = None) -> str:
    if not values:
        return f"| {name} | 0 | - | - | - |"
    p95 = percentile(values, 0.95)
    ratio = f"{p95 / idle_p95:.2f}x" if idle_p95 else "-"
    return f"| {name} | {len(values)} | {statistics.median(values) * 1000:.0f} ms | {p95 * 1000:.0f} ms | {ratio} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--item-seconds", type=float, default=20.0)
    parser.add_argument("--idle-samples", type=int, default=20)
    parser.add_argument("--client", choices=sorted(CLIENT), default="direct")
    parser.add_argument("--hall", action="store_true", help="the lecture hall (bench/lecture_hall.py): 300 students")
    args = parser.parse_args()
    if args.hall:
        lecture_hall.run(300 if args.students == 60 else args.students, 3 if args.items == 10 else args.items)
        return
    global connect
    connect = CLIENT[args.client]
    with tempfile.TemporaryDirectory(prefix="bench-classroom-") as folder:
        # Sixty phones through the named endpoints from one address, as before the class had a page
        # of its own: past the rate a public Space allows one address there (ui/class_api_rate.py),
        # lifted here so this bench still measures what those calls cost.
        app = AppProcess(Path(folder), {"PROBE_CLASS_API_RATE": "100000"}).start()
        try:
            with Sampler(app, kill_above=4096 * 2**20) as sampler:
                idle_answers, idle_refreshes = idle(app.url, args.idle_samples)
                answers, refreshes, errors = lesson(app.url, args.students, args.items, args.item_seconds)
            peak = sampler.highest
        finally:
            app.stop()
    print(f"{args.students} students, {args.items} items, public mode, 127.0.0.1, {args.client} calls\n")
    print("| measured | n | p50 | p95 | p95 / idle p95 |\n| --- | --- | --- | --- | --- |")
    print(row("idle: one answer", idle_answers))
    print(row("idle: presenter refresh", idle_refreshes))
    print(row("class: an answer's round trip", answers, percentile(idle_answers, 0.95)))
    print(row("class: presenter refresh", refreshes, percentile(idle_refreshes, 0.95)))
    print(f"\nanswers received {len(answers)} of {args.students * args.items}; refused {len(errors)}"
          f"{' (' + str(errors[:3]) + ')' if errors else ''}; app peak RSS {peak / 2**20:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
