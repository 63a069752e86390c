"""Image files checked and decoded in worker processes, each file within bounds of wall-clock
time, processor time and memory.

Why a process: a decoder meeting a hostile file can run for minutes (issue 22: 319 s of
processor time for one progressive JPEG) and, in the server's own process, holds the GIL for
much of it, so other visitors' pages wait. A worker has an interpreter of its own and can be
stopped: when a file passes a bound the worker is killed (SIGKILL), never waited on, and the
caller gets one line saying which bound. The structural bounds (`image_structure.py`) refuse
the known bombs in milliseconds before any decoder runs; these bounds catch whatever else a
decoder can be made to do.

- wall-clock: the parent stops waiting at the deadline and kills the worker;
- processor time: RLIMIT_CPU in the worker, set before each file to what it has used plus the
  bound (the kernel ends it with SIGXCPU), so a reused worker is not charged for earlier files;
- memory: RLIMIT_AS in the worker, so an allocation past it fails there, not in the server.

A few workers are kept and reused (`POOL_SIZE`): starting one costs its imports (about 0.1 s);
a normal file then costs a round trip of a few milliseconds plus its pixels over a pipe.
Decoded pixels come back as raw RGB bytes, not re-encoded: copying 12 MB for a 4 MP image over
a pipe takes a few milliseconds, encoding a PNG of it and decoding it again a few hundred.

Protocol over the worker's stdin and stdout: each request is a length-prefixed JSON object; each
reply a length-prefixed JSON object, followed by the pixels when it says so. Replies are JSON,
never pickles: a worker is where hostile bytes are parsed, and what it says must not be able to
run code in the server even if a decoder were subverted. Every reply is checked (its length,
its fields, the pixel count against the bound) before it is believed.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from PIL import Image

from probes.files.image_reading import Read, Refused, read_image, reason

_LENGTH = struct.Struct(">I")
_MAX_MESSAGE = 64 * 1024  # a reply's JSON part: a few fields and a one-line message
_MAX_SHOWN = 500  # characters of a worker's message shown to a user
_PIPE_BYTES = 1 << 20  # the pipe's capacity when Linux lets us widen it: fewer reads for pixels
STARTUP_SECONDS = 120.0  # a worker's imports, on a loaded 2-core machine
POOL_SIZE = max(2, min(4, os.cpu_count() or 2))


@dataclass(frozen=True)
class Bounds:
    """What one file may cost a worker. The defaults are far above what any image within the
    pixel bound needs (a 40 MP PNG decodes in about a second here, a 40 MP progressive JPEG of
    100 scans in about 3 s; a 40 MP RGBA PNG peaks at 700 MB of address space) and far below
    what stalls a server."""

    wall_seconds: float = 30.0
    cpu_seconds: int = 20
    memory_bytes: int = 2 * 2**30

    def over_time(self) -> str:
        return f"not read within {self.wall_seconds:g} s, the bound for one image; its reading was stopped"

    def over_cpu(self) -> str:
        return f"reading it took over {self.cpu_seconds} s of processor time, the bound for one image; it was stopped"

    def over_memory(self) -> str:
        return f"reading it needs over {self.memory_bytes // 2**20:,} MB of memory, the bound for one image"


class DecodingPool:
    """Up to `size` workers, started when first needed and reused; a caller waits for a free
    one. Thread-safe: the runner's threads and the playground's handlers share one pool."""

    def __init__(self, bounds: Bounds | None = None, size: int = POOL_SIZE):
        self.bounds = bounds or Bounds()
        self.size = size
        self.stopped = 0  # files whose worker was killed at a bound (tests and benches read it)
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()  # started and not ended: idle or at work
        self._starting = 0
        self._changed = threading.Condition()
        self._pid = os.getpid()

    def read(self, path: str | Path, *, verify: bool, decode: bool, max_pixels: int, max_bytes: int) -> Read:
        """`image_reading.read_image` in a worker, within `bounds`; raises Refused."""
        request = {"path": os.fspath(path), "verify": verify, "decode": decode, "max_pixels": max_pixels,
                   "max_bytes": max_bytes, "cpu_seconds": self.bounds.cpu_seconds}  # fmt: skip
        worker = self._take()
        try:
            return worker.ask(request, self.bounds, max_pixels)
        finally:
            self._put_back(worker)

    def workers(self) -> list[int]:
        """Process ids of the workers alive now."""
        with self._changed:
            return [worker.process.pid for worker in self._all if worker.process.poll() is None]

    def close(self) -> None:
        """End every worker (idle ones, and one at work too: nothing waits on it). The pool
        starts new ones if asked again."""
        with self._changed:
            workers, self._all, self._idle = list(self._all), set(), []
            self._changed.notify_all()
        for worker in workers:
            worker.kill()

    def _take(self) -> _Worker:
        with self._changed:
            if os.getpid() != self._pid:  # a forked copy of the server: its workers are not ours
                self._idle, self._all, self._starting, self._pid = [], set(), 0, os.getpid()
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.process.poll() is None:
                        return worker
                    self._all.discard(worker)  # ended while idle (killed from outside): replaced
                if len(self._all) + self._starting < self.size:
                    break
                self._changed.wait()
            self._starting += 1
        worker = None
        try:
            worker = _Worker(self.bounds.memory_bytes)
            return worker
        finally:
            with self._changed:
                self._starting -= 1
                if worker is not None:
                    self._all.add(worker)
                self._changed.notify()

    def _put_back(self, worker: _Worker) -> None:
        if not worker.usable:
            worker.kill()  # already ended when a bound stopped it; a retired one ends here
        with self._changed:
            if worker.usable and worker in self._all:
                self._idle.append(worker)
            else:
                self.stopped += worker.stopped_at_bound
                self._all.discard(worker)
            self._changed.notify()


class _Worker:
    """One worker process, used by one caller at a time."""

    def __init__(self, memory_bytes: int):
        self.usable = False
        self.stopped_at_bound = False
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(memory_bytes)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=_environment(), bufsize=0, close_fds=True,
            )  # fmt: skip
        except (OSError, ValueError) as exc:
            raise Refused(f"cannot be checked now: the image reader did not start ({exc}); try again") from None
        self._replies: IO[bytes] = self.process.stdout  # type: ignore[assignment] - unbuffered: a FileIO
        self._poll = select.poll()
        self._poll.register(self._replies.fileno(), select.POLLIN)
        with contextlib.suppress(AttributeError, OSError):  # Linux only, and within the system's maximum
            import fcntl

            fcntl.fcntl(self._replies.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        try:
            ready = self._message(time.monotonic() + STARTUP_SECONDS)
        except (EOFError, OSError, ValueError):  # OSError: TimeoutError among them
            ready = None
        if ready != {"ready": True}:
            self.kill()
            raise Refused("cannot be checked now: the image reader did not start; try again")
        self.usable = True

    def ask(self, request: dict[str, Any], bounds: Bounds, max_pixels: int) -> Read:
        data = json.dumps(request).encode()
        deadline = time.monotonic() + bounds.wall_seconds
        self.usable = False  # until its reply is read whole: a worker cut off mid-reply is not reused
        try:
            _write_all(self.process.stdin, _LENGTH.pack(len(data)) + data)  # type: ignore[arg-type]
            reply = self._message(deadline)
            if "refused" in reply:
                message = " ".join(str(reply["refused"]).split())[:_MAX_SHOWN]
                self.usable = not reply.get("retire", False)
                if reply.get("over") == "memory":
                    message = bounds.over_memory()
                raise Refused(message)
            read = self._read(reply, deadline, max_pixels)
            if request["decode"] and read.image is None:
                raise ValueError("no image where one was asked for")
        except TimeoutError:
            self._stop()
            raise Refused(bounds.over_time()) from None
        except (EOFError, OSError):  # the worker ended (or its pipe broke) before answering
            code = self.kill()
            if code == -signal.SIGXCPU:
                self.stopped_at_bound = True
                raise Refused(bounds.over_cpu()) from None
            raise Refused(
                f"the image reader stopped on this file ({_ended(code)}); it cannot be read as an image"
            ) from None
        except (ValueError, KeyError, TypeError):  # a reply out of protocol: that worker is not trusted again
            self.kill()
            raise Refused("the image reader answered out of turn on this file; it cannot be read as an image") from None
        self.usable = True
        return read

    def _read(self, reply: dict[str, Any], deadline: float, max_pixels: int) -> Read:
        width, height, frames = (int(reply[name]) for name in ("width", "height", "frames"))
        identity = tuple(int(value) for value in reply["identity"])
        if min(width, height) < 0 or width * height > max_pixels or frames < 1:
            raise ValueError("a reply past the bounds it was given")
        image = None
        if "image" in reply:  # upright, so possibly turned: its own width and height
            size = tuple(int(value) for value in reply["image"])
            if len(size) != 2 or min(size) < 1 or size[0] * size[1] != width * height:
                raise ValueError("pixels of the wrong size")
            image = self._pixels(size, deadline)
        return Read(width, height, frames, identity, image)

    def _pixels(self, size: tuple[int, int], deadline: float) -> Image.Image:
        """Raw RGB rows, unpacked into the image as they arrive (what `Image.frombytes` does,
        a band at a time): no second copy of the pixels is held, and unpacking overlaps the
        worker's sending."""
        image = Image.new("RGB", size)
        decoder = Image._getdecoder("RGB", "raw", "RGB")
        decoder.setimage(image.im, (0, 0, *size))
        row = size[0] * 3
        band = memoryview(bytearray(max(1, _PIPE_BYTES // row) * row))
        left = row * size[1]
        while left:
            chunk = band[: min(left, len(band))]
            self._read_into(chunk, deadline)
            decoder.decode(chunk)
            left -= len(chunk)
        return image

    def _message(self, deadline: float) -> dict[str, Any]:
        header = bytearray(_LENGTH.size)
        self._read_into(memoryview(header), deadline)
        (length,) = _LENGTH.unpack(header)
        if length > _MAX_MESSAGE:
            raise ValueError("a reply too long")
        body = bytearray(length)
        self._read_into(memoryview(body), deadline)
        message = json.loads(body)
        if not isinstance(message, dict):
            raise ValueError("a reply that is not an object")
        return message

    def _read_into(self, view: memoryview, deadline: float) -> None:
        done = 0
        while done < len(view):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not self._poll.poll(max(1, math.ceil(left * 1000))):
                continue
            count = self._replies.readinto(view[done:])
            if not count:
                raise EOFError
            done += count

    def _stop(self) -> None:
        """Past a bound: killed at once, never waited on to finish (only reaped)."""
        self.stopped_at_bound = True
        self.kill()

    def kill(self) -> int | None:
        """End the worker now and reap it; its exit code (negative: the signal that ended it)."""
        self.usable = False
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        try:
            self.process.wait(timeout=10)  # a SIGKILLed process is reaped at once
        except subprocess.TimeoutExpired:
            return None
        # A worker that died on its own keeps its own code; one killed here reads -SIGKILL.
        return self.process.returncode


def _write_all(stream: IO[bytes], data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[stream.write(view) or 0 :]


def _ended(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
    return f"exit status {code}"


def _environment() -> dict[str, str]:
    """A worker's environment: only what Python needs to find our code. It reads files; it
    never needs a key, a proxy or anything else of ours."""
    environment = {"PYTHONPATH": os.pathsep.join(path for path in sys.path if path), "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT"):
        if name in os.environ:
            environment[name] = os.environ[name]
    return environment


_shared: DecodingPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> DecodingPool:
    """The process's pool, made on first use and ended when the process exits."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = DecodingPool()
            atexit.register(_shared.close)
        return _shared


# --- the worker -------------------------------------------------------------------------------


def _send(stream: IO[bytes], message: dict[str, Any], flush: bool = True) -> None:
    data = json.dumps(message).encode()
    stream.write(_LENGTH.pack(len(data)) + data)
    if flush:
        stream.flush()


def _read_exactly(stream: IO[bytes], count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = stream.read(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _limit_cpu(seconds: int) -> None:
    """The kernel ends this process (SIGXCPU) once it has used `seconds` more of processor time
    than now. The soft limit is moved for each file; the hard one is left as it is."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime) + seconds
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def child_main(memory_bytes: int) -> None:
    import resource

    # Not given a lower priority: at nice 5, on a 2-core machine at a load average of 8, a 40 MP
    # progressive JPEG within every bound (2.5 s of processor time alone) was not read within
    # the 30 s wall-clock bound; a normal image must not fail because others keep the machine
    # busy. The processor-time bound is what keeps one file from holding a core for long.
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which then ends us
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a worker ended by a bound leaves no core file
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    # Replies go on a copy of stdout; anything a library prints goes to stderr, not into them.
    requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _send(replies, {"ready": True})
    while True:
        header = _read_exactly(requests, _LENGTH.size)
        if header is None:
            return  # the parent closed our stdin, or exited: done
        request = json.loads(_read_exactly(requests, _LENGTH.unpack(header)[0]) or b"{}")
        _limit_cpu(int(request["cpu_seconds"]))
        try:
            read = read_image(request["path"], verify=request["verify"], decode=request["decode"],
                              max_pixels=request["max_pixels"], max_bytes=request["max_bytes"])  # fmt: skip
        except Refused as exc:
            _send(replies, {"refused": str(exc)})
            continue
        except MemoryError:
            # What the allocation that failed left behind is not worth trusting: retire.
            _send(replies, {"refused": "memory", "over": "memory", "retire": True})
            continue
        except Exception as exc:  # noqa: BLE001 - a bug met on odd bytes: that file's refusal, then retire
            _send(replies, {"refused": f"cannot be read as an image ({reason(exc)})", "retire": True})
            continue
        image = read.image
        reply = {"width": read.width, "height": read.height, "frames": read.frames, "identity": list(read.identity)}
        if image is not None:
            reply["image"] = list(image.size)
        _send(replies, reply, flush=image is None)
        if image is not None:
            # What `tobytes` does, a band at a time straight into the pipe: no second copy.
            encoder = Image._getencoder("RGB", "raw", "RGB")
            encoder.setimage(image.im, (0, 0, *image.size))
            while True:
                _, done, data = encoder.encode(max(_PIPE_BYTES, image.width * 4))
                replies.write(data)
                if done:
                    break
            replies.flush()
            del image, read, encoder  # an idle worker holds no image (tested)


if __name__ == "__main__":
    child_main(int(sys.argv[1]))
