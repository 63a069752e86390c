"""Local generation as a pipeline (models/hf_prepare.py, hf_worker.py, hf_batching.py): inputs
prepared one request at a time in the preparation threads, ahead of the model; put together
exactly as the processor makes a batch; batches sized to memory and prompt length; answer
probabilities batched across requests and scored from the inputs the reply was prepared with."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from models import hf_backend, hf_batching, hf_prepare, hf_zerogpu  # noqa: E402
from models.hf_worker import ModelWorker  # noqa: E402
from models.registry import create  # noqa: E402
from models.types import GenerateConfig, ImagePart, user  # noqa: E402
from tests.conftest import shapes_image  # noqa: E402
from tests.support.tiny_vlm import BUILDERS  # noqa: E402


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return {name: build(tmp_path_factory.mktemp(f"pipeline-{name}")) for name, build in BUILDERS.items()}


def turn(*parts) -> dict:
    content = [{"type": "image", "image": p} if not isinstance(p, str) else {"type": "text", "text": p} for p in parts]
    return {"role": "user", "content": content}


# Rows of one architecture that may share a batch: different image sizes and, where the processor
# pads them (Idefics3), different numbers of images and tiles.
CONVERSATIONS = [
    [turn(shapes_image("circle", 40), "what is it?")],
    [turn(shapes_image("square", 90), shapes_image("circle", 30), "and these two?")],
    [turn(shapes_image("square", 120), "a longer question about the square in this picture?")],
    [turn(shapes_image("circle", 64), "what?")],
]


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_prepared_requests_put_together_are_exactly_the_processors_own_batch(folders, name):
    processor = hf_backend.load_processor(folders[name])
    processor.tokenizer.padding_side = "left"
    prepared = [hf_prepare.prepare(processor, conversation) for conversation in CONVERSATIONS]
    groups: dict[tuple, list[int]] = {}
    for index, row in enumerate(prepared):
        groups.setdefault(row.signature, []).append(index)
    together = [indices for indices in groups.values() if len(indices) > 1]
    assert together, "some rows must be able to share a batch"
    buffers: dict = {}
    for indices in together:
        expected = processor.apply_chat_template(
            [CONVERSATIONS[i] for i in indices],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
            processor_kwargs={"padding": True},
        )
        for _ in range(2):  # the second time through reused buffers
            batch = hf_prepare.collate(
                [prepared[i] for i in indices], processor.tokenizer.pad_token_id, "left", buffers
            )
            assert batch.keys() == expected.keys()
            for key in expected:
                assert batch[key].dtype == expected[key].dtype and torch.equal(batch[key], expected[key]), key


def test_rows_of_different_kinds_are_not_put_together(folders):
    processor = hf_backend.load_processor(folders["idefics3"])
    with_image = hf_prepare.prepare(processor, CONVERSATIONS[0])
    text_only = hf_prepare.prepare(processor, [turn("no picture at all")])
    assert with_image.signature != text_only.signature
    with pytest.raises(hf_prepare.CannotCollate):
        hf_prepare.collate([with_image, text_only], processor.tokenizer.pad_token_id)


def test_large_image_tensors_reuse_the_last_batchs_memory():
    rows = [
        hf_prepare.Prepared(
            {"input_ids": torch.tensor([[5, 6, 7]]), "pixel_values": torch.rand(2, 3, 256, 256)}, 3, ("same",)
        )
        for _ in range(3)
    ]
    buffers: dict = {}
    first = hf_prepare.collate(rows, 0, "left", buffers)["pixel_values"]
    place = first.data_ptr()
    rows[0].inputs["pixel_values"] = torch.rand(2, 3, 256, 256)
    second = hf_prepare.collate(rows, 0, "left", buffers)["pixel_values"]
    assert second.data_ptr() == place
    assert torch.equal(second, torch.cat([row.inputs["pixel_values"] for row in rows]))


class Timeline:
    """What ran when, and on which thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.events: list[tuple[str, str, float, float]] = []  # (what, thread, start, end)

    def wrap(self, what, function, pause=0.0):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                if pause:
                    time.sleep(pause)
                return function(*args, **kwargs)
            finally:
                with self.lock:
                    self.events.append((what, threading.current_thread().name, started, time.perf_counter()))

        return timed

    def of(self, what):
        return [event for event in self.events if event[0] == what]


def test_images_are_processed_in_the_preparation_threads_a_batch_ahead_of_the_model(folders, monkeypatch):
    """While one batch generates, the next batch's images are processed: each request's image
    processing runs in a preparation thread, never on the model's worker thread."""
    folder = folders["llava"]
    processor = hf_backend.load_processor(folder)
    model = transformers.AutoModelForImageTextToText.from_pretrained(str(folder)).eval()
    timeline = Timeline()
    image_processor = processor.image_processor
    monkeypatch.setattr(image_processor, "preprocess", timeline.wrap("images", image_processor.preprocess))
    monkeypatch.setattr(hf_zerogpu, "generate", timeline.wrap("generate", hf_zerogpu.generate, pause=0.3))
    conversations = [[turn(shapes_image(kind, size), f"question {n}?")] for n, (kind, size) in
                     enumerate([("circle", 40), ("square", 64), ("circle", 90), ("square", 30)] * 3)]  # fmt: skip
    settings = {"max_new_tokens": 4, "do_sample": False}
    worker = ModelWorker("tiny", processor, model, max_batch=4)
    try:
        one_by_one = [worker.submit(c, settings).result(timeout=60).text for c in conversations]
        timeline.events.clear()
        worker.batch_sizes.clear()
        futures = [worker.submit(c, settings) for c in conversations]
        replies = [future.result(timeout=60).text for future in futures]
    finally:
        worker.stop()
    assert replies == one_by_one
    assert max(worker.batch_sizes) == 4 and len(worker.batch_sizes) >= 3
    images = timeline.of("images")
    assert len(images) == len(conversations)
    assert all(thread.startswith("hf-prepare") for _, thread, _, _ in images)
    generating = timeline.of("generate")
    assert all(thread.startswith("hf-worker") for _, thread, _, _ in generating)
    # Images processed while a batch was generating: the next batch, prepared ahead.
    during = [i for i in images if any(g[2] < i[3] and i[2] < g[3] for g in generating)]
    assert len(during) >= 4


def test_a_request_whose_picture_cannot_be_read_fails_alone(tiny_vlm):
    backend = create(f"hf/{tiny_vlm}")

    def broken():
        raise ValueError("not a picture any more")

    good = [user(ImagePart(shapes_image("circle", 50)), "what is it?"), user(ImagePart(shapes_image("square")), "and?")]

    async def together():
        asks = [backend.generate([message], GenerateConfig(max_tokens=3)) for message in good]
        asks.insert(1, backend.generate([user(ImagePart(broken), "what?")], GenerateConfig(max_tokens=3)))
        return await asyncio.gather(*asks, return_exceptions=True)

    first, failed, second = asyncio.run(together())
    assert isinstance(failed, ValueError) and "not a picture" in str(failed)
    assert first.text and second.text


def test_concurrency_follows_the_loaded_models_batches(tiny_vlm):
    backend = create(f"hf/{tiny_vlm}")
    backend.warm_up()
    worker = backend._load()
    assert backend.default_concurrency == worker.in_flight() == 2 * worker.max_batch  # on a CPU: 2 x 8


# -- answer probabilities ------------------------------------------------------------------------


def test_probabilities_of_many_requests_are_scored_together_as_they_are_alone(tiny_vlm):
    backend = create(f"hf/{tiny_vlm}")
    asks = [
        ([user(ImagePart(shapes_image(kind, size)), "How many circles?")], prefix, candidates)
        for kind, size, prefix, candidates in [
            ("circle", 40, "", ["yes", "no"]),
            ("square", 70, "", ["two", "two circles", "two squares", "three"]),
            ("circle", 90, "there are", ["one", "two", "three"]),
            ("square", 30, "", ["yes", "no", "maybe"]),
            ("circle", 60, "i see", ["two circles", "two", "one"]),
        ]
    ]
    alone = [asyncio.run(backend.score(messages, prefix, candidates)) for messages, prefix, candidates in asks]
    worker = backend._load()
    worker.scoring_batch_sizes.clear()

    async def together():
        return await asyncio.gather(*(backend.score(m, p, c) for m, p, c in asks))

    scores = asyncio.run(together())
    assert max(worker.scoring_batch_sizes) > 1  # requests shared a forward pass
    for one, batched in zip(alone, scores, strict=True):
        assert batched.keys() == one.keys()
        assert batched == pytest.approx(one, rel=1e-4, abs=1e-7)
    assert sum(scores[0].values()) == pytest.approx(sum(alone[0].values()), rel=1e-4)


def test_scoring_after_a_reply_reuses_its_inputs_and_reads_its_own_steps(tiny_vlm):
    """The reply's generation already computed the next-token distribution after the prompt:
    single-token candidates are read from it, exactly as a scoring pass computes them; a
    candidate off the reply's path takes a pass, over the inputs the reply was prepared with."""
    backend = create(f"hf/{tiny_vlm}")
    messages = (user(ImagePart(shapes_image("circle", 55)), "Are the two circles touching?"),)
    config = GenerateConfig(max_tokens=3, probabilities=True)
    worker = backend._load()
    prepared, from_steps, passes = worker.prepared_here, worker.scored_from_steps, len(worker.scoring_batch_sizes)
    asyncio.run(backend.generate(messages, config))
    scores = asyncio.run(backend.score(messages, "", ["yes", "no", "maybe"]))
    assert worker.prepared_here == prepared + 1  # the images were processed once, for the reply
    assert worker.scored_from_steps == from_steps + 1 and len(worker.scoring_batch_sizes) == passes  # no pass
    fresh = asyncio.run(backend.score(tuple(messages), "", ["yes", "no", "maybe"]))  # another object: a pass
    assert worker.prepared_here == prepared + 2 and len(worker.scoring_batch_sizes) == passes + 1
    assert scores == pytest.approx(fresh, rel=1e-4, abs=1e-9)

    # After what the reply said first: the distribution at its second place.
    reply = asyncio.run(backend.generate(messages, config)).text
    first = reply.split()[0]
    counted = worker.scored_from_steps
    after = asyncio.run(backend.score(messages, first, ["yes", "no", "two"]))
    assert worker.scored_from_steps == counted + 1
    assert after == pytest.approx(asyncio.run(backend.score(tuple(messages), first, ["yes", "no", "two"])), rel=1e-4)

    reply = asyncio.run(backend.generate(messages, config)).text
    first = reply.split()[0]
    off_path = "maybe circles" if first != "maybe" else "yes circles"  # leaves the reply after its first word
    prepared, passes = worker.prepared_here, len(worker.scoring_batch_sizes)
    mixed = asyncio.run(backend.score(messages, "", ["two", off_path]))
    assert worker.prepared_here == prepared  # the reply's inputs, reused
    assert len(worker.scoring_batch_sizes) == passes + 1  # but a scoring pass
    assert mixed == pytest.approx(asyncio.run(backend.score(tuple(messages), "", ["two", off_path])), rel=1e-4)


# -- batch sizes ---------------------------------------------------------------------------------


class FakeModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(2))
        self.config = transformers.LlamaConfig(
            hidden_size=256, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2
        )


def test_batches_are_sized_by_the_memory_left_and_the_length_of_their_rows(monkeypatch):
    budget = hf_batching.BatchBudget(FakeModel())
    per_token = budget.per_token
    monkeypatch.setattr(hf_batching, "_available_ram", lambda: per_token * 2000 * 5 / hf_batching.SAFETY)
    assert budget.rows(1000) == min(hf_batching.CPU_CEILING, 10)
    assert budget.rows(2000) == 5 and budget.rows(4000) == 2 and budget.rows(100_000) == 1
    monkeypatch.setattr(hf_batching, "_available_ram", lambda: 1e15)
    assert budget.rows(1000) == hf_batching.CPU_CEILING
    assert hf_batching.BatchBudget(FakeModel(), ceiling=3).rows(10) == 3


def test_on_a_gpu_the_first_batch_is_small_and_later_ones_follow_the_measured_cost(monkeypatch):
    budget = hf_batching.BatchBudget(FakeModel())
    budget.cuda, budget.fixed, budget.ceiling = True, False, hf_batching.CUDA_CEILING  # as for a model on CUDA
    memory = {"allocated": 1_000, "peak": 1_000}
    cuda = torch.cuda
    monkeypatch.setattr(cuda, "mem_get_info", lambda device=None: (10_000_000_000, 80_000_000_000))
    monkeypatch.setattr(cuda, "memory_reserved", lambda device=None: memory["allocated"])
    monkeypatch.setattr(cuda, "memory_allocated", lambda device=None: memory["allocated"])
    monkeypatch.setattr(cuda, "max_memory_allocated", lambda device=None: memory["peak"])
    monkeypatch.setattr(cuda, "reset_peak_memory_stats", lambda device=None: None)
    assert budget.rows(1000) == hf_batching.FIRST_BATCH  # nothing measured yet
    with budget.measuring(rows=4, tokens_per_row=1000):
        memory["peak"] = 1_000 + 4 * 1000 * 50_000  # 50 kB per token of a row
    assert budget.per_token == 50_000
    assert budget.rows(1000) == min(hf_batching.CUDA_CEILING, 160)  # 10 GB free * 0.8 / 50 MB a row
    assert budget.rows(8000) == 20


# -- which image processor -----------------------------------------------------------------------


def test_image_processor_choice(monkeypatch):
    monkeypatch.setattr(hf_prepare, "_torchvision", False)
    assert hf_prepare.choose_images("auto") == hf_prepare.ImageChoice("pil")
    assert hf_prepare.choose_images("pil").backend == "pil"
    gpu = hf_prepare.choose_images("gpu", gpu_here=True)
    assert gpu.backend == "pil" and "does not import" in gpu.note
    monkeypatch.setattr(hf_prepare, "_torchvision", True)
    assert hf_prepare.choose_images("auto").backend is None  # transformers' own choice, on the CPU
    assert hf_prepare.choose_images("torchvision") == hf_prepare.ImageChoice("torchvision")
    on_gpu = hf_prepare.choose_images("gpu", gpu_here=True)
    assert on_gpu.on_model_device and "BICUBIC" in on_gpu.note
    assert on_gpu.processor_kwargs("cuda:0") == {"device": "cuda:0"}
    assert not hf_prepare.choose_images("gpu", gpu_here=False).on_model_device
    monkeypatch.setenv(hf_prepare.IMAGES_VARIABLE, "fast")
    with pytest.raises(hf_backend.Unavailable, match="PROBE_HF_IMAGES"):
        hf_prepare.choose_images()


def test_a_torchvision_that_does_not_import_counts_as_absent(tmp_path, monkeypatch):
    package = tmp_path / "torchvision"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('operator torchvision::nms does not exist')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "torchvision", raising=False)
    monkeypatch.setattr(hf_prepare, "_torchvision", None)
    assert not hf_prepare.torchvision_imports()
    assert hf_prepare.choose_images("auto").backend == "pil"
