"""The Anthropic backend over real HTTP, through the real SDK, against a local server."""

import asyncio
import base64
import io

import numpy as np
import pytest
from PIL import Image

from models.anthropic_backend import MAX_BASE64_BYTES, encode_within_limits
from models.registry import create
from models.types import GenerateConfig, ImagePart, Unavailable, assistant, system, user
from tests.conftest import shapes_image
from tests.support.fake_servers import FakeAnthropicServer, anthropic_images, roles


def test_messages_system_and_images_reach_the_server(monkeypatch):
    with FakeAnthropicServer(responder=lambda body: "No") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-123456")
        backend = create("anthropic/claude-test")
        image = shapes_image("square")
        output = asyncio.run(
            backend.generate(
                [
                    system("Answer briefly."),
                    user(ImagePart(image), "Q1"),
                    assistant("Yes"),
                    user(ImagePart(image), "Q2"),
                ],
                GenerateConfig(max_tokens=33),
            )
        )
    assert output.text == "No"
    assert output.usage.output_tokens == 1
    body = server.requests[0]["body"]
    assert body["system"] == "Answer briefly."
    assert body["max_tokens"] == 33
    assert "temperature" not in body  # API version 2026-10-21 rejects sampling parameters
    assert roles(body) == ["system", "user", "assistant", "user"]
    sources = anthropic_images(body)
    assert len(sources) == 2 and sources[0]["media_type"] == "image/png"
    decoded = Image.open(io.BytesIO(base64.b64decode(sources[0]["data"])))
    assert decoded.convert("RGB").tobytes() == image.tobytes()


def test_missing_key_names_the_variable():
    with pytest.raises(Unavailable, match="ANTHROPIC_API_KEY"):
        create("anthropic/claude-sonnet-4-5").check()


def test_an_image_wider_than_8000_px_is_shrunk_to_the_limit():
    media_type, data = encode_within_limits(ImagePart(Image.new("RGB", (9000, 300), "white")))
    decoded = Image.open(io.BytesIO(base64.b64decode(data)))
    assert max(decoded.size) == 8000
    assert decoded.size[1] == round(300 * 8000 / 9000)
    assert media_type == "image/png"


def test_a_noisy_image_over_5_mb_of_base64_is_reencoded_under_it():
    noise = np.random.default_rng(0).integers(0, 256, size=(2000, 2000, 3), dtype=np.uint8)
    part = ImagePart(Image.fromarray(noise))
    assert len(base64.b64encode(part.png_bytes)) > MAX_BASE64_BYTES  # the premise
    media_type, data = encode_within_limits(part)
    assert len(data) <= MAX_BASE64_BYTES
    assert media_type == "image/jpeg"
    assert Image.open(io.BytesIO(base64.b64decode(data))).size[0] >= 1000


def test_more_than_20_images_are_kept_under_2000_px(monkeypatch):
    with FakeAnthropicServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k-123456")
        parts = [ImagePart(Image.new("RGB", (2400, 100), "white")) for _ in range(21)]
        asyncio.run(create("anthropic/x").generate([user(*parts, "Which?")], GenerateConfig()))
    sizes = [
        Image.open(io.BytesIO(base64.b64decode(s["data"]))).size for s in anthropic_images(server.requests[0]["body"])
    ]
    assert len(sizes) == 21 and all(max(size) <= 2000 for size in sizes)
