"""Find the images of a folder for mining: every file named as an image, checked by the project's
hardened reader (`probes.files.images`) before anything decodes it, and hashed by content.

A file the reader refuses (not an image, too large, damaged structure) is reported, never fatal;
so is an image more than 8 times longer than wide (resizing its short side to an encoder's input
size would make it enormous). Files with the same bytes as an earlier one are reported as
duplicates and left out: two identical options would make a question unanswerable. Hidden files
and folders, and earlier outputs of `mine` (folders holding a `mining.json`), are skipped, so
mining a folder again never mines its own copies and contact sheets.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from probes.files.images import ImageRejected, check_image_file

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"})
MAX_ASPECT = 8.0
MINED_MARK = "mining.json"  # a folder holding this was written by `mine`; scans skip it


@dataclass(frozen=True)
class ImageFile:
    """An accepted image: where it is, its name relative to the scanned folder, its content hash."""

    path: Path
    name: str
    sha256: str


@dataclass(frozen=True)
class Rejected:
    name: str
    reason: str


@dataclass
class Scan:
    files: list[ImageFile] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (skipped name, kept name)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def scan_folder(folder: Path, exclude: Sequence[Path] = ()) -> Scan:
    """Every image file under `folder` (recursively, in name order; hidden files and folders,
    anything under `exclude`, and earlier mining outputs (folders holding a `mining.json`)
    skipped), checked by the hardened reader and hashed. Files whose
    name is not an image's are ignored; files named as images but refused are reported. A file
    with the same bytes as an earlier one is a duplicate: reported and left out, since two
    identical options would make a question unanswerable."""
    folder = Path(folder)
    excluded = [Path(p).resolve() for p in exclude]
    scan = Scan()
    by_hash: dict[str, str] = {}
    for path in _walk(folder, excluded):
        name = path.relative_to(folder).as_posix()
        reason = image_problem(path)
        if reason:
            scan.rejected.append(Rejected(name, reason))
            continue
        try:
            digest = file_sha256(path)
        except OSError as exc:
            scan.rejected.append(Rejected(name, f"cannot be read ({exc.strerror or exc})"))
            continue
        if digest in by_hash:
            scan.duplicates.append((name, by_hash[digest]))
            continue
        by_hash[digest] = name
        scan.files.append(ImageFile(path, name, digest))
    return scan


def image_problem(path: Path) -> str | None:
    """Why the miner cannot use this file, or None."""
    try:
        info = check_image_file(path)
    except ImageRejected as exc:
        return without_name(path, exc)
    long_side, short_side = max(info.width, info.height), max(min(info.width, info.height), 1)
    if long_side / short_side > MAX_ASPECT:
        return (
            f"{info.width} x {info.height} pixels is more than {MAX_ASPECT:g} times longer than wide; "
            "crop it to compare it with other pictures"
        )
    return None


def without_name(path: Path, exc: Exception) -> str:
    """The reader's messages start with the file's name; reports already name the file."""
    return str(exc).removeprefix(f"{path.name}: ")


def _walk(folder: Path, excluded: list[Path]) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and (here / d).resolve() not in excluded
            and not (here / d / MINED_MARK).is_file()  # an earlier output: copies and contact sheets
        )
        for name in sorted(files):
            if not name.startswith(".") and Path(name).suffix.lower() in IMAGE_SUFFIXES:
                yield here / name
