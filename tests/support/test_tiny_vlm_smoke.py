"""Smoke tests for the offline tiny LLaVA fixture (tests/support/tiny_vlm.py)."""

from __future__ import annotations

import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from PIL import Image, ImageDraw  # noqa: E402
from transformers import AutoModelForImageTextToText, AutoProcessor  # noqa: E402

from tests.support.tiny_vlm import build_tiny_llava  # noqa: E402


@pytest.fixture(scope="module")
def tiny_llava_path(tmp_path_factory):
    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


def _circles(dx: int = 0, color: str = "red") -> Image.Image:
    im = Image.new("RGB", (64, 48), "white")
    d = ImageDraw.Draw(im)
    d.ellipse([5 + dx, 5, 25 + dx, 25], fill=color)
    d.ellipse([30, 10, 50, 30], fill="blue")
    return im


def _conversation(img1, img2, question="Are the two circles touching?"):
    return [
        {"role": "user", "content": [{"type": "image", "image": img1}, {"type": "text", "text": "Q1"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Yes"}]},
        {"role": "user", "content": [{"type": "image", "image": img2}, {"type": "text", "text": question}]},
    ]


def _generate(processor, model, conversations, **kw):
    inputs = processor.apply_chat_template(
        conversations,
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        return_tensors="pt",
        **kw,
    )
    out = model.generate(**inputs.to(model.device), max_new_tokens=8, do_sample=False)
    return inputs, processor.batch_decode(out[:, inputs["input_ids"].shape[1] :], skip_special_tokens=True)


def test_folder_is_small(tiny_llava_path):
    total = sum(f.stat().st_size for f in tiny_llava_path.rglob("*") if f.is_file())
    assert total < 1_000_000
    assert (tiny_llava_path / "model.safetensors").exists()
    assert (tiny_llava_path / "chat_template.jinja").exists()


def test_build_is_deterministic(tiny_llava_path, tmp_path):
    other = build_tiny_llava(tmp_path / "again")
    assert (other / "model.safetensors").read_bytes() == (tiny_llava_path / "model.safetensors").read_bytes()


def test_chat_template_renders_multi_turn_multi_image(tiny_llava_path):
    processor = AutoProcessor.from_pretrained(tiny_llava_path)
    prompt = processor.apply_chat_template(_conversation(None, None), add_generation_prompt=True)
    assert prompt == (
        "<s>USER: <image>\nQ1\nASSISTANT: Yes</s>\nUSER: <image>\nAre the two circles touching?\nASSISTANT:"
    )
    no_gen = processor.apply_chat_template(_conversation(None, None), add_generation_prompt=False)
    assert not no_gen.endswith("ASSISTANT:")


def test_generate_multi_image_multi_turn(tiny_llava_path):
    t0 = time.perf_counter()
    processor = AutoProcessor.from_pretrained(tiny_llava_path)
    model = AutoModelForImageTextToText.from_pretrained(tiny_llava_path, device_map="auto")
    messages = _conversation(_circles(0), _circles(10))

    inputs, texts = _generate(processor, model, messages)
    elapsed = time.perf_counter() - t0

    n_img_tokens = int((inputs["input_ids"] == processor.image_token_id).sum())
    assert inputs["pixel_values"].shape == (2, 3, 32, 32)
    assert n_img_tokens == 2 * 16
    assert len(texts) == 1 and texts[0].strip()

    _, texts_again = _generate(processor, model, messages)
    assert texts_again == texts
    assert elapsed < 5.0  # typically ~0.1-0.3 s


def test_batched_generation_matches_single(tiny_llava_path):
    processor = AutoProcessor.from_pretrained(tiny_llava_path)
    model = AutoModelForImageTextToText.from_pretrained(tiny_llava_path, device_map="auto")
    processor.tokenizer.padding_side = "left"
    batch = [
        _conversation(_circles(0), _circles(10)),
        [
            {
                "role": "user",
                "content": [{"type": "image", "image": _circles(5)}, {"type": "text", "text": "What color?"}],
            }
        ],
    ]
    inputs, texts = _generate(processor, model, batch, processor_kwargs={"padding": True})
    assert inputs["input_ids"].shape[0] == 2
    assert inputs["pixel_values"].shape[0] == 3
    assert inputs["attention_mask"][1, 0] == 0  # left padded

    singles = [_generate(processor, model, conv)[1][0] for conv in batch]
    assert texts == singles
