"""The OpenAI backend over real HTTP, through the real SDK, against a local server."""

import asyncio
import base64
import io

import pytest
from PIL import Image

from models.registry import create, load_endpoints
from models.types import GenerateConfig, ImagePart, ProviderError, Unavailable, assistant, system, user
from tests.conftest import shapes_image
from tests.support.fake_servers import FakeOpenAIServer, openai_images, roles


def ask(backend, messages, config=None):
    return asyncio.run(backend.generate(messages, config or GenerateConfig()))


def test_text_and_image_reach_the_server_and_the_reply_comes_back(monkeypatch):
    with FakeOpenAIServer(responder=lambda body: "Yes, they touch.") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456")
        backend = create("openai/gpt-test")
        image = shapes_image("circle")
        output = ask(backend, [user(ImagePart(image), "Are they touching?")])
    assert output.text == "Yes, they touch."
    assert output.usage.input_tokens is not None and output.usage.output_tokens == 3
    assert output.latency > 0
    body = server.requests[0]["body"]
    assert body["model"] == "gpt-test"
    assert body["temperature"] == 0.0
    assert body["max_completion_tokens"] == 512
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-test-123456"
    [url] = openai_images(body)
    assert url.startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert sent.size == image.size and sent.convert("RGB").tobytes() == image.tobytes()
    content = body["messages"][0]["content"]
    assert [part["type"] for part in content] == ["image_url", "text"]
    assert content[0]["image_url"]["detail"] == "auto"


def test_roles_of_a_few_shot_conversation(monkeypatch):
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k-123456")
        ask(
            create("openai/x"),
            [system("Be brief."), user(ImagePart(shapes_image("a")), "Q1"), assistant("No"), user("Q2")],
        )
    body = server.requests[0]["body"]
    assert roles(body) == ["system", "user", "assistant", "user"]
    assert body["messages"][2] == {"role": "assistant", "content": "No"}


def test_missing_key_is_unavailable_and_sends_nothing(monkeypatch):
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        backend = create("openai/gpt-4o")
        with pytest.raises(Unavailable, match="OPENAI_API_KEY"):
            backend.check()
        with pytest.raises(Unavailable, match="OPENAI_API_KEY"):
            ask(backend, [user("hi")])
    assert server.request_count == 0


def test_server_errors_become_provider_errors_after_bounded_retries(monkeypatch):
    def broken(body):
        raise RuntimeError("boom")

    with FakeOpenAIServer(responder=broken) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k-123456")
        with pytest.raises(ProviderError, match="InternalServerError"):
            ask(create("openai/x"), [user("hi")], GenerateConfig(max_retries=1, timeout=10))
    assert server.request_count == 2  # the first try and one retry


def test_a_planted_key_never_appears_in_the_error(monkeypatch):
    planted = "sk-PLANTED-abcdef123456"

    def leaky(body):
        raise RuntimeError(f"invalid key {planted}")

    with FakeOpenAIServer(responder=leaky) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", planted)
        with pytest.raises(ProviderError) as raised:
            ask(create("openai/x"), [user("hi")], GenerateConfig(max_retries=0))
    assert planted not in str(raised.value)
    assert "[redacted]" in str(raised.value)


def test_named_compatible_endpoint_needs_no_key_and_sends_max_tokens(tmp_path, monkeypatch):
    with FakeOpenAIServer(responder=lambda body: "4") as server:
        models_file = tmp_path / "models.toml"
        models_file.write_text(
            f'[[endpoints]]\nname = "local"\nbase_url = "{server.base_url}"\nmodels = ["llava:7b"]\nconcurrency = 3\n'
        )
        endpoints = load_endpoints(models_file)
        backend = create("local/llava:7b", endpoints)
        backend.check()
        assert backend.default_concurrency == 3
        output = ask(backend, [user("How many?")], GenerateConfig(max_tokens=7))
    assert output.text == "4"
    body = server.requests[0]["body"]
    assert body["model"] == "llava:7b" and body["max_tokens"] == 7 and "max_completion_tokens" not in body


def test_named_endpoint_with_key_variable_names_it_when_missing(tmp_path):
    models_file = tmp_path / "models.toml"
    models_file.write_text(
        '[[endpoints]]\nname = "vllm"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "VLLM_KEY"\nmodels = ["qwen"]\n'
    )
    backend = create("vllm/qwen", load_endpoints(models_file))
    with pytest.raises(Unavailable, match="VLLM_KEY"):
        backend.check()
