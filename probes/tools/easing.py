"""Easing subsets of a DiscriBench-layout folder: the paper's ablation, with the release's file names.

Source: DiscriBench (Muraoka & Okazaki, NLP2025; seed 003, section 3.3, Table 2) eases the items
the best models all failed, on one side at a time: language (situation and conversation replaced
by a caption that fits only the answer, written by hand) and vision ("keep the option image least
similar to the answer by CLIP cosine, delete the others"), and both. Its release
(`data/ablation/`) names the files `{subset}_{lang}_100.jsonl`; reading the release shows what
each holds (the paper does not describe the files):

- `vis_medium`: the answer and ONE distractor of the item's own four stay in their places, the
  other two become `images/black.jpg`. This is the paper's vision easing; we keep the distractor
  least similar to the answer by CLIP, as the paper says.
- `vis_easy`: the same places blacked out, but the kept place shows an image from ANOTHER item
  (e.g. 034's answer beside 092/1.jpg). The release does not say how that image was chosen; we
  take, among the other records' images, the one least similar to the answer by CLIP, and put
  it where `vis_medium` keeps its distractor, as the release does.
- `lan_easy`: `context` is the caption alone, `question` "Which image number matches the
  caption?" (Japanese: "どの画像選択肢が上記のテキストに合致しますか？"), the four images as they
  are. In the release the caption may describe another of the four pictures than the main
  question's answer (52 of 67 do), so the author gives `caption` and, when it differs from
  `answer`, `caption_answer` (1-4). Records without a caption are reported and skipped.
- `both`: not in the release; Table 2's "both": the caption of `lan_easy` with the images of
  `vis_medium` (the distractor chosen against the caption's answer).
- `answer_embed`: the question with the answer written into it ("The answer is fourth image.",
  "正解は4番目の画像です。"), as the release's sanity check.
- `main`: the complete records as they are, so the eased runs compare with the same items.
  `lan_medium` needs a two-line conversation written by hand and is not made here.

Record ids follow the release: `034_en_vis-easy`, `034_ja_lan-easy` (a trailing `_ja` of a
Japanese main qid is not repeated); `main` keeps the qids. Only records that are complete
(non-empty `context` and `question`, `answer` 1-4, four readable images inside the folder) are
eased; the others are reported. Each file is written in one step (temporary name, then rename).
CLIP embeddings come from the same cache as mining, so a mined folder eases without loading CLIP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from probes.tools.embeddings import DEFAULT_CLIP, Encoder, HFEncoder, MiningError, Progress, embed_files
from probes.tools.image_scan import ImageFile, file_sha256, image_problem
from probes.tools.mining import LANGS, read_records, records_file, write_jsonl_atomic

BLACK = "images/black.jpg"
BLACK_SIZE = (460, 460)  # as the release's placeholder
SUBSETS = ("main", "vis_medium", "vis_easy", "lan_easy", "both", "answer_embed")
LAN_QUESTION = {
    "en": "Which image number matches the caption?",
    "ja": "どの画像選択肢が上記のテキストに合致しますか？",
}
ORDINALS = ("first", "second", "third", "fourth")
CARRIED = ("draft", "draft_model")  # kept on eased copies, so a draft stays visibly a draft


def subset_file(subset: str, lang: str) -> str:
    return f"ablation/{subset}_{lang}_100.jsonl"


@dataclass
class EaseReport:
    written: dict[str, int] = field(default_factory=dict)  # file (relative to the folder) -> records
    skipped: list[str] = field(default_factory=list)  # "file qid: why"
    drafts: int = 0  # eased records still marked as model drafts
    computed: int = 0  # CLIP embeddings computed now
    cached: int = 0

    def lines(self) -> list[str]:
        lines = [f"{name}: {count} record(s)" for name, count in self.written.items()]
        if self.drafts:
            lines.append(f"{self.drafts} record(s) are still model drafts (`draft: true`): check them before running")
        lines += [f"skipped: {reason}" for reason in self.skipped[:20]]
        if len(self.skipped) > 20:
            lines.append(f"... and {len(self.skipped) - 20} more skipped")
        return lines


def ease(
    folder: str | Path,
    *,
    clip: str | Path | Encoder = DEFAULT_CLIP,
    cache_dir: str | Path | None = None,
    batch_size: int = 16,
    progress: Progress | None = None,
) -> EaseReport:
    """Write the easing subsets of every `discribench_{lang}_200.jsonl` in `folder` into
    `folder/ablation/` (see the module docstring). Raises MiningError when there is nothing to
    ease from or a model cannot be loaded."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise MiningError(f"{root}: no such folder")
    langs = [lang for lang in LANGS if (root / records_file(lang)).is_file()]
    if not langs:
        raise MiningError(
            f"{root}: no {' or '.join(records_file(lang) for lang in LANGS)}; "
            "give a folder written by `mine` or the DiscriBench release's layout"
        )
    encoder = HFEncoder(clip, "clip") if isinstance(clip, (str, Path)) else clip
    report = EaseReport()
    sources = {lang: read_records(root / records_file(lang)) for lang in langs}
    usable = {lang: _usable(root, lang, records, report) for lang, records in sources.items()}
    vectors = _clip_vectors(root, usable, encoder, cache_dir, batch_size, progress, report)
    black_needed = False
    for lang in langs:
        records = []
        for record in usable[lang]:
            if all(f in vectors for f in record["image_files"]):
                records.append(record)
            else:
                report.skipped.append(f"{records_file(lang)} {record['qid']}: an image could not be embedded")
        report.drafts += sum(1 for r in records if r.get("draft"))
        subsets = _subsets(lang, records, vectors, report)
        for subset in SUBSETS:
            name = subset_file(subset, lang)
            write_jsonl_atomic(root / name, subsets[subset])
            report.written[name] = len(subsets[subset])
            black_needed |= any(BLACK in r["image_files"] for r in subsets[subset])
    if black_needed and not (root / BLACK).is_file():
        (root / BLACK).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", BLACK_SIZE, (0, 0, 0)).save(root / BLACK, quality=95)
    return report


# --- which records can be eased -----------------------------------------------------------------


def _usable(root: Path, lang: str, records: list[dict[str, Any]], report: EaseReport) -> list[dict[str, Any]]:
    name = records_file(lang)
    usable = []
    for number, record in enumerate(records, start=1):
        qid = record.get("qid")
        label = f"{name} {qid if isinstance(qid, (str, int)) and str(qid) else f'line {number}'}"
        problem = _record_problem(root, record)
        if problem:
            report.skipped.append(f"{label}: {problem}")
        else:
            usable.append(record)
    return usable


def _record_problem(root: Path, record: dict[str, Any]) -> str | None:
    qid = record.get("qid")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or str(qid) == "":
        return "`qid` must be a non-empty string or number"
    context, question, answer = record.get("context"), record.get("question"), record.get("answer")
    if not (isinstance(context, str) and context.strip() and isinstance(question, str) and question.strip()):
        return "not written yet (`context` and `question` must be non-empty)"
    if not _is_answer(answer):
        return f"`answer` must be a whole number from 1 to 4, got {answer!r}"
    files = record.get("image_files")
    if not isinstance(files, list) or len(files) != 4 or not all(isinstance(f, str) and f for f in files):
        return "`image_files` must name four images (a single image holding four pictures cannot be eased)"
    resolved = root.resolve()
    for file in files:
        path = (root / file).resolve()
        if not path.is_relative_to(resolved):
            return f"image {file!r} is outside the folder"
        problem = image_problem(path) if path.is_file() else "not found"
        if problem:
            return f"image {file!r}: {problem}"
    caption_answer = record.get("caption_answer")
    if caption_answer is not None and not _is_answer(caption_answer):
        return f"`caption_answer` must be a whole number from 1 to 4, got {caption_answer!r}"
    return None


def _is_answer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 4


def _clip_vectors(
    root: Path,
    usable: dict[str, list[dict[str, Any]]],
    encoder: Encoder,
    cache_dir: str | Path | None,
    batch_size: int,
    progress: Progress | None,
    report: EaseReport,
) -> dict[str, np.ndarray]:
    """Image file (as named in the records) -> unit CLIP vector."""
    names = sorted({f for records in usable.values() for r in records for f in r["image_files"]})
    files = [ImageFile(root / n, n, file_sha256(root / n)) for n in names]
    embedded = embed_files(files, [encoder], Path(cache_dir) if cache_dir else None, batch_size, progress)
    report.computed, report.cached = embedded.computed["clip"], embedded.cached["clip"]
    for rejected in embedded.rejected:
        report.skipped.append(f"image {rejected.name}: {rejected.reason}")
    return {file.name: vector for file, vector in zip(embedded.files, embedded.vectors["clip"], strict=True)}


# --- the subsets --------------------------------------------------------------------------------


def _subsets(
    lang: str, records: Sequence[dict[str, Any]], vectors: dict[str, np.ndarray], report: EaseReport
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {subset: [] for subset in SUBSETS}
    pool = _pool(records, vectors)
    for record in records:
        files, answer = record["image_files"], record["answer"]
        out["main"].append(_plain(record, record["qid"], record["context"], record["question"], answer, files))
        kept = _least_similar(files, answer, vectors)
        out["vis_medium"].append(
            _plain(
                record,
                _qid(record, lang, "vis_medium"),
                record["context"],
                record["question"],
                answer,
                _blackened(files, answer, kept, files[kept]),
            )  # fmt: skip
        )
        foreign = _foreign(files, answer, vectors, pool)
        if foreign is None:
            report.skipped.append(f"{subset_file('vis_easy', lang)} {record['qid']}: no other record's image to use")
        else:
            out["vis_easy"].append(
                _plain(
                    record,
                    _qid(record, lang, "vis_easy"),
                    record["context"],
                    record["question"],
                    answer,
                    _blackened(files, answer, kept, foreign),
                )  # fmt: skip
            )
        ordinal = f" The answer is {ORDINALS[answer - 1]} image." if lang == "en" else f"正解は{answer}番目の画像です。"
        out["answer_embed"].append(
            _plain(
                record,
                _qid(record, lang, "answer_embed"),
                record["context"],
                record["question"] + ordinal,
                answer,
                files,
            )  # fmt: skip
        )
        caption = record.get("caption")
        if not isinstance(caption, str) or not caption.strip():
            report.skipped.append(
                f"{subset_file('lan_easy', lang)} {record['qid']}: no `caption` (the author writes it)"
            )
            continue
        target = record.get("caption_answer") or answer
        question = LAN_QUESTION[lang]
        out["lan_easy"].append(_plain(record, _qid(record, lang, "lan_easy"), caption, question, target, files))
        kept_for_caption = _least_similar(files, target, vectors)
        out["both"].append(
            _plain(
                record,
                _qid(record, lang, "both"),
                caption,
                question,
                target,
                _blackened(files, target, kept_for_caption, files[kept_for_caption]),
            )  # fmt: skip
        )
    return out


def _least_similar(files: Sequence[str], answer: int, vectors: dict[str, np.ndarray]) -> int:
    """The place (0-3) of the distractor least similar to the answer by CLIP; ties: the first."""
    target = vectors[files[answer - 1]].astype(np.float64)
    places = [i for i in range(4) if i != answer - 1]
    return min(places, key=lambda i: (float(np.dot(target, vectors[files[i]].astype(np.float64))), i))


def _pool(records: Sequence[dict[str, Any]], vectors: dict[str, np.ndarray]) -> list[str]:
    """Every distinct image of the records (by file name, in order), for vis_easy."""
    return list(dict.fromkeys(f for r in records for f in r["image_files"] if f in vectors))


def _foreign(files: Sequence[str], answer: int, vectors: dict[str, np.ndarray], pool: Sequence[str]) -> str | None:
    """The image of another record least similar to the answer by CLIP. Images with the same
    vector as one of this record's (the same picture under another name) count as its own."""
    own = {vectors[f].tobytes() for f in files}
    others = [f for f in pool if f not in files and vectors[f].tobytes() not in own]
    if not others:
        return None
    target = vectors[files[answer - 1]].astype(np.float64)
    return min(others, key=lambda f: (float(np.dot(target, vectors[f].astype(np.float64))), f))


def _blackened(files: Sequence[str], answer: int, kept: int, shown: str) -> list[str]:
    return [
        files[i] if i == answer - 1 else shown if i == kept else BLACK
        for i in range(4)
    ]  # fmt: skip


def _qid(record: dict[str, Any], lang: str, subset: str) -> str:
    base = str(record["qid"])
    base = base.removesuffix(f"_{lang}")
    return f"{base}_{lang}_{subset.replace('_', '-')}"


def _plain(record: dict[str, Any], qid: Any, context: str, question: str, answer: int, files: list[str]):
    plain = {"qid": qid, "image_files": list(files), "context": context, "question": question, "answer": answer}
    plain.update({key: record[key] for key in CARRIED if key in record})
    return plain
