"""The folder an export writes into (`generate`, every format, and the Stimulus lab's zip): it
never deletes or overwrites what it did not write, and never follows a link.

An export goes into a folder that is empty (or not there yet), or into one an export wrote
before: there `.probe-export.json`, the manifest, names every file the export wrote with its
SHA-256. Only those files are replaced or removed, and only while they are still regular files
holding what was written (a file edited since is someone's work). Anything else where the export
must write (a file it did not write, a link, a file edited since) is refused with one line naming
it, before anything is written.

The manifest is a file of its own rather than a part of `probe_set.json` (which every format
writes too): it says which files are ours, not which set they hold, so a copied description never
hands someone's folder to the export.

Every path under the folder is opened relative to the folder's descriptor, one name at a time
with O_NOFOLLOW, and files are created with O_EXCL: containment holds by construction (no name
is resolved through a link), and a link planted after the checks makes the write fail instead of
being followed. Only `path` itself, the folder the user named, is followed if it is a link.
The manifest is rewritten before the files it claims are written (their digests left null), so
an interrupted export leaves a folder the same command can write again.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from probes.core.errors import UsageError

MANIFEST = ".probe-export.json"
MAX_MANIFEST_BYTES = 64 * 2**20  # a million files' names and digests
SHOWN = 4  # what a refusal names before "and N more"
WALKED = 1000  # entries counted for "and N more"
_DIGEST = re.compile(r"[0-9a-f]{64}")
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO planted at a file's name must not hang the export when it is opened to be read.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class ExportFolder:
    """`path` opened for an export; refuses (UsageError) a folder that is neither empty nor one
    an export wrote. `claim` names files before they are written, `write` writes one, `finish`
    removes the files of the export before that this one did not write again and writes the
    manifest. Use it as a context manager (it holds descriptors)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._root = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._dirs: dict[str, int] = {"": self._root}
        self._claimed: set[str] = set()
        self._written: dict[str, str] = {}
        self._unlisted = False  # claimed names the manifest does not name yet
        try:
            manifest = self._read_manifest()
            if manifest is None and os.listdir(self._root):
                raise self._refusal(*self._contents())
            self._old: dict[str, str | None] = manifest or {}
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> ExportFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._dirs.values():
            with suppress(OSError):
                os.close(fd)
        self._dirs = {}

    # --- writing ---------------------------------------------------------------------------

    def claim(self, names: Iterable[str]) -> None:
        """Check that nothing but this export's own files stands where `names` (paths relative
        to the folder, with /) will be written; the manifest names them before the first of
        them is written."""
        new = sorted({_checked_name(name) for name in names} - self._claimed)
        if not new:
            return
        in_the_way = [problem for name in new if (problem := self._in_the_way(name))]
        if in_the_way:
            raise self._refusal(in_the_way, len(in_the_way))
        self._claimed.update(new)
        self._unlisted = True

    def check_folder(self, name: str) -> None:
        """Refuse now, before anything is drawn, a link or a file where the folder `name` goes."""
        problem = self._folders_in_the_way(_checked_name(name).split("/"))
        if problem:
            raise self._refusal([problem], 1)

    def write(self, name: str, data: bytes) -> None:
        """Write `data` as the file `name` (claimed first if it was not)."""
        self.claim([name])
        if self._unlisted:  # a refusal before the first write leaves the folder as it was
            self._write_manifest({**self._old, **{claimed: self._written.get(claimed) for claimed in self._claimed}})
            self._unlisted = False
        parent, base = self._parent(name, create=True)
        found = _lstat(base, parent)
        if found is not None:
            if not (stat.S_ISREG(found.st_mode) and (name in self._old or name in self._written)):
                raise self._refusal([_described(name, found)], 1)
            os.unlink(base, dir_fd=parent)
        try:
            fd = os.open(base, _CREATE, 0o666, dir_fd=parent)
        except FileExistsError:  # planted since the unlink: not followed, not overwritten
            raise self._refusal([name], 1) from None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        self._written[name] = hashlib.sha256(data).hexdigest()

    def finish(self) -> None:
        """Remove the files the export before wrote and this one did not (each only if it still
        holds what was written), the folders that leaves empty, and write the manifest."""
        emptied: set[str] = set()
        for name in sorted(set(self._old) - set(self._written)):
            if self._remove(name):
                parts = name.split("/")[:-1]
                emptied.update("/".join(parts[: depth + 1]) for depth in range(len(parts)))
        kept = {"/".join(name.split("/")[: depth + 1]) for name in self._written for depth in range(name.count("/"))}
        for folder in sorted(emptied - kept, key=lambda f: -f.count("/")):
            parent, base = self._parent(folder, create=False)
            if parent is not None:
                self._forget(folder)
                with suppress(OSError):  # not empty (someone's file, a cache): it stays
                    os.rmdir(base, dir_fd=parent)
        self._write_manifest(self._written)

    # --- what is there ---------------------------------------------------------------------

    def _in_the_way(self, name: str) -> str | None:
        """What stands where `name` is to be written and is not this export's to replace, or None."""
        problem = self._folders_in_the_way(name.split("/")[:-1])
        if problem:
            return problem
        found = _lstat(name, self._root)
        if found is None:
            return None
        if stat.S_ISREG(found.st_mode) and (name in self._written or name in self._old):
            digest = self._old.get(name)
            if name in self._written or digest is None or self._digest(name, self._root) == digest:
                return None
            return f"{name} [changed since it was written]"
        return _described(name, found)

    def _folders_in_the_way(self, parts: list[str]) -> str | None:
        """A link or a file where one of the folders `parts` (outermost first) must be."""
        for depth in range(1, len(parts) + 1):
            where = "/".join(parts[:depth])
            found = _lstat(where, self._root)
            if found is None:
                return None  # made as a folder when written
            if not stat.S_ISDIR(found.st_mode):
                return _described(where, found)
        return None

    def _contents(self) -> tuple[list[str], int]:
        """The folder's entries, the first WALKED in name order, depth first, without following
        a link; and how many there are (WALKED at most)."""
        found: list[str] = []

        def visit(fd: int, prefix: str) -> None:
            with os.scandir(fd) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
            for entry in entries:
                if len(found) >= WALKED:
                    return
                name = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    try:
                        inner = os.open(entry.name, _OPEN_DIR, dir_fd=fd)
                    except OSError:
                        found.append(f"{name}/")
                        continue
                    try:
                        before = len(found)
                        visit(inner, f"{name}/")
                        if len(found) == before:
                            found.append(f"{name}/")
                    finally:
                        os.close(inner)
                else:
                    found.append(f"{name} [a link]" if entry.is_symlink() else name)

        visit(self._root, "")
        return found, len(found)

    def _read_manifest(self) -> dict[str, str | None] | None:
        """The files the manifest names, or None where there is none or it is not one an export
        wrote (a link, too large, not the shape written here): the folder is then not ours."""
        try:
            fd = os.open(MANIFEST, _READ, dir_fd=self._root)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            raw = handle.read(MAX_MANIFEST_BYTES + 1)
        if len(raw) > MAX_MANIFEST_BYTES:
            return None
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, dict) or not all(
            _valid_name(name) and (digest is None or (isinstance(digest, str) and _DIGEST.fullmatch(digest)))
            for name, digest in files.items()
        ):
            return None
        return files

    def _remove(self, name: str) -> bool:
        """Unlink `name` if it is still the regular file the manifest names; whether it went."""
        parent, base = self._parent(name, create=False)
        if parent is None:
            return False
        found = _lstat(base, parent)
        if found is None or not stat.S_ISREG(found.st_mode):
            return False
        digest = self._old.get(name)
        if digest is not None and self._digest(base, parent) != digest:
            return False
        os.unlink(base, dir_fd=parent)
        return True

    def _digest(self, name: str, dir_fd: int) -> str | None:
        try:
            fd = os.open(name, _READ, dir_fd=dir_fd)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return hashlib.file_digest(handle, "sha256").hexdigest()

    # --- folders ---------------------------------------------------------------------------

    def _parent(self, name: str, create: bool) -> tuple[int | None, str]:
        """The descriptor of `name`'s folder (made where `create`; None where it is missing or
        not a real folder and not `create`) and `name`'s last part."""
        *folders, base = name.split("/")
        fd = self._root
        for depth in range(len(folders)):
            where = "/".join(folders[: depth + 1])
            if where not in self._dirs:
                if create:
                    with suppress(FileExistsError):
                        os.mkdir(folders[depth], dir_fd=fd)
                try:
                    self._dirs[where] = os.open(folders[depth], _OPEN_DIR, dir_fd=fd)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                        raise
                    if not create:
                        return None, base
                    found = _lstat(folders[depth], fd)
                    raise self._refusal([_described(where, found) if found else where], 1) from None
            fd = self._dirs[where]
        return fd, base

    def _forget(self, folder: str) -> None:
        with suppress(OSError):
            os.close(self._dirs.pop(folder))

    def _write_manifest(self, files: dict[str, str | None]) -> None:
        text = json.dumps({"written_by": "perception playground export", "files": dict(sorted(files.items()))},
                          indent=1)  # fmt: skip
        temp = f"{MANIFEST}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, _CREATE, 0o666, dir_fd=self._root)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write((text + "\n").encode("utf-8"))
            # A rename replaces the name itself: a link planted at the manifest's name is not followed.
            os.replace(temp, MANIFEST, src_dir_fd=self._root, dst_dir_fd=self._root)
        except BaseException:
            with suppress(OSError):
                os.unlink(temp, dir_fd=self._root)
            raise

    def _refusal(self, in_the_way: list[str], count: int) -> UsageError:
        shown = ", ".join(in_the_way[:SHOWN])
        if count > SHOWN:
            shown += f" and {count - SHOWN}{'+' if count >= WALKED else ''} more"
        return UsageError(
            f"output folder {self.path} holds files this export did not write ({shown}): "
            "move them away or choose an empty folder"
        )


@contextmanager
def export_into(out: Path | ExportFolder) -> Iterator[ExportFolder]:
    """`out` as an ExportFolder: one given is the caller's to finish; a path is opened here and
    finished when the block ends without an error."""
    if isinstance(out, ExportFolder):
        yield out
        return
    with ExportFolder(out) as folder:
        yield folder
        folder.finish()


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _described(name: str, found: Any) -> str:
    if stat.S_ISLNK(found.st_mode):
        return f"{name} [a link]"
    return f"{name}/" if stat.S_ISDIR(found.st_mode) else name


def _valid_name(name: object) -> bool:
    """A path relative to the folder that stays inside it by its words alone: no root, no `..`,
    no empty or `.` part, not the manifest."""
    if not isinstance(name, str) or not 0 < len(name) <= 4096 or "\\" in name or "\x00" in name:
        return False
    return name != MANIFEST and all(part not in ("", ".", "..") for part in name.split("/"))


def _checked_name(name: str) -> str:
    if not _valid_name(name):
        raise ValueError(f"not a file name inside an export folder: {name!r}")
    return name
