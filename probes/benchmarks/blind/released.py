"""BlindTest items from the paper's own release, the Hugging Face dataset `XAI/vlmsareblind`.

Used by every `blind/*` benchmark when `--data hf` (the Hub) or `--data PATH` (a local copy in
the same schema: parquet files, or a folder saved by `datasets`) is given. Fields: `task`,
`image`, `prompt`, `groundtruth`, `metadata` (a JSON string), one split `valid`. The images and
prompts are the paper's; answers are read and graded exactly as for our generated items.
Few-shot examples come from our generator (same task, seeds disjoint from everything), since the
release has no training split.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from probes.benchmarks.blind import BlindTruth
from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError
from probes.core.types import AnswerKind, ImageSource, Item

HUB_ID = "XAI/vlmsareblind"

# Our benchmark id -> the release's task names and how their answers read.
TASKS: dict[str, tuple[tuple[str, ...], AnswerKind]] = {
    "blind/line-intersections": (("Line Plot Intersections",), AnswerKind.NUMBER),
    "blind/touching-circles": (("Touching Circles",), AnswerKind.YES_NO),
    "blind/circled-letter": (("Circled Letter",), AnswerKind.LETTER),
    "blind/olympic-circles": (("Olympic Counting - Circles",), AnswerKind.NUMBER),
    "blind/olympic-pentagons": (("Olympic Counting - Pentagons",), AnswerKind.NUMBER),
    "blind/nested-squares": (("Nested Squares",), AnswerKind.NUMBER),
    "blind/grid-count": (("Counting Grid - Blank Grids", "Counting Grid - Word Grids"), AnswerKind.PAIR),
    "blind/subway-paths": (("Subway Connections",), AnswerKind.NUMBER),
}


def load_rows(source: str):
    """The release's rows as a `datasets.Dataset` (memory-mapped; images decode on access)."""
    try:
        import datasets
    except ImportError:
        raise BenchmarkError("--data hf needs the datasets package: pip install -r requirements.txt") from None
    path = HUB_ID if source == "hf" else source
    try:
        loaded = datasets.load_dataset(path)
    except Exception as exc:  # the library raises many kinds: missing files, no network, bad schema
        where = "the Hugging Face Hub (is there internet access?)" if source == "hf" else source
        raise BenchmarkError(f"could not load {HUB_ID} from {where}: {type(exc).__name__}: {exc}") from None
    split = next((name for name in ("valid", "validation", "test", "train") if name in loaded), None)
    if split is None:
        raise BenchmarkError(f"{path}: no valid split (found {', '.join(loaded)})")
    rows = loaded[split]
    missing = {"task", "image", "prompt", "groundtruth"} - set(rows.column_names)
    if missing:
        raise BenchmarkError(f"{path}: not in the {HUB_ID} schema (missing {', '.join(sorted(missing))})")
    return rows


class ReleasedBlindTest(BlindTruth, Benchmark):
    """One task's rows of the release, asked as they were published."""

    def __init__(self, benchmark_id: str, source: str, generated: Benchmark):
        super().__init__()
        self.id = benchmark_id
        self.title = f"{generated.title} (paper's release)"
        self.source = generated.source
        self.chance = generated.chance
        self.generated = generated  # the few-shot pool
        self.task_names, self.kind = TASKS[benchmark_id]
        self.rows = load_rows(source)
        self.origin = HUB_ID if source == "hf" else source

    def load_items(self) -> list[Item]:
        columns = self.rows.select_columns(
            [c for c in ("task", "prompt", "groundtruth", "metadata") if c in self.rows.column_names]
        )
        fingerprint = getattr(self.rows, "_fingerprint", "")
        items: list[Item] = []
        prompts: dict[str, str] = {}
        for index, row in enumerate(columns):
            if row["task"] not in self.task_names:
                continue
            try:
                target = read_groundtruth(self.kind, row["groundtruth"])
            except ValueError:
                raise BenchmarkError(
                    f"{self.origin} row {index}: groundtruth {row['groundtruth']!r} is not a {self.kind.value}"
                ) from None
            prompt_name = prompts.setdefault(row["prompt"], f"p{len(prompts) + 1}")
            groups = {"prompt": prompt_name, "task": row["task"], **_metadata_groups(row.get("metadata"))}
            items.append(
                Item(
                    benchmark=self.id,
                    id=f"release-{index}",
                    question=row["prompt"],
                    images=(ImageSource(f"{self.origin}@{fingerprint}:{index}", _image_loader(self.rows, index)),),
                    kind=self.kind,
                    target=target,
                    groups=groups,
                    params={"release_row": index},
                )
            )
        if not items:
            raise BenchmarkError(f"{self.origin} has no rows of task {' or '.join(self.task_names)}")
        space = tuple(sorted({_as_text(item.target) for item in items}))
        return [item.with_changes(answer_space=space) for item in items]

    def load_examples(self) -> list[Item]:
        return self.generated.examples()

    def select_examples(self, item: Item, k: int) -> list[Item]:
        return self.generated.select_examples(item, k)

    def render_answer(self, example: Item, cot: bool) -> str:
        return self.generated.render_answer(example, cot)


def read_groundtruth(kind: AnswerKind, raw: Any) -> Any:
    text = str(raw).strip().strip("{}").strip()
    if kind is AnswerKind.YES_NO:
        word = text.lower().rstrip(".")
        if word not in ("yes", "no"):
            raise ValueError(text)
        return word
    if kind is AnswerKind.NUMBER:
        return int(text)
    if kind is AnswerKind.PAIR:
        numbers = [int(n) for n in re.findall(r"\d+", text)]
        if len(numbers) != 2:
            raise ValueError(text)
        return (numbers[0], numbers[1])
    if kind is AnswerKind.LETTER:
        if len(text) != 1:
            raise ValueError(text)
        return text
    raise ValueError(text)


def _as_text(target: Any) -> str:
    if isinstance(target, tuple):
        return f"({target[0]},{target[1]})"
    if target in ("yes", "no"):
        return target.capitalize()
    return str(target)


def _metadata_groups(raw: Any) -> dict[str, str]:
    """Scalar metadata fields become groups (the release records thickness, size, ...)."""
    if not raw:
        return {}
    try:
        data = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (ValueError, TypeError):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, (str, int, float)) and "id" not in str(k).lower()}


def _image_loader(rows, index: int) -> Callable[[], Any]:
    return lambda: rows[index]["image"]


def released(
    benchmark_id: str, source: str, generated_factory: Callable[[], Benchmark], params: Sequence[str] | None
) -> Benchmark:
    if params:
        raise BenchmarkError(
            f"{benchmark_id} from --data {source}: the release is fixed; --param applies to generated items only"
        )
    return ReleasedBlindTest(benchmark_id, source, generated_factory())
