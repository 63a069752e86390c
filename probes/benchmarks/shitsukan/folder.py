"""The texture folder both shitsukan tasks read, and what they share.

A folder holds `items.jsonl`, one JSON object per line, and the images it names:

    {"id": "ball", "image": "ball.png", "object": "ボール", "words": ["つやつや", "鮮やか"],
     "negatives": ["ざらざら"], "object_en": "ball", "words_en": ["glossy", "vivid"],
     "negatives_en": ["gritty"]}

- `image`: a file in the folder; `object`: the object's name, as the prompt names it;
- `words`: the texture words people validated for this object in this image (at least one; the
  paper keeps a word when 4 of 5 annotators accept it);
- `negatives` (optional): words known NOT to fit (the paper's rejected words); classification
  prefers them as distractors. None may also be one of `words`;
- `id` (optional): a stable name; by default `IMAGE#OBJECT`;
- `object_en`, `words_en`, `negatives_en` (optional, on every line or on none): English
  counterparts, position by position, asked under `--param lang=en`. Without them `lang=en`
  asks the words as written (data written in English to begin with).
Other fields are ignored (notes, glosses). An `examples.jsonl` of the same shape, if present,
is the few-shot pool; the paper itself is 0-shot.

Words are compared after `normalise_word` (NFKC, case folding, surrounding quotes and
punctuation dropped, spaces collapsed) and otherwise exactly, as the paper's match rate does:
つやつや and ツヤツヤ are different words.
"""

from __future__ import annotations

import re
import unicodedata
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from probes.benchmarks.custom import FolderError
from probes.benchmarks.shitsukan import SOURCE
from probes.core import truth
from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError
from probes.core.types import ImageSource, Item
from probes.files.images import ImageRejected, check_image_file, file_source
from probes.files.jsonl import problems, read_objects

SAMPLE_FOLDER = Path(__file__).resolve().parents[3] / "assets" / "samples" / "shitsukan"
LANGS = ("ja", "en")
ITEMS_FILE, EXAMPLES_FILE = "items.jsonl", "examples.jsonl"

# Said when a line is in the wrong shape, so the fix is in the message.
FORMAT_HINT = '{"image": "cat.png", "object": "猫", "words": ["ふわふわ"]}'

# The paper has no chain of thought; ours, in the prompt's language, ends on a line the shared
# parser reads ("答え：" is one of its answer markers).
COT_JA = (
    "答える前に、画像に見えるものについて一歩ずつ考えてください。そのうえで、最後の行に"
    "「答え：」に続けて、質問が求める形式で最終的な答えを書いてください。"
)


def normalise_word(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"\s+", " ", text)
    return text.strip(" \"'`「」『』()[]。、.,!?・")


@dataclass(frozen=True)
class Phrase:
    """A word (or object name) as written, with the record's English counterpart if any."""

    text: str
    en: str | None = None

    def in_lang(self, lang: str) -> str:
        return self.en if lang == "en" and self.en else self.text

    @property
    def keys(self) -> frozenset[str]:
        """Its normalised forms in both languages: two phrases sharing one are the same word."""
        return frozenset(normalise_word(t) for t in (self.text, self.en) if t)


@dataclass(frozen=True)
class Record:
    id: str
    line: int
    file: str  # items.jsonl or examples.jsonl, for messages
    image: ImageSource
    object: Phrase
    words: tuple[Phrase, ...]
    negatives: tuple[Phrase, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.file} line {self.line}"


def read_records(folder: Path, name: str) -> list[Record]:
    """Every record of `folder/name`, or one FolderError listing each problem by file and line."""
    path = folder / name
    errors: list[str] = []
    records: list[Record] = []
    seen: dict[str, int] = {}
    for number, record in _json_lines(path, errors):
        try:
            parsed = _record(folder, name, number, record)
        except FolderError as exc:
            errors.append(f"{name} line {number}: {exc}")
            continue
        if parsed.id in seen:
            errors.append(f"{name} line {number}: id {parsed.id!r} already used on line {seen[parsed.id]}")
            continue
        seen[parsed.id] = number
        records.append(parsed)
    errors += _english_consistency(records, name)
    if errors:
        raise FolderError(problems(folder, errors))
    if not records:
        raise FolderError(f"{path}: no records (one JSON object per line, e.g. {FORMAT_HINT})")
    return records


def _json_lines(path: Path, errors: list[str]) -> list[tuple[int, dict[str, Any]]]:
    try:
        return read_objects(path, errors, hint=FORMAT_HINT)
    except OSError as exc:
        raise FolderError(f"{path}: cannot be read ({exc.strerror})") from None


def _record(folder: Path, name: str, number: int, record: Mapping[str, Any]) -> Record:
    image_name = record.get("image")
    if not isinstance(image_name, str) or not image_name.strip():
        raise FolderError("`image` must name an image file in the folder")
    name_text = _text(record, "object")
    words = _words(record, "words", required=True)
    negatives = _words(record, "negatives", required=False)
    item_id = record.get("id", f"{image_name}#{name_text}")
    if not isinstance(item_id, (str, int)) or isinstance(item_id, bool) or str(item_id).strip() == "":
        raise FolderError("`id` must be a non-empty string or number")
    object_en = _text(record, "object_en") if "object_en" in record else None
    words_en = _words(record, "words_en", required=False, aligned=words) if "words_en" in record else None
    if (object_en is None) != (words_en is None):
        raise FolderError("give `object_en` and `words_en` together (or neither)")
    negatives_en = (
        _words(record, "negatives_en", required=False, aligned=negatives) if "negatives_en" in record else None
    )
    if words_en is not None and negatives and negatives_en is None:
        raise FolderError("`negatives_en` is missing: with `words_en`, every negative needs its English too")
    phrases = tuple(Phrase(w, words_en[i] if words_en else None) for i, w in enumerate(words))
    wrong = tuple(Phrase(w, negatives_en[i] if negatives_en else None) for i, w in enumerate(negatives))
    _check_distinct(phrases, "words")
    _check_distinct(wrong, "negatives")
    validated = frozenset().union(*(p.keys for p in phrases))
    clash = [p.text for p in wrong if p.keys & validated]
    if clash:
        raise FolderError(f"{clash[0]!r} is in both `words` and `negatives`")
    return Record(str(item_id).strip(), number, name, _image(folder, image_name), Phrase(name_text, object_en),
                  phrases, wrong)  # fmt: skip


def _text(record: Mapping[str, Any], field: str) -> str:
    value = record.get(field)
    if not isinstance(value, str) or not value.strip():
        raise FolderError(f"`{field}` must be a non-empty string")
    return value.strip()


def _words(record: Mapping[str, Any], field: str, required: bool, aligned: Sequence[str] | None = None) -> list[str]:
    value = record.get(field)
    if value is None and not required and aligned is None:
        return []
    if not isinstance(value, list) or not all(isinstance(w, str) and w.strip() for w in value):
        raise FolderError(f"`{field}` must be a list of non-empty strings")
    if required and not value:
        raise FolderError(f"`{field}` is empty: list at least one texture word validated for this object")
    if aligned is not None and len(value) != len(aligned):
        source = field.removesuffix("_en")
        raise FolderError(f"`{field}` has {len(value)} entries but `{source}` has {len(aligned)}; give one per word")
    return [w.strip() for w in value]


def _check_distinct(phrases: Sequence[Phrase], field: str) -> None:
    seen: set[str] = set()
    for phrase in phrases:
        if phrase.keys & seen:
            raise FolderError(f"`{field}` lists {phrase.text!r} twice (after normalisation)")
        seen |= phrase.keys


def _image(folder: Path, name: str) -> ImageSource:
    root = folder.resolve()
    path = (folder / name).resolve()
    if not path.is_relative_to(root):
        raise FolderError(f"image {name!r} is outside the folder")
    if not path.is_file():
        raise FolderError(f"image {name!r} not found in {folder}")
    try:
        check_image_file(path)
    except ImageRejected as exc:
        raise FolderError(f"image {exc}") from None
    return file_source(path)


def _english_consistency(records: Sequence[Record], name: str) -> list[str]:
    """English on some lines and not others would mix languages inside one English prompt."""
    with_en = [r for r in records if r.object.en is not None]
    if not with_en or len(with_en) == len(records):
        return []
    return [f"{name} line {r.line}: no `object_en`/`words_en`, which other lines give (give them on every line or none)"
            for r in records if r.object.en is None]  # fmt: skip


# --- what both tasks share --------------------------------------------------------------


class TextureBenchmark(Benchmark):
    """A folder read into records, asked in one or both languages; subclasses make the items."""

    source = SOURCE
    task_params: ClassVar[tuple[str, ...]] = ()  # parameters beyond lang and seed

    def __init__(self, data: str | None = None, params: Mapping[str, Sequence[str]] | None = None):
        super().__init__()
        params = dict(params or {})
        known = ("lang", "seed", *self.task_params)
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise BenchmarkError(f"{self.id} has no parameter {', '.join(unknown)}; it has {', '.join(known)}")
        self.folder = Path(data).expanduser() if data else SAMPLE_FOLDER
        self.langs = _langs(params.get("lang", ["ja"]))
        self.seed = _seed(params.get("seed", ["0"]))
        if not (self.folder / ITEMS_FILE).is_file():
            raise FolderError(
                f"{self.folder}: no {ITEMS_FILE} here. The texture data set is not public: give --data a folder "
                f"holding {ITEMS_FILE} (one line per image and object, e.g. {FORMAT_HINT}) and its images"
            )
        self._records: list[Record] | None = None

    def truth_under(self, item: Item, transform: str) -> Item:
        """Materials, states and impressions do not turn with the picture: upside down, mirrored
        or smaller, the words people validated stand. In grayscale, an item whose words or object name
        a colour (赤い, カラフル, "colourful") can no longer be judged: truth unknown."""
        if transform != "grayscale":
            return item
        words = [*item.options, *(item.target if isinstance(item.target, tuple | list) else ())]
        return truth.by_words(item, transform, [*words, str(item.params.get("object", ""))])

    def records(self) -> list[Record]:
        if self._records is None:
            self._records = read_records(self.folder, ITEMS_FILE)
        return self._records

    @abstractmethod
    def make_items(self, records: Sequence[Record], pool: Sequence[Record], prefix: str) -> list[Item]:
        """Items for `records` (ids start with `prefix`); `pool` is every record words may be drawn from."""

    def load_items(self) -> list[Item]:
        records = self.records()
        return self.make_items(records, records, prefix="")

    def load_examples(self) -> list[Item]:
        if not (self.folder / EXAMPLES_FILE).is_file():
            return []
        examples = read_records(self.folder, EXAMPLES_FILE)
        # Example distractors may come from the test records too: a handful of examples alone
        # would rarely hold enough words for 5 choices. The reverse never happens, so adding an
        # examples file leaves the test items unchanged.
        return self.make_items(examples, [*examples, *self.records()], prefix="example-")

    def select_examples(self, item: Item, k: int) -> list[Item]:
        """The first k examples asked like `item` (same language and, for choices, same N)."""
        if k and not (self.folder / EXAMPLES_FILE).is_file():
            raise FolderError(
                f"{self.id}: the paper is 0-shot and has no examples; for {k}-shot put an {EXAMPLES_FILE} "
                f"(same format as {ITEMS_FILE}) in {self.folder}"
            )
        images = {source.ref for source in item.images}
        same = [
            e for e in self.examples() if e.groups == item.groups and not images & {source.ref for source in e.images}
        ]
        if len(same) < k:
            raise FolderError(f"{self.id}: {EXAMPLES_FILE} has {len(same)} examples asked like {item.id}; {k} asked")
        return same[:k]

    def cot_instruction(self, item: Item) -> str:
        return COT_JA if item.params.get("lang") == "ja" else super().cot_instruction(item)

    def size_note(self) -> str:
        where = "sample" if self.folder == SAMPLE_FOLDER else str(self.folder)
        return f"{len(self.items())} items ({len(self.records())} records in {where})"


def _langs(values: Sequence[str]) -> tuple[str, ...]:
    langs = tuple(dict.fromkeys(v.strip() for v in values))
    wrong = [v for v in langs if v not in LANGS]
    if wrong or not langs:
        raise BenchmarkError(f"--param lang={','.join(values)}: choose from {', '.join(LANGS)}")
    return langs


def _seed(values: Sequence[str]) -> int:
    if len(values) != 1:
        raise BenchmarkError(f"--param seed takes one value, got {len(values)}; one seed is one set of items")
    try:
        return int(values[0])
    except ValueError:
        raise BenchmarkError(f"--param seed={values[0]}: not a whole number") from None
