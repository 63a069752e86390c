"""Upload bombs against the public app (issue 22): one visitor uploads, through the API as a
browser would, a TIFF of 20,000 chained directories that loop, a PNG of a million empty chunks,
a GIF of 300,000 frames, a progressive JPEG of 2,000 extra scans and a decompression bomb (all
under the 20 MB upload bound); each is refused with one line naming its bound, while another
visitor's page and stimulus requests keep being answered about as fast as when the app is idle,
and no decoding worker is left burning a core afterwards.

Before the bounds, the same files took the app 24 s to 292 s each (accepted in the end), and
the other visitor's pages waited up to 6.4 s (75 times the idle p95). The app runs in a process
of its own (`python app.py`, public mode, 127.0.0.1), so its time is not the test runner's.
"""

from __future__ import annotations

import os
import re
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from probes.files.decoding import POOL_SIZE
from tests.support.decode_bombs import UPLOAD_BOMBS
from tests.ui.attacker import AppProcess, call, generate, has_image, warning
from tests.ui.conftest import patient_client

PUBLIC_UPLOAD_BYTES = 20 * 2**20
IDLE_SAMPLES = 10
# No request of the other visitor during the attack may take more than 3 times the slowest of
# its idle ones, or this, whichever is more. The maximum, not a percentile: a frozen server
# shows as a few requests stuck for seconds among many fast ones (before the bounds, with these
# files, the p95 of pages stayed near 1 s while single pages waited 6.4 s; issue 22 saw 22.8 s).
# The floor: on a loaded 2-core machine Gradio's own handling of a 10 MB upload (not decoding)
# delays a page by a few hundred milliseconds, and a busy CI box adds its own pauses.
FLOOR_SECONDS = 2.0
ROUNDS = 2  # each bomb uploaded twice: the second time meets a reused worker
REFUSAL_CEILING = 60.0  # seconds one upload and its refusal may take on a loaded machine (a bomb took minutes)
WORKER_CPU_CEILING = 10.0  # seconds of CPU all the decoding workers may spend on every bomb together


def _page(url: str) -> float:
    started = time.monotonic()
    with urllib.request.urlopen(url + "/", timeout=120) as response:
        response.read()
        assert response.status == 200
    return time.monotonic() - started


def _stimulus(client: Client, seed: int) -> float:
    started = time.monotonic()
    outputs = generate(client, seed)
    assert has_image(outputs) and not warning(outputs), warning(outputs)
    return time.monotonic() - started


def _decoders(app: AppProcess) -> dict[int, float]:
    """The app's decoding workers: pid -> processor seconds used so far."""
    found = {}
    for pid in app.tree():
        try:
            if b"probes.files.decoding" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        found[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return found


@pytest.fixture
def bombs(tmp_path) -> list[tuple[object, Path]]:
    made = []
    for bomb in UPLOAD_BOMBS:
        path = tmp_path / "bombs" / bomb.filename
        path.parent.mkdir(exist_ok=True)
        bomb.write(path)
        assert path.stat().st_size < PUBLIC_UPLOAD_BYTES
        made.append((bomb, path))
    return made


def test_upload_bombs_are_refused_while_another_visitor_is_served(tmp_path, bombs):
    with AppProcess(tmp_path / "app") as app:
        other = patient_client(app.url, download_files=False)
        _stimulus(other, 0)  # the visitor's session is set up, as a page load does
        idle_pages = [_page(app.url) for _ in range(IDLE_SAMPLES)]
        idle_stimuli = [_stimulus(other, seed) for seed in range(1, IDLE_SAMPLES + 1)]

        attacker = patient_client(app.url, download_files=False)
        refusals: list[tuple[str, str, float]] = []
        failures: list[BaseException] = []
        done = threading.Event()

        def attack() -> None:
            try:
                for _ in range(ROUNDS):
                    for bomb, path in bombs:
                        started = time.monotonic()
                        outputs = call(attacker, "/use_upload", files=[handle_file(str(path))], question="Which?")
                        refusals.append((bomb.refused, warning(outputs), time.monotonic() - started))
            except BaseException as exc:  # noqa: BLE001 - reported by the test below
                failures.append(exc)
            finally:
                done.set()

        before = _decoders(app)
        attacking = threading.Thread(target=attack, daemon=True)
        attacking.start()
        pages, stimuli, seed = [], [], 100
        while not done.is_set():  # the other visitor, all along the attack
            pages.append(_page(app.url))
            stimuli.append(_stimulus(other, seed))
            seed += 1
        attacking.join(timeout=30)
        assert not failures, failures

        for expected, message, seconds in refusals:
            assert message.startswith("⚠ ") and "\n" not in message, message
            assert re.search(expected, message), (expected, message)
            assert seconds < REFUSAL_CEILING, (message, seconds)
        assert len(refusals) == ROUNDS * len(bombs)

        assert len(pages) >= 3, "the attack ended before the other visitor could be measured"
        for what, idle, during in (("page", idle_pages, pages), ("stimulus", idle_stimuli, stimuli)):
            bound = max(3 * max(idle), FLOOR_SECONDS)
            assert max(during) <= bound, (what, f"idle {sorted(idle)}", f"during {sorted(during)}")

        # The work done: the decoders spent little on all the bombs, and none is burning now.
        after = _decoders(app)
        spent = sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())
        assert spent < WORKER_CPU_CEILING, (before, after)
        assert 1 <= len(after) <= POOL_SIZE, after
        time.sleep(1.0)
        later = _decoders(app)
        assert all(later.get(pid, seconds) - seconds < 0.2 for pid, seconds in after.items()), (after, later)
