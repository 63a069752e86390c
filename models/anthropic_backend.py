"""Anthropic's Messages API through the official `anthropic` SDK."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import os
import time
from collections.abc import Sequence
from typing import Any

from PIL import Image

from models.base import Backend, LoopLocal
from models.replies import (
    ReplyTooLarge,
    bounded_output,
    count,
    error_in,
    failure,
    field,
    json_object,
    text_of,
    unreadable,
)
from models.types import (
    PNG_FAST,
    EncodedImage,
    GenerateConfig,
    ImagePart,
    Message,
    Output,
    ProviderError,
    TextPart,
    Unavailable,
    Usage,
    fit_within,
)

ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
MAX_BASE64_BYTES = 5 * 1024 * 1024  # the API's limit per image, counted on the base64 text
MAX_SIDE = 8000  # the API's limit per image side
MAX_SIDE_MANY_IMAGES = 2000  # the API's limit per side when a request holds more than 20 images


class AnthropicBackend(Backend):
    image_encoding = PNG_FAST  # what images are sent as (unless a file goes as it is)
    offers_probabilities = False  # the Messages API gives no token probabilities: none are estimated

    def probabilities_note(self) -> str:
        return f"{self.model_id}: Anthropic's API offers no token probabilities, so its answers have none"

    def __init__(
        self,
        model_id: str,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        default_concurrency: int = 4,
    ):
        self.model_id = model_id
        self.model = model
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_DEFAULT_URL
        self.endpoint = self.base_url.rstrip("/")
        self._api_key = api_key
        self.default_concurrency = default_concurrency
        self._clients: LoopLocal[Any] = LoopLocal(self._new_client)

    def _key(self) -> str | None:
        return self._api_key or os.environ.get("ANTHROPIC_API_KEY")

    def check(self) -> None:
        if importlib.util.find_spec("anthropic") is None:
            raise Unavailable("the anthropic package is not installed: pip install -r requirements.txt")
        if not self._key():
            raise Unavailable("set ANTHROPIC_API_KEY (or paste a key for this session)")

    def _new_client(self):
        import anthropic

        from models.bounded_http import BoundedClient

        # Every reply's bytes and every attempt's time bounded (models/bounded_http.py); a reply
        # past the byte bound raises an AnthropicError, which the SDK does not ask again for.
        too_large = type("AnthropicReplyTooLarge", (ReplyTooLarge, anthropic.AnthropicError), {})
        http = BoundedClient(
            timeout=anthropic.DEFAULT_TIMEOUT, limits=anthropic.DEFAULT_CONNECTION_LIMITS, too_large=too_large
        )
        return anthropic.AsyncAnthropic(api_key=self._key(), base_url=self.base_url, http_client=http)

    def hold(self) -> None:
        self._clients.hold()

    async def release(self) -> None:
        await self._clients.release()

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Output:
        self.check()
        client = self._clients.get()
        image_count = sum(len(m.images) for m in messages)
        max_side = MAX_SIDE_MANY_IMAGES if image_count > 20 else MAX_SIDE
        system_text = "\n\n".join(m.text for m in messages if m.role == "system")
        # Encoding images is CPU work: off the event loop, so other requests keep flowing.
        encoded = await asyncio.to_thread(lambda: [_to_anthropic(m, max_side) for m in messages if m.role != "system"])
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": config.max_tokens,
            "messages": encoded,
        }
        # No temperature: API version 2026-10-21 (sent by SDK 2.x) rejects sampling parameters,
        # so Claude runs at its own defaults whatever GenerateConfig says.
        if system_text:
            request["system"] = system_text
        secrets = [self._key() or ""]
        started = time.perf_counter()
        try:
            # `post` with `cast_to=object` (as `messages.create` posts, retried and timed out
            # alike): the reply comes back as plain JSON and is read field by field (`_read`),
            # whatever shape it has, not trusted to be a Message.
            async with asyncio.timeout(config.deadline):
                data = await client.post(
                    "/v1/messages",
                    body=request,
                    cast_to=object,
                    options={"timeout": config.timeout, "max_retries": config.max_retries},
                )
        except Exception as exc:  # noqa: BLE001 - every failure is this item's error, redacted
            raise failure(self.model_id, exc, config, secrets) from None
        latency = time.perf_counter() - started
        try:
            text, usage, raw = _read(data)
        except ProviderError as exc:
            raise unreadable(self.model_id, exc, secrets) from None
        return await bounded_output(text, latency, usage, raw, secrets)


def _read(data: Any) -> tuple[str, Usage, dict[str, Any]]:
    """A message's text (its text blocks; thinking, tool use and other blocks are not the reply),
    token counts, id and stop reason, from whatever JSON the server sent."""
    reply = json_object(data)
    if reply.get("type") == "error" or ("content" not in reply and "error" in reply):
        raise ProviderError(error_in(reply) or "the server answered with an error")
    stop = field(reply.get("stop_reason"))
    try:
        text = text_of(reply.get("content"))
    except ProviderError as exc:
        if stop != "refusal":
            raise ProviderError(f"{exc} (stop_reason {stop})") from None
        text = ""  # a refusal without words is still the model's answer
    if text is None and stop != "refusal":
        raise ProviderError(f"the reply had no content (stop_reason {stop})")
    if not text and stop != "refusal":
        raise ProviderError(f"the reply had no text (stop_reason {stop})")
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    return (
        text or "",
        Usage(count(usage.get("input_tokens")), count(usage.get("output_tokens"))),
        {"id": field(reply.get("id")), "stop_reason": stop},
    )


def _to_anthropic(message: Message, max_side: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            media_type, data = encode_within_limits(part, max_side)
            content.append({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
    return {"role": message.role, "content": content}


def encode_within_limits(part: ImagePart, max_side: int = MAX_SIDE) -> tuple[str, str]:
    """The file's own bytes or our PNG when they fit; otherwise shrink to the side limit, then
    JPEG, then smaller JPEGs. Whatever is encoded is kept in the image cache by content hash
    and limit, so a later request for the same image encodes nothing."""
    for candidate in (part.as_file(), part.png()):
        if candidate is not None and _fits(candidate, max_side):
            return candidate.media_type, candidate.base64()
    shrunk = part.encoded_as(f"anthropic-{max_side}", lambda p: _shrink(p.rgb, max_side))
    return shrunk.media_type, shrunk.base64()


def _fits(image: EncodedImage, max_side: int) -> bool:
    return max(image.width, image.height) <= max_side and image.base64_length <= MAX_BASE64_BYTES


def _shrink(image: Image.Image, max_side: int) -> bytes:
    image = fit_within(image, max_side)
    data = _encode(image, "PNG")
    if 4 * ((len(data) + 2) // 3) <= MAX_BASE64_BYTES:
        return data
    while True:
        data = _encode(image, "JPEG")
        if 4 * ((len(data) + 2) // 3) <= MAX_BASE64_BYTES:
            return data
        image = image.resize((max(1, image.width * 3 // 4), max(1, image.height * 3 // 4)), Image.Resampling.LANCZOS)


def _encode(image: Image.Image, fmt: str) -> bytes:
    buffer = io.BytesIO()
    if fmt == "JPEG":
        image.save(buffer, format="JPEG", quality=90)
    else:
        image.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()
