"""Local models at the chip's speed: our path (`probes run ... --model hf/FOLDER`, through the
runner, the preparation pool and the model's worker) against a plain transformers loop
(processor on a batch, then `generate`) on the same items, with the same model and processor.

The model is SmolVLM-256M-Instruct's shape, built from its config with random weights (nothing is
downloaded): Idefics3, a SigLIP-B/16 vision tower at 512 px, pixel shuffle 4 (64 tokens a tile), a
30-layer 576-wide Llama text model (9 heads, 3 key-value heads), a 49,280-token vocabulary, and
the real image processing: longest edge resized (LANCZOS) to 2048, cut into 512-pixel tiles plus
a global view, so a 384 px stimulus is 16 tiles + 1 and about 1,143 prompt tokens. `--tiny`
shrinks the vision tower and the text model (for a 2-core machine) and keeps that processing.

Each configuration runs `--repeats` times, interleaved, on the same `--items` items of
blind/touching-circles (384 px), `--new-tokens` new tokens, greedy; the figures are medians, and
every ratio is against a plain loop measured in the same run. Replies are compared with the plain
loop using the same image processor (PIL with PIL, torchvision with torchvision).

Run from the repository root:
    python -m bench.local_speed --tiny            # a CPU (our 2-core machines)
    python -m bench.local_speed --device cuda     # a GPU: prints the card's name
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

VOCABULARY = 49_280


def build_smolvlm(path: Path, tiny: bool, dtype: str) -> Path:
    """A random SmolVLM-256M-Instruct (or its --tiny cousin) with the real processor config."""
    import torch
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor, LlamaConfig
    from transformers.models.idefics3.configuration_idefics3 import Idefics3VisionConfig

    try:
        from transformers import Idefics3ImageProcessorPil as ImageProcessor
    except ImportError:  # another transformers layout
        from transformers import Idefics3ImageProcessor as ImageProcessor

    from tests.support.tiny_vlm import IDEFICS3_CHAT_TEMPLATE, _sharpen_and_save

    path.mkdir(parents=True, exist_ok=True)
    rows = [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)]
    special = ["<|endoftext|>", "<unk>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>",
               "<image>", "<global-img>", *rows]  # fmt: skip
    tokenizer = _tokenizer(special)
    processor = Idefics3Processor(
        image_processor=ImageProcessor(
            size={"longest_edge": 4 * 512},
            max_image_size={"longest_edge": 512},
            do_image_splitting=True,
            resample=1,  # LANCZOS, as SmolVLM's preprocessor_config.json
            image_mean=[0.5, 0.5, 0.5],
            image_std=[0.5, 0.5, 0.5],
        ),
        tokenizer=tokenizer,
        image_seq_len=64,
        chat_template=IDEFICS3_CHAT_TEMPLATE,
    )
    if tiny:
        vision = Idefics3VisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                      num_attention_heads=2, image_size=512, patch_size=16)  # fmt: skip
        # A wide initialisation, as the tests' tiny models: replies then depend on the picture.
        text = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                "num_key_value_heads": 2, "initializer_range": 0.5}  # fmt: skip
    else:
        vision = Idefics3VisionConfig(hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                                      num_attention_heads=12, image_size=512, patch_size=16)  # fmt: skip
        text = {"hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30, "num_attention_heads": 9,
                "num_key_value_heads": 3, "head_dim": 64}  # fmt: skip
    text_config = LlamaConfig(
        vocab_size=len(tokenizer), max_position_embeddings=8192, rope_theta=100000.0, rms_norm_eps=1e-5,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False, **text,
    )  # fmt: skip
    config = Idefics3Config(
        vision_config=vision,
        text_config=text_config,
        scale_factor=4,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = Idefics3ForConditionalGeneration(config).eval().to(getattr(torch, dtype))
    never = [token for token in special if token != "<end_of_utterance>"]
    _sharpen_and_save(model, tokenizer, path, never, bos_token_id=tokenizer.bos_token_id)
    processor.save_pretrained(path)
    return path


def _tokenizer(special: list[str]) -> Any:
    """A word-level tokenizer of SmolVLM's vocabulary size: the tests' words, then filler words."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    from tests.support.tiny_vlm import VOCAB_WORDS

    words = list(dict.fromkeys(w for w in VOCAB_WORDS if w not in special))
    words += [f"w{index}" for index in range(VOCABULARY - len(special) - len(words))]
    raw = Tokenizer(WordLevel(vocab={token: i for i, token in enumerate(special + words)}, unk_token="<unk>"))
    raw.normalizer = normalizers.Lowercase()
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    raw.add_special_tokens(special)
    return PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token="<|im_start|>", eos_token="<end_of_utterance>", unk_token="<unk>",
        pad_token="<|endoftext|>", padding_side="left", model_max_length=8192, clean_up_tokenization_spaces=False,
    )  # fmt: skip


# -- the two paths ------------------------------------------------------------------------------


def our_run(model_id: str, benchmark: Any, items: list, new_tokens: int, probabilities: bool = False) -> tuple:
    """`probes run` as the command line does it, into a fresh store: (seconds, replies, results)."""
    from models.types import GenerateConfig
    from probes.running.answerers import create
    from probes.running.runner import RunPlan, run
    from probes.running.store import Store

    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "results.sqlite") as store:
        plan = RunPlan(
            benchmark,
            items,
            [create(model_id)],
            config=GenerateConfig(max_tokens=new_tokens),
            probabilities=probabilities,
        )
        started = time.perf_counter()
        results = asyncio.run(run(plan, store))
        seconds = time.perf_counter() - started
    order = {item.id: index for index, item in enumerate(items)}
    results.sort(key=lambda result: order[result.item_id])
    errors = [result.error for result in results if result.error]
    if errors:
        raise SystemExit(f"our run had {len(errors)} errors, the first: {errors[0]}")
    return seconds, [result.reply for result in results], results


def conversations(benchmark: Any, items: list) -> list[list[dict]]:
    """The same conversations our run sends, images drawn (as PIL RGB) before the plain loop's clock."""
    from models.types import TextPart
    from probes.asking.prompting import assemble_prompt
    from probes.core.types import Mode

    built = []
    for item in items:
        _, prompt = assemble_prompt(benchmark, item, Mode(shots=0), "none")
        built.append(
            [
                {
                    "role": message.role,
                    "content": [
                        {"type": "text", "text": part.text} if isinstance(part, TextPart) else
                        {"type": "image", "image": part.rgb}
                        for part in message.parts
                    ],
                }
                for message in prompt.messages
            ]
        )  # fmt: skip
    return built


class PlainLoop:
    """processor(batch) -> model.generate -> decode, one batch after another, in one thread."""

    def __init__(self, folder: Path, backend: str, device: str):
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.processor = AutoProcessor.from_pretrained(str(folder), backend=backend)
        self.processor.tokenizer.padding_side = "left"
        self.model = AutoModelForImageTextToText.from_pretrained(str(folder), dtype="auto").to(device).eval()
        self.device = device
        self.torch = torch
        self.backend = type(self.processor.image_processor).__name__

    def run(self, conversations: list[list[dict]], batch: int, new_tokens: int) -> tuple[float, list[str], float]:
        """(seconds, replies, seconds of them in the processor)."""
        replies: list[str] = []
        processing = 0.0
        started = time.perf_counter()
        for start in range(0, len(conversations), batch):
            chunk = conversations[start : start + batch]
            before = time.perf_counter()
            inputs = self.processor.apply_chat_template(
                chunk, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt",
                processor_kwargs={"padding": True},
            ).to(self.device)  # fmt: skip
            processing += time.perf_counter() - before
            with self.torch.inference_mode():
                output = self.model.generate(**inputs, max_new_tokens=new_tokens, do_sample=False)
            width = inputs["input_ids"].shape[1]
            replies += [self.processor.decode(row[width:], skip_special_tokens=True).strip() for row in output]
        if self.device == "cuda":
            self.torch.cuda.synchronize()
        return time.perf_counter() - started, replies, processing


# -- measuring ----------------------------------------------------------------------------------


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--tiny", action="store_true", help="a small vision tower and text model, the real processing")
    parser.add_argument("--items", type=int, default=128)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--plain-batches", default="8,32", help="batch sizes of the plain loop")
    parser.add_argument("--no-probabilities", action="store_true", help="skip the --probabilities run")
    parser.add_argument(
        "--one-thread", action="store_true", help="on a CPU, also the plain loop with torch on 1 thread"
    )
    args = parser.parse_args(argv)
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch is imported: our backend must not find a GPU
    import torch

    device = "cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device here")
    card = torch.cuda.get_device_name(0) if device == "cuda" else f"CPU, {os.cpu_count()} cores"

    from models import hf_backend, hf_worker
    from models.hf_prepare import IMAGES_VARIABLE, torchvision_imports
    from probes.core.registry import get_benchmark
    from probes.core.selection import select_items

    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]})
    items = select_items(benchmark.items(), args.items, seed=0)
    batches = [int(b) for b in args.plain_batches.split(",") if b.strip()]
    backends = ["pil"] + (["torchvision"] if torchvision_imports() else [])
    dtype = "bfloat16" if device == "cuda" else "float32"
    print(f"device: {card}; torch {torch.__version__}, {torch.get_num_threads()} threads; load {load()}")
    if "torchvision" in backends:
        import torchvision
        from transformers.utils.import_utils import is_torchvision_greater_or_equal

        exact = is_torchvision_greater_or_equal("0.27")
        print(f"image processors: pil, torchvision {torchvision.__version__} on the CPU "
              f"({'LANCZOS as the model' if exact else 'LANCZOS resampled as BICUBIC: before 0.27'})")  # fmt: skip
    else:
        print("image processors: pil (torchvision does not import)")

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        path = build_smolvlm(Path(folder) / "smolvlm", args.tiny, dtype)
        shape = "tiny (1-layer 32-wide vision, 2-layer 64-wide text)" if args.tiny else "SmolVLM-256M (12+30 layers)"
        print(f"model: random {shape}, {dtype}, built in {time.perf_counter() - started:.1f} s")
        model_id = f"hf/{path}"
        drawn = conversations(benchmark, items)
        plain = {backend: PlainLoop(path, backend, device) for backend in backends}
        tokens = (
            plain["pil"]
            .processor.apply_chat_template(
                drawn[0], add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
            )["input_ids"]
            .shape[-1]
        )
        print(f"{len(items)} items of blind/touching-circles (384 px), {tokens} prompt tokens each "
              f"(17 tiles), {args.new_tokens} new tokens, greedy; {args.repeats} rounds, medians")  # fmt: skip

        runs: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        replies: dict[str, list[str]] = {}
        notes: dict[str, str] = {}

        def measure(name: str, go: Callable[[], tuple[float, list[str]]]) -> None:
            before = _cpu_seconds()
            seconds, said = go()
            cpu.setdefault(name, []).append(_cpu_seconds() - before)
            runs.setdefault(name, []).append(seconds)
            replies.setdefault(name, said)
            if replies[name] != said:
                notes[name] = "replies changed between rounds"

        ours = {backend: f"ours ({backend})" for backend in backends}

        def ours_with(
            backend: str, probabilities: bool = False, passes_only: bool = False
        ) -> Callable[[], tuple[float, list[str]]]:
            def go() -> tuple[float, list[str]]:
                os.environ[IMAGES_VARIABLE] = backend
                hf_backend.evict_idle()
                from probes.running.answerers import create

                create(model_id).warm_up()  # loading is not what is measured
                keep = hf_worker.KEEP_STEPS
                hf_worker.KEEP_STEPS = 0 if passes_only else keep
                try:
                    seconds, said, _ = our_run(model_id, benchmark, items, args.new_tokens, probabilities)
                finally:
                    hf_worker.KEEP_STEPS = keep
                return seconds, said

            return go

        # Warm-up: first calls pay for allocations and lazy imports, in either path.
        plain["pil"].run(drawn[:8], 8, args.new_tokens)
        for backend in backends:
            os.environ[IMAGES_VARIABLE] = backend
            hf_backend.evict_idle()
            our_run(model_id, benchmark, items[:8], args.new_tokens)

        for round_ in range(args.repeats):
            for backend in backends:
                for batch in batches:
                    measure(
                        f"plain {backend}, batches of {batch}",
                        lambda b=backend, n=batch: _plain(plain[b], drawn, n, args),
                    )
                if args.one_thread and device == "cpu":
                    measure(
                        f"plain {backend}, batches of {batches[0]}, torch on 1 thread",
                        lambda b=backend: _one_thread(plain[b], drawn, batches[0], args),
                    )
                measure(ours[backend], ours_with(backend))
            if not args.no_probabilities:
                best = backends[-1]
                measure(f"{ours[best]} --probabilities", ours_with(best, probabilities=True))
                measure(f"{ours[best]} --probabilities, scoring passes", ours_with(best, True, passes_only=True))
            print(f"  round {round_ + 1}: " + ", ".join(f"{name} {seconds[-1]:.1f} s" for name, seconds in runs.items())
                  + f"; load {load()}", flush=True)  # fmt: skip
        worker = hf_backend._pool.worker(str(path))
        batch_note = ""
        if worker is not None and worker.batch_sizes:
            batch_note = f"our batches: up to {max(worker.batch_sizes)} rows, {worker._parallel} preparation threads"

    rate = {name: len(items) / statistics.median(seconds) for name, seconds in runs.items()}
    print()
    print(f"{'':48} {'items/s':>8} {'CPU s/item':>11}")
    for name in runs:
        per_item = statistics.median(cpu[name]) / len(items)
        print(f"{name:48} {rate[name]:8.2f} {per_item:11.3f}{'  (' + notes[name] + ')' if name in notes else ''}")
    print()
    for backend in backends:
        for batch in batches:
            base = f"plain {backend}, batches of {batch}"
            print(f"{ours[backend]} / {base}: {rate[ours[backend]] / rate[base]:.2f}x items/s "
                  f"(cost per item {rate[base] / rate[ours[backend]]:.2f}x)")  # fmt: skip
        same = replies[ours[backend]] == replies[f"plain {backend}, batches of {batches[0]}"]
        print(f"{ours[backend]}: replies identical to the plain {backend} loop's: {same}")
    if not args.no_probabilities:
        best = ours[backends[-1]]
        for variant in (" --probabilities", " --probabilities, scoring passes"):
            print(f"{best}{variant} / {best}: {rate[best + variant] / rate[best]:.2f}x items/s")
    distinct = len(set(replies[ours[backends[0]]]))
    print(f"{distinct} distinct replies among {len(items)}; {batch_note}; load {load()}")


def _plain(loop: PlainLoop, drawn: list, batch: int, args: argparse.Namespace) -> tuple[float, list[str]]:
    seconds, said, _ = loop.run(drawn, batch, args.new_tokens)
    return seconds, said


def _one_thread(loop: PlainLoop, drawn: list, batch: int, args: argparse.Namespace) -> tuple[float, list[str]]:
    threads = loop.torch.get_num_threads()
    loop.torch.set_num_threads(1)
    try:
        return _plain(loop, drawn, batch, args)
    finally:
        loop.torch.set_num_threads(threads)


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the runner's drawing process)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    sys.exit(main())
