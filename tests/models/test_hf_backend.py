"""The local backend on a tiny random VLM built from a config: the real load and generate path."""

import asyncio

import pytest

from models import hf_backend, hf_progress
from models.registry import create, describe
from models.types import GenerateConfig, ImagePart, Unavailable, assistant, user
from tests.conftest import shapes_image


def conversation():
    return [
        user(ImagePart(shapes_image("circle")), "Are the two circles touching?"),
        assistant("yes"),
        user(ImagePart(shapes_image("square")), "Are the two circles touching?"),
    ]


def test_generates_from_a_multi_image_multi_turn_conversation(tiny_vlm):
    backend = create(f"hf/{tiny_vlm}")
    backend.check()
    first = asyncio.run(backend.generate(conversation(), GenerateConfig(max_tokens=6)))
    second = asyncio.run(backend.generate(conversation(), GenerateConfig(max_tokens=6)))
    assert first.text and first.text == second.text  # greedy: the same words twice
    assert 0 < first.usage.output_tokens <= 6
    assert first.usage.input_tokens > 32  # two images' tokens plus the text


def test_one_loaded_copy_is_shared_by_every_backend_of_a_model(tiny_vlm):
    a, b = create(f"hf/{tiny_vlm}"), create(f"hf/{tiny_vlm}")
    asyncio.run(a.generate([user("hello")], GenerateConfig(max_tokens=2)))
    asyncio.run(b.generate([user("hello")], GenerateConfig(max_tokens=2)))
    assert a._load() is b._load()
    assert hf_backend.loaded_models().count(f"hf/{tiny_vlm}") == 1
    assert a.loading_progress().stage == "ready"


def test_different_images_give_different_answers(tiny_vlm):
    backend = create(f"hf/{tiny_vlm}")
    replies = {
        asyncio.run(
            backend.generate([user(ImagePart(shapes_image(kind, size)), "what is it?")], GenerateConfig(max_tokens=6))
        ).text
        for kind, size in (("circle", 64), ("square", 64), ("circle", 200))
    }
    assert len(replies) > 1


def test_a_folder_without_a_model_is_unavailable(tmp_path):
    with pytest.raises(Unavailable, match="config.json"):
        create(f"hf/{tmp_path}").check()


def test_hub_model_not_cached_while_offline_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    info = describe("hf/HuggingFaceTB/SmolVLM-256M-Instruct")
    assert not info.available and "HF_HUB_OFFLINE" in info.reason
    backend = create("hf/HuggingFaceTB/SmolVLM-256M-Instruct")
    assert backend.notes() == "not downloaded" and backend.download_size() is None
    with pytest.raises(Unavailable, match="not downloaded here and HF_HUB_OFFLINE is set"):
        asyncio.run(backend.generate([user("hi")], GenerateConfig()))
    hf_backend._failures.clear()


def test_local_folder_is_listed_as_present_with_its_size(tiny_vlm):
    info = describe(f"hf/{tiny_vlm}")
    size = sum(file.stat().st_size for file in tiny_vlm.iterdir())
    assert info.available and info.reason == f"weights present (local folder, {hf_progress.size_text(size)})"
    assert create(f"hf/{tiny_vlm}").download_size() == 0


def test_a_failed_load_is_remembered_so_a_run_does_not_retry_it_per_item(tmp_path, monkeypatch):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    backend = create(f"hf/{broken}")
    with pytest.raises(Unavailable, match="could not be loaded"):
        backend.warm_up()
    assert backend.loading_progress().stage == "failed"
    calls = []
    monkeypatch.setattr(hf_backend._Loader, "load", lambda self, folder: calls.append(1))
    with pytest.raises(Unavailable, match="could not be loaded"):
        asyncio.run(backend.generate([user("hi")], GenerateConfig()))
    assert calls == []


def test_concurrent_requests_are_batched_and_answer_exactly_as_one_by_one(tiny_vlm):
    backend = create(f"hf/{tiny_vlm}")
    conversations = [
        [user(ImagePart(shapes_image(kind, size)), f"question {n}: what is it?")]
        for n, (kind, size) in enumerate([("circle", 40), ("square", 64), ("circle", 90), ("square", 30)] * 2)
    ]
    config = GenerateConfig(max_tokens=5)
    one_by_one = [asyncio.run(backend.generate(c, config)).text for c in conversations]
    worker = backend._load()
    worker.batch_sizes.clear()

    async def together():
        return await asyncio.gather(*(backend.generate(c, config) for c in conversations))

    outputs = asyncio.run(together())
    assert [o.text for o in outputs] == one_by_one
    assert max(worker.batch_sizes) > 1 and worker.split_batches == 0  # several requests shared a forward pass
    assert all(o.usage.output_tokens <= 5 for o in outputs)
