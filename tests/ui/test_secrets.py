"""A planted server key and a key typed in a session never show up anywhere: not in the store,
the logs, the exports, the error messages or the pages, even when the provider echoes them."""

from __future__ import annotations

import zipfile
from pathlib import Path

from playwright.sync_api import expect

from tests.support.fake_servers import FakeOpenAIServer, Fault, Reply
from tests.ui.test_probe_tab import choose_model

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
            expect(page.locator("#probe-status")).to_contain_text("2 of 2 answered")
            expect(page.locator("#probe-pane-0")).to_contain_text("Incorrect API key provided")
            # The visitor's own key, echoed back the same way.
            page.get_by_text("API keys (used for this session only, never stored)").click()
            page.locator("#probe-openai-key input").fill(TYPED_KEY)
            page.locator("#probe-shots").get_by_text("4", exact=True).click()
            page.click("#probe-ask")
            expect(page.locator("#probe-pane-0")).to_contain_text("Incorrect API key provided")
            expect(page.locator("#probe-status")).to_contain_text("2 of 2 answered")
            for element in ("probe-pane-0", "probe-pane-1", "probe-status"):
                assert_clean(page.locator(f"#{element}").inner_text(), f"#{element}")
            assert_clean(page.locator("#probe-reply-0 textarea").input_value(), "the raw reply")
            # The visitor's own password box holds their key; nothing else on their page may.
            assert_clean(page.content().replace(f'value="{TYPED_KEY}"', ""), "the visitor's page")

            # Exports: the scoreboard's CSV and JSON, the stimulus lab's zip.
            page.get_by_role("tab", name="Scoreboard", exact=True).click()
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
