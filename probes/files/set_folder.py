"""A folder `generate` wrote, asked again: `run DIR` (or `run custom:DIR`) on a set written in
any format (png, hf, lmms-eval) asks exactly its items, as the benchmark's own.

The folder's description (`probe_set.json`: benchmark, parameters, n, seed) draws the set again
through the one sampler `run` and `generate` share (`probes.core.selection.draw_set`): the very
items, with their ids, prompts, pictures and grading, so the results join that benchmark's
Scoreboard cells and its cached answers, as `run BENCHMARK --limit N --seed S --param ...` would.

The folder's own rows must be those items, in order: a PNG export's metadata.jsonl (id, question,
answer) and items.jsonl (each line as generate writes it), an hf or lmms-eval export's parquet
shards (id, question, options, kind, target). A folder whose rows disagree with what its
description draws (edited by hand, or forged) is refused in one line naming the first difference:
a set is asked as it was written or not at all. Items of your own belong in a folder of your own
(items.jsonl and its pictures, without probe_set.json), which runs as `custom:DIR`.

The pictures are drawn again from the description, not read from the folder (the same pixels:
generate writes the same bytes for the same description).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError, UsageError
from probes.core.types import Item, jsonable
from probes.files.export import CUSTOM_ITEMS, METADATA, _file_names, custom_record, fits_custom_folder
from probes.files.jsonl import read_objects
from probes.files.set_spec import SPEC_FILE, SetSpec, read_spec

SHARDS = "data"  # where an hf or lmms-eval export keeps its parquet shards (`probes.files.hf_export`)
SHOWN_CHARS = 60  # of a value named in a refusal


class SetMismatch(BenchmarkError):
    """A set folder whose items are not the set its description draws, or cannot be read."""


def is_set_folder(folder: Path) -> bool:
    """Whether `folder` holds a set's description (written by `generate` in any format)."""
    return (folder / SPEC_FILE).is_file()


def folder_spec(folder: Path) -> SetSpec | None:
    """The description of the set `folder` holds (its rows not read: see `checked_spec`); None
    where it holds none, or describes a set drawn from a folder of your own while it holds the
    items.jsonl to run instead (a set of `custom:OTHER` runs as a folder of your own, as
    before). Raises InputRejected for a description that does not read as one, SetMismatch for
    one drawn from a folder where the folder holds no items.jsonl."""
    spec = read_spec(folder)
    if spec is None:
        return None
    if _from_a_folder(spec):
        if (folder / CUSTOM_ITEMS).is_file():
            return None
        raise SetMismatch(
            f"{folder}: its {SPEC_FILE} describes a set drawn from a folder ({spec.benchmark}), which cannot be "
            f"drawn again from here; run that folder with --limit {spec.n} --seed {spec.seed}"
        )
    return spec


def open_set(folder: Path) -> Benchmark | None:
    """The set `folder` holds, as its benchmark holding exactly those items (in the folder's
    order); None where the folder holds no set's description (see `folder_spec`)."""
    spec = folder_spec(folder)
    if spec is None:
        return None
    benchmark, items = _drawn(folder, spec)
    check_rows(folder, items)
    # The benchmark as the description builds it, holding only the set: its prompts, grading,
    # few-shot pool and id (so its Scoreboard cells and cache) are the benchmark's own.
    benchmark._items = list(items)
    words = "".join(f" --param {name}={','.join(values)}" for name, values in spec.params.items())
    benchmark.notes.append(
        f"{folder}: {len(items)} items of {spec.benchmark}, asked as `run {spec.benchmark} --limit {spec.n} "
        f"--seed {spec.seed}{words}` asks them (ids and answers checked against the folder's)"
    )
    return benchmark


def checked_spec(folder: Path) -> SetSpec | None:
    """`folder_spec`, with the folder's rows checked against the set it draws (for an import
    matching replies to the set)."""
    spec = folder_spec(folder)
    if spec is not None:
        check_rows(folder, _drawn(folder, spec)[1])
    return spec


def _drawn(folder: Path, spec: SetSpec) -> tuple[Benchmark, list[Item]]:
    """The set the description draws; what it cannot draw (a benchmark not known here, a
    parameter value its benchmark refuses) named with the file that says so."""
    try:
        return spec.draw()
    except (BenchmarkError, UsageError) as exc:
        raise SetMismatch(f"{folder / SPEC_FILE}: {exc}") from None


def check_rows(folder: Path, items: Sequence[Item]) -> None:
    """SetMismatch naming the first row of the folder that is not the drawn item in its place."""
    if (folder / METADATA).is_file():
        _check_png(folder, items)
    elif sorted((folder / SHARDS).glob("*.parquet")):
        _check_parquet(folder, items)
    else:
        raise SetMismatch(f"{folder}: holds {SPEC_FILE} but no items ({METADATA}, or {SHARDS}/*.parquet)")


def _from_a_folder(spec: SetSpec) -> bool:
    """Whether the set was drawn from a folder (`custom:PATH`: a prefix id; no built-in id has a colon)."""
    return ":" in spec.benchmark


def _check_png(folder: Path, items: Sequence[Item]) -> None:
    rows = _jsonl(folder, METADATA)
    _same_count(folder, METADATA, len(rows), len(items))
    runnable = []
    for index, ((number, row), item) in enumerate(zip(rows, items, strict=True)):
        names = _file_names(index, item)
        expected = {"id": item.id, "prompt": item.question, "answer": item.target_text(),
                    "file_name": names[0] if len(names) == 1 else names}  # fmt: skip
        _same_fields(folder, f"{METADATA} line {number}", row, expected)
        if fits_custom_folder(item):
            runnable.append(custom_record(item, names))
    lines = _jsonl(folder, CUSTOM_ITEMS) if (folder / CUSTOM_ITEMS).is_file() else []
    _same_count(folder, CUSTOM_ITEMS, len(lines), len(runnable), "gradable ")
    for (number, line), expected in zip(lines, runnable, strict=True):
        _same_fields(folder, f"{CUSTOM_ITEMS} line {number}", line, expected, every=True)


def _check_parquet(folder: Path, items: Sequence[Item]) -> None:
    import pyarrow  # imported here: only a dataset folder needs it
    import pyarrow.parquet as parquet

    columns = ["id", "question", "options", "kind", "target"]
    rows: list[tuple[str, dict[str, Any]]] = []
    for path in sorted((folder / SHARDS).glob("*.parquet")):
        name = path.relative_to(folder).as_posix()
        try:
            table = parquet.read_table(path, columns=columns)
        except (OSError, pyarrow.ArrowException, KeyError, ValueError) as exc:
            raise SetMismatch(f"{folder}: {name} cannot be read as a set's shard ({_short(exc)})") from None
        rows += [(f"{name} row {place}", row) for place, row in enumerate(table.to_pylist())]
    _same_count(folder, f"{SHARDS}/*.parquet", len(rows), len(items))
    for (where, row), item in zip(rows, items, strict=True):
        expected = {"id": item.id, "question": item.question, "options": list(item.options), "kind": item.kind.value,
                    "target": jsonable(item.target)}  # fmt: skip
        try:
            row = {**row, "target": json.loads(row["target"])}
        except (TypeError, ValueError):
            pass  # compared as it is: not the JSON generate writes, so it differs
        _same_fields(folder, where, row, expected)


def _jsonl(folder: Path, name: str) -> list[tuple[int, dict[str, Any]]]:
    errors: list[str] = []
    try:
        records = read_objects(folder / name, errors)
    except OSError as exc:
        raise SetMismatch(f"{folder / name}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if errors:
        raise SetMismatch(f"{folder}: {errors[0]}")
    return records


def _same_count(folder: Path, name: str, found: int, drawn: int, what: str = "") -> None:
    if found != drawn:
        raise SetMismatch(
            f"{folder}: {name} holds {found} {what}items where its {SPEC_FILE} draws {drawn}: {_NOT_THE_SET}"
        )


def _same_fields(folder: Path, where: str, row: dict[str, Any], expected: dict[str, Any], every: bool = False) -> None:
    """Refuse the row where a field differs from the drawn item's (`every`: or the row holds
    fields the item's record has not)."""
    names = list(expected) + ([name for name in row if name not in expected] if every else [])
    for name in names:
        if name in row and name in expected and _same(row[name], expected[name]):
            continue
        found = repr(_short(row[name])) if name in row else "nothing"
        drawn = repr(_short(expected[name])) if name in expected else "nothing"
        raise SetMismatch(
            f"{folder}: {where} is not the item its {SPEC_FILE} draws there ({name}: {found} in the folder, "
            f"{drawn} drawn): {_NOT_THE_SET}"
        )


_NOT_THE_SET = (
    "a set runs only as generate wrote it (write it again with the command in probe_set.json); "
    "to ask items of your own, keep items.jsonl and its pictures in a folder without probe_set.json"
)


def _same(found: Any, drawn: Any) -> bool:
    """Equal as JSON holds them (a tuple and a list alike), a number not equal to a string."""
    return json.dumps(found, sort_keys=True) == json.dumps(drawn, sort_keys=True)


def _short(value: Any) -> Any:
    text = value if isinstance(value, str) else str(value) if isinstance(value, Exception) else None
    if text is None:
        return value
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
