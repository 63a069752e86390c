"""Choosing an item to show: from a benchmark, a generated stimulus, or an upload.

An item is remembered between events as an `ItemSpec` (small plain values, fit for gr.State)
and rebuilt from it: benchmarks are cached, generation is deterministic, uploads stay on disk in
Gradio's own temporary folder.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gradio import utils as gradio_utils
from PIL import Image

from probes.benchmarks.custom import UploadSet
from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError, InputRejected, LimitExceeded, UsageError
from probes.core.registry import generated_families, get_benchmark
from probes.core.types import AnswerKind, Item
from probes.demo.examples import generated_choice
from probes.files.images import check_image_file
from probes.running.limits import current as limits


@dataclass(frozen=True)
class ItemSpec:
    """Which item is on stage: a generated stimulus, a benchmark's item, or an upload."""

    source: Literal["generated", "benchmark", "upload"]
    benchmark: str = ""
    index: int = 0
    params: dict[str, list[str]] = field(default_factory=dict)  # a generated stimulus's values
    data: str | None = None  # a benchmark's local copy
    paths: tuple[str, ...] = ()  # uploaded files
    question: str = ""
    options: tuple[str, ...] = ()
    answer: str = ""


def generated_ids() -> list[str]:
    """Generated benchmarks, whatever their family: every tab lists a new one without an edit."""
    return list(generated_families())


@functools.lru_cache(maxsize=32)
def _benchmark(benchmark_id: str, data: str | None, params_json: str) -> Benchmark:
    params = json.loads(params_json) or None
    return get_benchmark(benchmark_id, data=data, params=params)


def benchmark_of(benchmark_id: str, data: str | None = None, params: dict[str, list[str]] | None = None) -> Benchmark:
    """Every benchmark the playground builds comes from here, so the public-mode gate stands here
    (before the cache: a benchmark built locally before a switch is not handed out): a link, an
    API call or a session's saved state naming `custom:PATH` or a data folder is refused without
    a look at the disk."""
    limits().admit(benchmark=benchmark_id, data=data)
    return _benchmark(benchmark_id, data or None, json.dumps(params or {}, sort_keys=True))


def upload_roots() -> list[Path]:
    """Where Gradio keeps visitors' uploads: the only files an upload spec may name in public mode."""
    return [Path(gradio_utils.get_upload_folder())]


def generated_spec(task: str, params_text: str, seed: int) -> ItemSpec:
    """One stimulus of `task`: the parameters given are fixed; the others are drawn from the
    paper's values with the seed (`probes.demo.examples.generated_choice`)."""
    chosen, index = generated_choice(task, params_text, seed, lambda name, params: benchmark_of(name, params=params))
    return ItemSpec("generated", task, index, params=chosen)


def benchmark_spec(benchmark_id: str, data: str | None, index: int) -> ItemSpec:
    items = benchmark_of(benchmark_id, data).items()
    if not items:
        raise BenchmarkError(f"{benchmark_id} has no items")
    return ItemSpec("benchmark", benchmark_id, int(index) % len(items), data=data or None)


def upload_spec(paths: list[str], question: str, options_text: str, answer: str) -> ItemSpec:
    bounds = limits()
    question, options_text, answer = (bounds.text(what, value) for what, value in
                                      (("question", question), ("options", options_text), ("answer", answer)))  # fmt: skip
    options = tuple(line.strip() for line in (options_text or "").splitlines() if line.strip())
    if not (question or "").strip():
        raise UsageError("write a question for your images")
    check_uploads([Path(p) for p in paths or []])
    UploadSet.from_files([Path(p) for p in paths or []], question, options, answer or "")  # validates now
    return ItemSpec("upload", paths=tuple(paths), question=question, options=options, answer=answer or "")


def check_uploads(paths: list[Path]) -> None:
    """Count, bytes and pixels of uploaded images, from their headers: nothing is decoded before
    every file passes (20 uploads of 6300 x 6300 once took 16 GB to decode). Each header is read
    in a decoding worker, after the file's structural bounds (`probes.files.images`): this
    handler only waits on it, so the server's event loop is never held."""
    bounds = limits()
    if len(paths) > bounds.max_upload_images:
        raise LimitExceeded(f"{len(paths)} images uploaded; at most {bounds.max_upload_images} for one question here")
    for path in paths:
        try:
            size = path.stat().st_size
        except OSError:
            raise InputRejected(f"{path.name}: the upload cannot be read; upload it again") from None
        if size > bounds.max_upload_bytes:
            raise LimitExceeded(
                f"{path.name}: {size / 2**20:.1f} MB; at most {bounds.max_upload_bytes // 2**20} MB here"
            )
        info = check_image_file(path)
        if info.width * info.height > bounds.max_upload_pixels:
            raise LimitExceeded(
                f"{path.name}: {info.width} x {info.height} pixels; at most {bounds.max_upload_pixels / 1e6:g} million here"
            )


def resolve(spec: ItemSpec | None) -> tuple[Benchmark, Item]:
    if spec is None:
        raise UsageError("choose an item first: generate a stimulus, pick a benchmark item, or upload images")
    if spec.source == "upload":
        limits().admit(files=spec.paths, roots=upload_roots())
        benchmark = UploadSet.from_files([Path(p) for p in spec.paths], spec.question, list(spec.options), spec.answer)
        return benchmark, benchmark.items()[0]
    benchmark = benchmark_of(spec.benchmark, spec.data, spec.params or None)
    items = benchmark.items()
    return benchmark, items[spec.index % len(items)]


def describe(
    item: Item, shown: Callable[[Image.Image], Image.Image] | None = None
) -> tuple[list[Image.Image], str, str]:
    """(images, question with options, answer) for showing an item to a person; `shown` makes
    each image what is shown (a smaller copy), one at a time, so the originals are never all
    decoded at once."""
    images = [(shown or _same)(source.load()) for source in item.images]
    question = item.question
    if item.options:
        question += "\n\n" + "\n".join(
            f"{label}. {text}" for label, text in zip(item.labels, item.options, strict=True)
        )
    if item.target is None:
        answer = "(no answer given: replies are shown, not graded)"
    elif item.kind is AnswerKind.CHOICE:
        answer = f"{item.target_text()}. {item.options[item.target]}"
    else:
        answer = item.target_text()
    return images, question, answer


def _same(image: Image.Image) -> Image.Image:
    return image
