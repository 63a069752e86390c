"""Other toolkits' output files, read within limits: a malformed or hostile file is refused with
one line naming the file and the line (or row), never a traceback or a hang.

lmms-eval (0.4 to 0.7, `--log_samples`; `lmms_eval/loggers/evaluation_tracker.py`): under
`OUTPUT_PATH/<model>/`, one `<date>_samples_<task>.jsonl` per task and one `<date>_results.json`
per run. Each samples line is one doc: `doc_id` (the doc's index in the task's split), `target`
(`doc_to_target`, as text), `input` (the prompt's text), `filtered_resps` (the reply after the
task's filters: a string when the doc had one request), `resps` (the raw reply, `[text]`, only
where it differs from the filtered one), `doc_hash`, `token_counts`, and the task's per-doc
metrics (`exact_match`, `accuracy`, `accuracy_by_task` ...). Since 0.4 the doc itself is not
written. A `multiple_choice` task's doc has one request per option and no reply: its
`filtered_resps` is one `[score, is_greedy]` per option, both written as text (`sanitize_list`),
its `input` the first request's context (`scores`). The results file holds `configs` (each task's config), `n-shot`, `model_name`,
`results` (each task's figures).

VLMEvalKit (`vlmeval/inference.py`, `vlmeval/smp/file.py`): `<model>_<dataset>.xlsx` (the default;
`.tsv` with PRED_FORMAT=tsv; `.csv`), the dataset's own table without its images plus
`prediction`: `index`, `question`, option columns `A`, `B`, ..., `answer` (the right option's
letter), `category` ...; its evaluation record (`..._<judge>_result.xlsx`) adds `hit` (1 or 0) and
`log`. Cells are read as text.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probes.core.errors import InputRejected
from probes.files.jsonl import MAX_RESPONSE_CHARS, read_lines, too_long

MAX_FILES = 200  # samples files under one folder
MAX_RESULTS_BYTES = 50_000_000
MAX_TABLE_BYTES = 200_000_000
MAX_ROWS = 1_000_000
MAX_XLSX_UNPACKED = 1_000_000_000  # an .xlsx is a zip: its parts are checked before openpyxl inflates them
SAMPLES = re.compile(r"(?:(?P<date>.+)_)?samples_(?P<task>.+)\.jsonl$")


class ToolkitFileError(InputRejected):
    """A toolkit's file cannot be read; the message names the file and the line or row."""


@dataclass
class LmmsSample:
    line: int
    doc_id: int
    reply: str  # the raw reply where the log keeps it, else the filtered one
    filtered: str | None  # what the task's filters made of it
    target: str | None
    input: str | None
    metrics: dict[str, Any]
    scores: tuple[float, ...] | None = None  # a multiple_choice doc: each option's score (no reply)


@dataclass
class LmmsRun:
    """One task's samples file, with the run's results file when it lies beside it."""

    path: Path
    task: str
    samples: list[LmmsSample]
    results: dict[str, Any] | None = None

    @property
    def config(self) -> dict[str, Any]:
        configs = (self.results or {}).get("configs")
        config = configs.get(self.task) if isinstance(configs, dict) else None
        return config if isinstance(config, dict) else {}

    @property
    def shots(self) -> int | None:
        shots = (self.results or {}).get("n-shot")
        value = shots.get(self.task) if isinstance(shots, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def model_name(self) -> str | None:
        name = (self.results or {}).get("model_name")
        return name if isinstance(name, str) and name.strip() else None


def read_lmms_eval(path: Path) -> list[LmmsRun]:
    """Every task's samples in `path`: one samples file, or a folder searched for them (an
    `--output_path` with its model folders)."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.jsonl") if SAMPLES.search(p.name))
        if not files:
            raise ToolkitFileError(
                f"{path}: no lmms-eval samples files (*_samples_<task>.jsonl; run with --log_samples)"
            )
        if len(files) > MAX_FILES:
            raise ToolkitFileError(f"{path}: {len(files)} samples files, over {MAX_FILES}: point at one run's folder")
    elif path.is_file():
        files = [path]
    else:
        raise ToolkitFileError(f"{path}: no such file or folder")
    runs = [_read_samples(file) for file in files]
    seen: dict[str, Path] = {}
    for run in runs:
        if run.task in seen:
            raise ToolkitFileError(
                f"{path}: task {run.task} is there twice ({seen[run.task].name}, {run.path.name}): import one run at a time"
            )
        seen[run.task] = run.path
    return runs


def _read_samples(path: Path) -> LmmsRun:
    match = SAMPLES.search(path.name)
    if match is None:
        raise ToolkitFileError(f"{path.name}: not an lmms-eval samples file (named <date>_samples_<task>.jsonl)")
    samples = []
    try:
        for number, record, problem in read_lines(path):
            where = f"{path.name} line {number}"
            if problem is None:
                problem = _sample_problem(record)
            if problem is not None:
                raise ToolkitFileError(f"{where}: {problem}")
            samples.append(_sample(number, record))
    except OSError as exc:
        raise ToolkitFileError(f"{path}: cannot be read ({exc.strerror})") from None
    if not samples:
        raise ToolkitFileError(f"{path}: no samples")
    _distinct(path.name, "doc_id", [s.doc_id for s in samples])
    date = match.group("date")
    results = _read_results(path.parent / f"{date}_results.json") if date else None
    return LmmsRun(path, match.group("task"), samples, results)


def _sample_problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return "not an lmms-eval sample (a JSON object with doc_id and filtered_resps)"
    doc_id = record.get("doc_id")
    if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0:
        return "not an lmms-eval sample: doc_id must be a whole number"
    if "filtered_resps" not in record and "resps" not in record:
        return "not an lmms-eval sample: no filtered_resps (the reply)"
    for name in ("target", "input"):
        if record.get(name) is not None and not isinstance(record[name], str):
            return f"{name} must be text"
    if scores(record.get("filtered_resps")) is not None:
        return None  # a multiple_choice doc: its options' scores, no reply
    for name in ("resps", "filtered_resps"):
        if name in record and _one_text(record[name]) is None:
            return (f"{name} holds {_shape(record[name])}, not one reply (only generation tasks have replies to read, "
                    "and multiple_choice tasks one [score, is_greedy] per option)")  # fmt: skip
    reply = _one_text(record.get("resps", record.get("filtered_resps")))
    return too_long("resps", reply, MAX_RESPONSE_CHARS)


def _sample(number: int, record: dict[str, Any]) -> LmmsSample:
    known = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "token_counts", "doc_hash",
             "prompt_hash", "target_hash", "input", "input_media"}  # fmt: skip
    metrics = {k: v for k, v in record.items() if k not in known}
    scored = scores(record.get("filtered_resps"))
    if scored is not None:  # the reply is what the log holds: the scores, as written
        reply = json.dumps(record["filtered_resps"], ensure_ascii=False)
        return LmmsSample(number, record["doc_id"], reply, None, record.get("target"), record.get("input"), metrics,
                          scored)  # fmt: skip
    filtered = _one_text(record["filtered_resps"]) if "filtered_resps" in record else None
    # `resps` is written only where the filters changed the reply; otherwise the filtered reply
    # is the raw one (evaluation_tracker drops the copy).
    reply = _one_text(record["resps"]) if "resps" in record else filtered
    return LmmsSample(
        number, record["doc_id"], reply or "", filtered, record.get("target"), record.get("input"), metrics
    )


def scores(value: Any) -> tuple[float, ...] | None:
    """A multiple_choice doc's `filtered_resps`: one `[score, is_greedy]` per option, in the
    options' order (lmms-eval writes both as text: `["-0.52", "True"]`); the scores, or None if
    `value` is not that."""
    if not isinstance(value, list) or not 2 <= len(value) <= 26:
        return None
    found = []
    for entry in value:
        if not isinstance(entry, list) or len(entry) != 2 or str(entry[1]) not in _GREEDY:
            return None
        number = entry[0]
        if isinstance(number, bool) or not isinstance(number, str | int | float):
            return None
        try:
            number = float(number)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        found.append(number)
    return tuple(found)


_GREEDY = {"True", "False", "true", "false", "1", "0"}


def _one_text(value: Any) -> str | None:
    """A reply written as text, `[text]` or `[[text]]` (one request, one answer)."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value if isinstance(value, str) else None


def _shape(value: Any) -> str:
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return type(value).__name__


def _read_results(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_RESULTS_BYTES + 1)
    except OSError as exc:
        raise ToolkitFileError(f"{path}: cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_RESULTS_BYTES:
        raise ToolkitFileError(f"{path.name}: larger than {MAX_RESULTS_BYTES:,} bytes: not an lmms-eval results file")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ToolkitFileError(f"{path.name}: not valid JSON (an lmms-eval results file is one JSON object)") from None
    if not isinstance(data, dict):
        raise ToolkitFileError(f"{path.name}: not an lmms-eval results file (a JSON object)")
    return data


# --- VLMEvalKit -----------------------------------------------------------------------------


@dataclass
class PredictionRow:
    row: int  # the row in the file, from 2 (row 1 is the header, as a spreadsheet counts)
    index: str
    question: str
    options: tuple[str, ...]
    answer: str
    prediction: str
    hit: bool | None = None  # their evaluation record's verdict, where the file has one
    extra: dict[str, str] = field(default_factory=dict)  # category, l2-category ...


def read_vlmevalkit(path: Path) -> list[PredictionRow]:
    """The rows of a VLMEvalKit prediction (or evaluation record) file."""
    table = _table(path)
    # As VLMEvalKit does: column names lower-cased, except the option letters.
    columns = {c: (c if len(c) == 1 and c in string.ascii_uppercase else c.strip().lower()) for c in table.columns}
    table = table.rename(columns=columns)
    missing = [c for c in ("index", "question", "answer", "prediction") if c not in table.columns]
    if missing:
        raise ToolkitFileError(f"{path.name}: not a VLMEvalKit prediction file (no {', '.join(missing)} column)")
    letters = [c for c in string.ascii_uppercase if c in table.columns]
    has_hit = "hit" in table.columns
    extras = [k for k in ("category", "l2-category", "split") if k in table.columns]
    # Column by column (a table's rows as dicts cost more than the rest of the import did).
    columns = {name: table[name].tolist() for name in ("index", "question", "answer", "prediction", *letters, *extras)}
    hits = table["hit"].tolist() if has_hit else None
    rows = []
    for place in range(len(table)):
        number = place + 2
        where = f"{path.name} row {number}"
        filled = [c for c in letters if columns[c][place].strip()]
        if filled != list(string.ascii_uppercase[: len(filled)]):
            raise ToolkitFileError(f"{where}: options must fill A, B, C ... without a gap")
        options = tuple(columns[c][place] for c in filled)
        prediction, question = columns["prediction"][place], columns["question"][place]
        for name, value in (("prediction", prediction), ("question", question)):
            if problem := too_long(name, value, MAX_RESPONSE_CHARS):
                raise ToolkitFileError(f"{where}: {problem}")
        hit = None
        if hits is not None and hits[place].strip():
            if hits[place].strip() not in ("0", "1", "0.0", "1.0"):
                raise ToolkitFileError(f"{where}: hit must be 0 or 1, got {hits[place][:20]!r}")
            hit = float(hits[place]) == 1.0
        index = columns["index"][place]
        if not index.strip():
            raise ToolkitFileError(f"{where}: index is empty")
        extra = {k: columns[k][place] for k in extras}
        rows.append(PredictionRow(number, index.strip(), question, options, columns["answer"][place].strip(),
                                  prediction, hit, extra))  # fmt: skip
    if not rows:
        raise ToolkitFileError(f"{path.name}: no rows")
    _distinct(path.name, "index", [r.index for r in rows])
    return rows


def _distinct(name: str, column: str, values: list) -> None:
    """Refuse a file that names one doc or row twice (its reply would count twice), naming the
    first value that repeats. Counted once: a million rows with a repeat at the end must not
    take a million counts of a million."""
    counts = Counter(values)
    twice = next((value for value in values if counts[value] > 1), None)
    if twice is not None:
        raise ToolkitFileError(f"{name}: {column} {twice} appears {counts[twice]} times")


def _table(path: Path):
    import pandas as pd

    suffix = path.suffix.lower()
    if suffix not in (".xlsx", ".tsv", ".csv"):
        raise ToolkitFileError(f"{path.name}: VLMEvalKit prediction files are .xlsx, .tsv or .csv")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ToolkitFileError(f"{path}: cannot be read ({exc.strerror})") from None
    if size > MAX_TABLE_BYTES:
        raise ToolkitFileError(f"{path.name}: {size:,} bytes, over {MAX_TABLE_BYTES:,}: not a prediction file")
    # Every cell as text, nothing read as missing: an option "None" or "NA" stays itself.
    options = {"dtype": str, "keep_default_na": False, "na_filter": False}
    try:
        if suffix == ".xlsx":
            try:
                import openpyxl  # noqa: F401  (pandas' reader of .xlsx)
            except ImportError:
                raise ToolkitFileError(
                    f"{path.name}: reading .xlsx needs openpyxl (pip install -r requirements.txt), or save it as .tsv"
                ) from None
            _check_zip(path)
            table = pd.read_excel(path, **options)
        else:
            table = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", nrows=MAX_ROWS + 1, **options)
    except ToolkitFileError:
        raise
    except Exception as exc:  # pandas raises many kinds on a broken file: parser, zip, XML, encoding
        raise ToolkitFileError(f"{path.name}: not a readable {suffix[1:]} table ({type(exc).__name__})") from None
    if len(table) > MAX_ROWS:
        raise ToolkitFileError(f"{path.name}: more than {MAX_ROWS:,} rows")
    table.columns = [str(c) for c in table.columns]
    if len(set(table.columns)) != len(table.columns):
        raise ToolkitFileError(f"{path.name}: a column name appears twice")
    return table.astype(str)


def _check_zip(path: Path) -> None:
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError):
        raise ToolkitFileError(f"{path.name}: not a readable xlsx table (not a zip archive)") from None
    if unpacked > MAX_XLSX_UNPACKED:
        raise ToolkitFileError(f"{path.name}: unpacks to {unpacked:,} bytes, over {MAX_XLSX_UNPACKED:,}")
