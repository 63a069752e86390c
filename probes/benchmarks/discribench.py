"""`discribench`: pick the image that a situation and a misleading conversation point to.

What it probes: discrimination. Each item is a situation, a short conversation between two people
with details that lead astray, and a question; the four OPTIONS ARE IMAGES that look alike and
differ in details (four COCO photographs chosen so that CLIP finds them near-identical while
DINOv2 does not, or one exam illustration holding four numbered pictures). Answer 1..4.

Source: 村岡雅康, 岡崎直観, 視覚言語モデルの識別性能に関する評価用ベンチマークの構築 (Muraoka &
Okazaki, building a benchmark to evaluate the discriminability of vision-language models),
NLP2025 (言語処理学会第31回年次大会), pp. 1196-1201; seed 003. The paper's 100 items are 33
illustrations from the Common Test's English listening papers and 67 COCO quadruples.

Data: not bundled (the exam portion is all rights reserved; COCO images carry their own
licences). `--data PATH` points at the release's `data/` folder (github.com/muraoka7/discribench;
the paper's footnote also names a Hugging Face page under `mmst004/`): `discribench_{en,ja}_200.jsonl`,
`ablation/{main,lan_easy,lan_medium,vis_easy,vis_medium,answer_embed}_{en,ja}_100.jsonl`,
`images/...` and `images/metadata.jsonl`. Records: `qid`, `image_files` (paths relative to PATH,
one or four), `context`, `question`, `answer` (1..4).

Parameters:
- `lang`: `en` (default) or `ja`, the file set to read;
- `subset`: `discribench` (default: the 200-item file) or an ablation file's stem: `main` (the
  paper's 100 items, where its Table 1 numbers come from), `lan_easy`, `lan_medium` (situation and
  conversation replaced by a caption), `vis_easy`, `vis_medium` (distractors blacked out),
  `answer_embed` (the answer written into the question), and `both` (Table 2's language and
  vision easing together: not in the release, `python -m probes ease DIR` writes it).

Drafts: a record marked `draft: true` (text drafted by a model, `python -m probes mine --draft`,
not yet checked by a person) is asked like any other, but `notes` says how many there are (the
command line prints it) and the item carries the group `draft=model draft`, so `report --by
draft` keeps them apart. They are not refused: asking models about drafts is part of checking
them, and refusing would make a person edit files to try. They are flagged because a score on
them measures the drafting model's text (its answer may be wrong) as much as the model asked.

Prompt, exactly as the authors' release code (`src/utils.py`, `src/predict_openai.py`) sends it,
which the paper itself does not print: with four image files, `Image 1: ` <image> `\\nImage 2: `
<image> ... `\\nImage 4: ` <image>, then `\\n` and the prompt text; with one file, the image, then
`\\n` and the text. The text is `{context}\\nQuestion: {question} Please choose the number of the
image ...` (SPEC.md section 4). For `lang=ja` the release uses a Japanese instruction, so we do
too, verbatim from that code (`質問: ... 与えられた状況文と会話文に基づいて、...`); the `Image k: `
labels stay English in both languages, as there. Images are sent with detail "high", as the
authors asked OpenAI for.

Scoring: the paper's regex on the NFKC-normalised reply; its first match gives the image number.
A reply it cannot read is wrong (status unparsed, or refused when it is a refusal). Groups:
`image_type` (natural or illustration), `subset`, `lang`. Chance 25%. The paper is 0-shot and the
release has no training split, so few-shot is refused. `--cot` works, but the paper's rule still
takes the FIRST image number a reply mentions, reasoning included.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from models.types import ImagePart, TextPart
from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.core.types import AnswerKind, Item, LabelStyle, Parsed, Status
from probes.files.images import ImageRejected, check_image_file, file_source
from probes.files.jsonl import problems, read_objects
from probes.reading.parsing import is_refusal

RELEASE = "https://github.com/muraoka7/discribench (its data/ folder)"
LANGS = ("en", "ja")
MAIN = "discribench"
ABLATIONS = ("main", "lan_easy", "lan_medium", "vis_easy", "vis_medium", "both", "answer_embed")
SUBSETS = (MAIN, *ABLATIONS)
OPTIONS = ("Image 1", "Image 2", "Image 3", "Image 4")

PROMPTS = {
    "en": (
        "{context}\nQuestion: {question} Please choose the number of the image that matches the answer to the "
        "question, given the situation and conversation. The output format is 'Answer: <image_number>\n"
        "Reason: <reason>', in which the reason can be optionally added to explain your answer."
    ),
    "ja": (
        "{context}\n質問: {question} 与えられた状況文と会話文に基づいて、質問の答えとなる画像の番号を選んでください。"
        "出力形式は「答え：<画像番号>\n理由：<理由>」とし、任意で回答理由も出力することができます。"
    ),
}

# The authors' rule (src/score.py of the release): NFKC, then the FIRST match of
#   (Answer: |答え：|回答：)? ?(Image[- ]?|画像[- ]?)?[1-4１２３４]
# NFKC has already turned "：" into ":" (and "１" into "1", "③" into "3"), so as written their
# Japanese prefixes can never match a normalised reply. We accept either colon so the match covers
# the answer phrase they meant. The digit found does not change: every prefix is optional and none
# holds a digit, so the match's digit is always the first 1-4 in the reply, as in the paper.
_ANSWER = re.compile(r"(Answer: |答え[:：]|回答[:：])? ?(Image[- ]?|画像[- ]?)?[1-4１２３４]")


class DiscriBenchError(BenchmarkError):
    """The data is missing or not in the release's shape; the message says where and what."""


def subset_file(subset: str, lang: str) -> str:
    """The release file for a subset and language, relative to the data folder."""
    if subset == MAIN:
        return f"discribench_{lang}_200.jsonl"
    return f"ablation/{subset}_{lang}_100.jsonl"


def prompt_text(context: str, question: str, lang: str) -> str:
    # str.replace, not str.format: contexts may hold braces.
    return PROMPTS[lang].replace("{context}", context, 1).replace("{question}", question, 1)


def read_answer(reply: str) -> int | None:
    """The image number (1..4) the paper's regex reads in a reply, or None."""
    match = _ANSWER.search(unicodedata.normalize("NFKC", reply or ""))
    return int(unicodedata.normalize("NFKC", match.group()[-1])) if match else None


class DiscriBench(Benchmark):
    id = "discribench"
    title = "DiscriBench: which image do the situation and conversation point to?"
    source = (
        "Muraoka & Okazaki, 視覚言語モデルの識別性能に関する評価用ベンチマークの構築 (DiscriBench), "
        "NLP2025 (言語処理学会第31回年次大会), pp. 1196-1201"
    )
    chance = 25.0
    kind = AnswerKind.CHOICE
    label_style = LabelStyle.DIGIT1
    fixed_options = OPTIONS

    def __init__(self, data: str | None, lang: str = "en", subset: str = MAIN):
        super().__init__()
        self.lang = lang
        self.subset = subset
        self.notes: list[str] = []  # what a user should know before trusting a score (drafts)
        self.root = _data_root(data, subset_file(subset, lang)) if data is not None else None

    # --- items ------------------------------------------------------------------------------

    def load_items(self) -> list[Item]:
        if self.root is None:
            raise DiscriBenchError(
                "discribench: the dataset is not bundled (its exam illustrations are all rights reserved). "
                f"Download the release from {RELEASE} and pass --data PATH, the folder holding "
                "discribench_en_200.jsonl, ablation/ and images/."
            )
        name = subset_file(self.subset, self.lang)
        errors: list[str] = []
        records = _read_jsonl(self.root, name, errors)
        types = _metadata_types(self.root, errors)
        checked: dict[Path, str | None] = {}
        items: list[Item] = []
        seen: set[str] = set()
        for number, record in records:
            try:
                item = self._item(record, types, checked)
            except DiscriBenchError as exc:
                errors.append(f"{name} line {number}: {exc}")
                continue
            if item.id in seen:
                errors.append(f"{name} line {number}: qid {record['qid']!r} appears twice")
                continue
            seen.add(item.id)
            items.append(item)
        if errors:
            raise DiscriBenchError(problems(self.root, errors))
        if not items:
            raise DiscriBenchError(f"{self.root / name}: no items")
        drafts = sum(1 for item in items if "draft" in item.groups)
        if drafts:
            self.notes = [
                f"{drafts} of {len(items)} records in {name} are model drafts (`draft: true`) no person has checked: "
                "a score on them measures the drafted text as much as the model; `report --by draft` keeps them apart"
            ]
        return items

    def _item(self, record: Mapping[str, Any], types: Mapping[Path, str], checked: dict[Path, str | None]) -> Item:
        qid = record.get("qid")
        if not isinstance(qid, (str, int)) or isinstance(qid, bool) or str(qid) == "":
            raise DiscriBenchError("`qid` must be a non-empty string or number")
        context, question = record.get("context"), record.get("question")
        if not isinstance(context, str) or not context.strip():
            raise DiscriBenchError("`context` must be a non-empty string")
        if not isinstance(question, str) or not question.strip():
            raise DiscriBenchError("`question` must be a non-empty string")
        answer = record.get("answer")
        if not isinstance(answer, int) or isinstance(answer, bool) or not 1 <= answer <= 4:
            raise DiscriBenchError(f"`answer` must be a whole number from 1 to 4, got {answer!r}")
        paths = self._image_paths(record.get("image_files"), checked)
        # Ablation files reuse the main file's qids ("034" in both): the store keys results by
        # item id, so ids from an ablation file carry their subset.
        item_id = str(qid) if self.subset == MAIN else f"{self.subset}/{qid}"
        return Item(
            benchmark=self.id,
            id=item_id,
            question=prompt_text(context, question, self.lang),
            images=tuple(file_source(path) for path in paths),
            kind=AnswerKind.CHOICE,
            target=answer - 1,
            options=OPTIONS,
            label_style=LabelStyle.DIGIT1,
            groups={
                "image_type": _image_type(paths, types),
                "subset": self.subset,
                "lang": self.lang,
                **({"draft": "model draft"} if record.get("draft") else {}),
            },
            params={"lang": self.lang, "subset": self.subset},
        )

    def _image_paths(self, names: Any, checked: dict[Path, str | None]) -> list[Path]:
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise DiscriBenchError("`image_files` must be a list of file names")
        if len(names) not in (1, 4):
            # The authors' code sends one image (four numbered pictures) or exactly four.
            raise DiscriBenchError(f"`image_files` must name 1 or 4 images, got {len(names)}")
        root = self.root.resolve()
        paths = []
        for name in names:
            path = (self.root / name).resolve()
            if not path.is_relative_to(root):
                raise DiscriBenchError(f"image {name!r} is outside the data folder")
            if path not in checked:
                checked[path] = _image_problem(path, name)
            if checked[path]:
                raise DiscriBenchError(checked[path])
            paths.append(path)
        return paths

    def size_note(self) -> str:
        if self.root is None:
            return "not bundled: --data PATH"
        return f"{len(self.items())} items ({self.subset}, {self.lang})"

    # --- prompting ----------------------------------------------------------------------------

    def select_examples(self, item: Item, k: int) -> list[Item]:
        if k:
            raise DiscriBenchError(
                "discribench is 0-shot: the paper gives no examples and the release has no training split; "
                "run with --shots 0"
            )
        return []

    def render_question(self, item: Item) -> str:
        # The options are the images themselves; their labels go beside them in user_parts.
        return item.question

    def user_parts(self, item: Item, images: list[ImagePart], text: str) -> list[TextPart | ImagePart]:
        if not images:  # the no-image perturbation: the language prior alone
            return [TextPart(text)]
        images = [ImagePart(lambda p=part: p.image, "high", part.content_hash) for part in images]
        order = _shown_order(item)
        if len(images) == 1:
            if order != list(range(len(OPTIONS))):
                raise DiscriBenchError(
                    f"item {item.id}: its four pictures share one image, so the options cannot be reordered"
                )
            return [images[0], TextPart("\n" + text)]
        parts: list[TextPart | ImagePart] = []
        for place, original in enumerate(order):
            parts += [TextPart(("\n" if place else "") + f"Image {place + 1}: "), images[original]]
        return [*parts, TextPart("\n" + text)]

    # --- grading ------------------------------------------------------------------------------

    def parse_reply(self, reply: str, item: Item) -> Parsed:
        """The paper's regex decides whenever it matches; the value is the 0-based option index,
        as for every multiple-choice item, so the default grade compares it with the target."""
        number = read_answer(reply)
        if number is not None:
            return Parsed(number - 1, Status.ANSWERED)
        if is_refusal(reply or ""):
            return Parsed(None, Status.REFUSED)
        return Parsed(None, Status.UNPARSED)


# --- reading the release ----------------------------------------------------------------------


def _data_root(data: str, wanted: str) -> Path:
    """The release folder: PATH itself, or PATH/data for a clone of the authors' repository."""
    given = Path(data).expanduser()
    if not given.is_dir():
        raise DiscriBenchError(f"--data {data}: no such folder (point it at the DiscriBench release, {RELEASE})")
    for root in (given, given / "data"):
        if (root / wanted).is_file():
            return root
    # Two levels only: --data may be a large folder given by mistake.
    found = sorted(str(p.relative_to(given)) for p in [*given.glob("*.jsonl"), *given.glob("*/*.jsonl")])
    listing = ", ".join(found[:12]) if found else "no .jsonl files"
    raise DiscriBenchError(
        f"--data {data}: no {wanted} here (found: {listing}); point --data at the release folder that holds "
        "discribench_en_200.jsonl, ablation/ and images/"
    )


def _read_jsonl(root: Path, name: str, errors: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; problems go to `errors` naming the line."""
    try:
        return read_objects(root / name, errors, label=name)
    except OSError as exc:
        raise DiscriBenchError(f"{root / name}: cannot be read ({exc.strerror})") from None


def _metadata_types(root: Path, errors: list[str]) -> dict[Path, str]:
    """Image file -> "natural" or "illustration", from images/metadata.jsonl when present. The
    release lists every image's source there: `coco_url` for COCO photographs, `exam_url` for
    the exam illustrations."""
    name = "images/metadata.jsonl"
    if not (root / name).is_file():
        return {}
    types = {}
    for number, entry in _read_jsonl(root, name, errors):
        file_name = entry.get("file_name")
        if not isinstance(file_name, str) or not file_name:
            errors.append(f"{name} line {number}: `file_name` must be a non-empty string")
            continue
        kind = "illustration" if "exam_url" in entry else "natural" if "coco_url" in entry else None
        if kind:
            types[(root / "images" / file_name).resolve()] = kind
    return types


def _image_type(paths: Sequence[Path], types: Mapping[Path, str]) -> str:
    """From the metadata where it names the item's images (placeholders such as images/black.jpg
    in the vis_* files are not listed); otherwise by shape: the exam items are one image holding
    four numbered pictures, the COCO items four separate photographs."""
    known = {types[p] for p in paths if p in types}
    if known:
        return "illustration" if "illustration" in known else "natural"
    return "illustration" if len(paths) == 1 else "natural"


def _image_problem(path: Path, name: str) -> str | None:
    if not path.is_file():
        return f"image {name!r} not found"
    try:
        check_image_file(path)
    except ImageRejected as exc:
        return f"image {exc}"
    return None


def _shown_order(item: Item) -> list[int]:
    """Which of the item's images sits at each place. Options name the images ("Image 3"), so
    when rotate-options reorders them the pictures move with their names and the target stays
    right."""
    try:
        return [OPTIONS.index(option) for option in item.options]
    except ValueError:
        raise DiscriBenchError(f"item {item.id}: options must be {', '.join(OPTIONS)} in some order") from None


def _one_value(params: Mapping[str, Any], name: str, default: str, allowed: Sequence[str]) -> str:
    value = params.get(name, default)
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise DiscriBenchError(f"discribench: --param {name} takes one value, got {', '.join(map(str, value))}")
        value = value[0]
    value = str(value).strip()
    if value not in allowed:
        raise DiscriBenchError(f"discribench: --param {name}={value} is not one of {', '.join(allowed)}")
    return value


@register("discribench")
def discribench(data: str | None = None, params: Mapping[str, Any] | None = None) -> DiscriBench:
    params = params or {}
    unknown = sorted(set(params) - {"lang", "subset"})
    if unknown:
        raise DiscriBenchError(f"discribench: unknown parameter(s) {', '.join(unknown)}; known: lang, subset")
    lang = _one_value(params, "lang", "en", LANGS)
    subset = _one_value(params, "subset", MAIN, SUBSETS)
    return DiscriBench(data, lang=lang, subset=subset)
