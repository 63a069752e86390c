"""A generated set on disk: which items `python -m probes generate` draws, and the folder it
writes (one PNG per image and a metadata.jsonl, the Hugging Face imagefolder layout).

The CLI and the Stimulus lab's export both use these, so a set exported from the browser is the
same folder the command writes for the same benchmark, parameters, size and seed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from probes.registry import get_benchmark
from probes.selection import select_items
from probes.types import Benchmark, Item


def generated_set(
    benchmark_id: str, params: Mapping[str, Sequence[str]], n: int, seed: int
) -> tuple[Benchmark, list[Item]]:
    """The benchmark built with `params` (NAME -> values) and `n` of its items drawn with `seed`.
    A benchmark drawn with random positions takes `seed` as its design seed too, unless the
    parameters fix one: another seed is another set, not just another sample of the same one."""
    params = {name: list(values) for name, values in params.items()}
    benchmark = get_benchmark(benchmark_id, params=params)
    if "seed" in getattr(benchmark, "params", {}) and "seed" not in params:
        benchmark = get_benchmark(benchmark_id, params={**params, "seed": [str(seed)]})
    return benchmark, select_items(benchmark.items(), n, seed)


def write_generated(
    items: Sequence[Item], out: Path, on_item: Callable[[int], None] | None = None
) -> list[dict[str, Any]]:
    """Write the items' images as 00000.png, 00001.png ... (00000_0.png, 00000_1.png for an item
    with several images) and one metadata.jsonl record per item; `on_item(done)` after each.
    Returns the records as written."""
    out.mkdir(parents=True, exist_ok=True)
    records = []
    with (out / "metadata.jsonl").open("w", encoding="utf-8") as metadata:
        for index, item in enumerate(items):
            names = []
            for position, source in enumerate(item.images):
                name = f"{index:05d}" + (f"_{position}" if len(item.images) > 1 else "") + ".png"
                source.load().save(out / name, format="PNG")
                names.append(name)
            record = {
                "file_name": names[0] if len(names) == 1 else names,
                "id": item.id,
                "prompt": item.question,
                "answer": item.target_text(),
                **{k: v for k, v in item.params.items() if k != "prompt"},
                "prompt_name": item.params.get("prompt"),
                "groups": dict(item.groups),
            }
            metadata.write(json.dumps(record, ensure_ascii=False) + "\n")
            records.append(record)
            if on_item is not None:
                on_item(index + 1)
    return records
