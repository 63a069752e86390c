"""Freed image buffers go back to the system (probes/running/heap.py): the app and the command
line set it before any work; measured in a fresh process, where the allocator starts as it would."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from probes.running.heap import THRESHOLD_BYTES

FREED_ON_THREADS = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from probes.running.heap import give_back_large_buffers

    def resident():
        return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20

    if sys.argv[1] == "set":
        assert give_back_large_buffers()
    before = resident()
    kept = []

    def pictures():  # decoded pictures and their copies, freed as the work goes, with small things kept between
        for _ in range(6):
            buffers = [b"x" * (12 << 20) for _ in range(3)]
            kept.append(b"k" * 200_000)  # after them in the thread's arena: they cannot be trimmed from its top
            del buffers

    threads = [threading.Thread(target=pictures) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(resident() - before)
    """
)


def _held_after(setting: str) -> float:
    output = subprocess.run(
        [sys.executable, "-c", FREED_ON_THREADS, setting], capture_output=True, text=True, check=True
    )
    return float(output.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator: elsewhere it does nothing")
def test_pixel_buffers_freed_on_worker_threads_are_given_back():
    # 4 threads x 6 rounds x three 12 MB buffers freed: what the process still holds after is
    # the small things kept (4 x 6 x 200 kB = 4.8 MB), not the pictures' buffers (without the
    # setting, glibc 2.36 here kept 149 MB: three buffers in each thread's arena).
    assert _held_after("set") < 40


def test_the_threshold_stays_above_the_papers_largest_canvas():
    # Buffers of a 1155 px canvas are reused by the allocator (mapping each anew doubled the
    # drawing time: bench/heap.py); an upload's 16 MP picture is given back.
    assert 1155 * 1155 * 3 < THRESHOLD_BYTES < 4000 * 4000 * 3


def test_the_app_and_the_command_line_set_it_before_any_work(monkeypatch):
    import app
    from probes.cli import commands

    calls = []
    monkeypatch.setattr(commands, "give_back_large_buffers", lambda: calls.append("command line"))
    monkeypatch.setattr(app, "give_back_large_buffers", lambda: calls.append("app"))
    with pytest.raises(SystemExit):
        commands.main(["--help"])
    app.build_demo()
    assert calls == ["command line", "app"]
    from probes.cli import main, report_command

    monkeypatch.setattr(report_command, "give_back_large_buffers", lambda: calls.append("report"))
    with pytest.raises(SystemExit):
        main(["report", "--help"])  # parsed apart from the other commands (probes/cli/__init__.py)
    assert calls == ["command line", "app", "report"]
