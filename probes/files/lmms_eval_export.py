"""An lmms-eval task beside an exported dataset folder (`generate ... --format lmms-eval`), so a
sweep drawn here runs on anyone's lmms-eval cluster (vLLM, SGLang, data and tensor parallel)
unchanged, and `import --from lmms-eval` brings its samples log back.

`DIR/lmms_eval_task/` holds:
- `<task>.yaml`: the task (lmms-eval 0.7's format: `--include_path DIR/lmms_eval_task --tasks
  <task>`). It reads the folder's parquet shards by paths relative to itself (lmms-eval resolves
  `data_files` of a `parquet` dataset against the YAML's folder), so the set folder can move.
- `utils.py`: asks OUR exact 0-shot prompt (the `messages` column: the same text parts and image
  places our runs send, through lmms-eval's chat models) and grades each reply with OUR reader;
  each sample's log line carries `probe` (our item id, the set's description, the reading), which
  is how the import finds our items again.
- `probe_reader_<hash>/`: a copy of the reader the scoring uses (`probes/reading` and the two
  `probes/core` modules it needs, imports renamed), so the task needs nothing of ours installed
  and grades by the very rule of the version that wrote it. The hash names the copy's content:
  two exported tasks with the same reader share it, different readers never mix in one process.

Benchmarks that read replies their own way (DiscriBench's regex, texture generation's match
rate) cannot be exported this way: the task could not grade as we do.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from probes.core.benchmark import Benchmark
from probes.core.errors import UsageError
from probes.files.export_folder import ExportFolder
from probes.files.set_spec import SetSpec

TASK_FOLDER = "lmms_eval_task"
READER_PACKAGE = "probe_reader"
# What the copied reader is made of: every module `probes.reading.parsing` and
# `probes.reading.correctness` import, directly or through `importlib` (the kinds' readers).
READER_MODULES = {
    "core": ("errors", "types"),
    "reading": ("common", "echoes", "hedges", "choices", "numbers", "pairs", "letters", "yes_no", "parsing",
                "correctness"),
}  # fmt: skip
MAX_NEW_TOKENS = 512  # as `run` asks 0-shot (Mode.max_tokens)


def check_exportable(benchmark: Benchmark) -> None:
    """The task grades with the shared reader and the default comparison; a benchmark with a
    rule of its own would be graded differently there than here."""
    cls = type(benchmark)
    if cls.parse_reply is not Benchmark.parse_reply or cls.grade is not Benchmark.grade:
        raise UsageError(
            f"--format lmms-eval: {benchmark.id} reads or scores replies its own way, which the lmms-eval task "
            "cannot repeat; export it with --format hf and import the replies as JSON Lines"
        )


def task_name(spec: SetSpec) -> str:
    """`probe_<benchmark>_<hash of the set>`: two sweeps of one benchmark are two tasks."""
    slug = re.sub(r"[^a-z0-9]+", "_", spec.benchmark.lower()).strip("_")
    digest = hashlib.sha256(json.dumps(spec.as_dict(), sort_keys=True).encode()).hexdigest()[:8]
    return f"probe_{slug}_{digest}"


def task_files(spec: SetSpec) -> list[str]:
    """The files the task for `spec` is written as, relative to the set's folder: claimed
    before the set is drawn, so what is in their way is refused first."""
    package, sources = _reader()
    return [f"{TASK_FOLDER}/{task_name(spec)}.yaml", f"{TASK_FOLDER}/utils.py",
            *(f"{TASK_FOLDER}/{package}/{relative}" for relative in sources)]  # fmt: skip


def write_lmms_eval_task(out: ExportFolder, spec: SetSpec, title: str, shards: list[str], count: int) -> Path:
    """Write the task folder beside the dataset in `out`; `shards` are the parquet files'
    paths relative to it. Returns the task folder. A task or reader copy written there before
    for another set goes when `out` is finished, not here."""
    name = task_name(spec)
    command = spec.command(out.path, "lmms-eval")
    package, sources = _reader()
    for relative, text in sources.items():
        out.write(f"{TASK_FOLDER}/{package}/{relative}", text.encode("utf-8"))
    out.write(f"{TASK_FOLDER}/{name}.yaml", _yaml(name, spec, shards, command).encode("utf-8"))
    out.write(f"{TASK_FOLDER}/utils.py", _utils(package, spec, title, count, command).encode("utf-8"))
    return out.path / TASK_FOLDER


def _reader() -> tuple[str, dict[str, str]]:
    """The reader's copy: its package name (named by its content) and its files (path inside
    the package -> text), imports renamed to it, with an __init__.py per folder."""
    root = Path(__file__).resolve().parent.parent  # probes/
    sources = {
        f"{part}/{module}.py": (root / part / f"{module}.py").read_text(encoding="utf-8")
        for part, modules in READER_MODULES.items()
        for module in modules
    }
    digest = hashlib.sha256("".join(f"{k}\n{v}" for k, v in sorted(sources.items())).encode()).hexdigest()[:10]
    package = f"{READER_PACKAGE}_{digest}"
    # `probes.reading.x` / `probes.core.x`, in imports and in importlib's module names.
    files = {
        relative: re.sub(r"\bprobes\.(reading|core)\b", rf"{package}.\1", text) for relative, text in sources.items()
    }
    init = '"""A copy of the perception playground\'s reply reader (see ../utils.py)."""\n'
    files.update({f"{part}/__init__.py" if part else "__init__.py": init for part in ("", *READER_MODULES)})
    return package, files


def _yaml(name: str, spec: SetSpec, shards: list[str], command: str) -> str:
    files = "\n".join(f"      - ../{shard}" for shard in shards)
    return f"""# lmms-eval task for a set drawn by the perception playground, written by:
#   {command}
# Run:    python -m lmms_eval --model openai --model_args model=NAME,base_url=URL \\
#           --include_path THIS_FOLDER --tasks {name} --log_samples --output_path OUT
# Import: python -m probes import OUT --from lmms-eval --model NAME
task: {name}
dataset_path: parquet
dataset_kwargs:
  data_files:
    test:
{files}
test_split: test
output_type: generate_until
process_docs: !function utils.gradable
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_messages: !function utils.doc_to_messages
doc_to_target: answer
process_results: !function utils.process_results
generation_kwargs:
  max_new_tokens: {MAX_NEW_TOKENS}
  temperature: 0
  do_sample: false
  until: []  # no stop sequence, as our runs (lmms-eval's default would stop a reply at its first blank line)
metric_list:
  - metric: accuracy
    aggregation: mean
    higher_is_better: true
  - metric: probe
    aggregation: !function utils.probe_summary
    higher_is_better: true
metadata:
  version: 1.0
  probe_set: {json.dumps(spec.as_dict())}
"""


def _utils(package: str, spec: SetSpec, title: str, count: int, command: str) -> str:
    return UTILS.format(
        package=package, spec=json.dumps(spec.as_dict()), title=title, count=count, command=command.replace("\\", "/")
    )


UTILS = '''"""lmms-eval task: {title}, {count} items drawn by the perception playground.

Written by: {command}

The prompt is the playground's exact 0-shot prompt (the `messages` column: its text parts and the
places of its images); each reply is graded by the playground's own reader, copied beside this file
in {package}/ (it never guesses: a reply it cannot read is unparsed, and wrong). Each sample's log
line carries `probe`: the item's id in the playground, the set's description and the reading, so
`python -m probes import OUTPUT_PATH --from lmms-eval` matches the replies to the very items drawn.
"""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from {package}.core.types import AnswerKind, Item, LabelStyle  # noqa: E402
from {package}.reading.correctness import is_correct  # noqa: E402
from {package}.reading.parsing import parse_item_reply  # noqa: E402

SET = {spec}


def gradable(dataset):
    """The items with an answer to grade against (process_docs)."""
    return dataset.filter(lambda doc: doc["answer"] is not None)


def _pictures(doc):
    pictures = doc["images"] if "images" in doc else [doc["image"]]
    return [picture.convert("RGB") for picture in pictures]


def doc_to_visual(doc):
    return _pictures(doc)


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    """The prompt's words, one text part per line (simple models; the log's `input`)."""
    messages = json.loads(doc["messages"])
    return "\\n".join(part["text"] for message in messages for part in message["content"] if part["type"] == "text")


def doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """The prompt as the playground sends it: text and images in their places."""
    pictures = _pictures(doc)
    messages = []
    for message in json.loads(doc["messages"]):
        content = []
        for part in message["content"]:
            if part["type"] == "text":
                content.append({{"type": "text", "text": part["text"]}})
            else:
                content.append({{"type": "image", "url": pictures[part["index"]]}})
        messages.append({{"role": message["role"], "content": content}})
    return messages


def item_of(doc):
    """The item as the playground's reader sees it (no pictures needed to read a reply)."""
    target = json.loads(doc["target"])
    kind = AnswerKind(doc["kind"])
    return Item(
        benchmark=doc["benchmark"],
        id=doc["id"],
        question=doc["question"],
        images=(),
        kind=kind,
        target=tuple(target) if kind is AnswerKind.PAIR else target,
        options=tuple(doc["options"] or ()),
        label_style=LabelStyle(doc["label_style"]),
    )


def grade(doc, reply):
    """(status, parsed value, correct) of `reply` to the item `doc`, by the playground's rule."""
    item = item_of(doc)
    parsed = parse_item_reply(reply, item)
    value = list(parsed.value) if isinstance(parsed.value, tuple) else parsed.value
    return parsed.status.value, value, bool(is_correct(item.kind, parsed, item.target))


def process_results(doc, results):
    status, value, correct = grade(doc, results[0])
    probe = {{"id": doc["id"], "benchmark": doc["benchmark"], "set": SET, "status": status, "parsed": value,
              "correct": correct}}
    return {{"accuracy": float(correct), "probe": probe}}


def probe_summary(records):
    """How the replies read: items, correct, and each reading's count."""
    summary = {{"items": len(records), "correct": sum(1 for r in records if r["correct"])}}
    for record in records:
        summary[record["status"]] = summary.get(record["status"], 0) + 1
    return summary
'''
