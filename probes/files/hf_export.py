"""A generated set as a Hugging Face dataset folder (`generate ... --format hf`): what
`datasets.load_dataset(DIR)` loads and `huggingface-cli upload` pushes as it is.

The folder: `data/test-00000-of-0000N-<digest>.parquet` shards (an `Image` feature, or a list of
images for items shown several), `README.md` (the dataset card: its YAML names the shards as the
`test` split, each by its name: `datasets` caches a local folder under the folder's name and its
card's file patterns, so a pattern alone would hand back another set of that folder name written
before; the content digest in each name keeps two sets apart and the same set one),
its text gives the exact generating command and the columns), `probe_set.json` (the set's
description, `probes.files.set_spec`) and `.probe-export.json` (the files written,
`probes.files.export_folder`).

Columns: `id`, `image` (or `images`), `question`, `options` (empty unless multiple choice),
`answer` (what a right reply says, in the item's own labels: "a", "Yes", "3", "(4, 3)"),
`answer_option` (the right option's text), `kind`, `label_style`, `target` (our target as JSON),
`benchmark`, `seed`, `messages` (the exact 0-shot prompt we send, as JSON: roles, text parts and
the places of the images), `groups` (scoreboard groups, JSON), then every parameter of the item,
measured values included (`measured_top_px`, ...), one column each, named as the parameter
(prefixed `param_` where that name is taken by a column above).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from models.types import ImagePart, TextPart
from probes.asking.prompting import assemble_prompt
from probes.core.benchmark import Benchmark
from probes.core.types import AnswerKind, Item, Mode, jsonable
from probes.files.export import _encode_all, _file_names
from probes.files.export_folder import ExportFolder
from probes.files.set_spec import SPEC_FILE, SetSpec, write_spec

CARD = "README.md"
SHARDS = "data"
SHARD_ROWS = 1000  # a few hundred KB to a few MB of PNGs per shard on our stimuli
FIXED = ("id", "image", "images", "question", "options", "answer", "answer_option", "kind", "label_style",
         "target", "benchmark", "seed", "messages", "groups")  # fmt: skip


def prompt_layout(benchmark: Benchmark, item: Item) -> list[dict[str, Any]]:
    """The 0-shot prompt we send for `item`, as plain data: each message's role and its parts,
    text as written and images by their place in the item (`{"type": "image", "index": 0}`).
    The images are not drawn."""
    places: dict[int, int] = {}

    def parts(which: Item) -> list[ImagePart]:
        made = [ImagePart(_never_drawn, content_hash=f"place-{index}") for index, _ in enumerate(which.images)]
        places.update({id(part): index for index, part in enumerate(made)})
        return made

    _, prompt = assemble_prompt(benchmark, item, Mode(), "none", query_parts=parts, example_parts=parts)
    return [{"role": m.role, "content": [_part(p, places) for p in m.parts]} for m in prompt.messages]


def prompt_text(messages: Sequence[dict[str, Any]]) -> str:
    """The prompt's words without its images: the text parts, one per line (what a toolkit
    logs as the sample's input)."""
    return "\n".join(p["text"] for m in messages for p in m["content"] if p["type"] == "text")


def _part(part: TextPart | ImagePart, places: dict[int, int]) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    return {"type": "image", "index": places[id(part)]}


def _never_drawn() -> Any:
    raise AssertionError("prompt_layout reads the prompt's shape only")


def write_hf(
    benchmark: Benchmark,
    items: Sequence[Item],
    spec: SetSpec,
    out: ExportFolder,
    on_item: Callable[[int], None] | None = None,
    workers: int | None = None,
    form: str = "hf",
) -> list[str]:
    """Write `items` as a dataset folder in `out` (see the module docstring); returns the
    shards' paths relative to it. Each distinct image is drawn and encoded once, on every core.
    The shards of a set written there before go when `out` is finished, not here."""
    import datasets  # imported here: a second or two, and only this command needs it

    out.claim([CARD, SPEC_FILE])
    out.check_folder(SHARDS)
    sources = {source.ref: source for item in items for source in item.images}
    encoded = _encode_all(list(sources.values()), workers)
    several = any(len(item.images) != 1 for item in items)
    param_columns = _param_columns(items)
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            ("images" if several else "image"): datasets.List(datasets.Image()) if several else datasets.Image(),
            "question": datasets.Value("string"),
            "options": datasets.List(datasets.Value("string")),
            "answer": datasets.Value("string"),
            "answer_option": datasets.Value("string"),
            "kind": datasets.Value("string"),
            "label_style": datasets.Value("string"),
            "target": datasets.Value("string"),
            "benchmark": datasets.Value("string"),
            "seed": datasets.Value("int64"),
            "messages": datasets.Value("string"),
            "groups": datasets.Value("string"),
            **{column: datasets.Value(dtype) for column, (_, dtype) in param_columns.items()},
        }
    )
    shards = max(1, math.ceil(len(items) / SHARD_ROWS))
    written_names: list[str] = []
    done = 0
    for shard in range(shards):
        chunk = items[shard * SHARD_ROWS : (shard + 1) * SHARD_ROWS]
        rows = []
        for offset, item in enumerate(chunk):
            files = _file_names(shard * SHARD_ROWS + offset, item)
            pictures = [{"bytes": encoded[s.ref], "path": name} for s, name in zip(item.images, files, strict=True)]
            rows.append(_row(benchmark, item, pictures, several, param_columns))
            done += 1
            if on_item is not None:
                on_item(done)
        bars = datasets.is_progress_bar_enabled()
        datasets.disable_progress_bars()  # the command draws its own
        buffer = io.BytesIO()  # named by its digest, then written without following a link
        try:
            datasets.Dataset.from_list(rows, features=features).to_parquet(buffer)
        finally:
            if bars:
                datasets.enable_progress_bars()
        data = buffer.getvalue()
        digest = hashlib.sha256(data).hexdigest()[:10]
        name = f"{SHARDS}/test-{shard:05d}-of-{shards:05d}-{digest}.parquet"
        out.write(name, data)
        written_names.append(name)
    write_spec(spec, out, form)
    card = dataset_card(benchmark, spec, out.path, len(items), param_columns, form, written_names)
    out.write(CARD, card.encode("utf-8"))
    return written_names


def _row(
    benchmark: Benchmark,
    item: Item,
    pictures: list[dict[str, Any]],
    several: bool,
    param_columns: dict[str, tuple[str, str]],
) -> dict[str, Any]:
    choice = item.kind is AnswerKind.CHOICE and item.target is not None
    row: dict[str, Any] = {
        "id": item.id,
        ("images" if several else "image"): pictures if several else pictures[0],
        "question": item.question,
        "options": list(item.options),
        "answer": item.target_text() if item.target is not None else None,
        "answer_option": item.options[item.target] if choice else None,
        "kind": item.kind.value,
        "label_style": item.label_style.value,
        "target": json.dumps(jsonable(item.target)),
        "benchmark": benchmark.id,
        "seed": item.seed,
        "messages": json.dumps(prompt_layout(benchmark, item), ensure_ascii=False),
        "groups": json.dumps(dict(item.groups), ensure_ascii=False),
    }
    for column, (name, dtype) in param_columns.items():
        row[column] = _cell(item.params.get(name), dtype)
    return row


def _param_columns(items: Sequence[Item]) -> dict[str, tuple[str, str]]:
    """column -> (parameter, Arrow type): numbers stay numbers (int64 unless a float appears),
    yes/no flags booleans, anything else text (lists and mappings as JSON)."""
    values: dict[str, list[Any]] = {}
    for item in items:
        for name in item.params:
            values.setdefault(name, [])
        for name in values:
            values[name].append(item.params.get(name))
    columns = {}
    for name, seen in values.items():
        present = [v for v in seen if v is not None]
        if present and all(isinstance(v, bool) for v in present):
            dtype = "bool"
        elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            dtype = "int64"
        elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
            dtype = "float64"
        else:
            dtype = "string"
        columns[f"param_{name}" if name in FIXED else name] = (name, dtype)
    return columns


def _cell(value: Any, dtype: str) -> Any:
    if value is None or dtype != "string":
        return value
    return value if isinstance(value, str) else json.dumps(jsonable(value), ensure_ascii=False)


def dataset_card(
    benchmark: Benchmark,
    spec: SetSpec,
    out: Path,
    count: int,
    param_columns: dict[str, tuple[str, str]],
    form: str,
    shards: list[str],
) -> str:
    params = ", ".join(f"`{c}`" for c in param_columns) or "none"
    paths = "\n".join(f"    - {shard}" for shard in shards)
    source = f" ({benchmark.source})" if benchmark.source else ""
    return f"""---
configs:
- config_name: default
  data_files:
  - split: test
    path:
{paths}
task_categories:
- visual-question-answering
tags:
- perception-playground
- {benchmark.id.replace("/", "-")}
pretty_name: "{benchmark.title} (generated)"
---

# {benchmark.title}: a generated set

{count} items of `{benchmark.id}`{source}, drawn by the perception playground. Every stimulus is
drawn from its parameters, so each item's answer is exact (the illusions' truth is measured in
the pixels drawn).

The exact command that wrote this folder (the same command writes the same bytes):

```bash
{spec.command(out, form)}
```

Load it with `datasets.load_dataset("{out}")` (or, once pushed, by its Hub id). `probe_set.json`
holds the same description, so `python -m probes run THIS_FOLDER --model MODEL` asks these very
items again, and `python -m probes import ... --data THIS_FOLDER` matches replies from other
toolkits to them.

## Columns

| column | holds |
| --- | --- |
| `id` | the item's id in the playground (results from anywhere join on it) |
| `image` / `images` | the picture(s) shown, PNG |
| `question` | the question as asked |
| `options` | the options, in the order shown (empty unless multiple choice) |
| `answer` | what a right reply says, in the item's own labels (`a`, `Yes`, `3`, `(4, 3)`) |
| `answer_option` | the right option's text (multiple choice) |
| `kind` | how replies are read: choice, number, yes/no, letter, pair, text |
| `label_style` | how options are labelled: letter (a, b, c), digit0, digit1 |
| `target` | the answer as the playground holds it (JSON) |
| `benchmark`, `seed` | where the item comes from |
| `messages` | the exact 0-shot prompt the playground sends (JSON: roles, text, image places) |
| `groups` | the scoreboard groups (JSON) |
| parameters | {params} |

Replies are graded by the playground's reader, which never guesses: a reply it cannot read
counts as unparsed (wrong), never as a random choice.
"""
