"""IllusionVQA (Shahgir et al., 2024; seeds 000 JA and 004 EN): multiple choice on optical illusions.

- `illusionvqa/comprehension`: 435 test items on 370 images, 3 to 6 options (a few 2, 7 or 8),
  one correct; 16 categories in the data, 12 in the paper (counting, perspective, angle
  constancy, occlusion and repeating pattern merged into Miscellaneous). Groups: `category`
  (the paper's 12) and `raw_category` (the data's 16).
- `illusionvqa/soft-localization`: 1000 items, two drawings side by side, "Which object is
  geometrically impossible?", options The left object / The right object / Both objects /
  Neither object; shown in grayscale. Chance 25%.

Data: the Hugging Face datasets `csebuetnlp/illusionVQA-Comprehension` and
`csebuetnlp/illusionVQA-Soft-Localization` (default; split `train` holds the 4 few-shot
examples, `test` the items), or `--data PATH` for the authors' local layout: PATH holds
`eval_labels.json` with images in `EVAL/`, and `fewshot_labels.json` with images in `FEW_SHOTS/`.
Records: image, question, options, answer (the option TEXT), category, id (soft-loc: reasoning).

Prompting as the paper's Appendix E: its instruction first, options as `a. text` lines in stored
order, every image scaled so its longer side is at most 512 px. 4-shot: "Here are a few
examples:", then the 4 train examples, "Now you try it." and the item. The paper pasted the
examples into one prompt; here each example is a user turn (its image, question, options) and an
assistant turn "Answer: {letter}", as DESIGN.md asks of every few-shot prompt. 4-shot+CoT uses the
paper's CoT instruction and the examples' reasoning. The paper ran CoT on soft-localization only;
comprehension examples have no reasoning, so their CoT turns hold the answer alone.

Transformed pictures (`probes.core.truth`): mirrored, a soft-localization item's impossible
object is on the other side (The left object and The right object swap; both and neither stay);
upside down its answer stands. A comprehension item's truth is unknown when its question or
options name a place the transform moves (the object on the left, the top line) or, in grayscale,
a colour, and for the Upside-Down category turned upside down (two pictures in one: turned, it
shows the other); otherwise it stands, as in the paper's own flipped-image probe (Table 2).

`--param subset=fewshot` asks the 4 train examples themselves while they sit in the context
(Appendix H: models still fail them).

`--param fewshot=authors` lays the prompt out as the authors' notebooks sent it, so their k-shot
numbers can be reproduced as they were obtained (`turns`, separate example turns, stays the
default). From `inference_code/closed_source_api/GPT_inference.ipynb` and
`GPT_inference_with_reasoning.ipynb` of github.com/csebuetnlp/IllusionVQA (the GPT4V runs): ONE
user message holding the instruction; for each example i (from 1) "Image i: {question}\n{a. ...
lines}", its image, then "Answer i: {letter}"; then "Now you try it!"; then the item the same way,
ending "Answer {k+1}: " (0-shot: the instruction, then the item as "Image 1: ..."). With CoT each
example ends "Reasoning: {reasoning}" then "Answer: {letter}" and the item ends "Reasoning: ".
The instructions are the notebooks' own, which differ from the paper's Appendix E: 0-shot "...
an instruction and some options ... Answer with only the letter which corresponds to the correct
option. Do not repeat the entire answer."; k-shot "... an instruction and some choices ...
Answer with the option's letter from the given choices directly. Here are a few examples:"; CoT
the reasoning notebook's, with "Answer" in double quotes. Items asked this way have ids
`authors/test-N` and the group `fewshot=authors`, so they never replace a result asked in
separate turns (`report --by fewshot` shows them apart). (The Claude notebooks put the CoT
examples' image before their text and end them "Answer i: "; the Gemini one interleaves
differently and ends "Now you try it."; the GPT4V layout is the one taken here.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from models.types import ImagePart, TextPart
from probes.core import truth
from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.core.types import AnswerKind, ImageSource, Item, Mode
from probes.files.images import ImageRejected, check_image_file, load_image

PAPER = "Shahgir et al., IllusionVQA: A Challenging Optical Illusion Dataset for Vision Language Models (2024)"
HUB = {
    "illusionvqa/comprehension": "csebuetnlp/illusionVQA-Comprehension",
    "illusionvqa/soft-localization": "csebuetnlp/illusionVQA-Soft-Localization",
}
MAX_SIDE = 512

INSTRUCTION = (
    "You'll be given an image, an instruction, and some options. You have to select the correct one. "
    "Do not explain your reasoning. Answer with only the letter that corresponds to the correct option. "
    "Do not repeat the entire answer."
)
COT_INSTRUCTION = (
    "You'll be given an image, an instruction, and some choices. You have to select the correct one. "
    "Reason about the choices in the context of the question and the image. "
    "End your answer with 'Answer': {letter_of_correct_choice} without the curly brackets."
)
EXAMPLES_INTRO = "Here are a few examples:"
NOW_YOU = "Now you try it."

# The authors' notebooks (fewshot=authors), character for character.
AUTHORS_ZERO_SHOT = (
    "You'll be given an image, an instruction and some options. You have to select the correct one. Do not "
    "explain your reasoning. Answer with only the letter which corresponds to the correct option. Do not repeat "
    "the entire answer."
)
AUTHORS_FEW_SHOT = (
    "You'll be given an image, an instruction and some choices. You have to select the correct one. Do not "
    "explain your reasoning. Answer with the option's letter from the given choices directly. Here are a few examples:"
)
AUTHORS_COT = (
    "You'll be given an image, an instruction and some choices. You have to select the correct one. Reason about "
    'the choices in the context of the question and the image. End your answer with "Answer": '
    "{letter_of_correct_choice} without the curly brackets."
)
AUTHORS_NOW_YOU = "Now you try it!"
LAYOUTS = ("turns", "authors")

# The paper's Table 1 reports 12 classes; the data has 16 (five small ones merged).
REPORTED_CATEGORY = {
    "impossible object": "Impossible Object",
    "real-scene": "Real-Scene",
    "size": "Size",
    "hidden": "Hidden",
    "deceptive design": "Deceptive Design",
    "angle illusion": "Angle Illusion",
    "color": "Color",
    "edited-scene": "Edited-Scene",
    "upside-down": "Upside-Down",
    "positive-negative space": "Positive-Negative Space",
    "circle-spiral": "Circle-Spiral",
    "counting": "Miscellaneous",
    "perspective": "Miscellaneous",
    "angle constancy": "Miscellaneous",
    "occlusion": "Miscellaneous",
    "repeating pattern": "Miscellaneous",
    # Other names for the merged class: Claude's released result files call it "misc".
    "misc": "Miscellaneous",
    "miscellaneous": "Miscellaneous",
}


class IllusionVQA(Benchmark):
    source = PAPER
    kind = AnswerKind.CHOICE

    def __init__(self, benchmark_id: str, data: str | None, subset: str, layout: str = "turns"):
        super().__init__()
        self.layout = layout
        self.id = benchmark_id
        self.soft = benchmark_id.endswith("soft-localization")
        self.title = "Which object is geometrically impossible?" if self.soft else "Optical illusion comprehension"
        self.chance = 25.0 if self.soft else None  # comprehension: 3 to 6 options per item
        self.subset = subset
        self.data = data
        self._records: tuple[list[Item], list[Item]] | None = None

    # --- data ----------------------------------------------------------------------------

    def _load(self) -> tuple[list[Item], list[Item]]:
        if self._records is None:
            rows = _local_rows(Path(self.data)) if self.data else _hub_rows(HUB[self.id])
            self._records = (
                [self._item(row, f"test-{row['id']}") for row in rows["test"]],
                [self._item(row, f"fewshot-{index}") for index, row in enumerate(rows["train"])],
            )
        return self._records

    def load_items(self) -> list[Item]:
        test, fewshot = self._load()
        items = fewshot if self.subset == "fewshot" else test
        if self.layout == "authors":
            # Another prompt, so another result: the store keys results by item id, and a run in
            # the authors' layout must not replace one in ours (or the reverse).
            items = [i.with_changes(id=f"authors/{i.id}", groups={**i.groups, "fewshot": "authors"}) for i in items]
        return items

    def load_examples(self) -> list[Item]:
        return self._load()[1]

    def size_note(self) -> str:
        return "1000 items" if self.soft else "435 items (370 images)"

    def groups_for_category(self, category: str) -> dict[str, str]:
        if self.soft:
            return {}
        reported = REPORTED_CATEGORY.get(category.strip().lower(), category)
        return {"category": reported, "raw_category": category}

    def _item(self, row: Mapping[str, Any], item_id: str) -> Item:
        options = tuple(row["options"])
        if row["answer"] not in options:
            raise BenchmarkError(f"{self.id} item {row.get('id')}: answer {row['answer']!r} is not among its options")
        groups = self.groups_for_category(str(row.get("category") or ""))
        return Item(
            benchmark=self.id,
            id=item_id,
            question=row["question"],
            images=(ImageSource(row["image_ref"], _fitted(row["image_loader"], grayscale=self.soft)),),
            kind=AnswerKind.CHOICE,
            target=options.index(row["answer"]),
            options=options,
            groups=groups,
            params={"id": row.get("id"), "image": row.get("image_name")},
            reasoning=row.get("reasoning") or None,
        )

    def truth_under(self, item: Item, transform: str) -> Item:
        if self.soft:
            if truth.REFLECTIONS.get(transform) == "columns":
                return truth.swap_options(item, [("The left object", "The right object")])
            return item
        if transform == "flip-vertical" and item.groups.get("raw_category", "").strip().lower() == "upside-down":
            return truth.unknown(
                item, "truth unknown upside down: an Upside-Down illusion shows another picture turned"
            )
        return truth.by_words(item, transform)

    # --- prompting -----------------------------------------------------------------------

    def select_examples(self, item: Item, k: int) -> list[Item]:
        """The paper's 4 train examples, the same for every item (and for the in-context
        probe, the item itself among them, on purpose)."""
        pool = self.examples()
        if k > len(pool):
            raise BenchmarkError(f"{self.id} has {len(pool)} few-shot examples; {k} asked")
        return pool[:k]

    def preamble(self, shots: int, cot: bool) -> str:
        instruction = COT_INSTRUCTION if cot else INSTRUCTION
        return f"{instruction} {EXAMPLES_INTRO}" if shots else instruction

    def query_prefix(self, shots: int, cot: bool) -> str | None:
        return NOW_YOU if shots else None

    def cot_instruction(self, item: Item) -> str:
        return ""  # the preamble carries the paper's CoT instruction

    def render_answer(self, example: Item, cot: bool) -> str:
        answer = f"Answer: {example.target_text()}"
        return f"{example.reasoning}\n{answer}" if cot and example.reasoning else answer

    def one_message(
        self, item: Item, examples: list[Item], mode: Mode, image_parts: Callable[[Item], list[ImagePart]]
    ) -> list[TextPart | ImagePart] | None:
        """fewshot=authors: the notebooks' single user message (see the module docstring)."""
        if self.layout != "authors":
            return None
        if mode.cot:
            instruction = f"{AUTHORS_COT} {EXAMPLES_INTRO}" if examples else AUTHORS_COT
        else:
            instruction = AUTHORS_FEW_SHOT if examples else AUTHORS_ZERO_SHOT
        parts: list[TextPart | ImagePart] = [TextPart(instruction)]
        for number, example in enumerate(examples, start=1):
            parts += self._authors_row(example, number, image_parts(example), mode.cot, answered=True)
        if examples:
            parts.append(TextPart(AUTHORS_NOW_YOU))
        parts += self._authors_row(item, len(examples) + 1, image_parts(item), mode.cot, answered=False)
        return parts

    def _authors_row(
        self, item: Item, number: int, images: list[ImagePart], cot: bool, answered: bool
    ) -> list[TextPart | ImagePart]:
        row: list[TextPart | ImagePart] = [TextPart(f"Image {number}: {self.render_question(item)}"), *images]
        if cot:
            if not answered:
                return [*row, TextPart("Reasoning: ")]
            return [*row, TextPart(f"Reasoning: {item.reasoning or ''}"), TextPart(f"Answer: {item.target_text()}")]
        return [*row, TextPart(f"Answer {number}: {item.target_text() if answered else ''}")]


def _fitted(load: Callable[[], Image.Image], grayscale: bool) -> Callable[[], Image.Image]:
    def fitted() -> Image.Image:
        image = load()
        if max(image.size) > MAX_SIDE:
            scale = MAX_SIDE / max(image.size)
            size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
            image = image.resize(size, Image.Resampling.LANCZOS)
        return image.convert("L") if grayscale else image

    return fitted


def _hub_rows(name: str) -> dict[str, list[dict[str, Any]]]:
    try:
        import datasets
    except ImportError:
        raise BenchmarkError(
            "the IllusionVQA datasets need the datasets package: pip install -r requirements.txt"
        ) from None
    try:
        loaded = datasets.load_dataset(name)
    except Exception as exc:  # no network, no cache, renamed dataset ...
        raise BenchmarkError(
            f"could not load {name} from the Hugging Face Hub ({type(exc).__name__}: {exc}); "
            "with no internet, point --data at a local copy (eval_labels.json, fewshot_labels.json, EVAL/, FEW_SHOTS/)"
        ) from None
    rows: dict[str, list[dict[str, Any]]] = {}
    for split in ("test", "train"):
        if split not in loaded:
            raise BenchmarkError(f"{name} has no {split} split")
        table = loaded[split]
        fingerprint = getattr(table, "_fingerprint", "")
        columns = [c for c in table.column_names if c != "image"]
        rows[split] = [
            {**row, "image_ref": f"{name}@{fingerprint}:{split}:{index}", "image_loader": _hub_image(table, index)}
            for index, row in enumerate(table.select_columns(columns))
        ]
    return rows


def _hub_image(table, index: int) -> Callable[[], Image.Image]:
    return lambda: table[index]["image"]


def _local_rows(folder: Path) -> dict[str, list[dict[str, Any]]]:
    if not folder.is_dir():
        raise BenchmarkError(f"--data {folder}: no such folder")
    return {
        "test": _labels(folder, "eval_labels.json", "EVAL"),
        "train": _labels(folder, "fewshot_labels.json", "FEW_SHOTS"),
    }


def _labels(folder: Path, name: str, image_dir: str) -> list[dict[str, Any]]:
    path = folder / name
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkError(
            f"{folder}: no {name} (the authors' layout: {name} beside an {image_dir}/ folder)"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(records, list):
        raise BenchmarkError(f"{path}: expected a JSON list of records")
    rows = []
    root = (folder / image_dir).resolve()
    for index, record in enumerate(records):
        where = f"{path} record {index}"
        if not isinstance(record, dict) or not all(k in record for k in ("image", "question", "options", "answer")):
            raise BenchmarkError(f"{where}: needs image, question, options and answer")
        if not isinstance(record["options"], list) or len(record["options"]) < 2:
            raise BenchmarkError(f"{where}: options must be a list of at least two")
        image = (root / str(record["image"])).resolve()
        if not image.is_relative_to(root):
            raise BenchmarkError(f"{where}: image {record['image']!r} is outside {image_dir}/")
        try:
            check_image_file(image)
        except ImageRejected as exc:
            raise BenchmarkError(f"{where}: image {exc}") from None
        stat = image.stat()
        rows.append(
            {
                **record,
                "id": record.get("id", index),
                "image_name": record["image"],
                "image_ref": f"{image}@{stat.st_size}:{stat.st_mtime_ns}",
                "image_loader": lambda p=image: load_image(p),
            }
        )
    return rows


def _factory(benchmark_id: str) -> Callable[..., Benchmark]:
    def build(data: str | None = None, params: Mapping[str, Sequence[str]] | None = None) -> Benchmark:
        params = dict(params or {})
        subset = params.pop("subset", ["test"])
        layout = params.pop("fewshot", ["turns"])
        if params:
            raise BenchmarkError(
                f"{benchmark_id} has no parameter {', '.join(params)}; it has subset (test, fewshot) "
                "and fewshot (turns, authors)"
            )
        if len(subset) != 1 or subset[0] not in ("test", "fewshot"):
            raise BenchmarkError("--param subset= takes one of test, fewshot")
        if len(layout) != 1 or layout[0] not in LAYOUTS:
            raise BenchmarkError(f"--param fewshot= takes one of {', '.join(LAYOUTS)}")
        return IllusionVQA(benchmark_id, data, subset[0], layout[0])

    return build


for _id in HUB:
    register(_id)(_factory(_id))
