"""Image files from users: checked (type, size, pixel count, structure) before anything decodes
them, then decoded into what models are sent.

Every check past the file's size and first bytes, and every decode, happens in a worker process
(`decoding.py`) within bounds of wall-clock time, processor time and memory, after the file's
structure is held to bounds on chunks, frames, scans and directories (`image_structure.py`):
a hostile file is refused with one line, costs the server no more than those bounds, and never
holds up its event loop.

Decisions about odd but valid images:
- animated (GIF, WEBP, APNG) or multi-page (TIFF): the first frame is used; `ImageInfo.notes`
  says so, and custom folders and uploads pass that on to the user;
- EXIF orientation is applied, so a phone photo is upright;
- 16-bit greyscale is scaled to 8 bits, CMYK converted to RGB, transparency composited on white
  (`models.types.to_rgb`, what every backend sends);
- tiny images (even 1 x 1) are valid stimuli and are sent as they are: enlarging them would
  change what is being probed. A provider that refuses one fails that item with its own
  message; `ImageInfo.notes` warns beforehand.
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path
from stat import S_ISREG
from typing import NamedTuple

from PIL import Image

from models.types import EncodedImage
from probes.core.errors import InputRejected
from probes.core.types import ImageSource
from probes.files.decoding import shared_pool
from probes.files.file_identity import ByIdentity, identity_of
from probes.files.image_reading import Read, Refused
from probes.files.image_structure import BoundPassed, check_structure, sniff

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_PIXELS = 40_000_000  # about 6300 x 6300; more is a decompression bomb, not a stimulus
SMALL_SIDE = 28  # below this, a note: some processors refused such images (Qwen2-VL's 28 px patches)
CHECKED_KEPT = 4096  # files whose check is remembered (by their identity on disk), most recent first

_NOT_IMAGES = {
    b"%PDF": "PDF",
    b"<svg": "SVG",
    b"<?xml": "XML/SVG",
    b"PK\x03\x04": "ZIP",
    b"<!DOC": "HTML",
    b"<html": "HTML",
}


class ImageRejected(InputRejected):
    """The file is not an image we accept; the message says why."""


class ImageInfo(NamedTuple):
    width: int
    height: int
    frames: int

    def notes(self, name: str) -> list[str]:
        """What a user should know about an accepted image."""
        notes = []
        if self.frames > 1:
            notes.append(f"{name} has {self.frames} frames (animated or multi-page); models see the first")
        if min(self.width, self.height) < SMALL_SIDE:
            notes.append(
                f"{name} is {self.width} x {self.height} pixels; it is sent as it is (not enlarged), "
                "and some providers may refuse so small an image"
            )
        return notes


def check_image_file(path: Path, verify: bool = True) -> ImageInfo:
    """Raise ImageRejected unless `path` is a readable image of sane size and intact structure;
    no pixel is decoded. The file's size is checked before any byte of it is read; its
    structure (`image_structure`: chunks, frames, scans, directories) before any decoder parses
    it, in a worker process within bounds of time and memory (`decoding`), never here.

    `verify` False (a folder of many images, checked as it is read): a PNG that ends in its
    IEND chunk is not walked chunk by chunk (a damaged chunk inside it shows when it is
    decoded, as that item's error); one cut short is still named now.

    A file checked before, unchanged since (the same identity on disk: inode, size,
    modification and change times), is not read again: a handler on the event loop that needs
    an uploaded image's size gets it without waiting for a worker."""
    name = _shown(path.name)
    stat = _sized(path, name)
    known = _remembered(path, stat, verify)
    if known is not None:
        return known
    _sniffed(path, name)
    return _remember(path, _in_worker(path, name, verify=verify, decode=False), verify)


def load_image(path: Path) -> Image.Image:
    """Decode a checked file into what models are sent: upright (EXIF orientation applied), the
    first frame, 8-bit RGB (`to_rgb`), fully loaded. What a person is shown is then what the
    models see, and transforms (resizing, greyscale) never meet 16-bit or palette pixels.
    Checked again as `check_image_file` does, and decoded, in a worker process: the bytes
    decoded are the bytes checked, whatever happened to the file since it was first checked."""
    name = _shown(path.name)
    _sized(path, name)
    _sniffed(path, name)
    read = _in_worker(path, name, verify=True, decode=True)
    _remember(path, read, True)
    return read.image  # type: ignore[return-value] - the pool answers a decode with its image, or refuses


def _sized(path: Path, name: str) -> os.stat_result:
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise ImageRejected(f"{name}: file not found") from None
    except (OSError, ValueError) as exc:  # a NUL byte in the name, a name too long ...
        raise ImageRejected(f"{name}: cannot be opened ({_reason(exc)})") from None
    if not S_ISREG(stat.st_mode):
        raise ImageRejected(f"{name}: file not found")
    if stat.st_size == 0:
        raise ImageRejected(f"{name}: the file is empty")
    if stat.st_size > MAX_FILE_BYTES:
        raise ImageRejected(f"{name}: {stat.st_size / 2**20:,.1f} MB is over the {MAX_FILE_BYTES // 2**20} MB limit")
    return stat


def _sniffed(path: Path, name: str) -> None:
    """A file that is no image we read is named here, from its first bytes, without a worker."""
    try:
        with path.open("rb") as handle:
            head = handle.read(16)
    except OSError as exc:
        raise ImageRejected(f"{name}: cannot be read ({_reason(exc)})") from None
    if sniff(head) is None:
        stripped = head.lstrip()
        kind = next((kind for sig, kind in _NOT_IMAGES.items() if stripped.startswith(sig)), None)
        what = f"looks like {kind}" if kind else "unknown content"
        raise ImageRejected(f"{name}: not a PNG, JPEG, GIF, WEBP, BMP or TIFF image ({what})")


def _in_worker(path: Path, name: str, *, verify: bool, decode: bool) -> Read:
    try:
        return shared_pool().read(path, verify=verify, decode=decode, max_pixels=MAX_PIXELS, max_bytes=MAX_FILE_BYTES)
    except Refused as exc:
        raise ImageRejected(f"{name}: {exc}") from None


# What checks found (and whether they verified), by the version of the file they read.
_checked: ByIdentity[tuple[ImageInfo, bool]] = ByIdentity(CHECKED_KEPT)


def _remembered(path: Path, stat: os.stat_result, verify: bool) -> ImageInfo | None:
    found = _checked.get(path, identity_of(stat))
    return found[0] if found is not None and (found[1] or not verify) else None


def _remember(path: Path, read: Read, verified: bool) -> ImageInfo:
    """Remembered under the identity of the bytes the worker read (a file replaced between our
    look at it and the worker's read is remembered as what was read)."""
    info = ImageInfo(read.width, read.height, read.frames)
    known = _checked.get(path, read.identity)
    _checked.put(path, read.identity, (info, verified or (known is not None and known[1])))
    return info


def file_source(path: Path) -> ImageSource:
    """A checked file as an item's image, loaded when a prompt needs it. Size and modification
    time are in the ref, so an edited image is hashed (and asked) afresh; a file edited after
    its ref was taken is refused rather than sent under the old one's identity."""
    ref = _file_ref(path, path.stat())
    return ImageSource(ref, lambda: load_image(_unchanged(path, ref)), path=str(path))


def _file_ref(path: Path, stat: os.stat_result) -> str:
    return f"{path}@{stat.st_size}:{stat.st_mtime_ns}"


def _unchanged(path: Path, ref: str, stat: os.stat_result | None = None) -> Path:
    try:
        stat = stat or path.stat()
    except OSError as exc:
        raise ImageRejected(f"{_shown(path.name)}: cannot be read ({_reason(exc)})") from None
    if _file_ref(path, stat) != ref:
        raise ImageRejected(
            f"{_shown(path.name)}: changed on disk after its folder was read; read the folder again "
            "(a new run does) to ask it as it is now"
        )
    return path


def file_as_sent(path: Path, ref: str) -> EncodedImage | None:
    """The file's own bytes when providers may take them as they are, or None (the image is then
    decoded and encoded as every other): a PNG or JPEG whose pixels, read by anyone, are what
    `load_image` makes of it, i.e. 8-bit RGB, one frame, no transparency, upright (no EXIF
    orientation), no colour profile or gamma a reader could apply. Read from the open file,
    whose size and time must still match `ref`."""
    try:
        with path.open("rb") as handle:
            _unchanged(path, ref, os.fstat(handle.fileno()))
            head = handle.read(16)
            if sniff(head) not in ("PNG", "JPEG"):
                return None
            data = head + handle.read()
    except OSError as exc:
        raise ImageRejected(f"{_shown(path.name)}: cannot be read ({_reason(exc)})") from None
    try:
        check_structure(data)  # replaced since its check (same size and time)? Pillow meets no bomb here
    except BoundPassed:
        return None  # decoded in a worker instead, which refuses it
    fit = _png_as_is(data) if data.startswith(b"\x89PNG") else _jpeg_as_is(data)
    return EncodedImage.of(data) if fit else None


# Chunks that make a PNG's pixels mean something else to a reader that heeds them (colour
# management, transparency, orientation, animation): such a file is sent as we decode it.
_NOT_AS_IS = {b"tRNS", b"acTL", b"eXIf", b"iCCP", b"gAMA", b"cHRM"}


def _png_as_is(data: bytes) -> bool:
    """8-bit truecolour (IHDR), none of `_NOT_AS_IS`, every chunk's checksum right, ending in
    IEND: read from the chunks, never decoding a pixel (a file that goes as it is is known by its
    bytes; a damaged one is decoded, and its error is that item's)."""
    position, seen = 8, set()
    view = memoryview(data)
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        end = position + 8 + length
        if end + 4 > len(data) or zlib.crc32(view[position + 4 : end]) != struct.unpack(">I", data[end : end + 4])[0]:
            return False
        if kind == b"IHDR":
            bit_depth, colour_type = data[position + 16], data[position + 17]
            if (bit_depth, colour_type) != (8, 2):
                return False
        seen.add(kind)
        position += 12 + length
        if kind == b"IEND":
            return b"IHDR" in seen and b"IDAT" in seen and not seen & _NOT_AS_IS
    return False  # cut short: decoding will say what is wrong


def _jpeg_as_is(data: bytes) -> bool:
    try:
        with Image.open(io.BytesIO(data)) as image:  # the header only; no pixel is decoded
            orientation = image.getexif().get(0x0112, 1)
            colour_managed = "icc_profile" in image.info
            whole = data.rstrip(b"\0").endswith(b"\xff\xd9")  # a file cut short is decoded (and refused)
            return image.format == "JPEG" and image.mode == "RGB" and orientation == 1 and not colour_managed and whole
    except Exception:  # noqa: BLE001 - Pillow raises many types on odd bytes: decode as usual
        return False


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _shown(name: str) -> str:
    """A file name fit for a message: control characters (escape sequences) made visible."""
    return name if name.isprintable() else repr(name)
