"""Image files whose structure costs a decoder far more than their size (issue 22), made on the
spot: each is a valid-looking file under the public upload bound (20 MB) that Pillow, before the
structural bounds, spent seconds to minutes on. Each `Bomb` says which bound refuses it (the
regex the one-line message matches). Used by tests/probes/test_decode_bounds.py,
tests/ui/test_decode_bombs_public.py, the hostile corpus and bench/abuse_attacks_decode.py.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from tests.support.hostile_files import write_bomb


@dataclass(frozen=True)
class Bomb:
    name: str
    filename: str
    write: Callable[[Path], None]
    refused: str  # what the one-line refusal says (a regex)


def _chunk(kind: bytes, data: bytes = b"") -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def png_chunks(count: int = 1_000_000, kind: bytes = b"prVt") -> Callable[[Path], None]:
    """A 32 x 32 PNG with `count` empty chunks before its image data: a private ancillary kind
    (every reader skips it, one at a time) or IDAT (image data split into nothing)."""

    def write(path: Path) -> None:
        data = _png(Image.new("RGB", (32, 32), "red"))
        at = data.index(b"IDAT") - 4
        path.write_bytes(data[:at] + _chunk(kind) * count + data[at:])

    return write


def apng_declared_frames(path: Path) -> None:
    """An APNG whose animation control chunk claims 2**31 - 1 frames."""
    data = _png(Image.new("RGB", (32, 32), "red"))
    at = data.index(b"IDAT") - 4
    path.write_bytes(data[:at] + _chunk(b"acTL", struct.pack(">II", 2**31 - 1, 0)) + data[at:])


_GIF_HEAD = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
# One 1 x 1 frame: a graphic control extension, the image descriptor, LZW data (one sub-block).
_GIF_FRAME = (
    b"\x21\xf9\x04\x00\x00\x00\x00\x00" + b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
)


def gif_frames(count: int = 300_000) -> Callable[[Path], None]:
    """A 1 x 1 GIF of `count` frames (23 bytes each)."""

    def write(path: Path) -> None:
        path.write_bytes(_GIF_HEAD + _GIF_FRAME * count + b"\x3b")

    return write


def gif_comment(sub_blocks: int = 60_000) -> Callable[[Path], None]:
    """A 1 x 1 GIF with one comment of `sub_blocks` full sub-blocks (255 bytes each) before its
    frame: Pillow joins them one by one, a cost that grows with the square of their number."""

    def write(path: Path) -> None:
        comment = b"\x21\xfe" + (b"\xff" + b"c" * 255) * sub_blocks + b"\x00"
        path.write_bytes(_GIF_HEAD + comment + _GIF_FRAME + b"\x3b")

    return write


def gif_tiny_sub_blocks(count: int = 1_200_000) -> Callable[[Path], None]:
    """A 1 x 1 GIF whose image data is cut into `count` one-byte sub-blocks."""

    def write(path: Path) -> None:
        frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02" + b"\x01\x44" * count + b"\x00"
        path.write_bytes(_GIF_HEAD + frame + b"\x3b")

    return write


def tiff_chain(directories: int = 20_000, loop_to: int | None = 0) -> Callable[[Path], None]:
    """A 1 x 1 greyscale TIFF of `directories` chained image directories (pages), the last one
    pointing back to directory `loop_to` (None: the chain ends there)."""
    tags = [(256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
            (273, 4, 1, 8), (278, 3, 1, 1), (279, 4, 1, 1)]  # fmt: skip
    size = 2 + 12 * len(tags) + 4

    def write(path: Path) -> None:
        out = bytearray(b"II*\x00" + struct.pack("<I", 12) + b"\x80\x00\x00\x00")  # header, the pixel
        for index in range(directories):
            at = len(out)
            if index < directories - 1:
                following = at + size
            else:
                following = 12 + loop_to * size if loop_to is not None else 0
            out += struct.pack("<H", len(tags))
            for tag, kind, count, value in tags:
                out += struct.pack("<HHII", tag, kind, count, value)
            out += struct.pack("<I", following)
        path.write_bytes(bytes(out))

    return write


def jpeg_scans(side: int = 4000, scans: int = 2_000) -> Callable[[Path], None]:
    """A side x side progressive JPEG (grey, so every scan is a few bytes) with its last scan
    repeated until it has `scans` more: libjpeg goes over every block again for each."""

    def write(path: Path) -> None:
        buffer = io.BytesIO()
        Image.new("RGB", (side, side), (128, 128, 128)).save(buffer, "JPEG", progressive=True, optimize=True)
        data = buffer.getvalue()
        last = data.rindex(b"\xff\xda")
        end = data.rindex(b"\xff\xd9")
        path.write_bytes(data[:end] + data[last:end] * scans + data[end:])

    return write


def jpeg_stray_bytes(count: int = 20 * 2**20 - 4096) -> Callable[[Path], None]:
    """A small JPEG with `count` zero bytes between its first segment and the next: Pillow skips
    such bytes one at a time in Python."""

    def write(path: Path) -> None:
        buffer = io.BytesIO()
        Image.new("RGB", (64, 64), "red").save(buffer, "JPEG")
        data = buffer.getvalue()
        first = 4 + struct.unpack(">H", data[4:6])[0]  # after SOI and the APP0 segment
        path.write_bytes(data[:first] + b"\x00" * count + data[first:])

    return write


def webp_frames(frames: int = 2_000) -> Callable[[Path], None]:
    """An animated WEBP of `frames` 1 x 1 frames (Pillow's own encoder, frame after frame)."""

    def write(path: Path) -> None:
        colours = [Image.new("RGB", (1, 1), (index % 256, 0, 0)) for index in range(frames)]
        colours[0].save(path, "WEBP", save_all=True, append_images=colours[1:], lossless=True, duration=10)

    return write


def decompression_bomb(path: Path) -> None:
    """A 30000 x 30000 PNG in 100 KB (the hostile corpus's own)."""
    write_bomb(path)


# The four bombs of issue 22 and a decompression bomb: what the public-mode UI test uploads.
UPLOAD_BOMBS = [
    Bomb("TIFF of 20,000 chained directories that loop", "pages.tiff", tiff_chain(20_000, loop_to=0),
         r"more than 1,000 pages \(TIFF image directories\); at most 1,000 are read from one image"),
    Bomb("PNG of a million empty chunks", "chunks.png", png_chunks(1_000_000),
         r"more than 1,000 PNG chunks other than image data; at most 1,000 are read from one image"),
    Bomb("GIF of 300,000 frames", "frames.gif", gif_frames(300_000),
         r"more than 1,000 frames \(animated GIF\); at most 1,000 are read from one image"),
    Bomb("progressive JPEG of 2,000 extra scans", "scans.jpg", jpeg_scans(4000, 2_000),
         r"more than 100 JPEG scans \(progressive passes\); at most 100 are read from one image"),
    Bomb("30000 x 30000 PNG (decompression bomb)", "bomb.png", decompression_bomb,
         r"over the 40,000,000 pixel limit \(Image size \(900000000 pixels\)"),
]  # fmt: skip

# More, for the engine's own tests (each a bound of its own).
MORE_BOMBS = [
    Bomb("PNG of a million empty IDAT chunks", "idat.png", png_chunks(1_000_000, b"IDAT"),
         r"more than 20,000 PNG chunks; at most 20,000 are read from one image"),
    Bomb("APNG declaring 2**31 frames", "declared.png", apng_declared_frames,
         r"more than 1,000 frames \(APNG\); at most 1,000 are read from one image"),
    Bomb("GIF comment of 60,000 sub-blocks", "comment.gif", gif_comment(60_000),
         r"more than 1,024 sub-blocks \(255 bytes each\) in one GIF comment"),
    Bomb("GIF of 1.2 million one-byte sub-blocks", "crumbs.gif", gif_tiny_sub_blocks(1_200_000),
         r"more than 1,000,000 GIF data sub-blocks"),
    Bomb("TIFF whose third directory points back to its second", "loop.tiff", tiff_chain(3, loop_to=1),
         r"its image directories \(TIFF IFDs\) loop back on themselves"),
    Bomb("JPEG with 20 MB of stray bytes between segments", "stray.jpg", jpeg_stray_bytes(),
         r"more than 1,048,576 stray bytes between JPEG segments"),
    Bomb("animated WEBP of 2,000 frames", "frames.webp", webp_frames(2_000),
         r"more than 1,000 frames \(animated WEBP\); at most 1,000 are read from one image"),
]  # fmt: skip
