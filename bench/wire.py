"""Close to the wire (issue 16): what a run costs against a fast local server, beside a plain
asyncio + openai SDK loop that sends the same PNG files' bytes.

For 400 `blind/touching-circles` items at concurrency 16, against a local OpenAI-protocol server
in its own process answering after 10 ms and after 200 ms, in one run and interleaved (the order
alternates pair by pair), each variant in its own process, timed from its start to its exit:

- plain: `asyncio` + `openai.AsyncOpenAI`, a semaphore of 16, each item's PNG file read and sent
  as it is (the files written beforehand with our encoder, so the bytes on the wire are the same);
- first: our runner on a new store (every image drawn, hashed, encoded);
- second: our runner for another model on that store (another model already answered these
  items, so every image is known to the store and its image cache);
- custom first / second: the same two with the same PNG files as a `custom:` folder;
- first / second (before), with `--before CHECKOUT`: the same two run with another checkout's
  code (an exported commit), interleaved with the rest.

It prints each variant's median wall time and its ratio to the plain loop, time to the first
request and after the last reply, CPU seconds and peak RSS (the variant's own VmHWM; for our
runner, with its drawing child's CPU and peak RSS added: probes/running/drawing_process.py); the
image-drawing floor (every distinct image drawn once, serially, CPU seconds) and the image floor
(drawn, hashed and encoded). Then, at 10 ms, one pair per canvas size (384, 769, 1155 px) for
peak RSS.

Run from the repository root:  python -m bench.wire [--pairs 3] [--before CHECKOUT] [--tree CHECKOUT]
Profile one variant (CPU time per thread, merged):
                               python -m bench.wire --profile second --latencies 0.01 --pairs 1
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARK = "blind/touching-circles"
SEED = 0
VARIANTS = ("plain", "first", "second", "custom first", "custom second", "first (before)", "second (before)")


# --- children: each variant in its own process --------------------------------------------


def _watch_sends(marks: dict[str, float] | None = None) -> dict[str, float]:
    """Record when the first request went out and the last reply came back (epoch seconds)."""
    from openai._base_client import AsyncHttpxClientWrapper as Client  # the SDK's HTTP client

    marks = {} if marks is None else marks
    send = Client.send

    async def watched(self, request, **kwargs):
        marks.setdefault("first_send", time.time())
        response = await send(self, request, **kwargs)
        marks["last_reply"] = time.time()
        return response

    Client.send = watched
    return marks


def child_plain(args: argparse.Namespace) -> dict:
    import openai

    marks = _watch_sends()
    manifest = [json.loads(line) for line in Path(args.manifest).read_text().splitlines()]

    async def go() -> list[str]:
        client = openai.AsyncOpenAI(base_url=args.base_url, api_key="bench")
        gate = asyncio.Semaphore(args.concurrency)

        async def one(entry: dict) -> str:
            async with gate:
                data = base64.b64encode(Path(entry["file"]).read_bytes()).decode("ascii")
                content = [
                    {"type": "text", "text": entry["question"]},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
                ]
                response = await client.chat.completions.create(
                    model="plain", messages=[{"role": "user", "content": content}], max_tokens=16, temperature=0
                )
                return response.choices[0].message.content

        replies = await asyncio.gather(*(one(entry) for entry in manifest))
        await client.close()
        return replies

    replies = asyncio.run(go())
    assert len(replies) == len(manifest) and all(replies)
    return marks


def _vm_hwm_mb(pid: int | str = "self") -> float:
    """A process's own peak RSS (os.wait4's ru_maxrss would count the parent's memory at fork
    time too: Linux carries it across exec)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


def _watch_drawing_child(marks: dict) -> None:
    """Record the drawing child's peak RSS (probes/running/drawing_process.py) as it is closed."""
    try:
        from probes.running.drawing_process import DrawingProcess
    except ImportError:  # a checkout from before it (--before)
        return

    close = DrawingProcess.close

    async def watched(self):
        if self._process is not None and self._process.returncode is None:
            marks["drawing_rss_mb"] = _vm_hwm_mb(self._process.pid)
        await close(self)

    DrawingProcess.close = watched


def _watch_sends_once_loaded() -> dict[str, float]:
    """`_watch_sends` for the runner, which imports the SDK at its first request, as a user's
    run does (about 0.4 s here, while a first run's drawing child starts beside it): the SDK is
    watched once the backend has loaded it, not imported before the run to be watched."""
    try:
        from models.openai_backend import OpenAIBackend

        new_client = OpenAIBackend._new_client
    except (ImportError, AttributeError):  # a checkout from before (--before): watched at once
        return _watch_sends()
    marks: dict[str, float] = {}

    def watched(self):
        client = new_client(self)  # the SDK is loaded now
        OpenAIBackend._new_client = new_client  # watched once
        _watch_sends(marks)
        return client

    OpenAIBackend._new_client = watched
    return marks


def child_runner(args: argparse.Namespace) -> dict:
    from models.types import GenerateConfig
    from probes.core.registry import get_benchmark
    from probes.core.selection import select_items
    from probes.core.types import Status
    from probes.running.answerers import create
    from probes.running.runner import RunPlan, run
    from probes.running.store import Store

    marks = _watch_sends_once_loaded()
    _watch_drawing_child(marks)
    os.environ["OPENAI_BASE_URL"] = args.base_url
    os.environ["OPENAI_API_KEY"] = "bench"
    if args.folder:  # the same PNG files as a custom folder
        benchmark = get_benchmark(f"custom:{args.folder}")
    else:
        benchmark = get_benchmark(BENCHMARK, params=_params(args.canvas))
    items = select_items(benchmark.items(), args.items, SEED)
    backend = create(f"openai/{args.model}")
    with Store(args.store) as store:
        plan = RunPlan(benchmark, items, [backend], config=GenerateConfig(max_tokens=16), concurrency=args.concurrency)
        results = asyncio.run(run(plan, store))
    assert len(results) == len(items) and all(r.status is Status.ANSWERED for r in results), results[:3]
    assert not any(r.cached for r in results)
    return marks


def child_main(args: argparse.Namespace) -> None:
    marks = {"start": args.spawned}
    work = child_plain if args.child == "plain" else child_runner
    if args.profile_this:
        import cProfile
        import pstats
        import threading

        # One profiler per thread (the runner's work happens in its worker threads), merged.
        profilers = [cProfile.Profile(time.thread_time)]  # CPU time: waits do not count

        def start_in_thread(*_: object) -> None:
            profilers.append(cProfile.Profile(time.thread_time))
            profilers[-1].enable()

        threading.setprofile(start_in_thread)
        marks |= profilers[0].runcall(work, args)
        threading.setprofile(None)
        stats = pstats.Stats(profilers[0])
        for profiler in profilers[1:]:
            stats.add(profiler)
        stats.sort_stats(args.sort).print_stats(args.restrict or "", 45)
    else:
        marks |= work(args)
    marks["end"] = time.time()
    # CPU of the variant and of its drawing child (waited for when the run closed it).
    usage, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    marks["cpu"] = usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime
    # The variant's own peak, plus its drawing child's: an upper bound of the two together.
    marks["rss_mb"] = _vm_hwm_mb() + marks.get("drawing_rss_mb", 0)
    print("MARKS " + json.dumps(marks), flush=True)


# --- the parent -----------------------------------------------------------------------------


def _params(canvas: str) -> dict[str, list[str]]:
    return {"canvas": canvas.split(",")} if canvas else {}


REPOSITORY = Path(__file__).resolve().parent.parent


def _spawn(child: str, args: argparse.Namespace, tree: Path | None = None, **extra: str) -> dict:
    """One variant in a fresh process: wall time from spawn to exit, its peak RSS, its marks.
    `tree`: the code to run it with (another checkout of the repository), this one by default."""
    tree = tree or args.tree or REPOSITORY
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(Path(__file__).resolve()), "--child", child, "--spawned", repr(time.time())]
    command += ["--base-url", args.base_url, "--concurrency", str(args.concurrency), "--items", str(args.items)]
    command += ["--canvas", args.canvas] + [f"--{key.replace('_', '-')}={value}" for key, value in extra.items()]
    if args.profile == extra.get("model", child):
        command += ["--profile-this", "--sort", args.sort, "--restrict", args.restrict]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=tree, env=environment)
    try:
        output, _ = process.communicate()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{child} failed (exit {process.returncode})")
    marks = json.loads(output.rsplit("MARKS ", 1)[1])
    if args.profile:
        print(output.rsplit("MARKS ", 1)[0])
    return {
        "wall": wall,
        "rss_mb": marks["rss_mb"],
        "cpu": marks["cpu"],
        "to_first_send": marks["first_send"] - marks["start"],
        "after_last_reply": marks["end"] - marks["last_reply"],
    }


def prepare_files(args: argparse.Namespace, folder: Path) -> tuple[Path, float, float]:
    """The plain loop's input: each item's image as a PNG file (our encoder, level 1, so the
    same bytes as the runner sends), and a manifest. Returns it, the image-drawing floor (CPU
    seconds to draw every distinct image once, serially) and the image floor (draw, hash and
    encode each once: what a first run cannot avoid). Drawing is timed as the runner draws: the
    canvas's pixels where a stimulus gives them, the picture otherwise."""
    from models.types import ImagePart
    from probes.core.registry import get_benchmark
    from probes.core.selection import select_items

    benchmark = get_benchmark(BENCHMARK, params=_params(args.canvas))
    items = select_items(benchmark.items(), args.items, SEED)
    files: dict[str, Path] = {}
    folder.mkdir(parents=True, exist_ok=True)
    drawing = hashing_encoding = 0.0
    for item in items:
        for source in item.images:
            if source.ref not in files:
                # Drawn as the runner draws what it sends: a canvas's pixels where the stimulus
                # gives them (no picture made), else the picture.
                started = time.process_time()
                picture = source.pixels() if source.pixels else source.load()
                drawn = time.process_time()
                part = (
                    ImagePart(source.load, pixels=lambda drawn_now=picture: drawn_now)
                    if source.pixels
                    else ImagePart(picture)
                )
                _, data = part.sha256, part.png_bytes
                drawing += drawn - started
                hashing_encoding += time.process_time() - drawn
                files[source.ref] = folder / f"{len(files)}.png"
                files[source.ref].write_bytes(data)
    manifest = folder / "manifest.jsonl"
    lines = [json.dumps({"question": item.question, "file": str(files[item.images[0].ref])}) for item in items]
    manifest.write_text("\n".join(lines) + "\n")
    # The same items as a custom folder (`custom:` runs of the same files).
    records = [
        {"id": str(number), "image": files[item.images[0].ref].name, "question": item.question, "answer": item.target}
        for number, item in enumerate(items)
    ]
    (folder / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    return manifest, drawing, drawing + hashing_encoding


def compare(args: argparse.Namespace, latency: float, pairs: int, root: Path) -> dict[str, list[dict]]:
    from tests.support.fake_servers import serve_in_subprocess

    _clear_drawings()
    manifest, floor, image_floor = prepare_files(args, root)
    process, args.base_url, _ = serve_in_subprocess("openai", "No.", latency)
    runs: dict[str, list[dict]] = {name: [] for name in VARIANTS}
    try:
        for pair in range(pairs):
            order = ("plain", "ours", "folder") if pair % 2 == 0 else ("folder", "ours", "plain")
            for unit in order:
                if unit == "plain":
                    runs["plain"].append(_spawn("plain", args, manifest=str(manifest)))
                    continue
                if unit == "folder" and not args.custom:
                    continue
                store = root / f"store-{latency}-{pair}-{unit}" / "results.sqlite"
                folder = {"folder": str(manifest.parent)} if unit == "folder" else {}
                prefix = "custom " if unit == "folder" else ""
                for model in ("first", "second"):
                    run = _spawn("runner", args, store=str(store), model=model, **folder)
                    runs[prefix + model].append(run)
                if unit == "ours" and args.before:  # the same two runs with the code before issue 16
                    store = root / f"store-{latency}-{pair}-before" / "results.sqlite"
                    for model in ("first", "second"):
                        run = _spawn("runner", args, args.before, store=str(store), model=model)
                        runs[f"{model} (before)"].append(run)
    finally:
        process.kill()
        process.wait()
    runs["floor"] = [{"wall": floor, "image": image_floor}]
    return runs


def _clear_drawings() -> None:
    """Draw afresh for the floors (the parent draws every set's images once)."""
    from probes.benchmarks.generated import render_cached

    render_cached.cache_clear()


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def report(label: str, runs: dict[str, list[dict]], latency: float) -> None:
    plain = _median(runs["plain"], "wall")
    floor, image_floor = runs["floor"][0]["wall"], runs["floor"][0]["image"]
    print(f"\n## {label}: server latency {latency * 1000:.0f} ms, median of {len(runs['plain'])} interleaved pairs")
    print(f"image-drawing floor (every distinct image drawn once, serial CPU): {floor:.2f} s")
    print(f"image floor (drawn, hashed and PNG-encoded once, serial CPU):      {image_floor:.2f} s")
    print(
        f"{'variant':<16}{'wall s':>8}{'ratio':>8}{'goal':>8}{'to 1st req':>12}{'after last':>12}{'CPU s':>8}"
        f"{'peak RSS':>10}"
    )
    goals = {"first": "<=1.20", "second": "<=1.20" if latency < 0.1 else "<=1.05"}
    for name in VARIANTS:
        if not runs[name]:
            continue
        wall = _median(runs[name], "wall")
        base = plain + floor if name.startswith("first") else plain
        ratio = "" if name == "plain" else f"{wall / base:.2f}"
        print(
            f"{name:<16}{wall:>8.2f}{ratio:>8}{goals.get(name, ''):>8}{_median(runs[name], 'to_first_send'):>12.2f}"
            f"{_median(runs[name], 'after_last_reply'):>12.2f}{_median(runs[name], 'cpu'):>8.2f}"
            f"{max(r['rss_mb'] for r in runs[name]):>7.0f} MB"
        )
    first = _median(runs["first"], "wall")
    print(f"first run against plain + image floor: {first / (plain + image_floor):.2f}")
    print("(wall: process start to exit; first run's ratio is to plain + image-drawing floor; custom: the same")
    print(" PNG files as a custom: folder, sent as they are and known by their bytes: nothing is decoded)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--latencies", default="0.01,0.2")
    parser.add_argument("--canvas", default="", help="canvas sizes (default: the paper's 384, 769, 1155)")
    parser.add_argument("--no-canvas-sweep", action="store_true", help="skip the per-canvas peak RSS runs")
    parser.add_argument("--profile", choices=("plain", "first", "second"), help="cProfile that variant")
    # for the children
    parser.add_argument("--child", choices=("plain", "runner"))
    parser.add_argument("--spawned", type=float)
    parser.add_argument("--base-url", default="")
    parser.add_argument("--manifest")
    parser.add_argument("--store")
    parser.add_argument("--model")
    parser.add_argument("--folder", default="")
    parser.add_argument("--no-custom", dest="custom", action="store_false", help="skip the custom: folder runs")
    parser.add_argument("--tree", type=Path, help="run the runner from this checkout (default: this one)")
    parser.add_argument("--before", type=Path, help="also run first and second from this checkout, interleaved")
    parser.add_argument("--profile-this", action="store_true")
    parser.add_argument("--sort", default="tottime", help="pstats order for --profile")
    parser.add_argument("--restrict", default="", help="only functions whose file or name match (--profile)")
    args = parser.parse_args()
    if args.child:
        child_main(args)
        return
    # A kill (SIGTERM) unwinds like Ctrl-C, so the server and the variant running are stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    print(f"{args.items} {BENCHMARK} items, concurrency {args.concurrency}, cores {os.cpu_count()}, "
          "each variant in its own process, the server in another")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for latency in (float(value) for value in args.latencies.split(",")):
            runs = compare(args, latency, args.pairs, root / f"set-{latency}")
            report("default set (canvas 384, 769, 1155 px)" if not args.canvas else f"canvas {args.canvas}",
                   runs, latency)  # fmt: skip
        if not args.no_canvas_sweep and not args.canvas and not args.profile:
            print("\n## peak RSS by canvas size (server latency 10 ms, one pair each)")
            for canvas in ("384", "769", "1155"):
                args.canvas = canvas
                runs = compare(args, 0.01, 1, root / f"canvas-{canvas}")
                rss = {name: max((r["rss_mb"] for r in runs[name]), default=0) for name in VARIANTS}
                print(f"canvas {canvas:>4} px: plain {rss['plain']:.0f} MB, first run {rss['first']:.0f} MB, "
                      f"second model {rss['second']:.0f} MB, custom first {rss['custom first']:.0f} MB, "
                      f"custom second {rss['custom second']:.0f} MB")  # fmt: skip
            args.canvas = ""


if __name__ == "__main__":
    main()
