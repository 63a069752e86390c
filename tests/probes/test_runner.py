"""The runner end to end against local protocol servers: prompts, few-shot, cache, errors."""

import asyncio
import base64
import io

import pytest
from PIL import Image

from models.registry import load_endpoints
from models.types import GenerateConfig, Unavailable, user
from probes.core.errors import RunError
from probes.core.registry import get_benchmark
from probes.core.types import Mode, Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer, anthropic_images, openai_images


def answer_by_geometry(body):
    """A 'model' that answers from the question text it receives: always right on 'touching'."""
    question = body["messages"][-1]["content"][-1]["text"]
    return "Yes." if "touching" in question else "No, there is a gap."


@pytest.fixture
def circles():
    return get_benchmark(
        "blind/touching-circles", params={"canvas": ["384"], "orientation": ["horizontal"], "diameter": ["1/4"]}
    )


@pytest.fixture
def openai_env(monkeypatch):
    def start(responder=answer_by_geometry, latency=0.0):
        server = FakeOpenAIServer(responder=responder, latency=latency).start()
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000")
        return server

    servers = []
    yield lambda *a, **k: servers.append(start(*a, **k)) or servers[-1]
    for server in servers:
        server.stop()


def test_run_grades_every_item_and_a_rerun_sends_nothing(circles, store, openai_env):
    server = openai_env()
    items = circles.items()
    plan = RunPlan(circles, items, [create("openai/x")], concurrency=4)
    results = asyncio.run(run(plan, store))
    assert len(results) == len(items) == 28 and server.request_count == 28
    assert all(r.status is Status.ANSWERED for r in results)
    for result in results:
        expected = "yes" if result.groups["prompt"] == "touching" else "no"
        assert result.parsed == expected
    again = asyncio.run(run(plan, store))
    assert server.request_count == 28  # zero new requests
    assert all(r.cached for r in again) and [r.correct for r in again] == [r.correct for r in results]
    assert store.count() == 28


def test_failed_requests_are_errors_and_only_they_are_retried(circles, store, openai_env):
    failing = {"on": True}

    def flaky(body):
        question = body["messages"][-1]["content"][-1]["text"]
        if failing["on"] and "overlapping" in question:
            raise RuntimeError("server fell over")
        return "Yes"

    server = openai_env(flaky)
    plan = RunPlan(circles, circles.items(), [create("openai/x")], config=GenerateConfig(max_retries=0))
    results = asyncio.run(run(plan, store))
    errors = [r for r in results if r.status is Status.ERROR]
    assert len(errors) == 14 and all("InternalServerError" in r.error for r in errors)
    assert all(r.correct is None for r in errors)
    sent = server.request_count
    failing["on"] = False
    asyncio.run(run(plan, store))
    assert server.request_count == sent + 14
    assert all(r.status is Status.ANSWERED for r in store.results())


def test_four_shot_is_one_conversation_with_five_images_and_answers_as_turns(circles, store, openai_env):
    server = openai_env(lambda body: "Yes")
    item = circles.items()[0]
    plan = RunPlan(circles, [item], [create("openai/x")], mode=Mode(4))
    [result] = asyncio.run(run(plan, store))
    body = server.requests[0]["body"]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant"] * 4 + ["user"]
    assert len(openai_images(body)) == 5
    examples = circles.select_examples(item, 4)
    assert [m["content"] for m in body["messages"][1::2][:4]] == [e.target_text() for e in examples]
    for message in body["messages"][0::2]:
        assert [p["type"] for p in message["content"]] == ["image_url", "text"]
        assert message["content"][1]["text"] == item.question
    query = Image.open(io.BytesIO(base64.b64decode(openai_images(body)[-1].split(",", 1)[1])))
    assert query.convert("RGB").tobytes() == item.images[0].load().tobytes()
    assert result.mode == "4-shot"


def test_chain_of_thought_grades_the_final_answer(circles, store, openai_env):
    def reasoner(body):
        return "The circles look close, maybe 2 pixels apart... no wait, they overlap. Yes, they touch.\nAnswer: Yes"

    server = openai_env(reasoner)
    items = [i for i in circles.items() if i.groups["prompt"] == "touching" and i.target == "yes"][:2]
    results = asyncio.run(run(RunPlan(circles, items, [create("openai/x")], mode=Mode(0, cot=True)), store))
    assert [r.parsed for r in results] == ["yes", "yes"] and all(r.correct for r in results)
    assert "Answer: <answer>" in server.requests[0]["body"]["messages"][-1]["content"][-1]["text"]


def test_cot_few_shot_examples_carry_reasoning_then_the_answer(circles, store, openai_env):
    server = openai_env(lambda body: "Answer: No")
    asyncio.run(run(RunPlan(circles, circles.items()[:1], [create("openai/x")], mode=Mode(4, cot=True)), store))
    first_answer = server.requests[0]["body"]["messages"][1]["content"]
    assert "pixels" in first_answer and first_answer.splitlines()[-1] in ("Answer: Yes", "Answer: No")


def test_missing_key_stops_before_anything_is_sent(circles, store, monkeypatch):
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        with pytest.raises(Unavailable, match="OPENAI_API_KEY"):
            asyncio.run(run(RunPlan(circles, circles.items(), [create("baseline/chance"), create("openai/x")]), store))
    assert server.request_count == 0 and store.count() == 0


def test_perturbations_change_what_is_sent(circles, store, openai_env):
    server = openai_env(lambda body: "No")
    item = circles.items()[0]
    asyncio.run(run(RunPlan(circles, [item], [create("openai/x")], perturbation="no-image"), store))
    assert openai_images(server.requests[-1]["body"]) == []
    asyncio.run(run(RunPlan(circles, [item], [create("openai/x")], perturbation="flip-vertical"), store))
    sent = Image.open(io.BytesIO(base64.b64decode(openai_images(server.requests[-1]["body"])[0].split(",", 1)[1])))
    assert sent.convert("RGB").tobytes() == item.images[0].load().transpose(Image.Transpose.FLIP_TOP_BOTTOM).tobytes()
    with pytest.raises(RunError, match="multiple-choice"):
        asyncio.run(run(RunPlan(circles, [item], [create("openai/x")], perturbation="rotate-options-1"), store))
    perturbations = {r.perturbation for r in store.results()}
    assert perturbations == {"no-image", "flip-vertical"}


def test_models_run_side_by_side_and_a_slow_one_does_not_hold_back_a_fast_one(circles, store, tmp_path, monkeypatch):
    finished = []
    with FakeOpenAIServer(lambda body: "Yes", latency=0.5) as slow, FakeAnthropicServer(lambda body: "No") as fast:
        models_file = tmp_path / "models.toml"
        models_file.write_text(f'[[endpoints]]\nname = "slow"\nbase_url = "{slow.base_url}"\nmodels = ["m"]\n')
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fast.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k-000000")
        backends = [create("slow/m", load_endpoints(models_file)), create("anthropic/fast"), create("baseline/chance")]
        asyncio.run(backends[1].generate([user("warm up")], GenerateConfig()))  # SDK import and first connection
        plan = RunPlan(circles, circles.items()[:4], backends, concurrency=1)
        results = asyncio.run(run(plan, store, lambda result, progress: finished.append(result.model)))
    assert len(results) == 12
    # The slow model's answers arrive every 0.5 s, one at a time; the others do not wait for them.
    second_slow = [i for i, model in enumerate(finished) if model == "slow/m"][1]
    assert finished[:second_slow].count("anthropic/fast") == 4
    assert finished[:second_slow].count("baseline/chance") == 4
    assert len(anthropic_images(fast.requests[-1]["body"])) == 1
