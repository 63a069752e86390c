"""Model ids -> answerers: the models' providers and the baselines, listed and resolved alike."""

import asyncio
from collections import Counter

import pytest

from models.types import GenerateConfig, ProviderError, user
from probes.asking.prompting import Prompt, prompt_hash
from probes.core.types import AnswerKind, Item
from probes.running.answerers import catalogue, create, resolve


def test_the_catalogue_lists_the_baselines_beside_the_models():
    infos = {info.id: info for info in catalogue()}
    assert infos["baseline/chance"].available and infos["baseline/pixels"].available
    assert not infos["openai/gpt-4o"].available and "OPENAI_API_KEY" in infos["openai/gpt-4o"].reason


def test_resolve_shares_one_answerer_per_id():
    assert resolve("baseline/chance") is resolve("baseline/chance")


def _item(answers):
    return Item("toy", "q", "q", (), AnswerKind.TEXT, answers[0], answer_space=tuple(answers))


def _prompt(question: str) -> Prompt:
    messages = (user(question),)
    return Prompt(messages, prompt_hash(messages))


def test_chance_is_seeded_and_uniform():
    backend = create("baseline/chance")
    item = _item(["a", "b", "c", "d"])

    def guess(seed, question):
        return asyncio.run(backend.answer(item, _prompt(question), GenerateConfig(seed=seed))).text

    assert guess(1, "q") == guess(1, "q")
    counts = Counter(guess(seed, f"q{seed}") for seed in range(2000))
    assert set(counts) == {"a", "b", "c", "d"}
    assert all(400 < count < 600 for count in counts.values())


def test_chance_without_answer_space_is_an_error_not_a_made_up_answer():
    with pytest.raises(ProviderError, match="answer space"):
        item = Item("toy", "q", "What is it?", (), AnswerKind.TEXT, "cat")  # free text: no answers to draw from
        asyncio.run(create("baseline/chance").answer(item, _prompt("q"), GenerateConfig()))
