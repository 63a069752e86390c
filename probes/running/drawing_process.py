"""Canvas stimuli drawn, hashed and PNG-encoded in a child process, into the image cache.

Against a server that answers in milliseconds, a first run's image work (drawing, deflate,
the hash) competes with the event loop for the GIL: every numpy call lets go of it and
waits up to the switch interval to get it back while the loop runs the SDK's Python, so on two
cores the image threads managed a quarter of their speed alone (`python -m bench.wire`). In a
child process the same work has an interpreter of its own, and the parent only learns each
image's hash: the child writes the encoded bytes into the image cache (the same file a later
run reads), and the parent builds the prompt as for an image known before.

Only what the child can redo exactly is sent there: a `Drawn` stimulus's `draw` (a dataclass
and its method, pickled by reference). Nothing is lost if the child cannot help: until it is
ready, for anything it cannot take, and after it fails, `hash_of` answers None and the runner
draws in its own threads as before. The hashes and bytes are the same either way (tested).

The run's feeder hands over the images of the items it queues (`ahead`), in the order the
workers will ask for them, so the child draws ahead of need: its spare time early in a run goes
to images needed later (a set whose large canvases come last no longer waits on the child at
the end). Only a few of those are sent at a time (_AHEAD_IN_FLIGHT), and the child stays at most
_AHEAD_LEAD images ahead of the items asking for them: against a slow server it would otherwise
draw a whole long run in its first minute, and the image cache might evict early images before
they are sent. An image an item asks for (`hash_of`) goes to the child at once, and one asked
for before the child is ready is taken back and drawn by the runner, never twice.

Protocol over the child's stdin and stdout: each job is its number, its length and the pickled
`draw`; each reply a length-prefixed pickle. The child says ("ready",) once its imports are
done, then answers each job with (job, hash), or (job, None) when it could not draw it (the
runner then draws it, and meets any error itself, in the item).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import pickle
import re
import struct
import sys
from collections.abc import Callable
from typing import Any

from probes.core.errors import UsageError
from probes.running.image_cache import ImageCache

VARIABLE = "PROBE_DRAWING_PROCESS"
_HEADER = struct.Struct(">I")  # a reply's length
_JOB_HEADER = struct.Struct(">QI")  # a job's number and its drawing's length
_READY = ("ready",)
_CREDENTIAL_NAMES = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.IGNORECASE)
_CLOSE_GRACE_SECONDS = 5.0  # a child still drawing when the run ends gets this long to finish
# Drawings sent ahead of need at once: enough that the child never waits for the next one, few
# enough that a stopped run leaves it little to finish.
_AHEAD_IN_FLIGHT = 8
# Images drawn ahead and not yet asked for, at most: a few seconds of a fast server's requests,
# a few megabytes of the image cache.
_AHEAD_LEAD = 256


def enabled() -> bool:
    """PROBE_DRAWING_PROCESS: 1 (the default) lets a long run draw in a child process, 0 keeps all
    drawing in the runner's threads. Anything else is refused like a flag: read as "on", a
    mistyped "off" would go unnoticed."""
    raw = os.environ.get(VARIABLE, "").strip()
    if raw.lower() in ("", "1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    raise UsageError(
        f"{VARIABLE}={shown!r}: write 1 (draw in a child process, the default) or 0 (in the run's threads)"
    )


class DrawingProcess:
    """One child drawing into `cache`, for the length of one run (see the module's docstring).
    Used from the run's event loop: `start`, then `ahead` and `hash_of` per image, then `close`."""

    def __init__(self, cache: ImageCache):
        self.cache = cache
        self.drawn = 0  # images the child has hashed and cached for this run
        self._starting: asyncio.Future | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task | None = None
        self._ready = asyncio.Event()
        self._broken = False
        self._jobs = itertools.count()
        self._waiting: dict[int, asyncio.Future] = {}  # sent to the child, by job number
        self._later: dict[str, Callable[[], Any]] = {}  # to be sent ahead of need, in order
        self._unclaimed: set[str] = set()  # sent ahead, not yet asked for by an item
        self._by_ref: dict[str, asyncio.Future] = {}  # every image handed over, and its hash once known

    async def start(self) -> None:
        """Start the child (not waiting for its imports: images asked for meanwhile are drawn
        by the runner). A child that cannot start leaves the runner drawing as before. Once
        started, starting again does nothing."""
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._spawn())
        await asyncio.shield(self._starting)  # a caller cancelled meanwhile leaves no child behind

    @property
    def started(self) -> bool:
        return self._starting is not None

    async def _spawn(self) -> None:
        environment = _child_environment()
        command = [sys.executable, "-m", __name__, str(self.cache.root), str(self.cache.max_bytes)]
        try:
            self._process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                env=environment,
            )
        except (OSError, ValueError, NotImplementedError):
            # No executable, or an event loop without subprocesses (asyncio's selector loop on
            # Windows raises NotImplementedError): the runner draws.
            self._broken = True
            return
        self._reader = asyncio.create_task(self._read())

    def ahead(self, ref: str, draw: Callable[[], Any]) -> None:
        """Draw this image when the child has room, before any item asks for it (in the order
        handed over). Nothing happens for an image handed over before, or once the child failed."""
        if ref in self._by_ref or self._broken:
            return
        self._by_ref[ref] = asyncio.get_running_loop().create_future()
        self._later[ref] = draw
        self._send_ahead()

    async def hash_of(self, ref: str, draw: Callable[[], Any]) -> str | None:
        """The content hash of the image `draw` makes, once the child has drawn it and cached
        its PNG; None when the runner must draw it (the child not ready, unable, or failed)."""
        pending = self._by_ref.get(ref)
        if pending is None:
            pending = self._by_ref[ref] = asyncio.get_running_loop().create_future()
            self._send(ref, draw)
        elif ref in self._later:  # handed over ahead and not sent yet: needed now
            self._send(ref, self._later.pop(ref))
        elif ref in self._unclaimed:  # drawn ahead (or being drawn): the child may go further
            self._unclaimed.discard(ref)
            self._send_ahead()
        return await asyncio.shield(pending)  # items showing the same image share one drawing

    def _send(self, ref: str, draw: Callable[[], Any]) -> None:
        """Send one drawing to the child; its future gets None at once if it cannot go there."""
        pending = self._by_ref[ref]
        if not self._ready.is_set() or self._broken or self._process is None:
            pending.set_result(None)  # the runner draws it, and it is not sent again
            return
        try:
            job, message = next(self._jobs), pickle.dumps(draw)
        except Exception:  # noqa: BLE001 - not picklable: the runner draws it
            pending.set_result(None)
            return
        self._waiting[job] = pending
        try:
            self._process.stdin.write(_JOB_HEADER.pack(job, len(message)) + message)
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            self._fail_all()

    def _send_ahead(self) -> None:
        while (
            self._later
            and len(self._waiting) < _AHEAD_IN_FLIGHT
            and len(self._unclaimed) < _AHEAD_LEAD
            and self._ready.is_set()
            and not self._broken
        ):
            ref = next(iter(self._later))
            self._unclaimed.add(ref)
            self._send(ref, self._later.pop(ref))

    async def wait_ready(self) -> bool:
        """Wait until the child takes images (True) or cannot (False)."""
        if self._reader is None:
            return False
        ready = asyncio.ensure_future(self._ready.wait())
        await asyncio.wait([ready, self._reader], return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        return self._ready.is_set() and not self._broken

    async def close(self) -> None:
        """End the child. An idle one (every image answered) holds nothing: it is killed at once,
        which is quicker than its interpreter's exit. One still drawing (a stopped run) is let
        finish what it was sent (a few images: those asked for, and _AHEAD_IN_FLIGHT ahead), so
        no half-written file stays in the cache; killed if it does not within the grace period.
        What was handed over ahead and not yet sent is dropped."""
        if self._starting is not None:  # a child being started is ended too
            await asyncio.gather(self._starting, return_exceptions=True)
        process, self._process = self._process, None
        idle = not self._waiting
        self._fail_all()
        if process is None:
            return
        try:
            if idle:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            elif process.stdin is not None:
                with contextlib.suppress(OSError, RuntimeError):
                    process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), _CLOSE_GRACE_SECONDS)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        finally:
            if self._reader is not None:
                self._reader.cancel()
                await asyncio.gather(self._reader, return_exceptions=True)

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        try:
            while True:
                header = await stdout.readexactly(_HEADER.size)
                message = pickle.loads(await stdout.readexactly(_HEADER.unpack(header)[0]))
                if message == _READY:
                    self._ready.set()
                    self._send_ahead()
                    continue
                job, content_hash = message
                waiter = self._waiting.pop(job, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(content_hash)
                    self.drawn += content_hash is not None
                self._send_ahead()
        except (asyncio.IncompleteReadError, ConnectionError, pickle.UnpicklingError, ValueError):
            pass  # the child ended or broke: the runner draws what is left
        finally:
            self._fail_all()

    def _fail_all(self) -> None:
        """From now on the runner draws; whoever waits for the child is told so (None)."""
        self._broken = True
        for waiter in [*self._waiting.values(), *(self._by_ref[ref] for ref in self._later)]:
            if not waiter.done():
                waiter.set_result(None)
        self._waiting.clear()
        self._later.clear()
        self._unclaimed.clear()


def _child_environment() -> dict[str, str]:
    """The child's environment: ours without credentials (it draws; it never needs a key), and
    our import path, so it finds the code we run."""
    environment = {name: value for name, value in os.environ.items() if not _CREDENTIAL_NAMES.search(name)}
    environment["PYTHONPATH"] = os.pathsep.join(path for path in sys.path if path)
    return environment


# --- the child ------------------------------------------------------------------------------


def _send(stream: Any, message: object) -> None:
    data = pickle.dumps(message)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _no_picture() -> None:
    raise AssertionError("the child encodes drawn pixels; it never makes a picture")


def child_main(root: str, max_bytes: int) -> None:
    import numpy  # noqa: F401 - what every canvas is drawn with: loaded before saying ready

    from models.types import ImagePart

    cache = ImageCache(root, max_bytes)
    # Replies go on a copy of stdout; anything a library prints goes to stderr, not into them.
    requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _send(replies, _READY)
    while True:
        header = requests.read(_JOB_HEADER.size)
        if len(header) < _JOB_HEADER.size:
            return  # the run closed our stdin: done
        job, length = _JOB_HEADER.unpack(header)
        data = requests.read(length)
        try:
            # Unpickling imports the stimulus's module here; a drawing that does not come back
            # as it was sent (a method not found by its name) costs only its own job. The part
            # is what the runner's threads make of a drawing: the same hash, the same bytes,
            # cached under the same key.
            part = ImagePart(_no_picture, pixels=pickle.loads(data), encodings=cache)
            part.png()
            content_hash = part.sha256
        except Exception:  # noqa: BLE001 - the runner draws it and meets the error in the item
            content_hash = None
        _send(replies, (job, content_hash))


if __name__ == "__main__":
    child_main(sys.argv[1], int(sys.argv[2]))
