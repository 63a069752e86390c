"""Mine a folder of images for look-alike quadruples and write them as a DiscriBench-layout folder.

Source: DiscriBench (Muraoka & Okazaki, NLP2025; seed 003, section 2.2) builds its options with
MMVP's "erroneous agreement" (Tong et al., CVPR 2024): four images whose every pair has CLIP cosine
>= 0.95 while some pair has DINOv2 cosine < 0.6. This is that step as a tool (`python -m probes
mine FOLDER --out DIR`): `embeddings` embeds and caches, `quadruples` searches, `contact_sheet`
draws; here they are put together and the result written.

The folder written (the release's layout, which `probes.benchmarks.discribench` reads):

    DIR/discribench_{lang}_200.jsonl   one record per quadruple: qid ("001", ...), image_files
                                       (images/001/1.jpg ... 4.jpg), and context "", question "",
                                       answer null with a `todo` note, for the author to write
    DIR/images/NNN/k.EXT               copies of the images (bytes unchanged; copies, not links,
                                       so blurring a face there leaves the original alone)
    DIR/images/metadata.jsonl          file_name, source (path under FOLDER), sha256 per image
    DIR/contact_sheets/NNN.png         the four images and their pairwise similarities
    DIR/quadruples.jsonl               per qid: the 4 x 4 CLIP and DINOv2 similarities (float64),
                                       the same values as printed on the sheet, and the rank score
    DIR/mining.json                    models, thresholds, counts, refused files, search statistics
                                       (its presence also keeps later scans of a parent folder
                                       from mining these copies and sheets again)

The file name keeps the release's `_200` whatever the count, because that is the name
`run discribench --data DIR` looks for. Until an author fills in `context`, `question` and
`answer`, that command refuses the folder, naming each unfinished record (the benchmark requires
non-empty text and an answer from 1 to 4), so a half-made set is never graded. `probes.tools.
drafting` can fill drafts with a model; `probes.tools.easing` writes the easing subsets.

The folder is assembled under a temporary name beside DIR and renamed at the end: an interrupted
run leaves no half-written DIR. DIR must not exist yet, or be empty.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image

from probes.files.images import ImageRejected, load_image
from probes.files.jsonl import problems, read_objects
from probes.tools import contact_sheet
from probes.tools.embeddings import DEFAULT_CLIP, DEFAULT_DINO, Encoder, HFEncoder, MiningError, Progress, embed_files
from probes.tools.image_scan import MINED_MARK, ImageFile, Rejected, scan_folder
from probes.tools.quadruples import Quadruple, SearchResult, find_quadruples

LANGS = ("en", "ja")
RANKING = "lowest CLIP pair minus lowest DINOv2 pair, largest first; ties by mean CLIP"
TODO = (
    "write the situation and conversation (context), the question, and the answer (1-4); "
    "the images are on contact_sheets/{qid}.png"
)


def records_file(lang: str) -> str:
    """The release's main file name, the one `run discribench --data` reads by default."""
    return f"discribench_{lang}_200.jsonl"


@dataclass
class MineReport:
    out: Path
    images: int  # images embedded and searched
    rejected: list[Rejected] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    computed: dict[str, int] = field(default_factory=dict)  # embedded this run, per model kind
    cached: dict[str, int] = field(default_factory=dict)
    search: SearchResult = field(default_factory=SearchResult)

    @property
    def found(self) -> int:
        return len(self.search.quadruples)

    def lines(self) -> list[str]:
        """A summary for people, one fact a line."""
        lines = [
            f"{self.images} images searched; embedded now: "
            + ", ".join(f"{k} {n}" for k, n in self.computed.items())
            + "; from the cache: "
            + ", ".join(f"{k} {n}" for k, n in self.cached.items()),
            f"{self.found} quadruple(s) written to {self.out}",
        ]
        if self.search.truncated:
            lines.append(
                "the search stopped at its work limit: raise --clip-min for fewer, tighter look-alikes, "
                "or mine a smaller folder"
            )
        if self.duplicates:
            lines.append(f"{len(self.duplicates)} duplicate file(s) left out (same bytes as another)")
        for rejected in self.rejected[:10]:
            lines.append(f"refused: {rejected.name}: {rejected.reason}")
        if len(self.rejected) > 10:
            lines.append(f"... and {len(self.rejected) - 10} more refused (see mining.json)")
        return lines


def mine(
    folder: str | Path,
    out: str | Path,
    *,
    clip: str | Path | Encoder = DEFAULT_CLIP,
    dino: str | Path | Encoder = DEFAULT_DINO,
    clip_min: float = 0.95,
    dino_max: float = 0.6,
    reuse: bool = False,
    limit: int | None = None,
    lang: str = "en",
    cache_dir: str | Path | None = None,
    batch_size: int = 16,
    progress: Progress | None = None,
) -> MineReport:
    """Embed every image under `folder`, find the qualifying quadruples and write `out`.

    `clip` and `dino` are Hub ids or local model folders (or ready `Encoder`s). `progress(done,
    total)` counts images still to embed. Raises MiningError for what the user can fix (no such
    folder, `out` not empty, fewer than four usable images, a model that cannot be loaded)."""
    source, target = Path(folder).expanduser(), Path(out).expanduser()
    _check_arguments(source, target, clip_min, dino_max, limit, lang)
    scan = scan_folder(source, exclude=[target])
    if len(scan.files) < 4:
        raise MiningError(_too_few(source, len(scan.files), scan.rejected))
    encoders = [_encoder(clip, "clip"), _encoder(dino, "dino")]
    embedded = embed_files(
        scan.files, encoders, Path(cache_dir) if cache_dir else None, batch_size=batch_size, progress=progress
    )
    rejected = scan.rejected + embedded.rejected
    if len(embedded.files) < 4:
        raise MiningError(_too_few(source, len(embedded.files), rejected))
    search = find_quadruples(
        embedded.vectors["clip"], embedded.vectors["dino"], clip_min, dino_max, reuse=reuse, limit=limit
    )
    report = MineReport(
        target, len(embedded.files), rejected, scan.duplicates, embedded.computed, embedded.cached, search
    )
    settings = {
        "folder": str(source),
        "clip": {"source": encoders[0].source, "identity": encoders[0].identity()},
        "dino": {"source": encoders[1].source, "identity": encoders[1].identity()},
        "clip_min": clip_min,
        "dino_max": dino_max,
        "reuse": reuse,
        "limit": limit,
        "lang": lang,
        "ranking": RANKING,
    }
    _write_folder(target, embedded.files, search.quadruples, settings, report)
    return report


def _check_arguments(source: Path, target: Path, clip_min: float, dino_max: float, limit: int | None, lang: str):
    if not source.is_dir():
        raise MiningError(f"{source}: no such folder of images")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise MiningError(f"--out {target}: already exists and is not empty; choose a new folder")
    if target.resolve() == source.resolve():
        raise MiningError("--out must be a new folder, not the folder of images itself")
    for name, value in (("--clip-min", clip_min), ("--dino-max", dino_max)):
        if not -1.0 <= value <= 1.0:
            raise MiningError(f"{name} {value}: a cosine similarity lies between -1 and 1")
    if limit is not None and limit < 1:
        raise MiningError(f"--limit {limit}: give at least 1")
    if lang not in LANGS:
        raise MiningError(f"language {lang!r}: one of {', '.join(LANGS)}")


def _encoder(given: str | Path | Encoder, kind: str) -> Encoder:
    if isinstance(given, (str, Path)):
        return HFEncoder(given, kind)  # type: ignore[arg-type]
    if given.kind != kind:
        raise ValueError(f"a {given.kind} encoder was given where a {kind} one is needed")
    return given


def _too_few(folder: Path, usable: int, rejected: Sequence[Rejected]) -> str:
    text = f"{folder}: {usable} usable image(s); mining needs at least 4"
    if rejected:
        shown = "; ".join(f"{r.name}: {r.reason}" for r in rejected[:3])
        text += f" ({len(rejected)} refused: {shown}{' ...' if len(rejected) > 3 else ''})"
    return text


# --- writing the folder -------------------------------------------------------------------------


def qid_width(count: int) -> int:
    return max(3, len(str(count)))


def _write_folder(
    target: Path,
    files: Sequence[ImageFile],
    quadruples: Sequence[Quadruple],
    settings: dict[str, Any],
    report: MineReport,
) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.parent / f".{target.name}.partial-{uuid.uuid4().hex[:8]}"
    try:
        (partial / "images").mkdir(parents=True)
        (partial / "contact_sheets").mkdir()
        width = qid_width(len(quadruples))
        records, metadata, details = [], [], []
        for number, quadruple in enumerate(quadruples, start=1):
            qid = str(number).zfill(width)
            members = [files[i] for i in quadruple.members]
            image_files = []
            for place, file in enumerate(members, start=1):
                name = f"{qid}/{place}{file.path.suffix.lower()}"
                (partial / "images" / qid).mkdir(exist_ok=True)
                shutil.copyfile(file.path, partial / "images" / name)
                image_files.append(f"images/{name}")
                metadata.append({"file_name": name, "source": file.name, "sha256": file.sha256})
            records.append(
                {
                    "qid": qid,
                    "image_files": image_files,
                    "context": "",
                    "question": "",
                    "answer": None,
                    "todo": TODO.format(qid=qid),
                }
            )
            details.append(_details(qid, quadruple, members, image_files, settings))
            sheet = contact_sheet.render(
                f"{qid}: CLIP alike, DINOv2 apart",
                [_picture(f) for f in members],
                [f.name for f in members],
                quadruple.matrix("clip"),
                quadruple.matrix("dino"),
                settings["clip_min"],
                settings["dino_max"],
            )
            sheet.save(partial / "contact_sheets" / f"{qid}.png", optimize=False)
        _write_jsonl(partial / records_file(settings["lang"]), records)
        _write_jsonl(partial / "images" / "metadata.jsonl", metadata)
        _write_jsonl(partial / "quadruples.jsonl", details)
        summary = {
            **settings,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "images": report.images,
            "embedded_now": report.computed,
            "from_cache": report.cached,
            "search": report.search.as_dict(),
            "refused": [{"file": r.name, "reason": r.reason} for r in report.rejected],
            "duplicates": [{"file": a, "same_as": b} for a, b in report.duplicates],
        }
        (partial / MINED_MARK).write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", "utf-8")
        if target.exists():
            target.rmdir()  # checked empty before mining began
        os.replace(partial, target)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)


def _details(
    qid: str, quadruple: Quadruple, members: Sequence[ImageFile], image_files: list[str], settings: dict[str, Any]
) -> dict[str, Any]:
    clip, dino = quadruple.matrix("clip"), quadruple.matrix("dino")
    return {
        "qid": qid,
        "image_files": image_files,
        "sources": [f.name for f in members],
        "sha256": [f.sha256 for f in members],
        "clip": clip,
        "dino": dino,
        "printed": {
            "clip": [[contact_sheet.shown(v) for v in row] for row in clip],
            "dino": [[contact_sheet.shown(v) for v in row] for row in dino],
        },
        "min_clip": quadruple.min_clip,
        "min_dino": quadruple.min_dino,
        "score": quadruple.score,
        "clip_min": settings["clip_min"],
        "dino_max": settings["dino_max"],
        "contact_sheet": f"contact_sheets/{qid}.png",
    }


def _picture(file: ImageFile) -> Image.Image:
    try:
        return load_image(file.path)
    except ImageRejected:  # it was read for embedding; if it changed since, show a blank
        return Image.new("RGB", (64, 64), (200, 200, 200))


def _write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")


# --- reading and rewriting a records file (drafting and easing) ---------------------------------


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a records file, in order; MiningError naming the lines that are not."""
    errors: list[str] = []
    try:
        found = read_objects(path, errors)
    except OSError as exc:
        raise MiningError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if errors:
        raise MiningError(problems(path, errors))
    return [record for _, record in found]


def write_jsonl_atomic(path: Path, records: Sequence[dict[str, Any]]) -> None:
    """Replace `path` in one step: a reader (or an interruption) sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        _write_jsonl(temporary, records)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
