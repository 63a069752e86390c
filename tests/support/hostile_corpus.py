"""Hostile and broken input, made on the spot (never committed): each kind is built into a folder
and tried through the three ways user data comes in:

- custom: `python -m probes run custom:FOLDER --model baseline/chance`, where line 2 of
  items.jsonl is the kind's (line 1 is a good item, so line numbers mean something);
- import: `python -m probes import FILE --benchmark custom:FOLDER`, with records that reference
  that item (image kinds) or carry the hostile content themselves (text kinds);
- upload: `UploadSet.from_files(...)`, what the UI calls with a visitor's files.

A kind is handled on a path when it is rejected with a message that names the file (and line)
as expected, or accepted and normalised correctly (the pixels the models get are checked).
A crash is a traceback, an exit status other than 0 or 2, or an exception other than the
engine's own user-facing errors. Used by tests/probes/test_hostile_inputs.py and
bench/hostile_inputs.py; the files themselves are written by tests/support/hostile_files.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from tests.conftest import shapes_image
from tests.support.decode_bombs import MORE_BOMBS, UPLOAD_BOMBS
from tests.support.hostile_files import (
    ICC_COLOUR,
    check_cmyk,
    check_colour,
    check_gray16,
    check_palette,
    check_upright,
    write_bomb,
    write_cmyk,
    write_exif,
    write_gif,
    write_gray16,
    write_huge_itxt,
    write_icc,
    write_pages,
    write_palette,
    write_sparse,
    write_text,
    write_truncated_jpeg,
    write_truncated_png,
    write_webp,
    write_ztxt_bomb,
)

PATHS = ("custom", "import", "upload")
QUESTION = "Which shape is it?"
OPTIONS = ["circle", "square"]
IMPORT_FILE = "replies.jsonl"


@dataclass(frozen=True)
class Expect:
    """What should happen on one path. `rejected`: a regex the message matches (None: accepted).
    `check`: for an accepted image, a test of the pixels the models get. `stderr`: a regex the
    CLI's stderr matches on success (a note, or a damaged image named as that item's error)."""

    rejected: str | None = None
    check: Callable[[Image.Image], None] | None = None
    stderr: str | None = None


@dataclass
class Case:
    folder: Path
    expect: dict[str, Expect]  # path -> expectation; a path missing here does not apply
    upload: tuple[list[Path], str, list[str], str] | None = None


@dataclass(frozen=True)
class Kind:
    name: str
    build: Callable[[Path], Case]
    required: bool = True  # listed in issue 6; False: added here


# --- building ---------------------------------------------------------------------------


def _good_record(item_id: str = "ok", image: str = "ok.png") -> dict:
    return {"id": item_id, "image": image, "question": QUESTION, "options": OPTIONS, "answer": "circle"}


def _folder(root: Path, line2: bytes | dict) -> Path:
    """A custom folder whose items.jsonl holds a good item, then `line2`."""
    folder = root / "set"
    folder.mkdir(parents=True, exist_ok=True)
    shapes_image("circle").save(folder / "ok.png")
    second = line2 if isinstance(line2, bytes) else json.dumps(line2).encode()
    (folder / "items.jsonl").write_bytes(json.dumps(_good_record()).encode() + b"\n" + second + b"\n")
    return folder


def _replies(folder: Path, line: bytes | dict) -> None:
    data = line if isinstance(line, bytes) else json.dumps(line).encode()
    (folder.parent / IMPORT_FILE).write_bytes(data + b"\n")


def image_kind(
    name: str,
    filename: str,
    write: Callable[[Path], None],
    rejected: str | None = None,
    check: Callable[[Image.Image], None] | None = None,
    note: str | None = None,
    required: bool = True,
    upload: bool = True,
) -> Kind:
    """A kind that is one image file: item h of a custom folder, referenced by an imported
    reply, and uploaded with the same question."""

    def build(root: Path) -> Case:
        folder = _folder(root, _good_record("h", filename))
        write(folder / filename)
        _replies(folder, {"item_id": "h", "response": "a"})
        shown = re.escape(filename if filename.isprintable() else repr(filename))
        if rejected:
            expect = {
                "custom": Expect(rejected=rf"items\.jsonl line 2: image {shown}: {rejected}"),
                "import": Expect(rejected=rf"items\.jsonl line 2: image {shown}: {rejected}"),
                "upload": Expect(rejected=rf"image {shown}: {rejected}"),
            }
        else:
            stderr = re.escape(f"note: {note}") if note else None
            expect = {
                "custom": Expect(check=check, stderr=stderr),
                "import": Expect(),
                "upload": Expect(check=check, stderr=re.escape(note) if note else None),
            }
        if not upload:
            del expect["upload"]
        return Case(folder, expect, ([folder / filename], QUESTION, OPTIONS, "circle"))

    return Kind(name, build, required)


def symlink_kind() -> Kind:
    def build(root: Path) -> Case:
        shapes_image("square").save(root / "outside.png")
        folder = _folder(root, _good_record("h", "link.png"))
        (folder / "link.png").symlink_to(root / "outside.png")
        _replies(folder, {"item_id": "h", "response": "a"})
        outside = Expect(rejected=r"items\.jsonl line 2: image 'link\.png' is outside the folder")
        return Case(folder, {"custom": outside, "import": outside})  # an upload has no folder to leave

    return Kind("symbolic link out of the folder", build, required=False)


def record_kind(
    name: str,
    line2: bytes | dict,
    custom: str,
    reply: bytes | dict | None = None,
    imported: str | None = None,
    upload: tuple[list[Path] | None, str, list[str], str] | None = None,
    uploaded: str | None = None,
    required: bool = True,
) -> Kind:
    """A kind in the text itself: items.jsonl line 2, an import record, the upload's fields.
    `custom`, `imported`, `uploaded`: the regexes their messages match."""

    def build(root: Path) -> Case:
        folder = _folder(root, line2)
        expect = {"custom": Expect(rejected=custom)}
        if reply is not None:
            _replies(folder, reply)
            expect["import"] = Expect(rejected=imported)
        upload_args = None
        if upload is not None:
            paths, question, options, answer = upload
            upload_args = (paths if paths is not None else [folder / "ok.png"], question, options, answer)
            expect["upload"] = Expect(rejected=uploaded)
        return Case(folder, expect, upload_args)

    return Kind(name, build, required)


def traversal_kind() -> Kind:
    def build(root: Path) -> Case:
        case = record_kind(
            "",
            _good_record("h", "../../etc/passwd"),
            r"items\.jsonl line 2: image '\.\./\.\./etc/passwd' is outside the folder",
            {"item_id": "h", "response": "a"},
            r"items\.jsonl line 2: image '\.\./\.\./etc/passwd' is outside the folder",
        ).build(root)
        # Uploads come as paths the UI got from Gradio; a path that climbs out is still only
        # a file to check, never read as an image.
        case.upload = ([case.folder / "../../etc/passwd"], QUESTION, OPTIONS, "circle")
        case.expect["upload"] = Expect(rejected=r"image passwd: (file not found|not a PNG, JPEG)")
        return case

    return Kind("path ../../etc/passwd in items.jsonl", build)


def sparse_jsonl_kind() -> Kind:
    def build(root: Path) -> Case:
        folder = _folder(root, b"")
        first = json.dumps(_good_record()).encode() + b"\n"
        write_sparse(folder / "items.jsonl", 500 * 2**20, first)
        write_sparse(folder.parent / IMPORT_FILE, 500 * 2**20)
        too_long = r"line {}: longer than 2,000,000 bytes; reading stopped here"
        return Case(
            folder,
            {
                "custom": Expect(rejected=r"items\.jsonl " + too_long.format(2)),
                "import": Expect(rejected=r"replies\.jsonl " + too_long.format(1)),
            },
        )

    return Kind("items.jsonl / import file of 500 MB without newlines", build, required=False)


def _truncated_jpeg(root: Path) -> Case:
    """The one kind found only when decoded (a JPEG has no checksums to verify beforehand): a
    custom run records that item's error naming the file; an upload is decoded at once."""
    case = image_kind("", "truncated.jpg", write_truncated_jpeg, check=lambda image: None).build(root)
    damaged = r"truncated\.jpg: the image data is damaged \(image file is truncated"
    case.expect["custom"] = Expect(stderr=damaged)
    case.expect["upload"] = Expect(rejected="image " + damaged)
    return case


MB_TEXT = "x" * 2**20
KINDS: list[Kind] = [
    image_kind("text file named .png", "text.png", write_text("just some text, not an image\n"),
               rejected=r"not a PNG, JPEG, GIF, WEBP, BMP or TIFF image \(unknown content\)"),
    image_kind("truncated PNG", "truncated.png", write_truncated_png,
               rejected=r"cannot be read as an image \(.*[Tt]runcated"),
    image_kind("zero-byte file", "empty.png", write_text(b""), rejected=r"the file is empty"),
    image_kind("PDF", "document.pdf", write_text(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"),
               rejected=r"not a PNG, .* \(looks like PDF\)"),
    image_kind("SVG", "drawing.svg",
               write_text('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"><rect width="9" height="9"/></svg>'),
               rejected=r"not a PNG, .* \(looks like SVG\)"),
    image_kind("30000 x 30000 PNG (decompression bomb)", "bomb.png", write_bomb,
               rejected=r"over the 40,000,000 pixel limit \(Image size \(900000000 pixels\)"),
    image_kind("16-bit greyscale PNG", "gray16.png", write_gray16, check=check_gray16),
    image_kind("CMYK JPEG", "cmyk.jpg", write_cmyk, check=check_cmyk),
    image_kind("animated GIF", "animated.gif", write_gif, check=check_colour((255, 0, 0)),
               note="animated.gif has 3 frames (animated or multi-page); models see the first"),
    image_kind("EXIF orientation 6 JPEG", "turned6.jpg", write_exif(6), check=check_upright),
    image_kind("EXIF orientation 8 JPEG", "turned8.jpg", write_exif(8), check=check_upright),
    image_kind("palette PNG with transparency", "palette.png", write_palette, check=check_palette),
    image_kind("1 x 1 image", "dot.png", lambda p: Image.new("RGB", (1, 1), (255, 0, 0)).save(p),
               check=check_colour((255, 0, 0), size=(1, 1), tolerance=0),
               note="dot.png is 1 x 1 pixels; it is sent as it is (not enlarged)"),
    image_kind("500 MB file", "huge.png", lambda p: write_sparse(p, 500 * 2**20, b"\x89PNG\r\n\x1a\n"),
               rejected=r"500\.0 MB is over the 50 MB limit"),
    traversal_kind(),
    record_kind(
        "invalid UTF-8 in items.jsonl",
        b'{"id": "h", "image": "ok.png", "question": "Which \xff\xfe shape?", "answer": "yes"}',
        r"items\.jsonl line 2: not valid UTF-8",
        b'{"item_id": "h", "response": "a \xff\xfe", "target": "circle", "options": ["circle", "square"]}',
        r"replies\.jsonl line 1: not valid UTF-8",
        (None, "Which \udcff shape?", OPTIONS, "circle"),  # what a browser's broken text becomes
        r"the question is not valid UTF-8 text",
    ),
    record_kind(
        "answer outside the options",
        {**_good_record("h"), "answer": "triangle"},
        r"items\.jsonl line 2: answer 'triangle' is not one of the options",
        {"item_id": "h", "response": "a", "target": "triangle", "options": OPTIONS},
        r"replies\.jsonl line 1: target 'triangle' is not one of the options",
        (None, QUESTION, OPTIONS, "triangle"),
        r"answer 'triangle' is not one of the options",
    ),
    record_kind(
        "question of 1 MB (import: a reply of 1 MB)",
        {**_good_record("h"), "question": MB_TEXT},
        r"items\.jsonl line 2: `question` is 1,048,576 characters, over the 20,000-character limit",
        {"item_id": "h", "response": MB_TEXT, "target": "circle", "options": OPTIONS},
        r"replies\.jsonl line 1: `response` is 1,048,576 characters, over the 100,000-character limit",
        (None, MB_TEXT, OPTIONS, "circle"),
        r"^`question` is 1,048,576 characters, over the 20,000-character limit",
    ),
    # --- more than issue 6 asks -----------------------------------------------------------
    image_kind("WEBP with alpha", "alpha.webp", write_webp, check=check_palette, required=False),
    image_kind("BMP", "plain.bmp", lambda p: Image.new("RGB", (32, 32), (0, 0, 255)).save(p),
               check=check_colour((0, 0, 255), tolerance=0), required=False),
    image_kind("multi-page TIFF", "pages.tiff", write_pages, check=check_colour((255, 0, 0), tolerance=0),
               note="pages.tiff has 2 frames (animated or multi-page); models see the first", required=False),
    image_kind("PNG with an ICC profile", "profiled.png", write_icc, check=check_colour(ICC_COLOUR, tolerance=0),
               required=False),
    image_kind("PNG with a zTXt chunk that inflates to 5 MB", "ztxt.png", write_ztxt_bomb,
               rejected=r"cannot be read as an image \(Decompressed data too large", required=False),
    image_kind("PNG with an 8 MB iTXt chunk", "itxt.png", write_huge_itxt, check=check_colour((255, 0, 0)),
               required=False),
    symlink_kind(),
    Kind("truncated JPEG", _truncated_jpeg, required=False),
    image_kind("escape sequence in a file name", "\x1b[2Jclear.png", write_text("text\n"),
               rejected=r"not a PNG", required=False),
    record_kind(
        "unpaired surrogate escape (\\udcff) in JSON",
        b'{"id": "h", "image": "ok.png", "question": "Which \\udcff shape?", "answer": "yes"}',
        r"items\.jsonl line 2: not valid UTF-8 \(an unpaired surrogate escape",
        b'{"item_id": "h", "response": "a \\udcff", "target": "circle", "options": ["circle", "square"]}',
        r"replies\.jsonl line 1: not valid UTF-8 \(an unpaired surrogate escape",
        (None, QUESTION, ["circle", "sq\udcffuare"], "circle"),
        r"the option is not valid UTF-8 text",
        required=False,
    ),
    record_kind(
        "JSON nested 100,000 deep",
        b'{"id": "h", "image": "ok.png", "question": "Q?", "answer": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        r"items\.jsonl line 2: not valid JSON \(nested too deeply\)",
        b'{"item_id": "h", "response": "a", "target": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        r"replies\.jsonl line 1: not valid JSON \(nested too deeply\)",
        required=False,
    ),
    record_kind(
        "a number of 5,000 digits",
        b'{"id": "h", "image": "ok.png", "question": "Q?", "answer": ' + b"9" * 5000 + b"}",
        r"items\.jsonl line 2: not valid JSON \(a number too long to read\)",
        b'{"item_id": "h", "response": "a", "target": ' + b"9" * 5000 + b"}",
        r"replies\.jsonl line 1: not valid JSON \(a number too long to read\)",
        required=False,
    ),
    record_kind(
        "NUL byte in an image name",
        {**_good_record("h"), "image": "ok\x00.png"},
        r"items\.jsonl line 2: image 'ok\\x00\.png' is not a usable file name \(embedded null byte\)",
        {"item_id": "h", "response": "a"},
        r"items\.jsonl line 2: image 'ok\\x00\.png' is not a usable file name",
        ([Path("ok\x00.png")], QUESTION, OPTIONS, "circle"),
        r"image 'ok\\x00\.png': (file not found|cannot be opened)",
        required=False,
    ),
    record_kind(
        "answer or target that is not an answer ([\"a\", \"b\"] as a pair)",
        {"id": "h", "image": "ok.png", "question": QUESTION, "answer": ["a", "b"]},
        r"items\.jsonl line 2: answer \['a', 'b'\] does not fit kind pair",
        {"item_id": "h", "response": "a", "target": ["a", "b"]},
        r"replies\.jsonl line 1: target \['a', 'b'\] is not an answer",
        required=False,
    ),
    sparse_jsonl_kind(),
]  # fmt: skip

# Issue 22: structures under the byte bound that cost a decoder minutes (tests/support/decode_bombs.py),
# each refused by its structural bound (the decompression bomb is above already).
KINDS += [
    image_kind(bomb.name, bomb.filename, bomb.write, rejected=bomb.refused, required=False)
    for bomb in [*UPLOAD_BOMBS, *MORE_BOMBS]
    if bomb.filename in ("pages.tiff", "chunks.png", "frames.gif", "scans.jpg", "comment.gif")
]
