"""Provider-neutral words for talking to a model: messages, settings, outputs, errors."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from PIL import Image

from models.png import FAST_ENCODING, encode_rgb_pixels, encode_rgb_png, image_size, media_type

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class TextPart:
    text: str


class EncodedImages(Protocol):
    """Where encoded images outlive one request (the runner's image cache beside its store)."""

    def fetch(self, key: str, make: Callable[[], bytes]) -> bytes:
        """The bytes kept under `key`; on a miss `make()` them, keep them and return them."""
        ...

    def holds(self, key: str) -> bool:
        """Whether `fetch(key, ...)` would find the bytes without making them."""
        ...


@dataclass(frozen=True)
class EncodedImage:
    """An image as a provider receives it: PNG or JPEG bytes, their type and pixel size."""

    data: bytes
    media_type: str  # image/png or image/jpeg
    width: int
    height: int

    @classmethod
    def of(cls, data: bytes) -> EncodedImage:
        kind = media_type(data)
        if kind is None:
            raise ValueError("not PNG or JPEG bytes")
        return cls(data, kind, *image_size(data))

    @property
    def base64_length(self) -> int:
        return 4 * ((len(self.data) + 2) // 3)

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")


PNG_FAST = FAST_ENCODING  # the encoding every provider is sent by default: our lean PNG, fast deflate


@dataclass(frozen=True, eq=False)
class ImagePart:
    """One image in a message. Backends encode it their own way (data URL, base64 block, PIL).

    `source` is the image or a function that loads it: a prompt can be built, hashed and found
    in a cache without decoding its images when the caller already knows `content_hash`.
    `encodings` keeps encoded bytes by content hash across requests and runs, so an image known
    by its hash is sent without being drawn or decoded again. `original` gives a file's own
    bytes when they are already what providers take (an upright 8-bit RGB PNG or JPEG of one
    frame), or None: such a file is sent as it is, never decoded and encoded again.

    Once a part is encoded it keeps the bytes and lets its decoded pixels go: a prompt waiting
    for its reply holds encoded images, not arrays.
    """

    source: Image.Image | Callable[[], Image.Image]
    detail: Literal["auto", "low", "high"] = "auto"
    content_hash: str | None = None
    encodings: EncodedImages | None = None
    original: Callable[[], EncodedImage | None] | None = None
    # The same image's RGB pixels without a picture (an array of height x width x 3 bytes, C
    # order), when its source draws them: hashed and encoded from them, no Pillow round trip.
    pixels: Callable[[], Any] | None = None

    def __post_init__(self) -> None:
        # Per part (functools.cached_property locks per class in Python 3.11, which made every
        # image in a run wait for every other's decoding).
        object.__setattr__(self, "_lock", threading.RLock())
        object.__setattr__(self, "_memo", {})

    def _memoised(self, name: str, make: Callable[[], Any]) -> Any:
        with self._lock:
            if name not in self._memo:
                self._memo[name] = make()
            return self._memo[name]

    @property
    def image(self) -> Image.Image:
        if not callable(self.source):
            return self.source
        return self._memoised("image", self.source)

    @property
    def rgb(self) -> Image.Image:
        """The image as 8-bit RGB, alpha composited on white (what every provider accepts)."""
        return self._memoised("rgb", lambda: to_rgb(self.image))

    @property
    def rgb_bytes(self) -> bytes | memoryview:
        """The RGB pixels, row after row: hashed and encoded from one copy."""
        return self._rows()[1]

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the RGB pixels."""
        return self._rows()[0]

    def _rows(self) -> tuple[tuple[int, int], bytes | memoryview]:
        def make() -> tuple[tuple[int, int], bytes | memoryview]:
            if self.pixels is not None and "rgb" not in self._memo:
                return drawn_rows(self.pixels())
            return self.rgb.size, self.rgb.tobytes()

        return self._memoised("rows", make)

    @property
    def sha256(self) -> str:
        """Content hash of what is sent: a file that goes as it is, by its own bytes (never
        decoded for it); any other image by its normalised PNG bytes (PNG_FAST), as DESIGN.md
        asks, made once here and sent as they are (`png`).

        The pixels themselves are not hashed: on our 384-1155 px stimuli a sha256 of the pixels
        cost more than deflating them (`python -m bench.wire`: 0.40 s against 0.25 s for a set's
        345 images), and the PNG must be made to be sent anyway, so hashing it adds almost
        nothing. The price: the bytes, so the hash, depend on the deflate library's version. A
        new version gives a new hash only to an image the store has not met: the store keeps
        each image reference's hash (and so every cached answer) as it learned it.
        """
        if self.content_hash:
            return self.content_hash

        def digest() -> str:
            sent = self.as_file()
            if sent is not None:
                return file_digest(sent.data)
            return content_digest(self.own_png())

        return self._memoised("sha256", digest)

    def own_png(self) -> bytes:
        """PNG_FAST made from this part's pixels, once: hashed (`sha256`), then sent (`png`)."""

        def make() -> bytes:
            width, height = self.size
            return encode_rgb_pixels(self.rgb_bytes, width, height)

        return self._memoised("own png", make)

    def encoded_as(self, encoding: str, make: Callable[[ImagePart], bytes]) -> EncodedImage:
        """The image in `encoding` (a name that fixes the bytes, e.g. PNG_FAST), made by
        `make(self)` only when neither this part nor its `encodings` holds it yet."""
        with self._lock:  # one encoding per part at a time: concurrent senders share the work
            found = self._memo.get(("encoded", encoding))
            if found is None:
                build = lambda: make(self)  # noqa: E731
                data = self.encodings.fetch(f"{self.sha256}.{encoding}", build) if self.encodings else build()
                found = self._memo[("encoded", encoding)] = EncodedImage.of(data)
                self.let_go()  # the bytes are kept; the pixels can go
            return found

    def let_go(self) -> None:
        """Forget the decoded pixels (they are loaded again if ever needed): a part that will be
        sent as bytes need not hold an image while it waits."""
        with self._lock:
            for name in ("image", "rgb", "rows", "own png"):
                self._memo.pop(name, None)

    def with_detail(self, detail: Literal["auto", "low", "high"]) -> ImagePart:
        """The same image asked at another `detail`: it shares this part's pixels, hash and
        encodings (a benchmark that changes the detail draws and encodes nothing twice)."""
        twin = dataclasses.replace(self, detail=detail)
        object.__setattr__(twin, "_lock", self._lock)
        object.__setattr__(twin, "_memo", self._memo)
        return twin

    def at_hand(self, encoding: str) -> bool:
        """Whether the bytes in `encoding` come without drawing, decoding or encoding anything
        (kept by this part or by its image cache), so a sender need not go to a thread for them."""
        if ("encoded", encoding) in self._memo:
            return True
        if self.original is not None and "original" not in self._memo:
            return False  # a file that may go as it is: reading it is for a thread
        if self.original is not None and self._memo["original"] is not None:
            return True
        return bool(self.content_hash and self.encodings and self.encodings.holds(f"{self.content_hash}.{encoding}"))

    def as_file(self) -> EncodedImage | None:
        """The file's own bytes when a provider may take them as they are (see `original`)."""
        if self.original is None:
            return None
        return self._memoised("original", self.original)

    def png(self) -> EncodedImage:
        return self.encoded_as(PNG_FAST, encode_png)

    @property
    def png_bytes(self) -> bytes:
        # The fast deflate (models/png.py): the bytes cross the network once; a smaller file
        # is not worth the time zlib's level 6 costs on 1000-pixel stimuli.
        return self.png().data


def encode_png(part: ImagePart) -> bytes:
    """PNG_FAST: the part's RGB pixels, fast deflate (made once, for its hash or for sending)."""
    return part.own_png()


def pixel_hash(image: Image.Image) -> str:
    """The content hash of a picture (see ImagePart.sha256)."""
    return content_digest(encode_rgb_png(to_rgb(image)))


def content_digest(png: bytes) -> str:
    """The content hash of an image drawn or decoded here, from its PNG_FAST bytes (distinct
    from any file digest)."""
    digest = hashlib.sha256(b"png:")
    digest.update(png)
    return digest.hexdigest()


def file_digest(data: bytes) -> str:
    """The content hash of a file sent as its own bytes (distinct from any content digest)."""
    digest = hashlib.sha256(b"file:")
    digest.update(data)
    return digest.hexdigest()


def drawn_rows(array: Any) -> tuple[tuple[int, int], memoryview]:
    """(width, height) and the rows of drawn pixels, without a copy."""
    view = memoryview(array)
    if view.ndim != 3 or view.shape[2] != 3 or view.format != "B" or not view.c_contiguous:
        raise ValueError(f"drawn pixels must be height x width x 3 bytes in C order, got {view.format} {view.shape}")
    height, width = view.shape[:2]
    return (width, height), view.cast("B")


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
    # Seconds one attempt may take in all (connecting, the headers and the whole reply), not
    # per read: a server sending its reply a byte at a time is cut off at this deadline too.
    timeout: float = 120.0
    max_retries: int = 2  # attempts after the first, for the faults the SDK retries
    # Ask for the reply's token probabilities (OpenAI's `logprobs`), where the backend offers
    # them. Not part of the cache key: the reply is the same; a run decides whether a cached
    # reply without them is asked again (probes/running/runner.py).
    probabilities: bool = False

    @property
    def deadline(self) -> float:
        """Seconds one request may take, retries and the waits between them included: each
        attempt's `timeout`, once per attempt (6 minutes by default). Past it the request ends."""
        return self.timeout * (self.max_retries + 1)

    def cache_fields(self) -> dict[str, Any]:
        """What changes the model's answer (timeouts and retries do not)."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature, "seed": self.seed}


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


TOP_ALTERNATIVES = 10  # alternatives asked (and kept) per token: OpenAI allows up to 20, vLLM as configured


@dataclass(frozen=True)
class TokenChoice:
    """One generated token with the alternatives the server gave at its place: `offset` is
    where it starts in the reply's text; log probabilities, natural log."""

    offset: int
    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Output:
    text: str
    latency: float
    usage: Usage = field(default_factory=Usage)
    raw: dict[str, Any] = field(default_factory=dict)
    # Probabilities, where the backend gives them (never made up): the reply's tokens with
    # their alternatives (OpenAI-compatible servers), or the probability of each candidate
    # continuation the caller named (`Backend.score`, local models: disjoint events, so they
    # add up). `no_probabilities` says why there are none when they were asked for.
    tokens: tuple[TokenChoice, ...] | None = None
    scores: dict[str, float] | None = None
    no_probabilities: str | None = None

    def has_probabilities(self) -> bool:
        """Whether this reply carries probabilities, or a reason it never will (a server that
        refuses them): either way, asking again for them is pointless."""
        return self.tokens is not None or self.scores is not None or self.no_probabilities is not None

    def probability_fields(self) -> dict[str, Any]:
        """The probabilities as plain data (kept beside the reply in a cache)."""
        data: dict[str, Any] = {}
        if self.tokens is not None:
            data["tokens"] = [[t.offset, t.token, t.logprob, [list(a) for a in t.top]] for t in self.tokens]
        if self.scores is not None:
            data["scores"] = dict(self.scores)
        if self.no_probabilities is not None:
            data["none"] = self.no_probabilities
        return data

    def with_probability_fields(self, data: Any) -> Output:
        """This output with the probabilities `probability_fields` wrote (odd data is dropped)."""
        if not isinstance(data, dict):
            return self
        tokens = scores = None
        try:
            if isinstance(data.get("tokens"), list):
                tokens = tuple(
                    TokenChoice(int(o), str(t), float(lp), tuple((str(a), float(b)) for a, b in top))
                    for o, t, lp, top in data["tokens"]
                )
            if isinstance(data.get("scores"), dict):
                scores = {str(k): float(v) for k, v in data["scores"].items()}
        except (TypeError, ValueError):
            tokens = scores = None
        none = data.get("none") if isinstance(data.get("none"), str) else None
        return dataclasses.replace(self, tokens=tokens, scores=scores, no_probabilities=none)


class BackendError(Exception):
    """A model could not answer. The message says what happened and, where possible, what to do."""


class Unavailable(BackendError):
    """The model cannot run here at all: a missing key, package or weights."""


class ProviderError(BackendError):
    """The provider failed after the SDK's own retries (rate limit, server error, timeout ...)."""


def fit_within(image: Image.Image, max_side: int, reducing_gap: float | None = None) -> Image.Image:
    """The image shrunk (Lanczos) so that neither side exceeds `max_side`, or itself if it fits."""
    if max(image.size) <= max_side:
        return image
    scale = max_side / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS, reducing_gap=reducing_gap)


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
