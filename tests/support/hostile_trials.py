"""Trying the hostile corpus (tests/support/hostile_corpus.py) through the three ways user data
comes in: a `custom:` folder and `import` through the real command line, and an upload through
`UploadSet.from_files`. Used by tests/probes/test_hostile_inputs.py and bench/hostile_inputs.py.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from models.types import ImagePart
from probes.benchmarks.custom import UploadSet
from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from tests.conftest import run_cli
from tests.support.hostile_corpus import IMPORT_FILE, PATHS, Case, Expect, Kind


@dataclass
class Outcome:
    path: str
    status: str  # handled, wrong (no crash, but not what was expected) or crash
    detail: str = ""


@dataclass
class Report:
    kind: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def handled(self) -> bool:
        return all(o.status == "handled" for o in self.outcomes)

    @property
    def crashes(self) -> int:
        return sum(o.status == "crash" for o in self.outcomes)


# --- trying -----------------------------------------------------------------------------


def try_kind(kind: Kind, root: Path) -> Report:
    root.mkdir(parents=True, exist_ok=True)
    case = kind.build(root)
    report = Report(kind.name)
    for path in PATHS:
        if path in case.expect:
            report.outcomes.append(try_path(case, path, root))
    return report


def try_path(case: Case, path: str, root: Path) -> Outcome:
    expect = case.expect[path]
    try:
        if path == "upload":
            return _try_upload(case, expect)
        return _try_cli(case, path, expect, root)
    except Exception:  # noqa: BLE001 - the harness's own failure to run is reported, not raised
        return Outcome(path, "crash", traceback.format_exc(limit=-3))


def _try_cli(case: Case, path: str, expect: Expect, root: Path) -> Outcome:
    store = str(root / f"{path}.sqlite")
    if path == "custom":
        done = run_cli("run", f"custom:{case.folder}", "--model", "baseline/chance", "--store", store)
    else:
        done = run_cli("import", str(case.folder.parent / IMPORT_FILE), "--benchmark", f"custom:{case.folder}",
                       "--model", "elsewhere", "--store", store)  # fmt: skip
    stderr = done.stderr
    # Items that ended in error (one bad image among good ones) exit 1 by design, with a message.
    item_errors = done.returncode == 1 and "request(s) failed" in stderr
    if "Traceback" in stderr or (done.returncode not in (0, 2) and not item_errors):
        return Outcome(path, "crash", f"exit {done.returncode}: {stderr[-600:]}")
    if "\x1b" in stderr:
        return Outcome(path, "wrong", "a raw escape sequence reached the terminal")
    if expect.rejected is not None:
        # A refusal is a line "error: ..." (an import of a large file may say first that it is reading it).
        if done.returncode == 2 and re.search(r"(?m)^error: ", stderr) and re.search(expect.rejected, stderr):
            return Outcome(path, "handled", _first_problem(stderr))
        return Outcome(
            path, "wrong", f"exit {done.returncode}, expected a rejection /{expect.rejected}/: {stderr[-400:]}"
        )
    if (done.returncode != 0 and not item_errors) or (expect.stderr and not re.search(expect.stderr, stderr)):
        return Outcome(path, "wrong", f"exit {done.returncode}, expected success /{expect.stderr}/: {stderr[-400:]}")
    detail = _first_problem(stderr) if expect.stderr else "accepted"
    if path == "custom" and expect.check is not None:
        item = get_benchmark(f"custom:{case.folder}").items()[1]
        image = ImagePart(item.images[0].load).rgb  # exactly what a backend sends
        return _checked(path, expect, image, detail)
    return Outcome(path, "handled", detail)


def _try_upload(case: Case, expect: Expect) -> Outcome:
    paths, question, options, answer = case.upload
    try:
        upload = UploadSet.from_files(paths, question, options, answer)
        image = ImagePart(upload.items()[0].images[0].load).rgb
    except BenchmarkError as exc:  # FolderError: what the UI shows the visitor
        message = str(exc)
        if expect.rejected is not None and re.search(expect.rejected, message):
            return Outcome("upload", "handled", message[:200])
        return Outcome("upload", "wrong", f"unexpected rejection: {message[:400]}")
    if expect.rejected is not None:
        return Outcome("upload", "wrong", f"accepted, expected a rejection /{expect.rejected}/")
    notes = getattr(upload, "notes", [])  # (getattr: the harness also measures older code)
    if expect.stderr and not any(re.search(expect.stderr, note) for note in notes):
        return Outcome("upload", "wrong", f"notes {notes} lack /{expect.stderr}/")
    return _checked("upload", expect, image, "; ".join(notes) or "accepted")


def _checked(path: str, expect: Expect, image: Image.Image, detail: str) -> Outcome:
    if image.mode != "RGB":
        return Outcome(path, "wrong", f"normalised to mode {image.mode}, not RGB")
    try:
        if expect.check is not None:
            expect.check(image)
    except AssertionError as exc:
        return Outcome(path, "wrong", f"pixels not normalised correctly: {exc}")
    return Outcome(path, "handled", f"{detail} ({image.width} x {image.height} RGB checked)")


def _first_problem(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    useful = [
        line for line in lines if "line 2" in line or "line 1:" in line or line.startswith(("note:", "1 request"))
    ]
    return (useful or lines or [""])[0][:200]
