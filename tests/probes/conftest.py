"""Fixtures shared by the runner's tests."""

from __future__ import annotations

import pytest

from tests.support.fake_servers import FakeOpenAIServer


@pytest.fixture
def server(monkeypatch):
    """An OpenAI-protocol server answering "No." to everything, and the environment pointing at it."""
    with FakeOpenAIServer(responder=lambda body: "No.") as started:
        monkeypatch.setenv("OPENAI_BASE_URL", started.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000")
        yield started
