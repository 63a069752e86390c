"""A generated set on disk: which items `python -m probes generate` draws, and the folder it
writes: one PNG per image, a metadata.jsonl (the Hugging Face imagefolder layout: file_name,
answer, every parameter), an items.jsonl in the custom-folder format (`probes/benchmarks/
custom.py`: id, image or images, question, answer, kind, options) and `probe_set.json`, the set's
description (`probes.files.set_spec`), so that `run FOLDER` asks the set again as the benchmark's
own items (`probes.files.set_folder`); a folder without the description (a copy of items.jsonl
and its pictures) still runs as a folder of your own. An item the custom-folder format cannot
hold is left out of items.jsonl (and kept in metadata.jsonl): an ungraded one (an illusion item
whose targets measured equal has no right option) or a word-list answer (texture generation's
match rate). Beside them `.probe-export.json` names every file written, so the same command may
write the folder again and nothing else may (`probes.files.export_folder`).

The CLI and the Stimulus lab's export both use these, so a set exported from the browser is the
same folder the command writes for the same benchmark, parameters, size and seed.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from models.png import encode_rgb_png
from models.types import to_rgb
from probes.core.benchmark import Benchmark
from probes.core.selection import draw_set
from probes.core.types import AnswerKind, ImageSource, Item, option_labels
from probes.files.export_folder import ExportFolder, export_into
from probes.files.set_spec import SPEC_FILE, SetSpec, write_spec

CUSTOM_ITEMS = "items.jsonl"  # what `run custom:FOLDER` reads
METADATA = "metadata.jsonl"  # the Hugging Face imagefolder's
PARALLEL_FROM = 16  # fewer distinct images than this: starting processes costs more than it saves


def generated_set(
    benchmark_id: str, params: Mapping[str, Sequence[str]], n: int, seed: int
) -> tuple[Benchmark, list[Item]]:
    """The benchmark built with `params` (NAME -> values) and `n` of its items drawn with `seed`:
    the items `run BENCH --limit N --seed S` asks with the same parameters (one sampler,
    `probes.core.selection.draw_set`). `seed` picks the sample; a family drawn with random
    positions takes its design seed as a parameter (`seed=3`), as `run` does."""
    return draw_set(benchmark_id, params, n, seed)


def write_generated(
    items: Sequence[Item],
    out: Path | ExportFolder,
    on_item: Callable[[int], None] | None = None,
    workers: int | None = None,
    spec: SetSpec | None = None,
) -> list[dict[str, Any]]:
    """Write the items' images as 00000.png, 00001.png ... (00000_0.png, 00000_1.png for an item
    with several images), one metadata.jsonl record per item and one items.jsonl record per item
    the custom-folder format can hold (see `custom_record`); `on_item(done)` after each; and,
    given the set's description `spec` (what drew `items`), its probe_set.json.
    Returns the metadata records as written.

    `out` is an empty folder, one not there yet, or one an export wrote (`ExportFolder`):
    anything else in the way is refused before anything is drawn.

    Each distinct image is drawn and encoded once, even when several items (prompts) share it,
    and the drawing and encoding run on every core.
    """
    names = [_file_names(index, item) for index, item in enumerate(items)]
    with export_into(out) as folder:
        folder.claim([*(name for listed in names for name in listed), METADATA, CUSTOM_ITEMS])
        if spec is not None:
            folder.claim([SPEC_FILE])
        sources = {source.ref: source for item in items for source in item.images}
        encoded = _encode_all(list(sources.values()), workers)
        records, metadata, runnable = [], [], []
        for index, item in enumerate(items):
            for name, source in zip(names[index], item.images, strict=True):
                folder.write(name, encoded[source.ref])
            record = {
                "file_name": names[index][0] if len(names[index]) == 1 else names[index],
                "id": item.id,
                "prompt": item.question,
                "answer": item.target_text(),
                **{k: v for k, v in item.params.items() if k != "prompt"},
                "prompt_name": item.params.get("prompt"),
                "groups": dict(item.groups),
            }
            metadata.append(json.dumps(record, ensure_ascii=False) + "\n")
            records.append(record)
            custom = custom_record(item, names[index])
            if custom is not None:
                runnable.append(json.dumps(custom, ensure_ascii=False) + "\n")
            if on_item is not None:
                on_item(index + 1)
        folder.write(METADATA, "".join(metadata).encode("utf-8"))
        folder.write(CUSTOM_ITEMS, "".join(runnable).encode("utf-8"))
        if spec is not None:
            write_spec(spec, folder, "png")
    return records


def fits_custom_folder(item: Item) -> bool:
    """Whether a custom folder's items.jsonl can hold the item: it has an answer to grade
    against, and not a word list."""
    return item.target is not None and item.kind is not AnswerKind.WORDS


def custom_record(item: Item, files: Sequence[str]) -> dict[str, Any] | None:
    """The item as a line of a custom folder's items.jsonl, or None where that format cannot
    hold it (no answer to grade against; a word list). The kind is always written, so an answer
    is never re-guessed from its shape (a text answer "3" stays text)."""
    if not fits_custom_folder(item):
        return None
    record: dict[str, Any] = {"id": item.id}
    if len(files) == 1:
        record["image"] = files[0]
    else:
        record["images"] = list(files)
    record["question"] = item.question
    if item.kind is AnswerKind.CHOICE:
        record["options"] = list(item.options)
        text = item.options[item.target]
        # The option's text names it unless another option reads the same; then its letter,
        # the only labels a custom folder asks with.
        record["answer"] = text if item.options.count(text) == 1 else option_labels(len(item.options))[item.target]
        return record
    record["kind"] = item.kind.value
    record["answer"] = list(item.target) if item.kind is AnswerKind.PAIR else item.target
    return record


def _file_names(index: int, item: Item) -> list[str]:
    if len(item.images) == 1:
        return [f"{index:05d}.png"]
    return [f"{index:05d}_{position}.png" for position in range(len(item.images))]


def encode_png(source: ImageSource) -> bytes:
    """Draw (or load) one image and encode it: 8-bit RGB PNG, deflate level 6."""
    return encode_rgb_png(to_rgb(source.load()), level=6)


def _encode_all(sources: list[ImageSource], workers: int | None) -> dict[str, bytes]:
    workers = workers or os.cpu_count() or 1
    # Generated images are pure functions of picklable parameters: other processes can draw them.
    # Images loaded by closures (user folders, datasets) are encoded here instead.
    portable = [s for s in sources if _picklable(s.load)] if workers > 1 and len(sources) >= PARALLEL_FROM else []
    local = [s for s in sources if s not in portable]
    encoded = {source.ref: encode_png(source) for source in local}
    if portable:
        context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            chunk = max(1, len(portable) // (workers * 8))
            for source, data in zip(portable, pool.map(encode_png, portable, chunksize=chunk), strict=True):
                encoded[source.ref] = data
    return encoded


def _picklable(function: Callable) -> bool:
    try:
        pickle.dumps(function)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True
