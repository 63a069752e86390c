"""The catalogue's architectures through the local backend: tiny random LLaVA, Idefics3
(SmolVLM-256M/500M) and Qwen2.5-VL builds (tests/support/tiny_vlm.py), each saved with its
processor and loaded back as a Hub download would be, asked through the real processor, chat
template and the worker's batching."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from models import hf_backend  # noqa: E402
from models.registry import create  # noqa: E402
from models.types import GenerateConfig, ImagePart, assistant, user  # noqa: E402
from tests.conftest import shapes_image  # noqa: E402
from tests.support.tiny_vlm import BUILDERS  # noqa: E402

EXPECTED = {
    "llava": ("LlavaProcessor", "LlavaForConditionalGeneration"),
    "idefics3": ("Idefics3Processor", "Idefics3ForConditionalGeneration"),
    "qwen2_5_vl": ("Qwen2_5_VLProcessor", "Qwen2_5_VLForConditionalGeneration"),
}
# How each family's template writes a turn and an image before the processor widens it.
MARKERS = {
    "llava": ("USER: ", "ASSISTANT:", "<image>"),
    "idefics3": ("User:", "Assistant:", "<image>"),
    "qwen2_5_vl": ("<|im_start|>user\n", "<|im_start|>assistant\n", "<|vision_start|><|image_pad|><|vision_end|>"),
}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def tiny(request, tmp_path_factory):
    folder = BUILDERS[request.param](tmp_path_factory.mktemp(f"tiny-{request.param}"))
    yield request.param, folder
    hf_backend.evict_idle()


def two_turns(first: str = "circle", second: str = "square") -> list[dict]:
    return [
        {
            "role": "user",
            "content": [{"type": "image", "image": shapes_image(first, 90)}, {"type": "text", "text": "what is it?"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "a circle"}]},
        {
            "role": "user",
            "content": [{"type": "image", "image": shapes_image(second, 40)}, {"type": "text", "text": "and this?"}],
        },
    ]


def test_saved_build_loads_back_as_its_architecture(tiny):
    name, folder = tiny
    processor = hf_backend.load_processor(folder)
    model = transformers.AutoModelForImageTextToText.from_pretrained(str(folder))
    processor_class, model_class = EXPECTED[name]
    assert isinstance(processor, getattr(transformers, processor_class))
    assert type(model).__name__ == model_class
    assert sum(file.stat().st_size for file in folder.iterdir()) < 1_000_000


def test_chat_template_writes_every_turn_and_image_in_the_family_format(tiny):
    name, folder = tiny
    processor = hf_backend.load_processor(folder)
    prompt = processor.apply_chat_template(two_turns(), add_generation_prompt=True)
    user_turn, generation_prompt, image = MARKERS[name]
    assert prompt.count(user_turn) == 2 and prompt.count(image) == 2
    assert prompt.endswith(generation_prompt)
    assert "a circle" in prompt and prompt.index("what is it?") < prompt.index("a circle") < prompt.index("and this?")


def test_the_backend_replies_what_the_model_generates_from_the_processor_inputs(tiny):
    name, folder = tiny
    processor = hf_backend.load_processor(folder)
    model = transformers.AutoModelForImageTextToText.from_pretrained(str(folder)).eval()
    inputs = processor.apply_chat_template(
        two_turns(), add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
    )
    tokens = model.generate(**inputs, max_new_tokens=5, do_sample=False)
    direct = processor.decode(tokens[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True).strip()

    messages = [
        user(ImagePart(shapes_image("circle", 90)), "what is it?"),
        assistant("a circle"),
        user(ImagePart(shapes_image("square", 40)), "and this?"),
    ]
    reply = asyncio.run(create(f"hf/{folder}").generate(messages, GenerateConfig(max_tokens=5)))
    assert reply.text == direct and reply.text
    assert reply.usage.input_tokens == inputs["input_ids"].shape[1]


def test_a_batch_of_requests_answers_as_one_at_a_time(tiny):
    _, folder = tiny
    backend = create(f"hf/{folder}")
    shapes = [("circle", 40), ("square", 64), ("circle", 90), ("square", 30), ("circle", 120)]
    conversations = [
        [user(ImagePart(shapes_image(kind, size)), f"question {n}: what is it?")]
        for n, (kind, size) in enumerate(shapes)
    ]
    conversations.append(
        [
            user(ImagePart(shapes_image("circle", 70)), "what is it?"),
            assistant("yes"),
            user(ImagePart(shapes_image("square", 50)), "and now?"),
        ]
    )
    conversations.append([user("no image at all: what is it?")])
    config = GenerateConfig(max_tokens=5)
    one_by_one = [asyncio.run(backend.generate(c, config)).text for c in conversations]
    worker = backend._load()
    worker.batch_sizes.clear()

    async def together():
        return await asyncio.gather(*(backend.generate(c, config) for c in conversations))

    replies = [reply.text for reply in asyncio.run(together())]
    assert replies == one_by_one
    assert max(worker.batch_sizes) > 1 and worker.split_batches == 0  # they did share forward passes
    assert len(set(one_by_one)) > 1  # and the images and questions change the answer


# The catalogue's local models, each with the architecture its weights are: every one must have a
# tiny build above that loads through its real processor here, or leave the catalogue.
CATALOGUE_ARCHITECTURES = {
    "hf/HuggingFaceTB/SmolVLM-256M-Instruct": "idefics3",
    "hf/HuggingFaceTB/SmolVLM-500M-Instruct": "idefics3",
    "hf/Qwen/Qwen2.5-VL-3B-Instruct": "qwen2_5_vl",
}


def test_every_local_model_in_the_catalogue_has_an_architecture_that_loads_here(tmp_path):
    from models.registry import catalogue

    listed = {info.id for info in catalogue() if info.id.startswith("hf/")}
    assert listed == set(CATALOGUE_ARCHITECTURES), "a catalogue model without a tested architecture"
    for architecture in set(CATALOGUE_ARCHITECTURES.values()):
        folder = BUILDERS[architecture](tmp_path / architecture)
        processor = hf_backend.load_processor(folder)
        inputs = processor.apply_chat_template(
            two_turns(), add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
        )
        assert inputs["input_ids"].shape[-1] > 0 and "pixel_values" in inputs
        assert isinstance(processor, getattr(transformers, EXPECTED[architecture][0]))
