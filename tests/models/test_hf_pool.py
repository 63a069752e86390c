"""At most PROBE_MAX_LOCAL_MODELS local models loaded: the least recently used idle one goes, a
model answering a request stays until it is done, loads wait their turn, and an evicted model's
thread ends and its memory is freed. Fake loaders show the rules exactly; tiny real models show
the whole path (two models asked at once with room for one still answer as they do alone)."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import pytest

from models import hf_backend, hf_progress
from models.hf_pool import LIMIT_VARIABLE, Pool
from models.registry import create
from models.types import GenerateConfig, ImagePart, Unavailable, user
from tests.conftest import shapes_image
from tests.support.tiny_vlm import build_tiny_idefics3


class FakeWorker:
    def __init__(self, name: str):
        self.name = name
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.stopped.wait, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()


class FakeLoader:
    def __init__(self, name: str, loads: list[str], fail: Exception | None = None):
        self.name, self.loads, self.fail = name, loads, fail

    def prepare(self) -> str:
        if self.fail:
            raise self.fail
        return self.name

    def load(self, prepared: str) -> FakeWorker:
        self.loads.append(prepared)
        return FakeWorker(prepared)


def stage_reached(source: str, stage: str) -> threading.Event:
    """An event set once `source` reports `stage` (now or later)."""
    reached = threading.Event()
    unsubscribe = hf_progress.subscribe(
        lambda state: reached.set() if (state.source, state.stage) == (source, stage) else None
    )
    if hf_progress.progress(source).stage == stage:
        reached.set()
    reached.unsubscribe = unsubscribe
    return reached


@pytest.fixture
def limit(monkeypatch):
    def set_limit(n: int) -> None:
        monkeypatch.setenv(LIMIT_VARIABLE, str(n))

    set_limit(2)
    return set_limit


def test_the_least_recently_used_idle_model_is_evicted_first(limit):
    pool, loads = Pool(), []
    workers = {}
    for name in ("pool-a", "pool-b", "pool-a", "pool-c"):
        with pool.lease(name, FakeLoader(name, loads)) as lease:
            workers.setdefault(name, lease.worker)
    assert loads == ["pool-a", "pool-b", "pool-c"]  # the second use of a is no load
    assert pool.loaded() == ["pool-a", "pool-c"]  # b was used least recently
    assert workers["pool-b"].stopped.is_set() and not workers["pool-a"].stopped.is_set()
    assert hf_progress.progress("pool-b").stage == "evicted"


def test_a_model_in_use_is_not_evicted_and_the_new_load_waits_its_turn(limit):
    limit(1)
    pool, loads = Pool(), []
    held = pool.lease("busy-a", FakeLoader("busy-a", loads))
    waiting = stage_reached("busy-b", "waiting")
    with ThreadPoolExecutor(2) as threads:
        b = threads.submit(pool.lease, "busy-b", FakeLoader("busy-b", loads))
        assert waiting.wait(30)
        # a is draining: a new request for it waits behind b instead of keeping b out for ever
        a_again = threads.submit(pool.lease, "busy-a", FakeLoader("busy-a", loads))
        assert pool.loaded() == ["busy-a"] and not held.worker.stopped.is_set()
        assert not b.done() and not a_again.done()
        held.release()  # a's request is answered: now it may go
        b_lease = b.result(timeout=30)
        assert held.worker.stopped.is_set() and pool.loaded() == ["busy-b"]
        assert not a_again.done()  # room for one: a waits for b's request
        b_lease.release()
        a_lease = a_again.result(timeout=30)
    assert loads == ["busy-a", "busy-b", "busy-a"]
    assert pool.loaded() == ["busy-a"] and a_lease.worker is not held.worker
    a_lease.release()
    waiting.unsubscribe()


def test_a_failed_load_reaches_every_waiter_and_is_tried_again_later(limit):
    pool, loads = Pool(), []
    with pytest.raises(Unavailable, match="no weights"):
        pool.lease("broken", FakeLoader("broken", loads, fail=Unavailable("no weights")))
    assert pool.loaded() == []
    with pool.lease("broken", FakeLoader("broken", loads)):
        assert pool.loaded() == ["broken"]


def test_a_limit_that_does_not_parse_fails_the_load_with_the_variable_name(monkeypatch):
    monkeypatch.setenv(LIMIT_VARIABLE, "two")
    with pytest.raises(Unavailable, match=LIMIT_VARIABLE):
        Pool().lease("limit-x", FakeLoader("limit-x", []))


@pytest.fixture(scope="module")
def tiny_idefics3(tmp_path_factory):
    return build_tiny_idefics3(tmp_path_factory.mktemp("tiny-idefics3"))


def question(kind: str, size: int) -> list:
    return [user(ImagePart(shapes_image(kind, size)), "what is it?")]


def test_two_models_asked_at_once_with_room_for_one_answer_as_they_do_alone(tiny_vlm, tiny_idefics3, limit):
    hf_backend.evict_idle()
    models = [create(f"hf/{tiny_vlm}"), create(f"hf/{tiny_idefics3}")]
    asks = [(model, question(kind, size)) for model in models for kind, size in (("circle", 40), ("square", 70))]
    config = GenerateConfig(max_tokens=4)
    alone = [asyncio.run(model.generate(messages, config)).text for model, messages in asks]
    hf_backend.evict_idle()
    limit(1)
    most = []
    unsubscribe = hf_progress.subscribe(lambda state: most.append(len(hf_backend.loaded_models())))

    async def together():
        return await asyncio.gather(*(model.generate(messages, config) for model, messages in asks))

    try:
        replies = asyncio.run(together())
    finally:
        unsubscribe()
    assert [reply.text for reply in replies] == alone
    assert max(most) == 1
    hf_backend.evict_idle()


def test_an_evicted_model_stops_its_thread_and_its_memory_is_freed(tiny_vlm):
    hf_backend.evict_idle()
    backend = create(f"hf/{tiny_vlm}")
    asyncio.run(backend.generate(question("circle", 50), GenerateConfig(max_tokens=2)))
    worker = backend._load()
    model = weakref.ref(worker.model)
    thread = worker.thread
    assert hf_backend.evict_idle() == [f"hf/{tiny_vlm}"]
    thread.join(60)
    assert not thread.is_alive()
    assert worker.model is None and worker.processor is None
    gc.collect()
    assert model() is None  # nothing holds the weights any more
    assert f"hf/{tiny_vlm}" not in hf_backend.loaded_models()
    with pytest.raises(Unavailable, match="unloaded"):
        worker.submit([], {})
