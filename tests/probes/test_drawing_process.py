"""Canvas stimuli drawn in a child process (probes/running/drawing_process.py): the same hashes
and bytes as the runner's own threads, a second model still draws nothing, and nothing is lost
when the child cannot help (not ready, unpicklable, failing, killed)."""

from __future__ import annotations

import asyncio
import base64
import sys
import time
import types
from pathlib import Path

import pytest

from models.png import encode_rgb_pixels
from models.types import PNG_FAST, GenerateConfig, ImagePart, content_digest, drawn_rows
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.core.types import Status
from probes.running import drawing_process
from probes.running import runner as runner_module
from probes.running.answerers import create
from probes.running.drawing_process import DrawingProcess
from probes.running.image_cache import ImageCache
from probes.running.image_parts import ImageParts
from probes.running.runner import Runner, RunPlan
from probes.running.store import Store
from probes.stimuli.touching_circles import TwoCircles
from tests.support.fake_servers import FakeOpenAIServer, openai_images

# One of each family drawn on a canvas, at a small size.
DRAWN_FAMILIES = {
    "blind/touching-circles": {"canvas": ["384"]},
    "blind/circled-letter": {},
    "blind/line-intersections": {},
    "blind/nested-squares": {},
    "blind/olympic-circles": {},
    "blind/subway-paths": {},
    "blind/olympic-pentagons": {},
}


def _drawn_sources(benchmark_id: str, params: dict, count: int = 3):
    benchmark = get_benchmark(benchmark_id, params=params)
    sources = {}
    for item in benchmark.items():
        for source in item.images:
            if source.pixels is not None:
                sources.setdefault(source.ref, source)
        if len(sources) >= count:
            break
    assert sources, f"{benchmark_id} has no canvas stimulus"
    return list(sources.values())[:count]


def _raises() -> None:
    raise ValueError("a stimulus that cannot be drawn")


class _NotInTheChild:
    """Pickled by reference to a module that exists only in this process (registered below):
    the child cannot unpickle it."""

    def draw(self):
        return _raises()


_ONLY_HERE = types.ModuleType("probes_test_module_only_in_this_process")
_NotInTheChild.__module__ = _ONLY_HERE.__name__
_ONLY_HERE._NotInTheChild = _NotInTheChild
sys.modules[_ONLY_HERE.__name__] = _ONLY_HERE


async def _with_child(cache: ImageCache, work):
    drawing = DrawingProcess(cache)
    await drawing.start()
    try:
        assert await drawing.wait_ready()
        return await work(drawing)
    finally:
        await drawing.close()


def test_the_child_gives_every_canvas_family_the_runners_own_hash_and_bytes(tmp_path):
    cache = ImageCache(tmp_path / "images")
    sources = [s for family, params in DRAWN_FAMILIES.items() for s in _drawn_sources(family, params)]

    async def work(drawing):
        return [await drawing.hash_of(source.ref, source.pixels) for source in sources], drawing.drawn

    hashes, drawn = asyncio.run(_with_child(cache, work))
    assert drawn == len(sources)
    for source, content_hash in zip(sources, hashes, strict=True):
        here = ImagePart(source.load, pixels=source.pixels)
        picture = ImagePart(source.load())  # the picture, as a model reading pixels gets it
        assert content_hash == here.sha256 == picture.sha256, source.ref
        size, rows = drawn_rows(source.pixels())
        png = encode_rgb_pixels(rows, *size)
        assert content_hash == content_digest(png)  # the hash of the bytes kept, and sent
        assert cache.get(f"{content_hash}.{PNG_FAST}") == png, source.ref


def test_what_the_child_cannot_take_is_left_to_the_runner(tmp_path):
    cache = ImageCache(tmp_path / "images")
    (source,) = _drawn_sources("blind/touching-circles", {"canvas": ["384"]}, count=1)

    async def work(drawing):
        unpicklable = await drawing.hash_of("a", lambda: source.pixels())
        failing = await drawing.hash_of("b", _raises)
        not_found_there = await drawing.hash_of("c", _NotInTheChild().draw)
        still_working = await drawing.hash_of(source.ref, source.pixels)
        return unpicklable, failing, not_found_there, still_working

    unpicklable, failing, not_found_there, still_working = asyncio.run(_with_child(cache, work))
    assert unpicklable is None and failing is None and not_found_there is None
    assert still_working == ImagePart(source.load, pixels=source.pixels).sha256


def test_before_it_is_ready_and_after_it_ends_the_child_answers_none(tmp_path):
    cache = ImageCache(tmp_path / "images")
    (source,) = _drawn_sources("blind/touching-circles", {"canvas": ["384"]}, count=1)

    async def scenario():
        drawing = DrawingProcess(cache)
        before_start = await drawing.hash_of(source.ref, source.pixels)
        await drawing.start()
        await drawing.wait_ready()
        process = drawing._process
        await drawing.close()
        after_close = await drawing.hash_of(source.ref, source.pixels)
        return before_start, after_close, process.returncode

    before_start, after_close, returncode = asyncio.run(scenario())
    assert before_start is None and after_close is None
    assert returncode is not None  # idle at the end of a run: ended at once


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads the child's environment from /proc")
def test_the_child_is_given_no_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-0123456789")
    monkeypatch.setenv("HF_TOKEN", "hf_planted0123456789")
    monkeypatch.setenv("PROBE_PLANTED_PLAIN", "kept")

    async def scenario():
        drawing = DrawingProcess(ImageCache(tmp_path / "images"))
        await drawing.start()
        try:
            assert await drawing.wait_ready()
            return Path(f"/proc/{drawing._process.pid}/environ").read_bytes()
        finally:
            await drawing.close()

    environment = asyncio.run(scenario())
    assert b"planted0123456789" not in environment and b"OPENAI_API_KEY" not in environment
    assert b"PROBE_PLANTED_PLAIN=kept" in environment


def test_a_child_closed_while_drawing_finishes_the_image_in_hand(tmp_path):
    # A stopped run closes the child with an image still being drawn: it is finished and cached
    # whole, never left half-written, and the child exits by itself.
    cache = ImageCache(tmp_path / "images")
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["1155"]})
    source = next(iter(benchmark.items())).images[0]

    async def scenario():
        drawing = DrawingProcess(cache)
        await drawing.start()
        assert await drawing.wait_ready()
        asking = asyncio.ensure_future(drawing.hash_of(source.ref, source.pixels))
        while not drawing._waiting:  # the job is written to the child
            await asyncio.sleep(0)
        process = drawing._process
        await drawing.close()
        return await asking, process.returncode

    answer, returncode = asyncio.run(scenario())
    assert answer is None  # the run stopped: nobody draws it now
    assert returncode == 0
    content_hash = ImagePart(source.load, pixels=source.pixels).sha256
    assert cache.get(f"{content_hash}.{PNG_FAST}") is not None
    assert not list(cache.root.rglob(".part-*"))


async def _until(condition, what: str, deadline: float = 120.0) -> None:
    """Wait for `condition()` (a generous bound: a loaded machine is slow, never wrong)."""
    give_up = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < give_up, f"still waiting for {what}"
        await asyncio.sleep(0.01)


def test_images_handed_over_ahead_are_drawn_before_any_item_asks_for_them(tmp_path):
    cache = ImageCache(tmp_path / "images")
    sources = _drawn_sources("blind/touching-circles", {"canvas": ["384"]}, count=24)

    async def work(drawing):
        for source in sources:
            drawing.ahead(source.ref, source.pixels)
            drawing.ahead(source.ref, source.pixels)  # handed over twice: drawn once
        in_flight = len(drawing._waiting)
        await _until(lambda: drawing.drawn == len(sources), "the images handed over")
        jobs = next(drawing._jobs)  # every job sent so far
        hashes = [await drawing.hash_of(source.ref, source.pixels) for source in sources]
        return in_flight, jobs, next(drawing._jobs), hashes

    in_flight, jobs, jobs_after, hashes = asyncio.run(_with_child(cache, work))
    assert 0 < in_flight <= drawing_process._AHEAD_IN_FLIGHT  # a few sent at a time, the rest queued
    assert jobs == len(sources) and jobs_after == jobs + 1  # asking for them sent nothing more
    for source, content_hash in zip(sources, hashes, strict=True):
        assert content_hash == ImagePart(source.load, pixels=source.pixels).sha256
        assert cache.get(f"{content_hash}.{PNG_FAST}") is not None


def test_the_child_stays_a_bounded_lead_ahead_of_the_items(tmp_path, monkeypatch):
    # Against a slow server the child must not draw a whole long run ahead (the image cache could
    # evict early images before they are sent): it waits once its lead is full, and goes on as
    # items ask for what it drew.
    monkeypatch.setattr(drawing_process, "_AHEAD_LEAD", 5)
    cache = ImageCache(tmp_path / "images")
    sources = _drawn_sources("blind/touching-circles", {"canvas": ["384"]}, count=12)

    async def work(drawing):
        for source in sources:
            drawing.ahead(source.ref, source.pixels)
        await _until(lambda: drawing.drawn >= 5, "the lead")
        sent_with_a_full_lead = next(drawing._jobs)  # the number the next job would get
        hashes = [await drawing.hash_of(source.ref, source.pixels) for source in sources[:3]]
        await _until(lambda: drawing.drawn >= 8, "three more, for the three asked for")
        rest = [await drawing.hash_of(source.ref, source.pixels) for source in sources[3:]]
        return sent_with_a_full_lead, hashes + rest, drawing.drawn

    sent_with_a_full_lead, hashes, drawn = asyncio.run(_with_child(cache, work))
    assert sent_with_a_full_lead == 5  # every drawing the child had was answered, and no sixth was sent
    assert drawn == len(sources) and None not in hashes


def test_an_image_asked_for_before_the_child_is_ready_is_taken_back(tmp_path):
    # Handed over ahead, then needed before the child could take it: the runner draws it, and
    # the child, once ready, draws only the others.
    cache = ImageCache(tmp_path / "images")
    first, *others = _drawn_sources("blind/touching-circles", {"canvas": ["384"]}, count=4)

    async def scenario():
        drawing = DrawingProcess(cache)
        await drawing.start()
        try:
            for source in [first, *others]:
                drawing.ahead(source.ref, source.pixels)
            needed_now = await drawing.hash_of(first.ref, first.pixels)
            assert await drawing.wait_ready()
            await _until(lambda: drawing.drawn == len(others), "the other images")
            again = await drawing.hash_of(first.ref, first.pixels)
            return needed_now, again, drawing.drawn, next(drawing._jobs)
        finally:
            await drawing.close()

    needed_now, again, drawn, jobs = asyncio.run(scenario())
    assert needed_now is None and again is None  # the runner draws it, once
    assert drawn == len(others) and jobs == len(others)
    taken_back = ImagePart(first.load, pixels=first.pixels).sha256
    assert cache.get(f"{taken_back}.{PNG_FAST}") is None  # the child never drew it


def test_a_stopped_run_leaves_what_was_not_yet_sent(tmp_path):
    # A run stopped with many images handed over ahead: the child finishes at most the few it
    # was sent, the rest are dropped, nothing is left half-written.
    cache = ImageCache(tmp_path / "images")
    sources = _drawn_sources("blind/touching-circles", {"canvas": ["1155"]}, count=40)

    async def work(drawing):
        for source in sources:
            drawing.ahead(source.ref, source.pixels)
        await drawing.close()
        return [await drawing.hash_of(source.ref, source.pixels) for source in sources]

    answers = asyncio.run(_with_child(cache, work))
    kept = [path for path in cache.root.rglob(f"*.{PNG_FAST}")]
    assert len(kept) <= drawing_process._AHEAD_IN_FLIGHT < len(sources)
    assert all(answer is None for answer in answers)  # after the stop nothing is waited for
    assert not list(cache.root.rglob(".part-*"))


def test_while_the_first_request_waits_the_child_draws_the_next_items(tmp_path, monkeypatch):
    # One request at a time, the first held by the server until the child has cached a dozen
    # images: the feeder handed the child the next items' images before any worker asked.
    benchmark, items = _circles(runner_module.DRAWING_PROCESS_MIN_ITEMS)
    cache_root = ImageCache.beside(tmp_path / "results.sqlite", 1 << 30).root
    cached_while_waiting = []

    def responder(body):
        if not cached_while_waiting:
            give_up = time.monotonic() + 120
            while len(list(cache_root.rglob(f"*.{PNG_FAST}"))) < 12 and time.monotonic() < give_up:
                time.sleep(0.01)
            cached_while_waiting.append(len(list(cache_root.rglob(f"*.{PNG_FAST}"))))
        return "No."

    with FakeOpenAIServer(responder=responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000")
        with Store(tmp_path / "results.sqlite") as store:
            plan = RunPlan(
                benchmark, items, [create("openai/first")], config=GenerateConfig(max_tokens=16), concurrency=1
            )
            runner = Runner(plan, store)
            results = asyncio.run(runner.run())
    assert cached_while_waiting[0] >= 12
    assert all(result.status is Status.ANSWERED for result in results)
    assert sorted(_sent(server)) == sorted(
        ImagePart(i.images[0].load, pixels=i.images[0].pixels).png_bytes for i in items
    )


def _circles(count: int):
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]})
    return benchmark, select_items(benchmark.items(), count, 0)


def _run(benchmark, items, model: str, store: Store, kill_after: int | None = None, ready: bool = True):
    """Run `items` with a Runner; with `ready`, its child is started and ready before the first
    request (so the test does not depend on how fast it starts); `kill_after`: the child is
    killed once that many results are in."""
    plan = RunPlan(benchmark, items, [create(model)], config=GenerateConfig(max_tokens=16), concurrency=8)
    runner = Runner(plan, store)

    async def go():
        if runner.drawing is not None and ready:
            await runner.drawing.start()
            assert await runner.drawing.wait_ready()

        def on_result(result, progress):
            if kill_after is not None and progress.done == kill_after:
                runner.drawing._process.kill()

        return await runner.run(on_result=on_result)

    return runner, asyncio.run(go())


def _sent(server, first: int = 0) -> list[bytes]:
    return [
        base64.b64decode(url.split(",", 1)[1])
        for request in server.requests[first:]
        for url in openai_images(request["body"])
    ]


def test_a_long_run_draws_in_the_child_and_sends_what_the_runners_threads_would(tmp_path, server, monkeypatch):
    benchmark, items = _circles(runner_module.DRAWING_PROCESS_MIN_ITEMS)
    distinct = {source.ref for item in items for source in item.images}
    with Store(tmp_path / "child" / "results.sqlite") as store:
        runner, results = _run(benchmark, items, "openai/first", store)
        assert runner.drawing is not None and runner.drawing.drawn == len(distinct)
        assert runner.drawing._process is None  # closed with the run
        hashes = store.image_hashes(sorted(distinct))
        # A second model: nothing drawn, here or there; no child is even started.
        second, again = _run(benchmark, items, "openai/second", store, ready=False)
        assert not second.drawing.started and second.drawing.drawn == 0
    assert all(result.status is Status.ANSWERED for result in [*results, *again])
    with_child = _sent(server)

    monkeypatch.setenv("PROBE_DRAWING_PROCESS", "0")
    first_request = len(server.requests)
    with Store(tmp_path / "threads" / "results.sqlite") as store:
        runner, results = _run(benchmark, items, "openai/first", store)
        assert runner.drawing is None
        assert store.image_hashes(sorted(distinct)) == hashes
    assert sorted(_sent(server, first_request)) == sorted(with_child[: len(items)])
    assert sorted(with_child[len(items) :]) == sorted(with_child[: len(items)])


@pytest.mark.parametrize("slow_store", [False, True], ids=["store-quick", "store-slow"])
def test_a_sampled_run_draws_in_the_child_too(tmp_path, server, monkeypatch, slow_store):
    # Sampling looks no answer up, yet its new images are still drawn by the child, ahead. The
    # feeder queues a sampled chunk before it asks the store which images are new, so workers
    # can start those items first: on a busy machine they drew some themselves (56 of 58 in CI);
    # a slow store makes that race certain.
    benchmark, items = _circles(runner_module.DRAWING_PROCESS_MIN_ITEMS)
    config = GenerateConfig(max_tokens=16, temperature=0.7)
    if slow_store:
        image_hashes = Store.image_hashes

        def slowly(self, refs):
            time.sleep(0.3)
            return image_hashes(self, refs)

        monkeypatch.setattr(Store, "image_hashes", slowly)
    drawn_here = []
    first_sight = ImageParts._first_sight
    monkeypatch.setattr(ImageParts, "_first_sight", lambda self, part: drawn_here.append(part) or first_sight(self, part))
    with Store(tmp_path / "results.sqlite") as store:
        runner = Runner(RunPlan(benchmark, items, [create("openai/first")], config=config, concurrency=8), store)

        async def go():
            await runner.drawing.start()
            assert await runner.drawing.wait_ready()  # so that none is drawn here while it starts
            return await runner.run()

        results = asyncio.run(go())
    distinct = {source.ref for item in items for source in item.images}
    assert runner.drawing.drawn == len(distinct)
    assert drawn_here == []  # each drawn once, there
    assert all(result.status is Status.ANSWERED for result in results)
    expected = sorted(ImagePart(i.images[0].load, pixels=i.images[0].pixels).png_bytes for i in items)
    assert sorted(_sent(server)) == expected


def test_a_child_killed_mid_run_costs_nothing(tmp_path, server):
    benchmark, items = _circles(runner_module.DRAWING_PROCESS_MIN_ITEMS + 16)
    with Store(tmp_path / "results.sqlite") as store:
        runner, results = _run(benchmark, items, "openai/first", store, kill_after=8)
        assert 0 < runner.drawing.drawn  # it drew some before it was killed
        hashes = store.image_hashes(sorted({s.ref for item in items for s in item.images}))
    assert len(results) == len(items) and all(result.status is Status.ANSWERED for result in results)
    for item in items:
        (source,) = item.images
        assert hashes[source.ref] == ImagePart(source.load, pixels=source.pixels).sha256


def test_short_runs_and_the_switch_keep_drawing_in_the_runner(tmp_path, monkeypatch):
    benchmark, items = _circles(runner_module.DRAWING_PROCESS_MIN_ITEMS)
    with Store(tmp_path / "results.sqlite") as store:

        def runner_for(chosen, model="openai/first"):
            return Runner(RunPlan(benchmark, chosen, [create(model)]), store)

        assert runner_for(items).drawing is not None
        assert runner_for(items[:-1]).drawing is None  # too short to repay a child
        # A local model reads pixels, not our PNG: nothing for the child to cache.
        assert runner_for(items, "baseline/chance").drawing is None
        monkeypatch.setenv("PROBE_DRAWING_PROCESS", "0")
        assert runner_for(items).drawing is None


def test_an_image_evicted_before_it_is_sent_is_drawn_again_here(tmp_path, server, monkeypatch):
    # An image cache bounded below one image keeps almost nothing the child writes: the runner
    # finds the file gone, draws the image itself and still sends the right bytes.
    drawn_here = []
    original = TwoCircles.draw

    def draw(self):  # counts drawings in this process (the child draws with the original)
        drawn_here.append(self)
        return original(self)

    monkeypatch.setattr(TwoCircles, "draw", draw)
    benchmark, items = _circles(runner_module.DRAWING_PROCESS_MIN_ITEMS)
    with Store(tmp_path / "results.sqlite", image_cache_bytes=4096) as store:
        runner, results = _run(benchmark, items, "openai/first", store)
        assert runner.drawing.drawn > 0 and drawn_here
    monkeypatch.undo()
    assert all(result.status is Status.ANSWERED for result in results)
    expected = sorted(ImagePart(item.images[0].load, pixels=item.images[0].pixels).png_bytes for item in items)
    assert sorted(_sent(server)) == expected
