"""`custom:PATH`: a user's own folder of questions, probed like any benchmark; or a folder
`generate` wrote (in any format: it holds `probe_set.json`), which asks exactly its set as the
benchmark's own items (`probes.files.set_folder`).

The folder holds `items.jsonl`, one JSON object per line, and the image files it names:

    {"id": "q1", "image": "cat.png", "question": "What animal is this?",
     "options": ["dog", "cat", "cow"], "answer": "cat", "category": "animals"}

- `image` (one file) or `images` (a list), paths relative to the folder;
- `options` (optional): multiple choice, asked as `a. dog` lines; `answer` is the option's text
  or its letter;
- without options, the answer's shape sets how replies are read: "yes"/"no" -> yes/no, a whole
  number -> number, [rows, cols] -> pair, anything else -> short text compared after
  normalisation. A `kind` field (number, yes/no, letter, pair, text) overrides the guess;
- `category` (optional) becomes a scoreboard group.

Limits, the same for uploads and imports (`probes/files/jsonl.py`): a line up to 2 MB, a question up to
20,000 characters, an option up to 2,000. Images (`probes/files/images.py`): PNG, JPEG, GIF, WEBP, BMP
or TIFF, up to 50 MB and 40 million pixels, inside the folder (a symbolic link out of it is
refused); an animated or multi-page file gives its first frame, and `notes` says so.

An `examples.jsonl` in the same shape, if present, is the few-shot pool. baseline/chance guesses
uniformly among the options or, for short answers, among answers of the item's own kind
(`with_answer_spaces`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from probes.core.benchmark import Benchmark
from probes.core.errors import BenchmarkError
from probes.core.registry import register_prefix
from probes.core.types import AnswerKind, ImageSource, Item, option_labels
from probes.files.file_identity import ByIdentity, identity_of
from probes.files.images import ImageInfo, ImageRejected, check_image_file, file_source, load_image
from probes.files.jsonl import MAX_OPTION_CHARS, MAX_QUESTION_CHARS, is_text, problems, read_objects, too_long
from probes.files.set_folder import is_set_folder, open_set

_KINDS = {k.value: k for k in AnswerKind if k not in (AnswerKind.CHOICE, AnswerKind.WORDS)}


class FolderError(BenchmarkError):
    """The folder's files are not in the expected shape; the message names file and line."""


class CustomFolder(Benchmark):
    title = "Your own folder"
    source = "user data"

    def __init__(self, folder: str):
        super().__init__()
        self.folder = Path(folder).expanduser()
        self.id = f"custom:{folder}"
        self.notes: list[str] = []  # what a user should know about accepted images (animated, tiny)
        if not (self.folder / "items.jsonl").is_file():
            raise FolderError(
                f"{self.folder}: no items.jsonl here, nor a set generate wrote (probe_set.json) "
                "(see `python -m probes list` for the format)"
            )

    def load_items(self) -> list[Item]:
        return self._read("items.jsonl")

    def load_examples(self) -> list[Item]:
        if not (self.folder / "examples.jsonl").is_file():
            return []
        return self._read("examples.jsonl")

    def select_examples(self, item: Item, k: int) -> list[Item]:
        if k and not self.examples():
            raise FolderError(f"{self.folder}: few-shot needs an examples.jsonl (same format as items.jsonl)")
        return super().select_examples(item, k)

    def _read(self, name: str) -> list[Item]:
        path = self.folder / name
        errors: list[str] = []
        try:
            records = read_objects(path, errors)
        except OSError as exc:
            raise FolderError(f"{path}: cannot be read ({exc.strerror})") from None
        seen: set[str] = set()
        items: list[Item] = []
        for number, record in records:
            try:
                item = self._item(record)
            except FolderError as exc:
                errors.append(f"{name} line {number}: {exc}")
                continue
            if item.id in seen:
                errors.append(f"{name} line {number}: id {item.id!r} appears twice")
                continue
            seen.add(item.id)
            items.append(item)
        if errors:
            raise FolderError(problems(self.folder, errors))
        if not items:
            raise FolderError(f"{path}: no items")
        return with_answer_spaces(items)

    def _item(self, record: Mapping[str, Any]) -> Item:
        return item_from_record(self.id, record, self._images(record))

    def _images(self, record: Mapping[str, Any]) -> tuple[ImageSource, ...]:
        if "image" in record and "images" in record:
            raise FolderError("give `image` or `images`, not both")
        names = [record["image"]] if "image" in record else record.get("images")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            raise FolderError("`image` must be a file name, or `images` a list of file names")
        sources = []
        root = self.folder.resolve()
        for name in names:
            try:
                # resolve() follows symbolic links, so a link to a file elsewhere is outside too.
                path = (self.folder / name).resolve()
                outside, found = not path.is_relative_to(root), path.is_file()
            except (OSError, ValueError) as exc:  # a NUL byte, a name too long, a loop of links
                reason = getattr(exc, "strerror", None) or exc  # not the OSError's copy of the whole path
                raise FolderError(f"image {name!r} is not a usable file name ({reason})") from None
            if outside:
                raise FolderError(f"image {name!r} is outside the folder")
            if not found:
                raise FolderError(f"image {name!r} not found in {self.folder}")
            try:
                # The header now (type, size, pixel count, frames, a PNG cut short); the rest of
                # the structure when the image is first decoded, as that item's error if it fails.
                info = check_image_file(path, verify=False)
            except ImageRejected as exc:
                raise FolderError(f"image {exc}") from None
            self.notes += [note for note in info.notes(name) if note not in self.notes]
            sources.append(file_source(path))
        return tuple(sources)


MAX_NUMBER_SPAN = 1000  # a contiguous range of whole numbers longer than this is not a guess anyone makes


def with_answer_spaces(items: Sequence[Item]) -> list[Item]:
    """Each item with the answers baseline/chance guesses among, drawn from its OWN kind only
    (a yes/no item is never answered with a number): choices -> its option labels; yes/no ->
    Yes, No; numbers -> every whole number from the smallest to the largest answer of the
    folder's number items (0 to twice the answer when they all agree; the distinct answers
    themselves when the span is over MAX_NUMBER_SPAN); letters, pairs and text -> the distinct
    answers of the folder's items of that kind (a to z for letters when fewer than two)."""
    by_kind: dict[AnswerKind, dict[str, None]] = {}
    for item in items:
        by_kind.setdefault(item.kind, {}).setdefault(item.target_text())
    spaces: dict[AnswerKind, tuple[str, ...]] = {AnswerKind.YES_NO: ("Yes", "No")}
    numbers = sorted({item.target for item in items if item.kind is AnswerKind.NUMBER})
    if numbers:
        only = numbers[0]
        low, high = (numbers[0], numbers[-1]) if len(numbers) > 1 else (min(0, 2 * only), max(1, 2 * only))
        span = range(low, high + 1)
        spaces[AnswerKind.NUMBER] = tuple(map(str, span)) if len(span) <= MAX_NUMBER_SPAN else tuple(map(str, numbers))
    letters = tuple(sorted(by_kind.get(AnswerKind.LETTER, {})))
    spaces[AnswerKind.LETTER] = letters if len(letters) > 1 else tuple(option_labels(26))
    for kind in (AnswerKind.PAIR, AnswerKind.TEXT):
        spaces[kind] = tuple(sorted(by_kind.get(kind, {})))
    return [
        item if item.options or item.answer_space else item.with_changes(answer_space=spaces.get(item.kind, ()))
        for item in items
    ]


def item_from_record(benchmark_id: str, record: Mapping[str, Any], images: tuple[ImageSource, ...]) -> Item:
    """An item from one record of the items.jsonl format (the images already checked)."""
    item_id = record.get("id")
    if not isinstance(item_id, (str, int)) or isinstance(item_id, bool) or str(item_id) == "":
        raise FolderError("`id` must be a non-empty string or number")
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise FolderError("`question` must be a non-empty string")
    if problem := too_long("question", question, MAX_QUESTION_CHARS):
        raise FolderError(problem)
    options = record.get("options")
    category = record.get("category")
    groups = {"category": str(category)} if category not in (None, "") else {}
    common = dict(benchmark=benchmark_id, id=str(item_id), question=question, images=images, groups=groups)
    if "answer" not in record:
        raise FolderError("`answer` is missing")
    answer = record["answer"]
    if options is not None:
        if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) and o for o in options):
            raise FolderError("`options` must be a list of at least two non-empty strings")
        if len(options) > 26:
            raise FolderError("`options` can hold at most 26 choices")
        for index, option in enumerate(options):
            if problem := too_long(f"options[{index}]", option, MAX_OPTION_CHARS):
                raise FolderError(problem)
        return Item(kind=AnswerKind.CHOICE, options=tuple(options), target=_option_index(answer, options), **common)
    kind, target = _short_answer(answer, record.get("kind"))
    return Item(kind=kind, target=target, **common)


class UploadSet(Benchmark):
    """Images a visitor uploaded with their own question: one item, probed like any other."""

    id = "upload"
    title = "Your upload"
    source = "user data"
    cache_images = False  # uploads are deleted after an hour: no encoded copy is kept beside the store

    def __init__(self, item: Item, notes: Sequence[str] = ()):
        super().__init__()
        self._item = item
        self.notes = list(notes)  # what the visitor should know about the images (animated, tiny)

    @classmethod
    def from_files(cls, paths: Sequence[Path], question: str, options: Sequence[str], answer: str) -> UploadSet:
        """Checks every file (type, size, pixel count, structure) before anything decodes it,
        then decodes it, both in a worker process within bounds (`probes.files.decoding`):
        uploads are few and a visitor is waiting, so a damaged file is named now, not when a
        model is asked. A file done so before is not done again. `notes` then says what the
        visitor should know (animated, tiny)."""
        if not paths:
            raise FolderError("upload at least one image")
        for label, text in (("question", question), ("answer", answer), *(("option", o) for o in options)):
            if not is_text(text):  # a lone surrogate from the browser: the store could not save it
                raise FolderError(f"the {label} is not valid UTF-8 text")
        sources, notes = [], []
        for path in map(Path, paths):
            try:
                info, content = _validated_upload(path)
            except ImageRejected as exc:
                raise FolderError(f"image {exc}") from None
            except OSError as exc:  # removed or made unreadable between the check and the read
                raise FolderError(f"image {path.name}: cannot be read ({exc.strerror})") from None
            notes += [note for note in info.notes(path.name) if note not in notes]
            sources.append(ImageSource(f"upload:{content}", lambda p=path: load_image(p)))
        record: dict[str, Any] = {"id": "upload-" + "-".join(s.ref[7:15] for s in sources), "question": question}
        if options:
            record["options"] = list(options)
        if answer.strip():
            record["answer"] = answer.strip()
            item = item_from_record(cls.id, record, tuple(sources))
        else:  # no answer given: the reply is shown and parsed as free text, not graded
            record["answer"] = "?"
            item = item_from_record(
                cls.id, {**record, "kind": "text"} if not options else {**record, "answer": "a"}, tuple(sources)
            )
            item = item.with_changes(target=None, ungraded_because="no answer given: shown, not graded")
        return cls(item, notes)

    def load_items(self) -> list[Item]:
        return [self._item]


# Uploads checked and decoded once in this process, with their content hash, by the version of
# the file (`file_identity`). Every event that uses the stage's item builds its upload again
# (`from_files`), some on the server's event loop: a file seen before costs a stat there, not a
# decode in a worker and a hash of its bytes. A file written again is a new version.
_validated: ByIdentity[tuple[ImageInfo, str]] = ByIdentity(1024)


def _validated_upload(path: Path) -> tuple[ImageInfo, str]:
    try:
        identity = identity_of(path.stat())
    except (OSError, ValueError):  # not there, a NUL byte ...: the check names what is wrong
        identity = None
    known = _validated.get(path, identity) if identity is not None else None
    if known is not None:
        return known
    info = check_image_file(path)
    load_image(path)  # a damaged file is named now, while the visitor is there to hear it
    content = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return _validated.put(path, identity, (info, content)) if identity is not None else (info, content)


def _option_index(answer: Any, options: Sequence[str]) -> int:
    if isinstance(answer, str):
        if answer in options:
            return options.index(answer)
        stripped = answer.strip().lower().rstrip(".)")
        labels = option_labels(len(options))
        if stripped in labels:
            return labels.index(stripped)
        folded = [o.strip().casefold() for o in options]
        if answer.strip().casefold() in folded:
            return folded.index(answer.strip().casefold())
    raise FolderError(f"answer {answer!r} is not one of the options (give the option's text or its letter)")


def _short_answer(answer: Any, kind_name: Any) -> tuple[AnswerKind, Any]:
    if kind_name is not None:
        if kind_name not in _KINDS:
            raise FolderError(f"`kind` must be one of {', '.join(_KINDS)}; got {kind_name!r}")
        kind = _KINDS[kind_name]
    elif isinstance(answer, bool) or (isinstance(answer, str) and answer.strip().lower() in ("yes", "no")):
        kind = AnswerKind.YES_NO
    elif isinstance(answer, int) or (isinstance(answer, str) and answer.strip().isdigit()):
        kind = AnswerKind.NUMBER
    elif isinstance(answer, list) and len(answer) == 2:
        kind = AnswerKind.PAIR
    else:
        kind = AnswerKind.TEXT
    try:
        if kind is AnswerKind.YES_NO:
            value = answer if isinstance(answer, bool) else {"yes": True, "no": False}[str(answer).strip().lower()]
            return kind, "yes" if value else "no"
        if kind is AnswerKind.NUMBER:
            if isinstance(answer, bool):
                raise ValueError
            return kind, int(str(answer).strip())
        if kind is AnswerKind.PAIR:
            rows, columns = (int(v) for v in answer)
            return kind, (rows, columns)
        if kind is AnswerKind.LETTER:
            if not (isinstance(answer, str) and len(answer.strip()) == 1):
                raise ValueError
            return kind, answer.strip()
    except (ValueError, TypeError, KeyError, OverflowError):  # OverflowError: [1e400, 2] as a pair
        raise FolderError(f"answer {answer!r} does not fit kind {kind.value}") from None
    if not isinstance(answer, (str, int, float)) or not str(answer).strip():
        raise FolderError(f"answer {answer!r} must be a non-empty string")
    return kind, str(answer).strip()


def folder_benchmark(path: str) -> Benchmark:
    """`custom:PATH`: the set a folder `generate` wrote holds (its benchmark, holding exactly
    those items), else the folder's own items.jsonl."""
    found = open_set(Path(path).expanduser())
    return found if found is not None else CustomFolder(path)


def folder_id(text: str) -> str | None:
    """`custom:TEXT` where TEXT names a folder that can be run (a set generate wrote, or one of
    your own: it holds probe_set.json or items.jsonl), else None. For the command line's
    `run PATH`: the playground never reads a path given as a benchmark id."""
    try:
        folder = Path(text).expanduser()
        found = folder.is_dir() and (is_set_folder(folder) or (folder / "items.jsonl").is_file())
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a name too long, ~nobody
        return None
    return f"custom:{text}" if found else None


register_prefix("custom:", folder_benchmark, "custom:PATH for your own folder or a set generate wrote")
