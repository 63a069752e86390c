"""Hostile and broken files, written on the spot (never committed): pictures whose format, size,
colour or structure is unusual or hostile (a 900-megapixel PNG in 100 KB, a 500 MB file that
takes no disk space, CMYK, 16-bit, EXIF-turned, palette, truncated, chunk bombs ...), and for
the ones that should be accepted, checks of the pixels the models get. The corpus that tries
them through every way user data comes in is tests/support/hostile_corpus.py; the bombs whose
structure costs a decoder minutes are tests/support/decode_bombs.py.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image, ImageCms


def _png_bytes(image: Image.Image, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG", **options)
    return buffer.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _with_chunk(png: bytes, chunk: bytes) -> bytes:
    """`png` with `chunk` inserted before its first IDAT (where text chunks usually sit)."""
    at = png.index(b"IDAT") - 4
    return png[:at] + chunk + png[at:]


def _noise(size: int = 96) -> Image.Image:
    return Image.fromarray(np.random.default_rng(0).integers(0, 256, (size, size, 3), dtype=np.uint8))


def write_bomb(path: Path, side: int = 30_000) -> None:
    """A valid 1-bit PNG of side x side pixels (900 megapixels for 30000): its rows of zeros
    deflate to about 100 KB, streamed so the 112 MB of raw rows never sit in memory."""
    row = b"\x00" * (1 + (side + 7) // 8)  # filter byte + packed bits
    deflate = zlib.compressobj(1)
    data = b"".join(deflate.compress(row) for _ in range(side)) + deflate.flush()
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)  # 1-bit greyscale
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b""))


def write_sparse(path: Path, size: int, prefix: bytes = b"") -> None:
    """A file of `size` bytes that takes no disk space (and no time) to make: the tail is a hole."""
    with path.open("wb") as handle:
        handle.write(prefix)
        handle.truncate(size)


def write_gray16(path: Path) -> None:
    """16-bit greyscale (Pillow mode I;16): column x holds x * 257, i.e. 8-bit value x."""
    values = np.tile(np.arange(256, dtype=np.uint16) * 257, (32, 1))
    image = Image.fromarray(values)
    assert image.mode == "I;16"
    image.save(path)


def check_gray16(image: Image.Image) -> None:
    for x in (0, 1, 64, 128, 200, 255):
        assert image.getpixel((x, 1)) == (x, x, x), (x, image.getpixel((x, 1)))


CMYK_BANDS = [((255, 0, 0, 0), (0, 255, 255)), ((0, 255, 0, 0), (255, 0, 255)),
              ((0, 0, 255, 0), (255, 255, 0)), ((0, 0, 0, 128), (127, 127, 127))]  # fmt: skip


def write_cmyk(path: Path) -> None:
    image = Image.new("CMYK", (64, 32))
    for band, (cmyk, _) in enumerate(CMYK_BANDS):
        image.paste(cmyk, (band * 16, 0, band * 16 + 16, 32))
    image.save(path, "JPEG", quality=95)
    with Image.open(path) as reread:
        assert reread.mode == "CMYK"


def check_cmyk(image: Image.Image) -> None:
    for band, (_, rgb) in enumerate(CMYK_BANDS):
        got = image.getpixel((band * 16 + 8, 16))
        assert all(abs(a - b) <= 12 for a, b in zip(got, rgb, strict=True)), (band, got, rgb)


def write_gif(path: Path) -> None:
    frames = [Image.new("RGB", (32, 32), colour) for colour in ("red", "lime", "blue")]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100, loop=0)


def check_colour(rgb: tuple[int, int, int], size: tuple[int, int] | None = None, tolerance: int = 8):
    def check(image: Image.Image) -> None:
        if size is not None:
            assert image.size == size, image.size
        got = image.getpixel((image.width // 2, image.height // 2))
        assert all(abs(a - b) <= tolerance for a, b in zip(got, rgb, strict=True)), (got, rgb)

    return check


UPRIGHT = (30, 60)  # width, height as a person should see it: a red block at the top left


def write_exif(orientation: int) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        upright = Image.new("RGB", UPRIGHT, "white")
        upright.paste((255, 0, 0), (0, 0, 10, 10))
        # Stored turned the other way, so that applying the orientation puts it upright: 6 means
        # "rotate 90 degrees clockwise to display", 8 "rotate 90 degrees anticlockwise".
        turn = Image.Transpose.ROTATE_90 if orientation == 6 else Image.Transpose.ROTATE_270
        exif = Image.Exif()
        exif[0x0112] = orientation
        upright.transpose(turn).save(path, "JPEG", quality=95, exif=exif)

    return write


def check_upright(image: Image.Image) -> None:
    assert image.size == UPRIGHT, image.size
    red, white = image.getpixel((4, 4)), image.getpixel((UPRIGHT[0] - 5, UPRIGHT[1] - 5))
    assert red[0] > 200 and red[1] < 60 and red[2] < 60, red
    assert min(white) > 230, white


def write_palette(path: Path) -> None:
    """Palette image: left half index 0 (black, and transparent), right half index 1 (red)."""
    image = Image.new("P", (32, 32), 0)
    image.putpalette([0, 0, 0, 255, 0, 0])
    image.paste(1, (16, 0, 32, 32))
    image.save(path, transparency=0)


def check_palette(image: Image.Image) -> None:
    assert image.getpixel((4, 16)) == (255, 255, 255), image.getpixel((4, 16))  # on white, not black
    assert image.getpixel((28, 16)) == (255, 0, 0), image.getpixel((28, 16))


def write_webp(path: Path) -> None:
    image = Image.new("RGBA", (32, 32), (0, 0, 0, 0))
    image.paste((255, 0, 0, 255), (16, 0, 32, 32))
    image.save(path, "WEBP", lossless=True)


def write_pages(path: Path) -> None:
    pages = [Image.new("RGB", (32, 32), colour) for colour in ("red", "lime")]
    pages[0].save(path, "TIFF", save_all=True, append_images=pages[1:])


ICC_COLOUR = (10, 200, 30)


def write_icc(path: Path) -> None:
    """An sRGB profile embedded: the pixel values are sRGB already, sent as they are."""
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    Image.new("RGB", (32, 32), ICC_COLOUR).save(path, "PNG", icc_profile=profile)


def write_ztxt_bomb(path: Path) -> None:
    """A zTXt chunk of 5 MB of text that deflates to 5 KB: more than Pillow will inflate."""
    chunk = _chunk(b"zTXt", b"comment\x00\x00" + zlib.compress(b"a" * 5_000_000, 9))
    path.write_bytes(_with_chunk(_png_bytes(Image.new("RGB", (32, 32), "red")), chunk))


def write_huge_itxt(path: Path) -> None:
    """An uncompressed iTXt chunk of 8 MB: metadata nobody needs, inside the size limit."""
    chunk = _chunk(b"iTXt", b"comment\x00\x00\x00\x00\x00" + b"a" * 8_000_000)
    path.write_bytes(_with_chunk(_png_bytes(Image.new("RGB", (32, 32), "red")), chunk))


def write_truncated_png(path: Path) -> None:
    data = _png_bytes(_noise())
    path.write_bytes(data[: len(data) * 6 // 10])


def write_truncated_jpeg(path: Path) -> None:
    buffer = io.BytesIO()
    _noise().save(buffer, "JPEG", quality=90)
    path.write_bytes(buffer.getvalue()[: buffer.getbuffer().nbytes // 2])


def write_text(text: str | bytes) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(text if isinstance(text, bytes) else text.encode())

    return write
