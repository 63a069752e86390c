"""Every decode bounded (issue 22): files whose structure costs a decoder minutes are refused by
their structural bound, in one line, before any decoder parses them; whatever a decoder is made
to do runs in a worker process that is killed at its wall-clock, processor-time and memory
bounds; normal images decode exactly as before. The bombs: tests/support/decode_bombs.py.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import numpy as np
import psutil
import pytest
from PIL import Image, ImageOps

from models.types import to_rgb
from probes.benchmarks.custom import CustomFolder, FolderError, UploadSet
from probes.files import image_reading
from probes.files.decoding import Bounds, DecodingPool, shared_pool
from probes.files.image_reading import Refused, read_image
from probes.files.image_structure import BoundPassed, check_structure
from probes.files.images import MAX_FILE_BYTES, MAX_PIXELS, ImageRejected, check_image_file, load_image
from tests.conftest import REPO
from tests.support.decode_bombs import MORE_BOMBS, UPLOAD_BOMBS, jpeg_scans

PUBLIC_UPLOAD_BYTES = 20 * 2**20
STRUCTURAL = [bomb for bomb in UPLOAD_BOMBS + MORE_BOMBS if "pixel limit" not in bomb.refused]


def _read(pool: DecodingPool, path: Path, decode: bool = True):
    return pool.read(path, verify=True, decode=decode, max_pixels=MAX_PIXELS, max_bytes=MAX_FILE_BYTES)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def pools():
    made: list[DecodingPool] = []

    def make(bounds: Bounds | None = None, size: int = 1) -> DecodingPool:
        made.append(DecodingPool(bounds, size))
        return made[-1]

    yield make
    for pool in made:
        pool.close()


@pytest.fixture
def big_png(tmp_path_factory) -> Path:
    """6000 x 6000 (36 MP, under the pixel bound): noise in one corner, so it is not tiny."""
    path = tmp_path_factory.mktemp("big") / "big.png"
    image = Image.new("RGB", (6000, 6000), (40, 90, 160))
    image.paste(Image.fromarray(np.random.default_rng(0).integers(0, 256, (600, 600, 3), dtype=np.uint8)))
    image.save(path, compress_level=1)
    return path


# --- the structural bounds ----------------------------------------------------------------------


@pytest.mark.parametrize("bomb", UPLOAD_BOMBS + MORE_BOMBS, ids=[bomb.filename for bomb in UPLOAD_BOMBS + MORE_BOMBS])
def test_each_bomb_is_refused_in_one_line_naming_its_bound(bomb, tmp_path):
    path = tmp_path / bomb.filename
    bomb.write(path)
    assert path.stat().st_size < PUBLIC_UPLOAD_BYTES  # every one fits a public upload
    for attempt in (check_image_file, load_image):
        with pytest.raises(ImageRejected, match=f"^{bomb.filename}: {bomb.refused}") as caught:
            attempt(path)
        assert "\n" not in str(caught.value)
    with pytest.raises(FolderError, match=f"^image {bomb.filename}: {bomb.refused}"):
        UploadSet.from_files([path], "Which?", [], "")


@pytest.mark.parametrize("bomb", STRUCTURAL, ids=[bomb.filename for bomb in STRUCTURAL])
def test_a_structural_bound_is_met_before_any_decoder_parses_the_file(bomb, tmp_path, monkeypatch):
    path = tmp_path / bomb.filename
    bomb.write(path)
    with pytest.raises(BoundPassed, match=bomb.refused):
        check_structure(path.read_bytes())

    def no_parsing(*args, **kwargs):
        raise AssertionError("Pillow was asked to parse the file")

    monkeypatch.setattr(image_reading.Image, "open", no_parsing)
    with pytest.raises(Refused, match=bomb.refused):  # what the worker runs, here in this process
        read_image(path, verify=True, decode=True, max_pixels=MAX_PIXELS, max_bytes=MAX_FILE_BYTES)


# --- normal images: as before -------------------------------------------------------------------


def _noise(width: int, height: int, seed: int = 0) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8))


def _frames(count: int, size: tuple[int, int] = (48, 32)) -> list[Image.Image]:
    return [_noise(*size, seed=index) for index in range(count)]


def _turned_jpeg(path: Path) -> None:
    exif = Image.Exif()
    exif[0x0112] = 6
    _noise(40, 24).save(path, "JPEG", quality=92, exif=exif)


NORMAL = {
    "photo.png": lambda p: _noise(1200, 900).save(p),
    "alpha.png": lambda p: _noise(64, 64).convert("RGBA").save(p),
    "grey16.png": lambda p: Image.fromarray(np.arange(64 * 64, dtype=np.uint16).reshape(64, 64) * 16).save(p),
    "photo.jpg": lambda p: _noise(1200, 900).save(p, quality=90),
    "progressive.jpg": lambda p: _noise(1200, 900).save(p, quality=90, progressive=True),
    "turned.jpg": _turned_jpeg,
    "animated.gif": lambda p: (f := _frames(5))[0].save(p, save_all=True, append_images=f[1:], duration=80),
    "animated.png": lambda p: (f := _frames(4))[0].save(p, save_all=True, append_images=f[1:], duration=80),
    "pages.tiff": lambda p: (f := _frames(3))[0].save(p, save_all=True, append_images=f[1:]),
    "still.webp": lambda p: _noise(300, 200).save(p, quality=80),
    "animated.webp": lambda p: (f := _frames(3))[0].save(p, save_all=True, append_images=f[1:], lossless=True),
    "plain.bmp": lambda p: _noise(50, 40).save(p),
}


@pytest.mark.parametrize("name", list(NORMAL))
def test_normal_images_are_checked_and_decoded_exactly_as_before(name, tmp_path):
    path = tmp_path / name
    NORMAL[name](path)
    check_structure(path.read_bytes())  # within every bound
    with Image.open(path) as image:  # what the playground did in its own process before
        expected_info = (*image.size, getattr(image, "n_frames", 1))
        image.seek(0)
        expected = to_rgb(ImageOps.exif_transpose(image))
    assert tuple(check_image_file(path)) == expected_info
    decoded = load_image(path)
    assert decoded.mode == "RGB" and decoded.size == expected.size
    assert decoded.tobytes() == expected.tobytes()
    upload = UploadSet.from_files([path], "What is it?", [], "")
    assert upload.items()[0].images[0].load().tobytes() == expected.tobytes()
    if expected_info[2] > 1:
        assert f"{name} has {expected_info[2]} frames" in " ".join(upload.notes)


def test_a_progressive_jpeg_at_the_scan_bound_still_decodes(tmp_path):
    path = tmp_path / "hundred.jpg"
    jpeg_scans(side=256, scans=90)(path)  # Pillow's 10 scans and 90 more: 100, the bound
    assert load_image(path).size == (256, 256)
    jpeg_scans(side=256, scans=91)(path)
    with pytest.raises(ImageRejected, match="more than 100 JPEG scans"):
        load_image(path)


def test_a_file_written_again_is_checked_again(tmp_path):
    """The check is remembered by the file's identity on disk: the same bytes' length and
    modification time, written again, are a new file (its change time moved)."""
    path = tmp_path / "same.png"
    _noise(64, 48).save(path)
    assert tuple(check_image_file(path)) == (64, 48, 1)
    data = bytearray(path.read_bytes())
    data[16:24] = data[20:24] + data[16:20]  # width and height swapped in IHDR, its checksum fixed
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    before = path.stat()
    time.sleep(0.01)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert tuple(check_image_file(path)) == (48, 64, 1)


# --- the worker's bounds ------------------------------------------------------------------------


def test_a_reused_worker_reads_file_after_file(pools, tmp_path):
    path = tmp_path / "photo.png"
    _noise(800, 600).save(path)
    pool = pools(size=1)
    first = _read(pool, path).image.tobytes()
    worker = pool.workers()
    for _ in range(10):
        assert _read(pool, path).image.tobytes() == first
    assert pool.workers() == worker and len(worker) == 1  # one process, started once


def test_past_the_wall_clock_bound_the_worker_is_killed_not_waited_on(pools, big_png, tmp_path):
    small = tmp_path / "small.png"
    _noise(32, 32).save(small)
    pool = pools(size=1)
    _read(pool, small)
    (pid,) = pool.workers()
    pool.bounds = Bounds(wall_seconds=0.05)
    with pytest.raises(Refused, match=r"^not read within 0\.05 s, the bound for one image; its reading was stopped$"):
        _read(pool, big_png)  # 36 MP: read, checked and decoded in far more than 50 ms
    assert not _alive(pid) and pool.stopped == 1 and pool.workers() == []
    pool.bounds = Bounds()
    assert _read(pool, small).image.size == (32, 32)  # the next file gets a new worker
    assert pool.workers() != [pid]


def test_the_kernel_ends_a_worker_past_its_processor_time_and_the_bound_moves_per_file():
    """`_limit_cpu` as the worker calls it before each file (a bound of 1 s: each file gets at
    least 1 s, at most 2): five files of 0.5 s each pass, more than any one limit allowed the
    process in all, and a file that burns on is ended by the kernel (SIGXCPU). (Half the bound
    per file: the kernel counts processor time in ticks, a little apart from Python's clock.)"""
    code = (
        "import time\n"
        "from probes.files.decoding import _limit_cpu\n"
        "def burn(seconds):\n"
        "    end = time.process_time() + seconds\n"
        "    while time.process_time() < end: pass\n"
        "start = time.process_time()\n"
        "for _ in range(5):\n"
        "    _limit_cpu(1)\n"
        "    burn(0.5)\n"
        "print('five files done', time.process_time() - start, flush=True)\n"
        "_limit_cpu(1)\n"
        "burn(60)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "five files done" in done.stdout, (done.returncode, done.stderr)
    assert float(done.stdout.split()[-1]) > 2.0  # past what a single limit (at most 2 s) allowed
    assert done.returncode == -signal.SIGXCPU, (done.returncode, done.stderr)


def test_a_worker_ended_by_its_processor_bound_is_named_so(pools, tmp_path):
    """The pool's side of the bound: the kernel's SIGXCPU (sent here while the worker decodes a
    progressive JPEG at the scan bound, as the kernel would at the limit) becomes one line."""
    path = tmp_path / "heavy.jpg"
    jpeg_scans(side=6000, scans=90)(path)
    pool = pools(Bounds(cpu_seconds=20, wall_seconds=600), size=1)
    _read(pool, path, decode=False)
    (pid,) = pool.workers()
    worker = psutil.Process(pid)

    def signal_once_busy() -> None:
        idle, give_up = sum(worker.cpu_times()[:2]), time.monotonic() + 300
        while sum(worker.cpu_times()[:2]) < idle + 0.2:  # decoding has begun
            if time.monotonic() > give_up:
                return
            time.sleep(0.01)
        os.kill(pid, signal.SIGXCPU)

    sender = threading.Thread(target=signal_once_busy, daemon=True)
    sender.start()
    with pytest.raises(Refused, match=r"^reading it took over 20 s of processor time, the bound for one image"):
        _read(pool, path)
    sender.join(timeout=60)
    assert not _alive(pid) and pool.stopped == 1


def test_past_the_memory_bound_the_file_is_refused_and_the_worker_retired(pools, big_png, tmp_path):
    small = tmp_path / "small.png"
    _noise(32, 32).save(small)
    probe = pools(size=1)
    _read(probe, small)
    baseline = psutil.Process(probe.workers()[0]).memory_info().vms
    pool = pools(Bounds(memory_bytes=baseline + 80 * 2**20), size=1)  # 36 MP need 144 MB at least
    _read(pool, small)
    (pid,) = pool.workers()
    with pytest.raises(Refused, match=r"^reading it needs over [\d,]+ MB of memory, the bound for one image$"):
        _read(pool, big_png)
    assert not _alive(pid)
    assert _read(pool, small).image.size == (32, 32)


def test_a_fifo_or_device_is_refused_without_waiting_on_it(pools, tmp_path):
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    pool = pools(Bounds(wall_seconds=120), size=1)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(Refused, match="not a regular file"):
            _read(pool, path)
    with pytest.raises(ImageRejected, match="pipe.png: file not found"):
        check_image_file(fifo)


def test_no_worker_is_left_burning_after_the_bombs_are_refused(tmp_path):
    for bomb in UPLOAD_BOMBS:
        bomb.write(tmp_path / bomb.filename)
        with pytest.raises(ImageRejected):
            load_image(tmp_path / bomb.filename)
    workers = [psutil.Process(pid) for pid in shared_pool().workers()]
    assert 1 <= len(workers) <= shared_pool().size
    before = [sum(worker.cpu_times()[:2]) for worker in workers]
    time.sleep(1.0)
    after = [sum(worker.cpu_times()[:2]) for worker in workers]
    assert all(later - earlier < 0.2 for earlier, later in zip(before, after, strict=True)), (before, after)
    children = [child for child in psutil.Process().children(recursive=True) if child.is_running()]
    assert {child.pid for child in children if "probes.files.decoding" in " ".join(child.cmdline())} == {
        worker.pid for worker in workers
    }


def test_an_idle_worker_lets_go_of_the_largest_image_it_decoded(pools, tmp_path):
    path = tmp_path / "translucent.png"
    Image.new("RGBA", (6000, 6000), (10, 200, 30, 128)).save(path, compress_level=1)
    pool = pools(size=1)
    assert _read(pool, path).image.size == (6000, 6000)  # 36 MP with alpha: over 400 MB while decoding
    worker = psutil.Process(pool.workers()[0])
    give_up = time.monotonic() + 60
    while worker.memory_info().rss > 100 * 2**20 and time.monotonic() < give_up:
        time.sleep(0.05)
    assert worker.memory_info().rss < 100 * 2**20, worker.memory_info()


def test_a_folder_image_replaced_after_its_check_is_refused_when_a_run_decodes_it(tmp_path):
    """A folder is checked when read; a file swapped afterwards for a bomb of the same size, its
    modification time put back (so the item's ref still matches), is met by the worker's bounds
    when the run decodes it: that item's one-line error, not minutes of the server's time."""
    folder = tmp_path / "set"
    folder.mkdir()
    bomb = next(bomb for bomb in UPLOAD_BOMBS if bomb.filename == "chunks.png")
    bomb.write(tmp_path / "bomb.png")
    size = (tmp_path / "bomb.png").stat().st_size
    buffer = io.BytesIO()
    _noise(64, 64).save(buffer, "PNG")
    good = buffer.getvalue()
    (folder / "a.png").write_bytes(good + b"\0" * (size - len(good)))  # padded after IEND: still fine
    (folder / "items.jsonl").write_text('{"id": "q", "image": "a.png", "question": "Q?", "answer": "yes"}\n')
    item = CustomFolder(str(folder)).items()[0]
    before = (folder / "a.png").stat()
    (folder / "a.png").write_bytes((tmp_path / "bomb.png").read_bytes())
    os.utime(folder / "a.png", ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(ImageRejected, match=r"^a\.png: more than 1,000 PNG chunks other than image data"):
        item.images[0].load()
