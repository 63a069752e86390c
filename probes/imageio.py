"""Image files from users: checked (type, size, pixel count) before anything decodes them."""

from __future__ import annotations

import warnings
from pathlib import Path

from PIL import Image, ImageOps

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_PIXELS = 40_000_000  # about 6300 x 6300; more is a decompression bomb, not a stimulus

_SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"\xff\xd8\xff": "JPEG",
    b"GIF87a": "GIF",
    b"GIF89a": "GIF",
    b"BM": "BMP",
    b"II*\x00": "TIFF",
    b"MM\x00*": "TIFF",
}
_NOT_IMAGES = {
    b"%PDF": "PDF",
    b"<svg": "SVG",
    b"<?xml": "XML/SVG",
    b"PK\x03\x04": "ZIP",
    b"<!DOC": "HTML",
    b"<html": "HTML",
}


class ImageRejected(ValueError):
    """The file is not an image we accept; the message says why."""


def sniff(head: bytes) -> str | None:
    """The image format named by the file's first bytes, or None."""
    for signature, name in _SIGNATURES.items():
        if head.startswith(signature):
            return name
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return None


def check_image_file(path: Path) -> tuple[int, int]:
    """Raise ImageRejected unless `path` is a readable image of sane size; return its size."""
    if not path.is_file():
        raise ImageRejected(f"{path.name}: file not found")
    size = path.stat().st_size
    if size == 0:
        raise ImageRejected(f"{path.name}: the file is empty")
    if size > MAX_FILE_BYTES:
        raise ImageRejected(f"{path.name}: {size / 2**20:.0f} MB is over the {MAX_FILE_BYTES // 2**20} MB limit")
    with path.open("rb") as handle:
        head = handle.read(16)
    if sniff(head) is None:
        stripped = head.lstrip()
        kind = next((name for sig, name in _NOT_IMAGES.items() if stripped.startswith(sig)), None)
        what = f"looks like {kind}" if kind else "unknown content"
        raise ImageRejected(f"{path.name}: not a PNG, JPEG, GIF, WEBP, BMP or TIFF image ({what})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:  # reads the header only
                width, height = image.size
    except (OSError, Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageRejected(f"{path.name}: cannot be read as an image ({exc})") from None
    if width * height > MAX_PIXELS:
        raise ImageRejected(f"{path.name}: {width} x {height} pixels is over the {MAX_PIXELS:,} pixel limit")
    return width, height


def load_image(path: Path) -> Image.Image:
    """Decode a checked file: upright (EXIF orientation applied), first frame, fully loaded."""
    check_image_file(path)
    try:
        with Image.open(path) as image:
            image.seek(0)
            upright = ImageOps.exif_transpose(image)
            upright.load()
            return upright
    except OSError as exc:
        raise ImageRejected(f"{path.name}: the image data is damaged ({exc})") from None
