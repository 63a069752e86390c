"""A lecture hall on one school network (issue 35), through the routes the students' page uses
(ui/classroom/student_page.py): the app in public mode in its own process on 127.0.0.1 behind one
trusted proxy, `--students` students joining one class from one address (X-Forwarded-For), each
following the class's event stream as the page does; the teacher opens the class (`class_open`),
follows the presenter's stream and shows `--items` items one after another.

Measured, on this machine (the bench's own clients share its two cores with the app):
- joins: how many of the hall got a seat (one address: the class's share per address, not the
  app's bound on new Gradio sessions, applies);
- idle: the app's CPU while every phone holds its stream open and nothing happens (in cores);
- each item: every student answers the moment the item reaches their phone (all within the same
  second): each answer's round trip, p50 and p95; and the presenter's count delay, from a tap sent
  to the presenter's stream showing a count that includes it; every answer tallied (the status and
  the reveal's tally against the answers received).

Goals: every answer tallied; answer p95 and count delay p95 under 1 s; idle under 0.1 core.

Run from the repository root:  python -m bench.classroom --hall [--students 300] [--items 3]
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from gradio_client import Client

from bench.abuse import Sampler, percentile
from bench.plain_http import Connection
from tests.ui.attacker import AppProcess

SCHOOL = "198.51.100.20"  # every phone's address, as the school's router shows it to the Space's proxy
LESSON = ("illusion/mueller-lyer", "difference=-0.2,-0.1,0.1,0.2 inducers=with illusion_strength=30 canvas=768")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _events(phone: Connection, token: str, inbox: asyncio.Queue) -> None:
    """Follow one stream, putting (arrival time, event) on `inbox` until cancelled."""
    try:
        async for event in phone.events("/class/api/events", {"token": token}):
            await inbox.put((time.perf_counter(), event))
    finally:
        phone.close()


async def hall(url: str, students: int, items: int, pid: int) -> dict:
    headers = {"X-Forwarded-For": SCHOOL}
    phones = [Connection(url, headers) for _ in range(students)]  # each phone's requests
    async with httpx.AsyncClient(headers=headers, timeout=120) as client:  # the teacher's few calls
        teacher = await asyncio.to_thread(Client, url, verbose=False)
        opened = await asyncio.to_thread(teacher.predict, *LESSON, items, 0, "", api_name="/class_open")
        pages = [secrets.token_hex(16) for _ in range(students)]

        async def join(phone: Connection, page: str) -> dict:
            return (await phone.post_json("/class/api/join", {"code": opened["code"], "name": "", "page": page}))[1]

        joined = await asyncio.gather(*(join(phone, page) for phone, page in zip(phones, pages, strict=True)))
        seated = [
            (phone, reply["student_token"])
            for phone, reply in zip(phones, joined, strict=True)
            if "student_token" in reply
        ]
        tokens = [token for _, token in seated]
        refused = [reply.get("error") for reply in joined if "student_token" not in reply]
        inboxes = [asyncio.Queue() for _ in tokens]
        board: asyncio.Queue = asyncio.Queue()
        streams = [
            asyncio.create_task(_events(Connection(url, headers), t, q)) for t, q in zip(tokens, inboxes, strict=True)
        ]
        streams.append(asyncio.create_task(_events(Connection(url, headers), opened["teacher_token"], board)))
        waited = time.perf_counter() + 120
        while (any(q.empty() for q in inboxes) or board.empty()) and time.perf_counter() < waited:
            await asyncio.sleep(0.1)  # every stream open and told the lobby
        following = sum(not q.empty() for q in inboxes)
        if following < len(inboxes):
            raise RuntimeError(f"only {following} of {len(inboxes)} phones' streams opened within 120 s")
        for q in [*inboxes, board]:
            while not q.empty():
                q.get_nowait()
        await asyncio.sleep(2)
        cpu, started = _cpu_seconds(pid), time.perf_counter()
        await asyncio.sleep(20)
        idle_cores = (_cpu_seconds(pid) - cpu) / (time.perf_counter() - started)

        answers, delays, tallied, received, cpu = [], [], [], 0, []
        for index in range(items):
            sent: list[tuple[float, float]] = []  # (tap sent, reply back)

            async def student(
                phone: Connection, token: str, inbox: asyncio.Queue, index: int = index, sent: list = sent
            ) -> None:
                while True:
                    _, view = await inbox.get()
                    if view.get("index") == index and view.get("state") == "answering":
                        break
                tap = time.perf_counter()
                _, reply = await phone.post_json("/class/api/answer", {"token": token, "answer": "a"})
                if reply.get("received"):
                    sent.append((tap, time.perf_counter()))

            answering = [asyncio.create_task(student(p, t, q)) for (p, t), q in zip(seated, inboxes, strict=True)]
            app_cpu, own_cpu = _cpu_seconds(pid), time.process_time()
            await client.post(f"{url}/gradio_api/run/class_next", json={"data": [opened["teacher_token"]]})
            await asyncio.gather(*answering)
            cpu.append((_cpu_seconds(pid) - app_cpu, time.process_time() - own_cpu))
            counts: list[tuple[float, int]] = []
            deadline = time.perf_counter() + 30
            while time.perf_counter() < deadline and (not counts or counts[-1][1] < len(sent)):
                try:
                    arrived, status = await asyncio.wait_for(board.get(), 1)
                except TimeoutError:
                    continue
                if status.get("index") == index:
                    counts.append((arrived, status.get("answered", 0)))
            received += len(sent)
            answers += [back - tap for tap, back in sent]
            for rank, (tap, _) in enumerate(sorted(sent, key=lambda pair: pair[1]), start=1):
                shown = next((at for at, count in counts if count >= rank), None)
                delays.append(float("inf") if shown is None else shown - tap)
            reveal = await client.post(f"{url}/gradio_api/run/class_reveal", json={"data": [opened["teacher_token"]]})
            tally = sum(entry["count"] for entry in reveal.json()["data"][0]["tally"])
            tallied.append((tally, len(sent)))
        for task in streams:
            task.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
        for phone in phones:
            phone.close()
    return {"joined": len(tokens), "refused": refused, "idle_cores": idle_cores, "answers": answers,
            "delays": delays, "tallied": tallied, "received": received, "cpu": cpu}  # fmt: skip


def run(students: int, items: int) -> None:
    env = {"PROBE_TRUSTED_PROXIES": "1"}
    with tempfile.TemporaryDirectory(prefix="bench-hall-") as folder:
        app = AppProcess(Path(folder), env).start()
        try:
            with Sampler(app, kill_above=4096 * 2**20) as sampler:
                found = asyncio.run(hall(app.url, students, items, app.pid))
            peak = sampler.highest
        finally:
            app.stop()
    ms = lambda values, share: f"{percentile(values, share) * 1000:.0f} ms"  # noqa: E731
    print(f"{students} students from one address ({SCHOOL}), {items} items, public mode, 127.0.0.1\n")
    print(
        f"- joined: {found['joined']} of {students}"
        + (f"; refused: {found['refused'][:2]}" if found["refused"] else "")
    )
    print(f"- {found['joined']} phones following the class, nothing happening: app CPU {found['idle_cores']:.3f} cores")
    print(
        f"- answers: {found['received']} received of {found['joined'] * items}; tallied "
        + ", ".join(f"{tally}/{sent}" for tally, sent in found["tallied"])
    )
    print(
        f"- an answer's round trip: p50 {statistics.median(found['answers']) * 1000:.0f} ms, "
        f"p95 {ms(found['answers'], 0.95)}, max {max(found['answers']) * 1000:.0f} ms"
    )
    print(
        f"- tap to the presenter's count: p50 {statistics.median(found['delays']) * 1000:.0f} ms, "
        f"p95 {ms(found['delays'], 0.95)}, max {max(found['delays']) * 1000:.0f} ms"
    )
    print(
        "- CPU from Next to the last answer back, per item (app / the bench's phones): "
        + ", ".join(f"{app:.2f} s / {own:.2f} s" for app, own in found["cpu"])
    )
    print(f"- app peak RSS {peak / 2**20:.0f} MB")
