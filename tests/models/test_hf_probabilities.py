"""Answer probabilities from the tiny local VLM: candidates scored by the model itself."""

import asyncio

import pytest

from models.registry import create as create_backend
from models.types import ImagePart, user
from probes.core.registry import get_benchmark
from probes.core.types import Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from tests.conftest import shapes_image


def test_probabilities_over_the_items_answers_sum_to_one(tiny_vlm, store):
    benchmark = get_benchmark(
        "blind/touching-circles", params={"canvas": ["384"], "orientation": ["horizontal"], "diameter": ["1/4"]}
    )
    items = benchmark.items()[:4]
    plan = RunPlan(benchmark, items, [create(f"hf/{tiny_vlm}")], probabilities=True)
    results = asyncio.run(run(plan, store))
    for result in results:
        assert result.status is not Status.ERROR
        assert set(result.probabilities) == {"yes", "no"}
        assert sum(result.probabilities.values()) == pytest.approx(1.0)
        assert 0 < result.probability_mass <= 1
        assert result.alternatives is None  # scored candidates, not token alternatives
    stored = {r.item_id: r for r in store.results()}
    assert all(stored[r.item_id].probabilities == pytest.approx(r.probabilities) for r in results)
    # The scores are cached with the reply: a re-run sends nothing and finds the same figures.
    again = asyncio.run(run(RunPlan(benchmark, items, [create(f"hf/{tiny_vlm}")], probabilities=True), store))
    assert all(r.cached for r in again)
    assert [r.probabilities for r in again] == [pytest.approx(r.probabilities) for r in results]


@pytest.mark.parametrize("shape", ["circle", "square", "triangle"])
def test_the_greedy_choice_among_the_answers_is_the_most_probable_one(tiny_vlm, shape):
    """Generation restricted to the candidates' tokens (transformers' own greedy search) picks
    the candidate the scores call most probable."""
    import torch

    backend = create_backend(f"hf/{tiny_vlm}")
    messages = [user(ImagePart(shapes_image(shape)), "Are the two circles touching?")]
    candidates = ["yes", "no", "maybe", "one", "two", "three"]
    scores = asyncio.run(backend.score(messages, "", candidates))
    assert set(scores) == set(candidates)  # single words of its vocabulary, disjoint
    assert 0 < sum(scores.values()) <= 1
    worker = backend._load()
    tokenizer = worker.processor.tokenizer
    allowed = [tokenizer.convert_tokens_to_ids(word) for word in candidates]
    conversation = [{"role": "user", "content": [{"type": "image", "image": shapes_image(shape).convert("RGB")},
                                                  {"type": "text", "text": "Are the two circles touching?"}]}]  # fmt: skip
    inputs = worker.processor.apply_chat_template(
        conversation, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
    )
    with torch.inference_mode():
        output = worker.model.generate(
            **inputs, max_new_tokens=1, do_sample=False, prefix_allowed_tokens_fn=lambda batch, ids: allowed
        )
    chosen = tokenizer.convert_ids_to_tokens(int(output[0, -1]))
    assert chosen == max(scores, key=scores.get)


def test_a_candidate_others_extend_counts_without_them(tiny_vlm):
    backend = create_backend(f"hf/{tiny_vlm}")
    messages = [user(ImagePart(shapes_image("circle")), "How many circles?")]
    alone = asyncio.run(backend.score(messages, "", ["two"]))["two"]
    both = asyncio.run(backend.score(messages, "", ["two", "two circles", "two squares"]))
    assert both["two"] == pytest.approx(alone - both["two circles"] - both["two squares"], abs=1e-9)
    assert both["two circles"] > 0
    # Spelled by the same tokens (the tokenizer lower-cases): counted once, under the first name.
    assert set(asyncio.run(backend.score(messages, "", ["yes", "Yes"]))) == {"yes"}
