"""On ZeroGPU, local generation runs inside `spaces.GPU`; anywhere else the decorator is never
involved and `spaces`, installed or not, changes nothing. ZeroGPU is simulated: its flag in the
environment and a stand-in `spaces` module whose GPU decorator records what it runs (the real
one forks a GPU process and needs the platform's device API)."""

from __future__ import annotations

import asyncio
import contextvars
import importlib.machinery
import sys
import threading
import types

import pytest

from models import hf_backend, hf_zerogpu
from models.registry import create
from models.types import GenerateConfig, ImagePart, user
from tests.conftest import shapes_image

visitor = contextvars.ContextVar("visitor", default=None)


@pytest.fixture
def fake_spaces(monkeypatch):
    """A `spaces` module whose GPU(duration=...) wraps a function, recording each call and the
    visitor in whose context it ran (ZeroGPU charges the caller's quota from that context)."""
    calls: list[dict] = []
    module = types.ModuleType("spaces")

    def GPU(task=None, *, duration=None, size=None):  # noqa: N802 - the real name
        def decorate(function):
            def on_gpu(*args, **kwargs):
                calls.append({"function": function.__name__, "duration": duration, "visitor": visitor.get()})
                return function(*args, **kwargs)

            return on_gpu

        return decorate(task) if callable(task) else decorate

    module.GPU = GPU
    module.__spec__ = importlib.machinery.ModuleSpec("spaces", None)  # found as installed
    monkeypatch.setitem(sys.modules, "spaces", module)
    yield calls
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    hf_zerogpu.refresh()
    hf_backend.evict_idle()


def ask(backend, who: str | None = None):
    async def one():
        visitor.set(who)
        messages = [user(ImagePart(shapes_image("circle", 60)), "what is it?")]
        return await backend.generate(messages, GenerateConfig(max_tokens=4))

    return asyncio.run(one())


def test_on_zerogpu_generation_runs_inside_spaces_gpu_and_answers_the_same(tiny_vlm, fake_spaces, monkeypatch):
    hf_backend.evict_idle()
    expected = ask(create(f"hf/{tiny_vlm}")).text  # no ZeroGPU: the plain path
    assert fake_spaces == []
    hf_backend.evict_idle()

    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    assert hf_zerogpu.refresh()
    assert "device_map" not in hf_zerogpu.load_kwargs()  # weights stay on the CPU in the app's process
    reply = ask(create(f"hf/{tiny_vlm}"), who="alice")
    assert reply.text == expected
    assert fake_spaces == [{"function": "generate_on_gpu", "duration": hf_zerogpu.GPU_SECONDS, "visitor": "alice"}]


def test_without_the_zerogpu_flag_the_decorator_is_never_used(tiny_vlm, fake_spaces, monkeypatch):
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    assert not hf_zerogpu.refresh()
    assert hf_zerogpu.load_kwargs() == {"device_map": "auto"}
    hf_backend.evict_idle()
    assert ask(create(f"hf/{tiny_vlm}")).text
    assert fake_spaces == []


def test_a_gpu_process_forked_before_the_model_was_loaded_loads_it_from_its_folder(tiny_vlm):
    from transformers import AutoModelForImageTextToText

    processor = hf_backend.load_processor(tiny_vlm)
    processor.tokenizer.padding_side = "left"
    inputs = processor.apply_chat_template(
        [
            {
                "role": "user",
                "content": [{"type": "image", "image": shapes_image("square", 50)}, {"type": "text", "text": "what?"}],
            }
        ],
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        return_tensors="pt",
    )
    settings = {"max_new_tokens": 4, "do_sample": False}
    model = AutoModelForImageTextToText.from_pretrained(str(tiny_vlm))
    expected = model.generate(**inputs, **settings)
    try:
        output, _ = hf_zerogpu.generate_on_gpu("never-registered", str(tiny_vlm), dict(inputs), settings)
    finally:
        hf_zerogpu.unregister("never-registered")
    assert output.tolist() == expected.tolist()


def test_the_real_spaces_package_changes_nothing_off_zerogpu(monkeypatch):
    spaces = pytest.importorskip("spaces")
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)

    def generate():
        return "answer"

    assert spaces.GPU(generate) is generate
    assert spaces.GPU(duration=hf_zerogpu.GPU_SECONDS)(generate) is generate


def test_on_zerogpu_no_image_is_processed_inside_the_gpu_function(tiny_vlm, fake_spaces, monkeypatch):
    """The GPU function receives prepared tensors: images are processed before it, in the app's
    preparation threads, for replies and for answer probabilities alike, so a visitor's GPU
    quota pays for the model alone."""
    inside: set[int] = set()  # threads running the decorated function now
    processed: list[bool] = []  # per image processing: was its thread inside the GPU function?
    real_gpu = sys.modules["spaces"].GPU

    def gpu(task=None, *, duration=None, size=None):
        wrapped = real_gpu(duration=duration)

        def decorate(function):
            on_gpu = wrapped(function)

            def tracked(*args, **kwargs):
                inside.add(threading.get_ident())
                try:
                    return on_gpu(*args, **kwargs)
                finally:
                    inside.discard(threading.get_ident())

            return tracked

        return decorate(task) if callable(task) else decorate

    monkeypatch.setattr(sys.modules["spaces"], "GPU", gpu)
    from transformers import CLIPImageProcessorPil

    preprocess = CLIPImageProcessorPil.preprocess

    def watched(self, *args, **kwargs):
        processed.append(threading.get_ident() in inside)
        return preprocess(self, *args, **kwargs)

    monkeypatch.setattr(CLIPImageProcessorPil, "preprocess", watched)
    hf_backend.evict_idle()
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    assert hf_zerogpu.refresh()
    backend = create(f"hf/{tiny_vlm}")
    messages = (user(ImagePart(shapes_image("circle", 60)), "Are the two circles touching?"),)

    async def ask_and_score():
        visitor.set("bob")
        reply = await backend.generate(messages, GenerateConfig(max_tokens=4, probabilities=True))
        scores = await backend.score(messages, "", ["yes", "no"])  # read from the reply's own steps
        scores = await backend.score(tuple(messages), "", ["yes", "no"])  # prepared again, and a scoring pass
        others = await asyncio.gather(
            *(backend.generate([user(ImagePart(shapes_image(k, s)), "what?")], GenerateConfig(max_tokens=3))
              for k, s in (("square", 40), ("circle", 80), ("square", 70)))
        )  # fmt: skip
        return reply, scores, others

    reply, scores, others = asyncio.run(ask_and_score())
    assert reply.text and set(scores) == {"yes", "no"} and all(o.text for o in others)
    assert {call["function"] for call in fake_spaces} == {"generate_on_gpu", "score_on_gpu"}
    assert all(call["visitor"] == "bob" for call in fake_spaces)
    assert len(processed) >= 4 and not any(processed)
