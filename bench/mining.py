"""Mining look-alike quadruples: how fast images are embedded (tiny random CLIP and DINOv2 on the
CPU, so the figure is the pipeline's own cost: reading, hashing, decoding, preprocessing, the
cache; a real CLIP-L or DINOv2-L adds its forward pass on top), and the quadruple search on
10,000 planted embeddings of the real models' sizes (768 and 1024), with its peak memory.

Run from the repository root:  python -m bench.mining [--images 300] [--search 10000]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from PIL import Image

from probes.tools.embeddings import HFEncoder, embed_files
from probes.tools.image_scan import scan_folder
from probes.tools.quadruples import find_quadruples


def _photos(folder: Path, count: int) -> None:
    """JPEG photographs' stand-ins: 640 x 480 (COCO's usual size), smooth noise around shared bases."""
    rng = np.random.default_rng(0)
    bases = [rng.integers(0, 255, (60, 80, 3)).astype(np.float32) for _ in range(8)]
    for index in range(count):
        small = bases[index % 8] + rng.normal(0, 25, (60, 80, 3))
        picture = Image.fromarray(np.clip(small, 0, 255).astype(np.uint8)).resize((640, 480), Image.BILINEAR)
        picture.save(folder / f"photo_{index:05d}.jpg", quality=90)


def _tiny_encoders():
    """tests/support/tiny_encoders.py by its path: pyllusion 1.4 installs a top-level `tests`
    package into site-packages, which hides this repository's `tests` from `import tests...`."""
    path = Path(__file__).resolve().parents[1] / "tests" / "support" / "tiny_encoders.py"
    spec = importlib.util.spec_from_file_location("tiny_encoders", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_embedding(count: int) -> None:
    tiny = _tiny_encoders()
    build_tiny_clip, build_tiny_dino = tiny.build_tiny_clip, tiny.build_tiny_dino
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "photos").mkdir()
        _photos(root / "photos", count)
        clip, dino = build_tiny_clip(root / "clip"), build_tiny_dino(root / "dino")
        started = time.perf_counter()
        files = scan_folder(root / "photos").files
        scanned = time.perf_counter() - started
        print(f"embedding {count} JPEG images of 640 x 480 on the CPU ({os.cpu_count()} cores), batch 16")
        print(f"  scan (check + sha256 of every file): {scanned:6.2f} s  {count / scanned:8.1f} images/s")
        for label, encoders, cache in (
            ("tiny CLIP alone", [HFEncoder(clip, "clip")], "c1"),
            ("tiny DINOv2 alone", [HFEncoder(dino, "dino")], "c2"),
            ("both (each image decoded once)", [HFEncoder(clip, "clip"), HFEncoder(dino, "dino")], "c3"),
        ):
            for encoder in encoders:  # load the model outside the timing: a real one loads once
                encoder.embed([Image.new("RGB", (64, 64))])
            started = time.perf_counter()
            done = embed_files(files, encoders, root / cache)
            took = time.perf_counter() - started
            assert len(done.files) == count
            print(f"  {label:32} {took:6.2f} s  {count / took:8.1f} images/s")
        encoders = [HFEncoder(clip, "clip"), HFEncoder(dino, "dino")]
        started = time.perf_counter()
        again = embed_files(files, encoders, root / "c3")
        took = time.perf_counter() - started
        assert again.computed == {"clip": 0, "dino": 0}
        print(f"  {'second run (all from the cache)':32} {took:6.2f} s  {count / took:8.1f} images/s (no model loaded)")


def _planted(count: int, groups: int, cluster: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, int]:
    """`count` images: unrelated noise, `groups` look-alike quadruples of which half have a DINOv2
    pair apart (the others agree), and one cluster of `cluster` near-duplicates (CLIP and DINOv2
    both alike) to exercise the work caps. Returns (clip, dino, quadruples planted to qualify)."""
    rng = np.random.default_rng(seed)
    clip = rng.normal(size=(count, 768)).astype(np.float32)
    dino = rng.normal(size=(count, 1024)).astype(np.float32)
    row = 0
    for group in range(groups):
        centre_c, centre_d = rng.normal(size=768), rng.normal(size=1024)
        for member in range(4):
            clip[row] = centre_c + rng.normal(0, 0.12, 768)  # pairwise CLIP cosine about 0.97
            apart = group % 2 == 0 and member == 3
            dino[row] = rng.normal(size=1024) if apart else centre_d + rng.normal(0, 0.25, 1024)
            row += 1
    centre_c, centre_d = rng.normal(size=768), rng.normal(size=1024)
    for _ in range(cluster):
        clip[row] = centre_c + rng.normal(0, 0.1, 768)
        dino[row] = centre_d + rng.normal(0, 0.1, 1024)
        row += 1
    return clip, dino, (groups + 1) // 2


def bench_search(count: int) -> None:
    clip, dino, planted = _planted(count, groups=500, cluster=300)
    inputs = (clip.nbytes + dino.nbytes) / 2**20
    print(f"\nsearch on {count} planted embeddings (CLIP 768-d, DINOv2 1024-d; inputs {inputs:.0f} MiB), "
          f"{planted} quadruples planted to qualify, a 300-image near-duplicate cluster")  # fmt: skip
    print(f"  a full {count} x {count} float32 similarity matrix would be {count * count * 4 / 2**20:,.0f} MiB")
    for block in (256, 512, 2048):
        tracemalloc.start()
        started = time.perf_counter()
        result = find_quadruples(clip, dino, 0.95, 0.6, block=block)
        took = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        stats = result.as_dict()
        print(f"  block {block:5d}: {took:6.2f} s, peak traced memory {peak / 2**20:6.1f} MiB beyond the inputs; "
              f"{stats['quadruples']} found, {stats['clip_edges']} CLIP edges, {stats['candidates']} candidates, "
              f"{stats['capped_images']} lists capped, truncated {stats['truncated']}")  # fmt: skip
    reused = find_quadruples(clip, dino, 0.95, 0.6, reuse=True)
    print(f"  with reuse: {len(reused.quadruples)} quadruples ({reused.candidates} candidates)")
    print("  (truncated: the near-duplicate cluster hit the per-image neighbour cap and the per-root candidate cap;"
          " it holds no qualifying set, as DINOv2 agrees there)")  # fmt: skip
    print(f"  process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB (all of the above)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--search", type=int, default=10_000)
    args = parser.parse_args()
    bench_embedding(args.images)
    bench_search(args.search)


if __name__ == "__main__":
    main()
