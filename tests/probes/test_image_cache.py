"""The image cache beside the store (issue 16): encoded bytes by content hash, made once, bounded
by least-recent use, and consistent when two processes fill it at once."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import textwrap
import threading

from PIL import Image

from models.png import encode_rgb_png
from probes.running.image_cache import ImageCache, cache_dir
from tests.conftest import REPO


def png_for(number: int, side: int = 40) -> bytes:
    """A distinct, valid PNG per number (all of one size, give or take a byte)."""
    seed = hashlib.sha256(str(number).encode()).digest() * (side * side * 3 // 32 + 1)
    return encode_rgb_png(Image.frombytes("RGB", (side, side), seed[: side * side * 3]))


def key(number: int, encoding: str = "png1") -> str:
    return f"{hashlib.sha256(str(number).encode()).hexdigest()}.{encoding}"


def test_bytes_are_made_once_and_found_again_by_a_new_cache_on_the_same_folder(tmp_path):
    made = []

    def make():
        made.append(1)
        return png_for(1)

    cache = ImageCache(tmp_path / "images")
    assert cache.fetch(key(1), make) == png_for(1)
    assert cache.fetch(key(1), make) == png_for(1)
    assert ImageCache(tmp_path / "images").fetch(key(1), make) == png_for(1)  # another run, same store
    assert len(made) == 1
    assert cache.holds(key(1)) and not cache.holds(key(2))


def test_a_cache_folder_deleted_under_a_running_cache_is_made_again(tmp_path):
    """A session sweep or a person clearing the cache while the app runs: the next image is
    kept again, not silently never cached."""
    cache = ImageCache(tmp_path / "images")
    cache.fetch(key(1), lambda: png_for(1))
    shutil.rmtree(tmp_path / "images")
    assert not cache.holds(key(1))
    assert cache.fetch(key(1), lambda: png_for(1)) == png_for(1)
    assert cache.holds(key(1)) and ImageCache(tmp_path / "images").get(key(1)) == png_for(1)


def test_threads_asking_for_one_image_at_once_wait_for_one_encoding(tmp_path):
    cache = ImageCache(tmp_path / "images")
    made = []
    started = threading.Event()
    release = threading.Event()

    def make():
        made.append(1)
        started.set()
        release.wait(timeout=30)
        return png_for(2)

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.fetch(key(2), make))) for _ in range(8)]
    for thread in threads:
        thread.start()
    assert started.wait(timeout=30)
    release.set()
    for thread in threads:
        thread.join()
    assert results == [png_for(2)] * 8 and len(made) == 1


def test_the_cache_lives_beside_its_store_and_leaves_other_files_alone(tmp_path):
    store = tmp_path / "results.sqlite"
    assert cache_dir(store) == tmp_path / "results.sqlite.images"
    cache = ImageCache.beside(store)
    cache.put(key(3), png_for(3))
    stranger = cache.root / key(3)[:2] / "holiday.png"
    stranger.write_bytes(b"not ours")
    cache.max_bytes = 0
    cache.evict()
    assert stranger.read_bytes() == b"not ours"  # eviction deletes only files it could have written
    assert not cache.holds(key(3))


def test_past_its_bound_the_least_recently_used_images_go(tmp_path):
    # Room for five of these (noise images of one size, whose PNGs differ by a few bytes at most).
    cache = ImageCache(tmp_path / "images", max_bytes=int(sum(len(png_for(n)) for n in range(10, 15)) * 1.02))
    for number in range(10, 15):
        cache.put(key(number), png_for(number))
        os.utime(cache.root / key(number)[:2] / key(number), (1_000 + number, 1_000 + number))
    assert cache.get(key(10)) == png_for(10)  # the oldest, used again now: it stays
    cache.put(key(15), png_for(15))  # over the bound: down to 80% of it
    kept = {number for number in range(10, 16) if cache.holds(key(number))}
    assert kept == {10, 13, 14, 15} and cache.size() <= cache.max_bytes


def test_a_file_cut_short_is_a_miss_and_is_made_again(tmp_path):
    cache = ImageCache(tmp_path / "images")
    cache.put(key(4), png_for(4))
    path = cache.root / key(4)[:2] / key(4)
    path.write_bytes(png_for(4)[:-20])  # as a crash on a file system without ordered renames could leave it
    assert cache.get(key(4)) is None
    assert cache.fetch(key(4), lambda: png_for(4)) == png_for(4)
    assert cache.get(key(4)) == png_for(4)


def test_a_key_that_is_not_a_content_hash_is_made_but_never_kept(tmp_path):
    cache = ImageCache(tmp_path / "images")
    assert cache.fetch("../../escape.png1", lambda: png_for(5)) == png_for(5)
    assert not (tmp_path / "escape.png1").exists() and not cache.root.exists()


_FILLER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from probes.running.image_cache import ImageCache
    from tests.probes.test_image_cache import key, png_for

    root, name, bound = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    (root.parent / f"ready-{name}").touch()
    deadline = time.monotonic() + 60
    while not all((root.parent / f"ready-{n}").exists() for n in ("a", "b")):  # start together
        if time.monotonic() > deadline:
            sys.exit("the other process never started")
        time.sleep(0.001)
    cache = ImageCache(root, max_bytes=bound)
    shared, own = range(200), range(1000 if name == "a" else 2000, (1000 if name == "a" else 2000) + 100)
    for round in range(3):
        for number in [*shared, *own]:
            data = cache.fetch(key(number), lambda n=number: png_for(n))
            assert data == png_for(number), number
    print(cache.hits, cache.misses)
    """
)


def test_two_processes_filling_one_cache_at_once_leave_it_consistent(tmp_path):
    root = tmp_path / "results.sqlite.images"
    bound = len(png_for(0)) * 150  # smaller than what they write: both evict while the other writes
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _FILLER, str(root), name, str(bound)],
            cwd=REPO,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    outputs = [process.communicate(timeout=300) for process in processes]
    for process, (stdout, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr
        hits, misses = map(int, stdout.split())
        assert hits + misses == 3 * 300  # every image came back right, whichever process wrote it
    expected = {key(n): png_for(n) for n in [*range(200), *range(1000, 1100), *range(2000, 2100)]}
    files = [path for path in root.rglob("*") if path.is_file()]
    assert files, "nothing was kept"
    for path in files:
        assert path.name in expected, f"a stray file: {path.name}"  # no temporary file left behind
        assert path.read_bytes() == expected[path.name]  # whole, and the image its name says
        Image.open(io.BytesIO(path.read_bytes())).load()
    # Each process looks at the folder again after writing an eighth of the bound, so together
    # they can run over by that much each, and no more.
    assert ImageCache(root).size() <= bound * 1.25
