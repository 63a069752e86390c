"""A server of one's own, named on the page (issue 23): locally any OpenAI-compatible server answers
as `own/<model>` with the visitor's key for that request only; a public Space refuses to call a
server a visitor names."""

from __future__ import annotations

from gradio_client import Client

from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import patient_client


def probe(client: Client, model: str, address: str, key: str) -> list:
    return client.predict(model, None, None, None, ["as asked"], "", "", address, key, api_name="/probe")


def test_a_visitors_own_server_answers_locally_with_their_key(serve):
    with FakeOpenAIServer(responder=lambda body: "No") as mine:
        client = patient_client(serve())
        status, grid, *_ = probe(client, "own/llava-test", mine.base_url, "sk-my-own")
        assert "1 of" in status and "own/llava-test" in grid
        assert 'class="cell right"' in grid or 'class="cell wrong"' in grid
        (request,) = mine.requests
        assert request["body"]["model"] == "llava-test" and request["headers"]["authorization"] == "Bearer sk-my-own"
        refused = probe(client, "own/llava-test", "ftp://example.invalid", "")
        assert "address" in refused[1] and len(mine.requests) == 1


def test_a_public_space_calls_no_server_a_visitor_names(serve):
    with FakeOpenAIServer(responder=lambda body: "No") as mine:
        client = patient_client(serve(PROBE_PUBLIC="1"))
        status, grid, *_ = probe(client, "own/llava-test", mine.base_url, "sk-my-own")
        assert "calls no server a visitor names" in grid and not mine.requests
