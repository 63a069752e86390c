"""The deflate of the PNGs we send (models/png.py): the standard library's zlib at level 1 (what
we used) against zlib-ng at level 2 (what we use), on the same rows of distinct stimuli of three
blind families, in one run. Prints seconds and kilobytes per family, and each ratio to zlib.

Run from the repository root:  python -m bench.deflate [--images 60]
"""

from __future__ import annotations

import argparse
import time
import zlib

from zlib_ng import zlib_ng

from probes.core.registry import get_benchmark
from probes.core.selection import select_items

FAMILIES = ("blind/touching-circles", "blind/line-intersections", "blind/olympic-circles")


def png_rows(pixels, width: int, height: int) -> bytes:
    """The rows as our encoder deflates them: each behind its filter byte (0: none)."""
    stride = width * 3
    return b"".join(b"\0" + bytes(pixels[row * stride : (row + 1) * stride]) for row in range(height))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=60)
    args = parser.parse_args()
    print(f"{'family':<26}{'deflate':<12}{'seconds':>9}{'ratio':>7}{'KB':>8}{'ratio':>7}")
    for family in FAMILIES:
        sources = {
            s.ref: s for item in select_items(get_benchmark(family).items(), args.images, 0) for s in item.images
        }
        rows = []
        for source in list(sources.values())[: args.images]:
            picture = source.load().convert("RGB")
            rows.append(png_rows(picture.tobytes(), picture.width, picture.height))
        figures = {}
        for name, module, level in (("zlib 1", zlib, 1), ("zlib-ng 2", zlib_ng, 2)):
            started = time.perf_counter()
            out = [module.compress(data, level) for data in rows]
            seconds = time.perf_counter() - started
            assert all(zlib.decompress(o) == data for o, data in zip(out, rows, strict=True))  # any reader takes it
            figures[name] = (seconds, sum(map(len, out)) / 1024)
        base_seconds, base_kb = figures["zlib 1"]
        for name, (seconds, kb) in figures.items():
            print(f"{family:<26}{name:<12}{seconds:>9.3f}{seconds / base_seconds:>7.2f}{kb:>8.0f}{kb / base_kb:>7.2f}")
        print(f"({len(rows)} distinct images)")


if __name__ == "__main__":
    main()
