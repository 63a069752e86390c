"""What reading an image in a decoding worker costs (issue 22): `load_image` through a worker
(probes/files/decoding.py) beside the same work in the calling process, for normal 1 MP and 4 MP
photos (noise, the worst case for the decoders) as PNG, JPEG and progressive JPEG.

For each file: the in-process time (`image_reading.read_image`, what `load_image` did before),
the worker's (a warm worker: started once, reused), their difference; the caller's own
processor time per read (what the server's process spends, GIL held or not); and the processor
time of a read in all, caller and worker together, beside the in-process read's (less at the
mercy of a busy machine than wall-clock time). Medians and minimums over --reps reads,
interleaved.

Run from the repository root:  python -m bench.decoding [--reps 15]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
from PIL import Image

from probes.files.decoding import DecodingPool
from probes.files.image_reading import read_image
from probes.files.images import MAX_FILE_BYTES, MAX_PIXELS

FILES = [
    ("1 MP PNG", (1155, 866), "PNG", {}),
    ("4 MP PNG", (2309, 1732), "PNG", {}),
    ("1 MP JPEG", (1155, 866), "JPEG", {"quality": 90}),
    ("4 MP JPEG", (2309, 1732), "JPEG", {"quality": 90}),
    ("4 MP progressive JPEG", (2309, 1732), "JPEG", {"quality": 90, "progressive": True}),
]


def _write(folder: Path, size: tuple[int, int], kind: str, options: dict) -> Path:
    noise = np.random.default_rng(0).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    path = folder / f"{size[0]}x{size[1]}.{kind.lower()}"
    Image.fromarray(noise).save(path, kind, **options)
    return path


def _worker_cpu(pool: DecodingPool) -> float:
    return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pool.workers())


def _timed(read, path: Path, limits: dict, pool: DecodingPool | None = None) -> tuple[float, float, float]:
    """Wall-clock, the caller's processor time, and processor time in all (the worker's too)."""
    worker = _worker_cpu(pool) if pool else 0.0
    wall, cpu = time.perf_counter(), time.process_time()
    read(path, **limits)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, cpu + (_worker_cpu(pool) - worker if pool else 0.0)


def _ms(values) -> str:
    return f"{statistics.median(values) * 1000:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    pool = DecodingPool(size=1)
    limits = {"verify": True, "decode": True, "max_pixels": MAX_PIXELS, "max_bytes": MAX_FILE_BYTES}
    try:
        with tempfile.TemporaryDirectory() as folder:
            print("| file | in process (median / min) | worker (median / min) | added (median) "
                  "| caller's CPU: in process / worker | CPU in all: in process / worker |")  # fmt: skip
            print("| --- | --- | --- | --- | --- | --- |")
            for name, size, kind, options in FILES:
                path = _write(Path(folder), size, kind, options)
                pool.read(path, **limits)  # the worker started and warm
                here, there = [], []
                for _ in range(args.reps):
                    here.append(_timed(read_image, path, limits))
                    there.append(_timed(pool.read, path, limits, pool))
                local, remote = (statistics.median(w for w, _, _ in runs) for runs in (here, there))
                print(
                    f"| {name} | {_ms(w for w, _, _ in here)} / {min(w for w, _, _ in here) * 1000:.0f} ms "
                    f"| {_ms(w for w, _, _ in there)} / {min(w for w, _, _ in there) * 1000:.0f} ms "
                    f"| {(remote - local) * 1000:+.0f} ms "
                    f"| {_ms(c for _, c, _ in here)} / {_ms(c for _, c, _ in there)} ms "
                    f"| {_ms(t for _, _, t in here)} / {_ms(t for _, _, t in there)} ms |"
                )
    finally:
        pool.close()


if __name__ == "__main__":
    main()
