"""A planted server key and a key typed in a session never show up anywhere: not in the store,
the logs, the exports, the error messages or the pages, even when the provider echoes them; in
public mode not in the session stores, the refusals (budgets, bounds), the About tab, or what the
abuse bench prints and leaves behind either."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from probes.running.store import Store
from tests.support.fake_servers import FakeOpenAIServer, Fault, Reply
from tests.ui.conftest import patient_client
from tests.ui.test_probe_tab import choose_model, tick

SERVER_KEY = "sk-PLANTED-server-0123456789abcdef"
TYPED_KEY = "sk-PLANTED-typed-ABCDEFGHIJKLMNOP"
KEYS = (SERVER_KEY, TYPED_KEY, "PLANTED")


def echo_the_key(record: dict) -> Fault | None:
    """A careless provider: for model 'echo' it answers with the caller's key in the error."""
    if (record["body"] or {}).get("model") != "echo":
        return None
    message = f"Incorrect API key provided: {record['headers'].get('authorization', '')}"
    return Fault(
        "reply", reply=Reply(401, {"error": {"message": message, "type": "invalid_request_error", "code": None}})
    )


def assert_clean(text: str, where: str) -> None:
    for key in KEYS:
        assert key not in text, f"{key} leaked into {where}"


def download(page, element_id: str, folder: Path) -> Path:
    with page.expect_download() as event:
        page.click(f"#{element_id}")
    path = folder / event.value.suggested_filename
    event.value.save_as(path)
    return path


def test_planted_and_typed_keys_never_leak(serve, browser, tmp_path, capfd):
    with FakeOpenAIServer(responder=lambda body: "No", fault=echo_the_key) as server:
        url = serve(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=SERVER_KEY)
        visitor, other = browser.new_context(accept_downloads=True), browser.new_context()
        try:
            page = visitor.new_page()
            page.goto(url)
            page.click("#probe-generate")
            expect(page.locator("#probe-item-text")).to_contain_text("circles")
            # The server's key, echoed back by the provider in an error.
            choose_model(page, 0, "openai/echo")
            choose_model(page, 1, "openai/fine")
            page.click("#probe-ask")
            expect(page.locator("#probe-status")).to_contain_text("1 of 2 answered · 1 failed")
            expect(page.locator("#probe-grid")).to_contain_text("Incorrect API key provided")
            # The visitor's own key, echoed back the same way (4-shot as well: a new request each).
            page.get_by_text("API keys (used for this session only, never stored)").click()
            page.locator("#probe-openai-key input").fill(TYPED_KEY)
            tick(page, "4-shot")
            page.click("#probe-ask")
            expect(page.locator("#probe-status")).to_contain_text(re.compile(r"2 of 4 answered \(.*\) · 2 failed"))
            expect(page.locator("#probe-grid")).to_contain_text("Incorrect API key provided")
            for element in ("probe-grid", "probe-status", "probe-prompts"):
                # text_content: the replies folded away in the grid count too.
                assert_clean(page.locator(f"#{element}").text_content() or "", f"#{element}")
            # The visitor's own password box holds their key; nothing else on their page may.
            assert_clean(page.content().replace(f'value="{TYPED_KEY}"', ""), "the visitor's page")

            # Exports: the scoreboard's CSV and JSON, the stimulus lab's zip.
            page.get_by_role("tab", name="Scoreboard", exact=True).click()
            page.locator("#score-probes input").check()  # the Probe tab's clicks are all this store holds
            page.click("#score-refresh")
            expect(page.locator("#score-table")).to_contain_text("openai/fine")
            exported = [download(page, "score-csv", tmp_path), download(page, "score-json", tmp_path)]
            page.get_by_role("tab", name="Stimulus lab", exact=True).click()
            page.click("#stim-export")
            zip_link = page.locator("#stim-zip a").first
            expect(zip_link).to_be_visible(timeout=60_000)
            with page.expect_download() as event:
                zip_link.click()
            archive = tmp_path / "set.zip"
            event.value.save_as(archive)
            exported.append(archive)

            second = other.new_page()
            second.goto(url)
            expect(second.locator("#probe-generate")).to_be_visible()
            assert_clean(second.content(), "another visitor's page")
        finally:
            visitor.close()
            other.close()

    authorizations = [r["headers"]["authorization"] for r in server.requests]
    assert f"Bearer {SERVER_KEY}" in authorizations and f"Bearer {TYPED_KEY}" in authorizations  # the premise
    for path in exported[:2]:
        assert_clean(path.read_text(encoding="utf-8"), path.name)
    with zipfile.ZipFile(exported[2]) as archive:
        for name in archive.namelist():
            assert_clean(archive.read(name).decode("latin-1"), f"{archive.filename}:{name}")
    for path in (tmp_path / "home").rglob("*"):
        if path.is_file():
            assert_clean(path.read_bytes().decode("latin-1"), str(path))
    logs = capfd.readouterr()
    assert_clean(logs.out + logs.err, "the logs")


# --- public mode (PROBE_PUBLIC=1) ----------------------------------------------------------------


def echo_for_gpt4o(record: dict) -> Fault | None:
    """The careless provider again, for openai/gpt-4o (a model public mode lets anyone ask on the
    server's key): its error repeats the caller's key."""
    if (record["body"] or {}).get("model") != "gpt-4o":
        return None
    message = f"Incorrect API key provided: {record['headers'].get('authorization', '')}"
    return Fault("reply", reply=Reply(401, {"error": {"message": message, "type": "invalid_request_error"}}))


def test_keys_never_leak_in_public_mode(serve, tmp_path, capfd, monkeypatch):
    """Session stores, every refusal (budget, bounds, server paths), the About tab, the pages,
    exports and the logs of a public Space hold neither the server's key nor a visitor's."""
    from gradio_client import handle_file
    from PIL import Image

    from tests.ui.attacker import call, generate, refusal, texts, warning
    from tests.ui.test_public_attacks_more import ask
    from ui import sessions

    monkeypatch.setattr(sessions.SESSIONS, "folder", tmp_path / "sessions")
    shown: list[str] = []
    with FakeOpenAIServer(responder=lambda body: "No", fault=echo_for_gpt4o) as server:
        url = serve(PROBE_PUBLIC="1", OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=SERVER_KEY,
                    PROBE_SESSION_BUDGET="4")  # fmt: skip
        downloads = tmp_path / "downloads"
        visitor = patient_client(url, download_files=str(downloads))
        generate(visitor, 1)
        # Probe on the server's key (echoed back by gpt-4o) and on the visitor's (echoed the same way).
        shown += texts(ask(visitor, ["openai/gpt-4o", "openai/gpt-4o-mini"]))
        shown += texts(ask(visitor, ["openai/gpt-4o"], openai_key=TYPED_KEY))
        # Evaluations: errors on both keys go to the visitor's session store; then the budget refuses.
        for key, seed in ((TYPED_KEY, 1), ("", 2), ("", 3)):
            shown += texts(call(visitor, "/run_eval", models=["openai/gpt-4o"], limit=2, seed=seed, openai_key=key)[:1])
        generate(visitor, 7)  # an item not asked yet: an answer already cached would cost nothing
        budget = warning(ask(visitor, ["openai/gpt-4o-mini"]))
        assert "budget" in budget  # the premise: the budget's own message is among those checked
        # Every bound's refusal, with the keys in play.
        png = tmp_path / "dot.png"
        Image.new("RGB", (8, 8), "white").save(png)
        refusals = [
            budget,
            refusal(visitor, "/run_eval", concurrency=10**9, openai_key=TYPED_KEY),
            refusal(visitor, "/run_eval", params="gap=" + "9" * 20_000, openai_key=TYPED_KEY),
            refusal(visitor, "/run_eval", data=str(Path.home()), openai_key=TYPED_KEY),
            refusal(visitor, "/run_eval", models=["openai/not-listed"]),
            refusal(visitor, "/run_eval", benchmarks=["custom:/etc"]),
            warning(ask(visitor, ["hf/someone/any-model"], openai_key=TYPED_KEY)),
            refusal(visitor, "/use_upload", files=[handle_file(str(png))] * 5, question="How many?"),
            refusal(visitor, "/generate_stimulus", params="images=100000000", task="blind/line-intersections"),
            refusal(visitor, "/human_start", name="Ada", data="/etc"),
        ]
        assert all(message.startswith("⚠") for message in refusals), refusals
        shown += refusals
        # Exports: the scoreboard's CSV and JSON (the visitor's own results among them), the lab's zip.
        board = call(visitor, "/scoreboard", benchmark="blind/touching-circles")
        export = call(visitor, "/export_stimuli", n=4)
        shown += texts(board) + texts(export)
        # The About tab and the pages, as any visitor loads them.
        for route in ("/config", "/"):
            with urllib.request.urlopen(url + route, timeout=60) as response:
                page = response.read().decode("utf-8", errors="replace")
            assert_clean(page, route)
            if route == "/config":
                assert "This playground is public" in page
    authorizations = [r["headers"]["authorization"] for r in server.requests]
    assert f"Bearer {SERVER_KEY}" in authorizations and f"Bearer {TYPED_KEY}" in authorizations  # the premise

    assert any("Incorrect API key provided" in text for text in shown)  # the premise: the echoes were shown
    for text in shown:
        assert_clean(text, "a message shown to the visitor")
    files = [p for p in downloads.rglob("*") if p.is_file()]
    assert any(p.suffix == ".csv" for p in files) and any(p.suffix == ".zip" for p in files)  # the premise
    for path in files:
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    assert_clean(archive.read(name).decode("latin-1"), f"{path.name}:{name}")
        else:
            assert_clean(path.read_bytes().decode("latin-1"), path.name)
    stores = [p for p in (tmp_path / "sessions").rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in stores)  # the premise: the visitor's results went to their session
    with Store(next(p for p in stores if p.suffix == ".sqlite")) as own:
        assert any(r.status.value == "error" for r in own.results())  # ...errors (with their echoes) among them
    for path in [*stores, *(p for p in (tmp_path / "home").rglob("*") if p.is_file())]:
        assert_clean(path.read_bytes().decode("latin-1"), str(path))
    logs = capfd.readouterr()
    assert_clean(logs.out + logs.err, "the logs")


@pytest.mark.slow
def test_the_abuse_bench_prints_and_keeps_no_key(tmp_path):
    """bench/abuse.py plants a server key and types a visitor's: neither shows in what it prints,
    the app's log, or anything the app wrote (stores, session stores, temp files)."""
    from bench.abuse_attacks import SERVER_KEY as BENCH_SERVER_KEY
    from bench.abuse_attacks import VISITOR_KEY as BENCH_VISITOR_KEY

    folder, log = tmp_path / "bench", tmp_path / "app.log"
    finished = subprocess.run(
        [sys.executable, "-m", "bench.abuse", "--only", "budget,texts", "--calls", "3", "--keep-log", str(log),
         "--folder", str(folder)],
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "budgets: 5 fresh sessions" in finished.stdout  # the premise: the attacks ran
    for key in (BENCH_SERVER_KEY, BENCH_VISITOR_KEY):
        assert key not in finished.stdout + finished.stderr, "the bench printed a key"
        assert key not in log.read_text(encoding="utf-8"), "the app logged a key"
        for path in folder.rglob("*"):
            if path.is_file():
                assert key not in path.read_bytes().decode("latin-1"), f"{key} in {path}"
