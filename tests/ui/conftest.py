"""The app served in this process on a free port, and a real browser (Debian's chromium driven
by playwright) to use it as a person would."""

from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import gradio.networking
import httpx
import pytest
from gradio_client import Client
from playwright.sync_api import expect

# Every wait is on a condition, with room for a loaded 2-core CI machine: playwright's own
# default (5 s) once failed there while the app was busy drawing a chart.
WAIT_MS = 60_000
expect.set_options(timeout=WAIT_MS)


def patient_client(url: str, **kwargs) -> Client:
    """A gradio_client Client whose every HTTP wait (the config, the API info, each call) has the
    same room as the browser's: its own default of 5 s to read the app's config once ran out on
    a loaded machine before the test had asked anything."""
    return Client(url, verbose=False, httpx_kwargs={"timeout": httpx.Timeout(WAIT_MS / 1000)}, **kwargs)


BROWSER_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-gpu"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def reset_caches() -> None:
    """Process-wide caches hold backends, the store, the links' kept answers, the limits read from
    the environment and the budgets: each app gets fresh ones."""
    from probes.running import answerers, limits
    from ui import common, items, sessions

    answerers._shared.clear()
    limits._current = None  # read again (lazily) from the environment
    sessions.shared_store.cache_clear()
    sessions.shared_cache.cache_clear()  # both under the app's PROBE_HOME: another test's are not this one's
    sessions.link_store.cache_clear()
    common.budget.cache_clear()
    common.endpoints.cache_clear()
    common.catalogue_ids.cache_clear()
    items._benchmark.cache_clear()


def _answers(url: str) -> bool:
    """Whether the server at `url` answers its page, within WAIT_MS."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        try:
            if httpx.head(url, timeout=30, verify=False).status_code in (200, 401, 301, 302, 303, 307, 308):
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return False


@pytest.fixture
def serve(tmp_path, monkeypatch):
    """serve(**env) -> the URL of a freshly built app, with env set before it is built."""
    launched = []

    def start(**env: str) -> str:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("PROBE_HOME", str(tmp_path / "home"))
        for name in ("SPACE_ID", "PROBE_PUBLIC", "PROBE_SESSION_BUDGET", "PROBE_CLIENT_BUDGET", "PROBE_GLOBAL_BUDGET",
                     "PROBE_MAX_SESSIONS", "PROBE_NEW_SESSIONS", "PROBE_CLASS_PUBLISH", "PROBE_CLASS_API_RATE"):  # fmt: skip
            if name not in env:
                monkeypatch.delenv(name, raising=False)
        reset_caches()
        import app

        demo = app.build_demo()
        port = free_port()
        # Gradio's launch asks the server it just started for its page, once, 3 s at most, and
        # fails the launch ("localhost is not accessible") if that runs out: on a loaded machine
        # it did. The same question, waited on with the room every other wait here has.
        monkeypatch.setattr(gradio.networking, "url_ok", _answers)
        demo.launch(
            server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **app.launch_options()
        )
        launched.append(demo)
        return f"http://127.0.0.1:{port}"

    start.launched = launched  # the apps served, for a test that looks inside one
    yield start
    for demo in launched:
        demo.close(verbose=False)
    reset_caches()


@pytest.fixture(scope="session")
def browser() -> Iterator:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        if os.environ.get("PROBE_REQUIRE_BROWSER"):
            pytest.fail("chromium is not installed (apt-get install -y chromium); CI requires the browser tests")
        pytest.skip("chromium is not installed: apt-get install -y chromium (see DEVELOPERS.md)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=BROWSER_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, tmp_path) -> Iterator:
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page
    context.close()


def screenshot(page, tmp_path: Path, name: str) -> Path:
    """Saved under the test's temp folder, to look at."""
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
