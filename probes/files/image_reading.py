"""What a decoding worker does with one image file (`decoding.py` runs it in a worker process
within bounds of time and memory; `images.py` says what the decoded image is).

The file is read once, into memory: the structural bounds are checked on those bytes, and
Pillow parses the same bytes, so a file replaced on disk meanwhile is never half one file and
half another. Every refusal is a `Refused` whose message says why in one line, without the
file's name (the caller adds it).
"""

from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

from PIL import Image, ImageOps

from models.types import to_rgb
from probes.files.file_identity import identity_of
from probes.files.image_structure import BoundPassed, check_structure

_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"


class Refused(Exception):
    """The file is not an image we read; the message says why (without the file's name)."""


@dataclass(frozen=True)
class Read:
    width: int
    height: int
    frames: int
    identity: tuple[int, ...]  # the version of the file read (`file_identity`)
    image: Image.Image | None = None  # decoded (upright, first frame, 8-bit RGB) when asked


def read_image(path: str | Path, *, verify: bool, decode: bool, max_pixels: int, max_bytes: int) -> Read:
    """Check `path` (structure, pixel count; with `verify` every chunk of a PNG and its
    checksum) and, with `decode`, decode it as `images.load_image` documents."""
    data, identity = _contents(Path(path), max_bytes)
    try:
        check_structure(data)
    except BoundPassed as exc:
        raise Refused(str(exc)) from None
    width, height, frames = _header(data, verify, max_pixels)
    image = _decoded(data) if decode else None
    return Read(width, height, frames, identity, image)


def _contents(path: Path, max_bytes: int) -> tuple[bytes, tuple[int, ...]]:
    try:
        # Not blocking on open: a FIFO or a device put where a file was would otherwise hold
        # the worker until its deadline. Only a regular file is read.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(descriptor, "rb") as handle:
            stat = os.fstat(descriptor)
            if not S_ISREG(stat.st_mode):
                raise Refused("not a regular file")
            data = handle.read(max_bytes + 1)
    except (OSError, ValueError) as exc:
        raise Refused(f"cannot be read ({reason(exc)})") from None
    if len(data) > max_bytes:  # grown since its size was checked
        raise Refused(f"over the {max_bytes // 2**20} MB limit")
    if not data:
        raise Refused("the file is empty")
    return data, identity_of(stat)


def _header(data: bytes, verify: bool, max_pixels: int) -> tuple[int, int, int]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:  # parses the header; no pixel is decoded
                width, height = image.size
                if width * height > max_pixels:
                    raise Refused(f"{width} x {height} pixels is over the {max_pixels:,} pixel limit")
                frames = getattr(image, "n_frames", 1)
                # verify() walks the file's structure without decoding pixels (for PNG: every
                # chunk and its checksum), so a truncated PNG is named here, not mid-run. It
                # cannot see a truncated JPEG: that shows when decoded. Without `verify` (a
                # folder of many images, checked as it is read), a PNG that ends in its IEND
                # chunk is not walked here; one cut short is still named now.
                if verify or image.format != "PNG" or not data.endswith(_IEND):
                    image.verify()
    except Refused:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        # Pillow refuses to even describe images far over its own limit: the size is in `exc`.
        raise Refused(f"over the {max_pixels:,} pixel limit ({exc})") from None
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types on hostile bytes
        # (OSError, SyntaxError, struct.error, ValueError for a text chunk that inflates to
        # more than Pillow allows ...): any of them means the file is not an image we can use.
        raise Refused(f"cannot be read as an image ({reason(exc)})") from None
    return width, height, frames


def _decoded(data: bytes) -> Image.Image:
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.seek(0)
            upright = ImageOps.exif_transpose(image)  # a loaded copy, even when nothing turns
            return to_rgb(upright)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - as above: a damaged file fails in many ways
        raise Refused(f"the image data is damaged ({reason(exc)})") from None


def reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
