"""Provider-neutral words for talking to a model: messages, settings, outputs, errors."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from PIL import Image

from models.png import encode_rgb_png

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True, eq=False)
class ImagePart:
    """One image in a message. Backends encode it their own way (data URL, base64 block, PIL).

    `source` is the image or a function that loads it: a prompt can be built, hashed and found
    in a cache without decoding its images when the caller already knows `content_hash`.
    """

    source: Image.Image | Callable[[], Image.Image]
    detail: Literal["auto", "low", "high"] = "auto"
    content_hash: str | None = None

    @cached_property
    def image(self) -> Image.Image:
        return self.source() if callable(self.source) else self.source

    @cached_property
    def rgb(self) -> Image.Image:
        """The image as 8-bit RGB, alpha composited on white (what every provider accepts)."""
        return to_rgb(self.image)

    @cached_property
    def png_bytes(self) -> bytes:
        # Level 1: the bytes cross the network once; a smaller file is not worth the time
        # level 6 costs on 1000-pixel stimuli.
        return encode_rgb_png(self.rgb, level=1)

    @cached_property
    def sha256(self) -> str:
        """Content hash of the normalised pixels.

        DESIGN.md asks for the sha256 of the normalised PNG bytes; we hash the normalised RGB
        pixels (plus the size) instead: the same identity, but independent of the zlib and
        Pillow versions that shape PNG bytes, and it needs no PNG encoding on cache look-ups.
        """
        return self.content_hash or pixel_hash(self.rgb)


def pixel_hash(image: Image.Image) -> str:
    rgb = to_rgb(image)
    digest = hashlib.sha256(f"{rgb.width}x{rgb.height}:".encode())
    digest.update(rgb.tobytes())
    return digest.hexdigest()


Part = TextPart | ImagePart


@dataclass(frozen=True)
class Message:
    role: Role
    parts: tuple[Part, ...]

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.parts if isinstance(p, ImagePart)]


def user(*parts: Part | str) -> Message:
    return Message("user", tuple(TextPart(p) if isinstance(p, str) else p for p in parts))


def assistant(text: str) -> Message:
    return Message("assistant", (TextPart(text),))


def system(text: str) -> Message:
    return Message("system", (TextPart(text),))


@dataclass(frozen=True)
class GenerateConfig:
    """Sampling settings. Greedy (temperature 0) by default: probes want repeatable answers."""

    max_tokens: int = 512
    temperature: float = 0.0
    seed: int | None = None
    timeout: float = 120.0
    max_retries: int = 2

    def cache_fields(self) -> dict[str, Any]:
        """What changes the model's answer (timeouts and retries do not)."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed}


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class Output:
    text: str
    latency: float
    usage: Usage = field(default_factory=Usage)
    raw: dict[str, Any] = field(default_factory=dict)


class BackendError(Exception):
    """A model could not answer. The message says what happened and, where possible, what to do."""


class Unavailable(BackendError):
    """The model cannot run here at all: a missing key, package or weights."""


class ProviderError(BackendError):
    """The provider failed after the SDK's own retries (rate limit, server error, timeout ...)."""


def to_rgb(image: Image.Image) -> Image.Image:
    """8-bit RGB: 16-bit greyscale scaled down, alpha (and palette transparency) composited on
    white, anything else (CMYK, L, 1, P ...) by Pillow's own conversion."""
    if image.mode == "RGB":
        return image
    if image.mode == "I" or image.mode.startswith("I;16"):
        # 16-bit greyscale (PNG and TIFF open as I;16, PGM as I): convert() would clip every
        # value over 255 to white. Scale 0..65535 down to 0..255 instead.
        image = image.convert("I").point(lambda value: value / 256).convert("L")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        canvas = Image.new("RGB", rgba.size, (255, 255, 255))
        canvas.paste(rgba, mask=rgba.getchannel("A"))
        return canvas
    return image.convert("RGB")


def canonical(messages: list[Message] | tuple[Message, ...]) -> list[dict[str, Any]]:
    """Messages as plain data with every image replaced by its content hash (for cache keys)."""
    return [
        {
            "role": m.role,
            "parts": [
                {"text": p.text} if isinstance(p, TextPart) else {"image": p.sha256, "detail": p.detail}
                for p in m.parts
            ],
        }
        for m in messages
    ]
