"""What reading an image in a decoding worker costs (issue 22): `load_image` through a worker
(probes/files/decoding.py) beside the same work in the calling process, for normal 1 MP and 4 MP
photos (noise, the worst case for the decoders) as PNG, JPEG and progressive JPEG.

For each file: the in-process time (`image_reading.read_image`, what `load_image` did before),
the worker's (a warm worker: started once, reused), their difference, and the caller's own
processor time per read (what the server's process spends, GIL held or not). Medians and
minimums over --reps reads, interleaved.

Run from the repository root:  python -m bench.decoding [--reps 15]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
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


def _timed(read, path: Path, limits: dict) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    read(path, **limits)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    pool = DecodingPool(size=1)
    limits = {"verify": True, "decode": True, "max_pixels": MAX_PIXELS, "max_bytes": MAX_FILE_BYTES}
    try:
        with tempfile.TemporaryDirectory() as folder:
            print(
                "| file | in process (median / min) | worker (median / min) | added (median) | caller CPU in process / worker |"
            )
            print("| --- | --- | --- | --- | --- |")
            for name, size, kind, options in FILES:
                path = _write(Path(folder), size, kind, options)
                pool.read(path, **limits)  # the worker started and warm
                here, there = [], []
                for _ in range(args.reps):
                    here.append(_timed(read_image, path, limits))
                    there.append(_timed(pool.read, path, limits))
                local = statistics.median(w for w, _ in here)
                remote = statistics.median(w for w, _ in there)
                print(
                    f"| {name} | {local * 1000:.0f} / {min(w for w, _ in here) * 1000:.0f} ms "
                    f"| {remote * 1000:.0f} / {min(w for w, _ in there) * 1000:.0f} ms "
                    f"| {(remote - local) * 1000:+.0f} ms "
                    f"| {statistics.median(c for _, c in here) * 1000:.0f} / {statistics.median(c for _, c in there) * 1000:.0f} ms |"
                )
    finally:
        pool.close()


if __name__ == "__main__":
    main()
