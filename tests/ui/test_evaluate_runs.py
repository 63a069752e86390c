"""The Evaluate tab's machinery without a browser: the form's checks, parameter sweeps, Cancel
that lets requests in flight finish and be saved, and the session budget across Resume."""

from __future__ import annotations

import asyncio
import math
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from models.base import Backend
from models.types import GenerateConfig, Output
from probes.core.errors import ProbeError
from probes.core.params import parse_params
from probes.core.selection import select_items
from probes.running.runner import RunPlan
from tests.support.fake_servers import FakeOpenAIServer
from tests.ui.conftest import reset_caches
from ui import evaluate
from ui.common import store
from ui.evaluate import runs as evaluate_runs
from ui.evaluate.runs import EvalInputError, EvalRun, make_config
from ui.items import benchmark_of


def run_async(coroutine):
    """asyncio.run in a thread of its own: the browser tests' playwright keeps a loop running in
    this one when the files run together."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture(autouse=True)
def own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_HOME", str(tmp_path / "home"))
    reset_caches()
    yield
    reset_caches()


def test_parameters_take_single_values_and_comma_separated_sweeps():
    assert parse_params("gap=-0.1,0,0.1 canvas=384") == {"gap": ["-0.1", "0", "0.1"], "canvas": ["384"]}
    assert parse_params(" gap=0.1, 0.2 ;prompt=touching ") == {"gap": ["0.1", "0.2"], "prompt": ["touching"]}
    assert parse_params("gap=0.05,canvas=384") == {"gap": ["0.05"], "canvas": ["384"]}
    assert parse_params(["gap=0.1,0.2", "canvas=384"]) == {"gap": ["0.1", "0.2"], "canvas": ["384"]}
    assert parse_params("") == {}
    for bad in ("gap", "gap=", "=1", "gap=,", "1,gap=2"):
        with pytest.raises(EvalInputError, match="NAME=VALUE"):
            form(params_text=bad)


def form(**changes):
    values = dict(benchmarks=["blind/touching-circles"], data="", params_text="", models=["baseline/chance"],
                  modes=["0-shot"], perturbations=["none"], limit=12, seed=0, concurrency=0)  # fmt: skip
    values.update(changes)
    return make_config(**values)


def test_the_form_is_checked_before_anything_is_built():
    config = form(limit=0, seed=None, models=[" baseline/chance ", "baseline/chance"])
    assert config.limit is None and config.seed == 0 and config.concurrency is None
    assert config.models == ("baseline/chance",)
    for changes, message in [
        ({"models": []}, "choose at least one model"),
        ({"benchmarks": []}, "choose at least one benchmark"),
        ({"modes": []}, "tick at least one mode"),
        ({"perturbations": []}, "tick at least one perturbation"),
        ({"limit": -3}, "at least 1 item"),
        ({"limit": 2.5}, "whole number"),
        ({"concurrency": -1}, "concurrency must be at least 1"),
    ]:
        with pytest.raises(EvalInputError, match=message):
            form(**changes)
    with pytest.raises(ProbeError, match="unknown perturbation"):
        form(perturbations=["sideways"])


class SlowBackend(Backend):
    """Answers after a pause and counts what it was asked; `hang` never answers."""

    model_id = "fake/slow"
    endpoint = "local-test"
    default_concurrency = 8

    def __init__(self, hang: bool = False):
        self.calls = 0
        self.hang = hang

    def check(self) -> None:
        pass

    async def generate(self, messages, config) -> Output:
        self.calls += 1
        await asyncio.sleep(3600 if self.hang else 0.05)
        return Output("No", 0.05)


def slow_run(backend: SlowBackend, items: int = 20) -> EvalRun:
    benchmark = benchmark_of("blind/touching-circles")
    chosen = select_items(benchmark.items(), items, 0)
    plan = RunPlan(benchmark, chosen, [backend], config=GenerateConfig(seed=0), concurrency=2)
    return EvalRun([plan])


async def stop_after(run: EvalRun, done: int) -> None:
    run.start()
    while run.progress.done < done:
        await asyncio.sleep(0.01)
    run.stop()
    await run.wait()


def test_cancel_saves_the_requests_in_flight_and_resume_asks_only_the_rest():
    backend = SlowBackend()

    async def scenario():
        first = slow_run(backend)
        await stop_after(first, 5)
        assert first.outcome == "stopped"
        saved = len(store().results(model="fake/slow"))
        assert 5 <= saved < 20
        assert backend.calls == saved == first.progress.done  # nothing sent was thrown away
        again = slow_run(backend)
        again.start()
        await again.wait()
        return saved, again

    saved, again = run_async(scenario())
    assert again.outcome == "done" and again.progress.cached == saved
    assert backend.calls == 20 and len(store().results(model="fake/slow")) == 20


def test_cancel_gives_up_on_a_request_that_never_returns(monkeypatch):
    monkeypatch.setattr(evaluate_runs, "DRAIN_LIMIT", 0.2)
    backend = SlowBackend(hang=True)

    async def scenario():
        run = slow_run(backend)
        run.start()
        while backend.calls < 2:
            await asyncio.sleep(0.01)
        run.stop()
        await run.wait(timeout=30)
        return run

    run = run_async(scenario())
    assert run.outcome == "stopped" and run.progress.done == 0
    assert backend.calls == 2  # the stop held every other item back


async def frames(generator) -> list:
    return [frame async for frame in generator]


def test_server_keys_pay_for_what_is_sent_and_the_budget_says_so(monkeypatch):
    """Each request sent on the server's key is charged as it goes: the same evaluation again
    (every answer cached) costs nothing; a larger one runs until the budget is spent, and the
    items past it end as errors saying so (a Resume later retries them)."""
    monkeypatch.setenv("PROBE_SESSION_BUDGET", "30")
    reset_caches()
    request = SimpleNamespace(session_hash="visitor")
    no_bar = lambda *args, **kwargs: None  # noqa: E731
    with FakeOpenAIServer(responder=lambda body: "No") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-server-test")
        inputs = (["blind/touching-circles"], "", "", ["openai/x", "baseline/chance"], ["0-shot", "4-shot"], ["none"])
        shown = run_async(frames(evaluate.run_eval(request, no_bar, *inputs, 12, 0, 0, "", "")))
        status, config = shown[-1][0], shown[0][2]
        assert "**Finished**" in status and "48 / 48 results" in status
        assert server.request_count == 24  # chance is free

        again = run_async(frames(evaluate.run_eval(request, no_bar, *inputs, 12, 0, 0, "", "")))
        assert "**Finished**" in again[-1][0] and "cached 48" in again[-1][0]
        assert server.request_count == 24  # nothing sent, nothing charged

        larger = run_async(frames(evaluate.run_eval(request, no_bar, *inputs, 20, 0, 0, "", "")))
        assert server.request_count == 30  # the 6 requests left in the budget, then no more
        assert "errors 10" in larger[-1][0] and "budget of 30 requests" in larger[-1][0]

        resumed = run_async(frames(evaluate.resume_eval(request, no_bar, config, "", "")))
        assert "**Finished**" in resumed[-1][0] and "cached 48" in resumed[-1][0]
    assert server.request_count == 30


def test_an_evaluation_keeps_the_answers_probabilities_and_never_rebuys_a_stored_answer(monkeypatch):
    """The Evaluate tab asks for probabilities where the model gives them (a local OpenAI-compatible
    server serving logprobs): the stored results carry them; answers stored before without them
    are kept as they are, nothing sent again for them."""
    request = SimpleNamespace(session_hash="visitor")
    no_bar = lambda *args, **kwargs: None  # noqa: E731
    offered = lambda index, token, tokens: [(" No", math.log(0.7)), (" Yes", math.log(0.3))] if token == " No" else None  # noqa: E731
    with FakeOpenAIServer(responder=lambda body: "Answer: No", alternatives=offered, logprobs="omit") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-server-test")
        inputs = (["blind/touching-circles"], "", "", ["openai/x", "baseline/chance"], ["0-shot"], ["none"])
        before = run_async(frames(evaluate.run_eval(request, no_bar, *inputs, 6, 0, 0, "", "")))
        assert "**Finished**" in before[-1][0] and server.request_count == 6  # answered without them
        server.logprobs = "serve"
        shown = run_async(frames(evaluate.run_eval(request, no_bar, *inputs, 8, 0, 0, "", "")))
        assert "**Finished**" in shown[-1][0]
        assert server.request_count == 8  # only the two new items: the six stored are kept
        assert all(r["body"].get("logprobs") is True for r in server.requests)
        results = [r for r in store().results() if r.model == "openai/x"]
        assert len(results) == 8
        given = [r for r in results if r.probabilities is not None]
        assert len(given) == 2
        for result in given:
            assert result.probabilities == pytest.approx({"yes": 0.3, "no": 0.7})
        assert all(r.probabilities is None for r in store().results() if r.model == "baseline/chance")
