"""Structural bounds read from an image file's bytes before any decoder parses it.

A file well under the byte bound can still hold a structure that costs a decoder far more than
its size suggests: Pillow walks PNG chunks, GIF blocks and TIFF directories one at a time in
Python, and libjpeg processes every pixel again for each progressive scan. Files made for that
(issue 22: a PNG of 1.6 million empty chunks, a GIF of 826,000 frames, a TIFF of 20,000 chained
directories, a JPEG of thousands of scans) took minutes each. This walk counts the pieces
without decoding anything, in one pass that reads each structure once (linear in the file's
size, stopping at the first bound passed), and refuses a file past a bound with one line
naming it.

Only the bounds refuse: anything else odd (a chunk cut short, bytes after the end) is left for
the decoder to name, as before. Every bound is far above what an image made by a camera, an
editor or an encoder holds, and far below what costs a decoder seconds; the numbers and why
are beside each. Only the first frame of a file is ever used (see `images.py`), so a long
animation refused here loses nothing a model would see: save that frame as a PNG.
"""

from __future__ import annotations

import re
import struct

# Frames (GIF, APNG, WEBP) and pages (TIFF): models see the first; the count only feeds a note.
# A 40-second animation at 25 frames a second is 1,000 frames; a stimulus is one picture.
MAX_FRAMES = 1_000
# PNG chunks in all. libpng writes image data in 8 KB chunks: a 50 MB file is 6,400 of them
# (Pillow writes 64 KB ones); Pillow spends about 3 microseconds per chunk per pass in Python.
MAX_PNG_CHUNKS = 20_000
# PNG chunks that are not image data (IDAT, fdAT) or frame headers (fcTL): text, colour,
# metadata. Editors write a few dozen at most.
MAX_PNG_OTHER_CHUNKS = 1_000
# JPEG scans (SOS). Baseline files have 1, progressive ones about 10 (libjpeg's default
# script; mozjpeg's optimised scripts stay under 20); libjpeg processes every pixel again for
# each, about 0.6 ms per megapixel per scan here, so 100 scans of 40 MP take about 2.5 s.
MAX_JPEG_SCANS = 100
# JPEG marker segments in all (APPn, tables, scans ...): cameras write a few dozen; a
# progressive file adds a table or two per scan. Pillow reads those before the first scan in Python.
MAX_JPEG_SEGMENTS = 1_000
# Bytes between JPEG segments that belong to none: encoders write none; Pillow skips them one
# at a time in Python (20 MB of them took it over a second per look).
MAX_JPEG_STRAY_BYTES = 1 << 20
# GIF blocks (frames and extensions, and stray bytes between them, which Pillow skips one at a
# time in Python): a frame is two or three (its graphic control extension, the image).
MAX_GIF_BLOCKS = 4 * MAX_FRAMES
# GIF data sub-blocks, at most 255 bytes each: encoders fill them, so a 50 MB file holds about
# 200,000; this walk (in Python) costs well under a second at the bound.
MAX_GIF_SUB_BLOCKS = 1_000_000
# Sub-blocks of one GIF comment (255 bytes each, so 256 KB of text): Pillow joins a comment's
# sub-blocks one by one, a cost that grows with the square of their number (80,000 of them,
# a 20 MB comment, take minutes).
MAX_GIF_COMMENT_SUB_BLOCKS = 1_024
# TIFF image directories (one per page) are bounded by MAX_FRAMES; their entries in all by this.
# A directory holds 10 to 50 tags; Pillow reads each in Python.
MAX_TIFF_ENTRIES = 50_000
# WEBP chunks (RIFF): a still image has 1 to 5; an animation one per frame and a few more.
MAX_WEBP_CHUNKS = MAX_FRAMES + 64

_SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"\xff\xd8\xff": "JPEG",
    b"GIF87a": "GIF",
    b"GIF89a": "GIF",
    b"BM": "BMP",
    b"II*\x00": "TIFF",
    b"MM\x00*": "TIFF",
}
# A marker that ends a JPEG scan's entropy-coded data: 0xFF then anything but a stuffed zero,
# a restart marker (RST0-7, inside the scan) or another 0xFF (fill).
_JPEG_MARKER = re.compile(rb"\xff[\x01-\xcf\xd8-\xfe]")
_JPEG_FILL = re.compile(rb"\xff+")
_JPEG_STANDALONE = {0x01, 0xD8, *range(0xD0, 0xD8)}  # markers without a length


class BoundPassed(ValueError):
    """A structural bound is passed; the message names it (without the file's name)."""


def sniff(head: bytes) -> str | None:
    """The image format named by the file's first bytes, or None."""
    for signature, name in _SIGNATURES.items():
        if head.startswith(signature):
            return name
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return None


def check_structure(data: bytes) -> None:
    """Raise BoundPassed when `data` (a whole file) holds more chunks, scans, frames, blocks or
    directories than its format's bound; anything else is left for the decoder to judge."""
    walk = _WALKS.get(sniff(data[:16]) or "")
    if walk is not None:
        walk(data)


def _over(count: int, bound: int, what: str, hint: str = "") -> None:
    if count > bound:
        raise BoundPassed(f"more than {bound:,} {what}; at most {bound:,} are read from one image{hint}")


_FIRST_FRAME = " (models see only the first: save it as a PNG)"


def _png(data: bytes) -> None:
    position, chunks, others, frames = 8, 0, 0, 0
    while position + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, position)
        chunks += 1
        _over(chunks, MAX_PNG_CHUNKS, "PNG chunks")
        if kind == b"fcTL":
            frames += 1
            _over(frames, MAX_FRAMES, "frames (APNG)", _FIRST_FRAME)
        elif kind not in (b"IDAT", b"fdAT"):
            others += 1
            _over(others, MAX_PNG_OTHER_CHUNKS, "PNG chunks other than image data")
        if kind == b"acTL" and length >= 8 and position + 12 <= len(data):
            # The frame count the file declares is what Pillow reports: bound it as well.
            _over(struct.unpack_from(">I", data, position + 8)[0], MAX_FRAMES, "frames (APNG)", _FIRST_FRAME)
        if kind == b"IEND":
            return  # decoders read nothing after it
        position += 12 + length


def _jpeg(data: bytes) -> None:
    position, segments, scans, stray = 2, 0, 0, 0
    while position + 2 <= len(data):
        if data[position] != 0xFF:  # not a marker where one belongs: skipped to the next, as Pillow does
            following = data.find(b"\xff", position)
            if following < 0:
                return
            stray += following - position
            _over(stray, MAX_JPEG_STRAY_BYTES, "stray bytes between JPEG segments")
            position = following
            continue
        marker = data[position + 1]
        if marker == 0xFF:  # fill bytes before a marker, skipped at C speed
            position = _JPEG_FILL.match(data, position).end() - 1
            continue
        if marker == 0xD9:
            return  # end of image: what follows (an MPO's other pictures) is never decoded
        segments += 1
        _over(segments, MAX_JPEG_SEGMENTS, "JPEG marker segments")
        if marker in _JPEG_STANDALONE:
            position += 2
            continue
        if position + 4 > len(data):
            return
        position += 2 + struct.unpack_from(">H", data, position + 2)[0]
        if marker == 0xDA:  # a scan: its header, then entropy-coded data up to the next marker
            scans += 1
            _over(scans, MAX_JPEG_SCANS, "JPEG scans (progressive passes)")
            found = _JPEG_MARKER.search(data, position)
            if found is None:
                return
            position = found.start()


def _gif(data: bytes) -> None:
    if len(data) < 13:
        return
    position = 13
    if data[10] & 0x80:  # a global colour table
        position += 3 << ((data[10] & 7) + 1)
    walker = _SubBlocks(data)
    blocks = frames = 0
    while position < len(data):
        introducer = data[position]
        if introducer == 0x3B:
            return  # the trailer
        blocks += 1
        _over(blocks, MAX_GIF_BLOCKS, "GIF blocks (frames, extensions and stray bytes)")
        if introducer == 0x21 and position + 1 < len(data):  # an extension: label, sub-blocks
            comment = data[position + 1] == 0xFE
            position = walker.skip(position + 2, MAX_GIF_COMMENT_SUB_BLOCKS if comment else None)
        elif introducer == 0x2C and position + 10 <= len(data):  # a frame: descriptor, table, data
            frames += 1
            _over(frames, MAX_FRAMES, "frames (animated GIF)", _FIRST_FRAME)
            flags = data[position + 9]
            position += 10 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
            position = walker.skip(position + 1, None)  # after the LZW code size byte
        else:
            position += 1  # Pillow skips a stray byte and reads on


class _SubBlocks:
    """GIF data sub-blocks (a length byte, then that many bytes; a zero length ends them),
    counted over the whole file."""

    def __init__(self, data: bytes):
        self.data = data
        self.count = 0

    def skip(self, position: int, bound: int | None) -> int:
        data, end, here = self.data, len(self.data), 0
        while position < end:
            length = data[position]
            position += 1 + length
            self.count += 1
            here += 1
            if self.count > MAX_GIF_SUB_BLOCKS:
                _over(self.count, MAX_GIF_SUB_BLOCKS, "GIF data sub-blocks")
            if bound is not None and here > bound:
                _over(here, bound, "sub-blocks (255 bytes each) in one GIF comment")
            if length == 0:
                break
        return position


def _tiff(data: bytes) -> None:
    order = "<" if data[:2] == b"II" else ">"
    if len(data) < 8:
        return
    offset = struct.unpack_from(order + "I", data, 4)[0]
    visited: set[int] = set()
    entries = 0
    # The chain of directories Pillow follows page by page: walked once, each directory
    # remembered, so a chain that loops back is named instead of read forever.
    while offset:
        if offset in visited:
            raise BoundPassed("its image directories (TIFF IFDs) loop back on themselves; the file is malformed")
        visited.add(offset)
        _over(len(visited), MAX_FRAMES, "pages (TIFF image directories)", _FIRST_FRAME)
        if offset + 2 > len(data):
            return
        count = struct.unpack_from(order + "H", data, offset)[0]
        entries += count
        _over(entries, MAX_TIFF_ENTRIES, "TIFF directory entries")
        following = offset + 2 + 12 * count
        if following + 4 > len(data):
            return
        offset = struct.unpack_from(order + "I", data, following)[0]


def _webp(data: bytes) -> None:
    position, chunks, frames = 12, 0, 0
    while position + 8 <= len(data):
        kind, length = struct.unpack_from("<4sI", data, position)
        chunks += 1
        _over(chunks, MAX_WEBP_CHUNKS, "WEBP chunks")
        if kind == b"ANMF":
            frames += 1
            _over(frames, MAX_FRAMES, "frames (animated WEBP)", _FIRST_FRAME)
        position += 8 + length + (length & 1)  # chunks are padded to an even length


_WALKS = {"PNG": _png, "JPEG": _jpeg, "GIF": _gif, "TIFF": _tiff, "WEBP": _webp}
