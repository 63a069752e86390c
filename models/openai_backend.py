"""OpenAI's API and every OpenAI-compatible server (vLLM, Ollama, LM Studio, TGI, Gemini's
compatible endpoint) through the official `openai` SDK and a `base_url`."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

from models.base import Backend, LoopLocal
from models.logprobs import read_tokens, realigned
from models.replies import bounded_output, count, error_in, failure, field, json_object, text_of, unreadable
from models.types import (
    PNG_FAST,
    TOP_ALTERNATIVES,
    EncodedImage,
    GenerateConfig,
    ImagePart,
    Message,
    Output,
    ProviderError,
    TextPart,
    Unavailable,
    Usage,
)

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
MAX_FILE_BYTES = 20 * 1024 * 1024  # a file sent as it is stays under OpenAI's limit per image
BEARER = {"bearer_auth": True}  # how `chat.completions.create` authenticates: the API key as a bearer token
log = logging.getLogger(__name__)


class OpenAIBackend(Backend):
    image_encoding = PNG_FAST  # what images are sent as (unless a file goes as it is)
    offers_probabilities = True  # `logprobs` / `top_logprobs`, where the model or server serves them

    def __init__(
        self,
        model_id: str,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        api_key: str | None = None,
        official_api: bool = True,
        default_concurrency: int = 8,
    ):
        """`official_api` False means a compatible server: it gets `max_tokens` (which vLLM,
        Ollama and TGI all read) instead of OpenAI's newer `max_completion_tokens`, and a
        placeholder key when it needs none (the SDK refuses to start without one)."""
        self.model_id = model_id
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL
        self.endpoint = self.base_url.rstrip("/")
        self.api_key_env = api_key_env
        self._api_key = api_key
        self.official_api = official_api
        self.default_concurrency = default_concurrency
        self._clients: LoopLocal[Any] = LoopLocal(self._new_client)
        # Why this model or server gives no logprobs, once it has refused them: from then on
        # they are not asked for (said once, in the log and by `probabilities_note`).
        self._logprobs_refused: str | None = None

    def probabilities_note(self) -> str:
        if self._logprobs_refused:
            return f"{self.model_id}: {self._logprobs_refused}; its answers have no probabilities"
        return ""

    def _key(self) -> str | None:
        if self._api_key:
            return self._api_key
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def check(self) -> None:
        if importlib.util.find_spec("openai") is None:
            raise Unavailable("the openai package is not installed: pip install -r requirements.txt")
        if self.api_key_env and not self._key():
            raise Unavailable(f"set {self.api_key_env} (or paste a key for this session)")

    def _new_client(self):
        import openai

        from models.bounded_http import BoundedClient

        # The SDK's own connection settings, through a client that bounds every reply's bytes
        # and every attempt's time (models/bounded_http.py).
        http = BoundedClient(timeout=openai.DEFAULT_TIMEOUT, limits=openai.DEFAULT_CONNECTION_LIMITS)
        return openai.AsyncOpenAI(api_key=self._key() or "not-needed", base_url=self.base_url, http_client=http)

    def hold(self) -> None:
        self._clients.hold()

    async def release(self) -> None:
        await self._clients.release()

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Output:
        self.check()
        client = self._clients.get()
        # Drawing, decoding or encoding images is work for a thread, off the event loop, so other
        # requests keep flowing; bytes already at hand (encoded earlier, in the image cache) are
        # read here, as a plain loop reading files would.
        if all(part.at_hand(PNG_FAST) for message in messages for part in message.images):
            encoded = [_to_openai(m) for m in messages]
        else:
            encoded = await asyncio.to_thread(lambda: [_to_openai(m) for m in messages])
        request: dict[str, Any] = {
            "model": self.model,
            "messages": encoded,
            "temperature": config.temperature,
        }
        request["max_completion_tokens" if self.official_api else "max_tokens"] = config.max_tokens
        if config.seed is not None:
            request["seed"] = config.seed
        secrets = [self._key() or ""]
        asked = config.probabilities and self._logprobs_refused is None
        if asked:
            request.update(logprobs=True, top_logprobs=TOP_ALTERNATIVES)
        started = time.perf_counter()
        try:
            data = await self._post(client, request, config)
        except Exception as exc:  # noqa: BLE001 - every failure is this item's error, redacted
            if not (asked and _refuses_logprobs(exc)):
                raise failure(self.model_id, exc, config, secrets) from None
            # A model or server that does not serve logprobs answers without them: said once,
            # never the item's error.
            self._refused(f"the server refused token probabilities ({_status(exc)})")
            request.pop("logprobs"), request.pop("top_logprobs")
            asked = False
            try:
                data = await self._post(client, request, config)
            except Exception as again:  # noqa: BLE001
                raise failure(self.model_id, again, config, secrets) from None
        latency = time.perf_counter() - started
        try:
            text, usage, raw = _read(data)
        except ProviderError as exc:
            raise unreadable(self.model_id, exc, secrets) from None
        tokens, why = read_tokens(_first_choice(data), text) if asked else (None, None)
        if config.probabilities and why is None and tokens is None:
            why = self._logprobs_refused
        output = await bounded_output(text, latency, usage, raw, secrets)
        if tokens is not None:
            tokens = realigned(tokens, text, output.text)
        return dataclasses.replace(output, tokens=tokens, no_probabilities=why)

    async def _post(self, client: Any, request: dict[str, Any], config: GenerateConfig) -> Any:
        # The SDK's documented `post`, not `chat.completions.create`: `create` walks the
        # whole request against its TypedDicts first (renaming aliased keys, which a chat
        # request has none of), about 0.45 ms a request: 0.18 s of the 1.4 s of CPU a plain
        # loop spends on 400 requests to a server answering in 10 ms. The reply is retried
        # and timed out by the SDK exactly as `create` does, and comes back as plain JSON
        # (`cast_to=object`): a server's reply is read field by field (`_read`), whatever
        # shape it has, not trusted to be a ChatCompletion.
        async with asyncio.timeout(config.deadline):
            return await client.post(
                "/chat/completions",
                body=request,
                cast_to=object,
                options={"timeout": config.timeout, "max_retries": config.max_retries, "security": BEARER},
            )

    def _refused(self, why: str) -> None:
        if self._logprobs_refused is None:
            log.warning("%s: %s; answers come without probabilities", self.model_id, why)
        self._logprobs_refused = why


def _refuses_logprobs(exc: Exception) -> bool:
    """A 400 (or 422, as some servers answer) whose message names logprobs: the request is fine
    without them."""
    status = getattr(exc, "status_code", None)
    return status in (400, 422) and "logprob" in str(exc).lower()


def _status(exc: Exception) -> str:
    return f"status {getattr(exc, 'status_code', '?')}"


def _first_choice(data: Any) -> dict[str, Any]:
    reply = json_object(data)
    choices = reply.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    return first if isinstance(first, dict) else {}


def _read(data: Any) -> tuple[str, Usage, dict[str, Any]]:
    """A chat completion's text, token counts and id, from whatever JSON the server sent."""
    reply = json_object(data)
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ProviderError(error_in(reply) or "the server sent a reply without choices")
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ProviderError("the reply's first choice held no message")
    text = text_of(message.get("content"))
    if text is None:
        # A model's own refusal arrives in `refusal`; it is the model speaking, so it is the
        # reply (graded as refused). No content at all is a provider fault.
        text = text_of(message.get("refusal"), "refusal")
        if text is None:
            raise ProviderError("the reply had no text content")
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    return (
        text,
        Usage(count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))),
        {"id": field(reply.get("id")), "finish_reason": field(choice.get("finish_reason"))},
    )


def _to_openai(message: Message) -> dict[str, Any]:
    if message.role != "user":
        return {"role": message.role, "content": message.text}
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            image = _sendable(part)
            url = f"data:{image.media_type};base64,{image.base64()}"
            content.append({"type": "image_url", "image_url": {"url": url, "detail": part.detail}})
    return {"role": "user", "content": content}


def _sendable(part: ImagePart) -> EncodedImage:
    """A file's own bytes when they are fit to send (PNG or JPEG, under the size limit), else
    our PNG (kept in the image cache by content hash, so it is encoded once per store)."""
    file = part.as_file()
    if file is not None and len(file.data) <= MAX_FILE_BYTES:
        return file
    return part.png()
