"""The playground, as an anonymous visitor of a public Space calls it (gradio_client), with the
Space's OpenAI and Anthropic servers lying (tests/support/hostile_servers.py): one lying model
fails only its own cell while the others in the same condition answer, and the Space's keys,
echoed back in every form, reach neither the visitor nor any store."""

from __future__ import annotations

import re
import time
from pathlib import Path

from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer
from tests.support.hostile_servers import ANTHROPIC_KEY, OPENAI_KEY, Attacks, leaks
from tests.ui.conftest import patient_client
from ui.sessions import SESSION_DIR

MODELS = [
    "openai/number",
    "openai/bomb",
    "openai/fine",
    "anthropic/parts",
    "openai/echo",
    "anthropic/echo",
    "anthropic/echo-error",
    "anthropic/huge-chunked",
]


def cells(grid: str) -> dict[str, str]:
    """Each model's row of the probe grid, as text."""
    rows = re.findall(r"<tr>(.*?)</tr>", grid, flags=re.S)
    found = {}
    for row in rows:
        text = re.sub(r"<[^>]+>", " ", row)
        for model in MODELS:
            if model in text and model not in found:
                found[model] = " ".join(text.split())
    return found


def test_a_lying_model_fails_only_its_own_cell_and_no_key_reaches_the_visitor(serve, tmp_path):
    started = time.time()
    with (
        FakeOpenAIServer(responder=lambda body: "Yes", fault=Attacks("openai")) as openai_server,
        FakeAnthropicServer(responder=lambda body: "Yes", fault=Attacks("anthropic")) as anthropic_server,
    ):
        url = serve(
            PROBE_PUBLIC="1",
            OPENAI_BASE_URL=openai_server.base_url,
            OPENAI_API_KEY=OPENAI_KEY,
            ANTHROPIC_BASE_URL=anthropic_server.base_url,
            ANTHROPIC_API_KEY=ANTHROPIC_KEY,
            PROBE_ALLOWED_MODELS=",".join(MODELS),
        )
        client = patient_client(url)
        client.predict("blind/touching-circles", "", 1, api_name="/generate_stimulus")
        shown = {}
        for four in (MODELS[:4], MODELS[4:]):
            status, grid, prompts, _ = client.predict(*four, ["as asked"], "", "", api_name="/probe")
            assert re.search(r"\b\d of 4 answered\b", status) and "so far" not in status, status  # all four in
            shown.update(cells(grid))
            for text in (status, grid, prompts):
                assert leaks(text, OPENAI_KEY) == [] and leaks(text, ANTHROPIC_KEY) == []

    print("SHOWN", shown)
    print("FILES", [str(p) for p in Path(tmp_path / "home").rglob("*") if p.is_file()])
    # The lying models' cells say what happened; the others in the same condition answered.
    assert "not text" in shown["openai/number"]
    assert "passed 4 MB" in shown["openai/bomb"] and "passed 4 MB" in shown["anthropic/huge-chunked"]
    assert "Yes" in shown["openai/fine"] and "no reply" not in shown["openai/fine"]
    assert "Yes" in shown["anthropic/parts"] and "no reply" not in shown["anthropic/parts"]
    assert "[redacted]" in shown["openai/echo"] and "[redacted]" in shown["anthropic/echo"]
    assert "Incorrect API key provided" in shown["anthropic/echo-error"]

    # Nothing the app keeps holds either key: every file under its home (the shared store of
    # answers bought with the Space's keys, logs) and the visitor's session store.
    kept = [path for path in Path(tmp_path / "home").rglob("*") if path.is_file()]
    kept += [path for path in SESSION_DIR.rglob("*") if path.is_file() and path.stat().st_mtime >= started - 1]
    assert any(path.name.endswith(".sqlite") for path in kept), "the probe's results were kept somewhere"
    for path in kept:
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
        except FileNotFoundError:  # another test's session store, swept meanwhile
            continue
        assert leaks(text, OPENAI_KEY) == [] and leaks(text, ANTHROPIC_KEY) == [], path
