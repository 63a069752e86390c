"""Draft the text of mined quadruples with a model, as drafts for a person to edit.

Source: DiscriBench (Muraoka & Okazaki, NLP2025; seed 003, section 2.2) drafted a situation, a
conversation, a question and an answer for each COCO quadruple with Claude 3.5 Sonnet, the
prompt telling the model to include two traits seen in the exam papers: C2, the conversation
holds details that mislead toward a wrong answer; C3, the clues to the right answer are spread
over the whole conversation. People then checked and fixed every draft: (a) the text and images
give one answer only, (b) the conversation does mislead, (c) the clues are spread out. The paper
prints only the prompt's first words ("You are an English teacher ..."); the prompt below is ours,
written to ask for exactly those traits, and asks for JSON so the reply can be read reliably.

A record drafted here gets `context` ("Situation: ...\\nConversation:\\nName: line ...", the
release's format; "状況：...\\n会話：\\n..." for Japanese), `question`, `answer`, and `draft: true`,
`draft_model`, `draft_status: "drafted"`: `run discribench --data` would run it, so a person
should check it and drop `draft`. A reply that cannot be read is recorded as a failed draft
(`draft_status: "failed"`, `draft_error`, `draft_reply` with the raw reply) and its text stays
empty: nothing is invented, and the benchmark keeps refusing that record until a person writes
it. Records that already hold text are never touched.

`ask(messages) -> str` is any model call: the caller builds it from a model id (the playground's
backends are async; the caller wraps them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from models.types import ImagePart, Message, Part, TextPart, user
from probes.files.images import ImageRejected, load_image
from probes.tools.embeddings import MiningError, Progress
from probes.tools.mining import LANGS, read_records, records_file, write_jsonl_atomic

Ask = Callable[[list[Message]], str]
MAX_REPLY_KEPT = 20_000  # characters of a failed reply kept for the person to read
MAX_CALL_FAILURES = 3  # model calls failing in a row (not unreadable replies): stop, something is wrong

INSTRUCTIONS = """You are an English teacher writing a listening question for a test in which the answer options are pictures.

The four pictures above (Image 1 to Image 4) look alike overall and differ in details.

Write:
1. "situation": one sentence saying who is talking and where.
2. "conversation": a natural conversation of 4 to 8 turns between two people.
   - The clues that single out the right picture are spread over several turns: no single turn gives the answer away.
   - The conversation also mentions details of a wrong picture, to mislead a careless listener toward it (for example a plan that is changed later, or something one speaker suggests and the other turns down).
   - A listener who follows the whole conversation can find exactly one right picture.
3. "question": one question whose answer is exactly one of the four pictures.
4. "answer": the number (1-4) of the right picture.
5. "misleading_toward": the number (1-4) of the wrong picture the conversation leads toward.
{language}
Reply with one JSON object and nothing else, in this shape:
{{"situation": "...", "conversation": [{{"speaker": "Emma", "line": "..."}}, {{"speaker": "Jack", "line": "..."}}], "question": "...", "answer": 2, "misleading_toward": 3}}"""

LANGUAGE_NOTE = {
    "en": "",
    "ja": "Write the situation, the conversation and the question in Japanese (keep the JSON keys in English).\n",
}
CONTEXT_LABELS = {"en": ("Situation: ", "Conversation:", ": "), "ja": ("状況：", "会話：", "：")}


class DraftError(ValueError):
    """A reply that cannot be read as a draft; the message says what is missing."""


@dataclass(frozen=True)
class Draft:
    context: str
    question: str
    answer: int
    misleads: int | None = None


@dataclass
class DraftReport:
    drafted: list[str] = field(default_factory=list)  # qids
    failed: dict[str, str] = field(default_factory=dict)  # qid -> why
    skipped: int = 0  # records that already hold text

    def lines(self) -> list[str]:
        lines = [f"{len(self.drafted)} drafted, {len(self.failed)} failed, {self.skipped} left as they were"]
        lines += [f"failed {qid}: {why}" for qid, why in list(self.failed.items())[:10]]
        return lines


def draft_messages(images: Sequence[Image.Image], lang: str = "en") -> list[Message]:
    """One user turn: the four images labelled as the benchmark labels them, then the instructions."""
    parts: list[Part | str] = []
    for number, image in enumerate(images, start=1):
        parts += [TextPart(("\n" if number > 1 else "") + f"Image {number}: "), ImagePart(image)]
    parts.append("\n" + INSTRUCTIONS.format(language=LANGUAGE_NOTE[lang]))
    return [user(*parts)]


def parse_draft(reply: str, lang: str = "en") -> Draft:
    """The draft in a reply: a JSON object (bare, fenced, or amid other text), or failing that
    "Situation: / Conversation: / Question: / Answer:" sections. Raises DraftError."""
    if not isinstance(reply, str) or not reply.strip():
        raise DraftError("the reply is empty")
    found = _json_object(reply)
    fields = found if found is not None else _labelled(reply)
    if fields is None:
        raise DraftError("no JSON object with situation, conversation, question and answer in the reply")
    situation = _text(fields.get("situation"), "situation")
    turns = _turns(fields.get("conversation"))
    question = _text(fields.get("question"), "question")
    answer = _number(fields.get("answer"), "answer")
    misleads = fields.get("misleading_toward")
    misleads = _number(misleads, "misleading_toward") if misleads not in (None, "") else None
    head, title, colon = CONTEXT_LABELS[lang]
    context = f"{head}{situation}\n{title}\n" + "\n".join(f"{who}{colon}{line}" for who, line in turns)
    return Draft(context, question, answer, misleads)


def draft_quadruple(images: Sequence[Image.Image], ask: Ask, lang: str = "en") -> tuple[Draft, str]:
    """Ask for one draft; (draft, raw reply). Raises DraftError for an unreadable reply."""
    reply = ask(draft_messages(images, lang))
    return parse_draft(reply, lang), reply


def draft_folder(
    folder: str | Path,
    ask: Ask,
    model: str,
    *,
    lang: str = "en",
    progress: Progress | None = None,
) -> DraftReport:
    """Draft every record of `folder`'s records file whose context and question are still empty
    (new, or a failed draft). The file is rewritten in one step after each record, so stopping
    midway keeps the drafts made so far."""
    if lang not in LANGS:
        raise MiningError(f"language {lang!r}: one of {', '.join(LANGS)}")
    root = Path(folder).expanduser()
    path = root / records_file(lang)
    if not path.is_file():
        raise MiningError(f"{root}: no {records_file(lang)}; mine a folder first")
    records = read_records(path)
    report = DraftReport()
    todo = [i for i, r in enumerate(records) if _unwritten(r)]
    report.skipped = len(records) - len(todo)
    call_failures = 0
    for done, index in enumerate(todo):
        if progress:
            progress(done, len(todo))
        record = records[index]
        qid = str(record.get("qid"))
        reply = None
        try:
            images = _images(root, record)
            reply = ask(draft_messages(images, lang))
            call_failures = 0
            draft = parse_draft(reply, lang)
        except (DraftError, MiningError) as exc:
            records[index] = _failed(record, model, str(exc), reply)
            report.failed[qid] = str(exc)
        except Exception as exc:  # noqa: BLE001 - whatever the model call raised: recorded, not invented
            call_failures += 1
            records[index] = _failed(record, model, f"the model call failed: {exc}", None)
            report.failed[qid] = f"the model call failed: {exc}"
            if call_failures >= MAX_CALL_FAILURES:
                write_jsonl_atomic(path, records)
                raise MiningError(
                    f"drafting with {model}: {call_failures} calls failed in a row, the last with: {exc}"
                ) from None
        else:
            records[index] = _drafted(record, model, draft)
            report.drafted.append(qid)
        write_jsonl_atomic(path, records)
    if progress:
        progress(len(todo), len(todo))
    return report


def _unwritten(record: dict[str, Any]) -> bool:
    return not _filled(record.get("context")) and not _filled(record.get("question"))


def _filled(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _images(root: Path, record: dict[str, Any]) -> list[Image.Image]:
    files = record.get("image_files")
    if not isinstance(files, list) or len(files) != 4 or not all(isinstance(f, str) for f in files):
        raise MiningError("`image_files` must name four images")
    resolved = root.resolve()
    images = []
    for name in files:
        path = (root / name).resolve()
        if not path.is_relative_to(resolved):
            raise MiningError(f"image {name!r} is outside the folder")
        try:
            images.append(load_image(path))
        except ImageRejected as exc:
            raise MiningError(f"image {name!r}: {exc}") from None
    return images


def _drafted(record: dict[str, Any], model: str, draft: Draft) -> dict[str, Any]:
    updated = {key: value for key, value in record.items() if not key.startswith("draft_") and key != "todo"}
    updated.update(
        context=draft.context,
        question=draft.question,
        answer=draft.answer,
        draft=True,
        draft_model=model,
        draft_status="drafted",
        todo=(
            "a model's draft: check that one picture alone fits, that the conversation misleads and spreads its "
            "clues, edit, then delete `draft`"
        ),
    )
    if draft.misleads is not None:
        updated["draft_misleads_toward"] = draft.misleads
    return updated


def _failed(record: dict[str, Any], model: str, error: str, reply: str | None) -> dict[str, Any]:
    updated = {key: value for key, value in record.items() if not key.startswith("draft_")}
    updated.update(draft=True, draft_model=model, draft_status="failed", draft_error=error)
    if reply is not None:
        updated["draft_reply"] = reply[:MAX_REPLY_KEPT]
    return updated


# --- reading a reply ----------------------------------------------------------------------------

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_SECTION = re.compile(
    r"(?:^|\n)\s*\**(Situation|Conversation|Question|Answer)\**\s*[:：]\s*(.*?)(?=\n\s*\**(?:Situation|Conversation"
    r"|Question|Answer)\**\s*[:：]|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_TURN = re.compile(r"^\s*[-*]?\s*\**([^:：\n]{1,40}?)\**\s*[:：]\s*(.+)$")


def _json_object(reply: str) -> dict[str, Any] | None:
    """The first JSON object in the reply that has the draft's keys."""
    texts = [m.group(1) for m in _FENCE.finditer(reply)] + [reply]
    decoder = json.JSONDecoder()
    for text in texts:
        for start in (m.start() for m in re.finditer(r"\{", text)):
            try:
                value, _ = decoder.raw_decode(text, start)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(value, dict) and {"situation", "conversation", "question"} <= set(value):
                return value
    return None


def _labelled(reply: str) -> dict[str, Any] | None:
    sections = {m.group(1).lower(): m.group(2).strip() for m in _SECTION.finditer(reply)}
    if not {"situation", "conversation", "question", "answer"} <= set(sections):
        return None
    sections["answer"] = sections["answer"].split("\n")[0]  # "Answer: 3" may be followed by a reason
    return sections


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DraftError(f"`{name}` is missing or empty")
    return " ".join(value.split())


def _turns(value: Any) -> list[tuple[str, str]]:
    """Conversation turns from a list of {speaker, line} objects, a list of "Name: line"
    strings, or one string of such lines."""
    if isinstance(value, str):
        value = [line for line in value.splitlines() if line.strip()]
    if not isinstance(value, list):
        raise DraftError("`conversation` must be a list of turns")
    turns = []
    for turn in value:
        if isinstance(turn, dict):
            speaker = turn.get("speaker") or turn.get("name") or turn.get("role")
            line = turn.get("line") or turn.get("text") or turn.get("utterance")
        elif isinstance(turn, str) and (match := _TURN.match(turn)):
            speaker, line = match.group(1), match.group(2)
        else:
            raise DraftError(f"a conversation turn is not 'Name: line': {str(turn)[:80]!r}")
        if not isinstance(speaker, str) or not speaker.strip() or not isinstance(line, str) or not line.strip():
            raise DraftError("a conversation turn lacks a speaker or a line")
        turns.append((" ".join(speaker.split()), " ".join(line.split())))
    if len(turns) < 2:
        raise DraftError(f"the conversation has {len(turns)} turn(s); it needs at least 2")
    return turns


def _number(value: Any, name: str) -> int:
    """1-4 from 3, "3", "Image 3", "3." ...; anything else is not an answer."""
    if isinstance(value, bool):
        raise DraftError(f"`{name}` must be a number from 1 to 4, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and (match := re.fullmatch(r"\s*(?:Image\s*|画像\s*)?([1-4])\s*\.?\s*", value, re.I)):
        number = int(match.group(1))
    else:
        raise DraftError(f"`{name}` must be a number from 1 to 4, got {str(value)[:40]!r}")
    if not 1 <= number <= 4:
        raise DraftError(f"`{name}` must be a number from 1 to 4, got {number}")
    return number
