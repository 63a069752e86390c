"""One class in the room: a teacher, a set of items, students answering on their phones.

The teacher holds the class's token and moves it on (`next`, `reveal`); students hold their own
tokens and see one item at a time. Paced (the default): everyone is on the teacher's item, with
an optional countdown; nothing of the truth or the tally reaches a student before the teacher
reveals it. Self-paced (homework): each student walks through the items alone; the teacher
watches the tally fill and reveals when the class is done.

A student's answer is read and graded by the item's own benchmark (`probes.people.human`, as a
person's answer in the Human tab), so the class stands beside the models with no special case.
Answers that cannot be read are refused (the student can tap again), not counted; a second
answer to the same item, an answer after the item closed or after its countdown ran out, and any
token of another class are refused with the reason. The models' answers are given to the class
by its caller (from the cache, or asked live) with `set_model_answer`: this module asks nothing.

No Gradio and no clock of its own: time comes from `clock` (seconds, monotonic), so a test runs
a whole lesson without waiting.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from probes.classroom.changes import Changes
from probes.core.benchmark import Benchmark
from probes.core.errors import ProbeError
from probes.core.types import AnswerKind, Item, Result, Status
from probes.people.human import answer_result

MAX_NAME = 24
MAX_ANSWER = 64
# An answer sent in the last moment of a countdown travels a phone's network before it arrives:
# it still counts if it arrives within this many seconds after the countdown reached zero.
GRACE_SECONDS = 1.5


class ClassError(ProbeError):
    """Something a teacher or student asked that the class cannot do; the message says why."""


class Pace(StrEnum):
    PACED = "paced"  # the teacher moves everyone on
    SELF = "self-paced"  # each student on their own (homework)


class Phase(StrEnum):
    LOBBY = "lobby"  # open, no item shown yet
    OPEN = "open"  # an item is being answered (paced)
    REVEALED = "revealed"  # its truth and tally are shown (paced); self-paced: everything revealed
    FINISHED = "finished"


@dataclass(frozen=True)
class Who:
    """Who opens or joins a class, as the server saw them: a browser session and an address."""

    session: str
    address: str


@dataclass(frozen=True)
class Lesson:
    """What a class takes: items (each with the benchmark that reads its answers), seconds per
    item (None: untimed), the models shown beside the class, and the pace."""

    items: tuple[tuple[Benchmark, Item], ...]
    seconds: float | None = None
    models: tuple[str, ...] = ()
    pace: Pace = Pace.PACED
    title: str = ""


@dataclass
class Student:
    token: str
    name: str
    number: int  # the order of joining, from 1
    who: Who | None = None  # the page and address it joined from (None: a caller that named none)
    index: int = 0  # self-paced: the item this student is on
    shown_at: dict[int, float] = field(default_factory=dict)  # when each item was first shown to them
    answers: dict[int, Result] = field(default_factory=dict)


def clean_name(text: str | None, number: int) -> str:
    """A nickname as stored: letters, digits, spaces, - and _ (any script), at most MAX_NAME
    characters; an empty or unusable one becomes "student N"."""
    name = re.sub(r"[^\w \-]|_", " ", (text or "")[: 4 * MAX_NAME])
    name = re.sub(r"\s+", " ", name).strip()[:MAX_NAME].strip()
    return name or f"student {number}"


def new_token() -> str:
    return secrets.token_urlsafe(18)  # 144 bits: not to be guessed


class ClassRoom:
    def __init__(
        self,
        code: str,
        lesson: Lesson,
        max_students: int,
        clock: Callable[[], float] = time.monotonic,
        owner: Who | None = None,
        allowance: Callable[[], None] | None = None,
    ):
        if not lesson.items:
            raise ClassError("a class needs at least one item")
        self.code = code
        self.lesson = lesson
        self.teacher_token = new_token()
        self.max_students = max_students
        self.clock = clock
        self.opened_at = clock()
        self.owner = owner
        self.allowance = allowance  # called before an answer is kept: raises past the server's bound
        self.answers = 0  # kept, over every student
        self.ended_at: float | None = (
            None  # when the last item closed (paced) or the answers were revealed (self-paced)
        )
        self.phase = Phase.LOBBY if lesson.pace is Pace.PACED else Phase.OPEN
        self.index = 0  # paced: the item on screen
        self.deadline: float | None = None  # paced: when the item's countdown ends
        self.students: dict[str, Student] = {}
        self._seats: dict[str, Student] = {}  # by the session that joined
        self._per_address: Counter[str] = Counter()  # seats taken from each address
        self.model_answers: dict[tuple[str, int], Result | str] = {}  # a Result, or why there is none
        self.published = False
        # What pages are told without asking (probes/classroom/changes.py): `stage` moves when what
        # everyone sees changes (the item, the reveal, the end); `tally` moves with it and with every
        # join and answer (what the presenter counts).
        self.stage = Changes()
        self.tally = Changes()
        self._lock = threading.RLock()

    # --- who is who ---------------------------------------------------------------------------

    def is_teacher(self, token: str) -> bool:
        return secrets.compare_digest(token or "", self.teacher_token)

    def check_teacher(self, token: str) -> None:
        if not secrets.compare_digest(token or "", self.teacher_token):
            raise ClassError("only the teacher's browser can do that")

    def student(self, token: str) -> Student:
        found = self.students.get(token or "")
        if found is None:
            raise ClassError("this student is not in this class: join again with the class code")
        return found

    def join(self, name: str | None, who: Who | None = None, per_address: int | None = None) -> Student:
        """A seat for a new student, or the seat `who`'s page holds already (one page, one seat);
        an address takes at most `per_address` seats."""
        with self._lock:
            if self.phase is Phase.FINISHED:
                raise ClassError("this class has finished")
            if who is not None and who.session in self._seats:
                return self._seats[who.session]
            if len(self.students) >= self.max_students:
                raise ClassError(f"this class is full ({self.max_students} students)")
            if who is not None and per_address is not None and self._per_address[who.address] >= per_address:
                raise ClassError(f"this class has taken {per_address} students from your network, as many as it takes")
            number = len(self.students) + 1
            student = Student(new_token(), clean_name(name, number), number, who=who)
            self.students[student.token] = student
            self.tally.bump()
            if who is not None:
                self._seats[who.session] = student
                self._per_address[who.address] += 1
            return student

    # --- the teacher moves the class on -----------------------------------------------------

    def next(self, token: str) -> dict[str, Any]:
        self.check_teacher(token)
        with self._lock:
            if self.lesson.pace is Pace.SELF:
                raise ClassError("a self-paced class has no next: each student moves on alone")
            if self.phase is Phase.FINISHED:
                raise ClassError("this class has finished")
            if self.phase is not Phase.LOBBY:
                self.index += 1
            if self.index >= len(self.lesson.items):
                self._end()
            else:
                self.phase = Phase.OPEN
                seconds = self.lesson.seconds
                self.deadline = self.clock() + seconds if seconds else None
            self.changed()
            return self.status(token)

    def reveal(self, token: str) -> dict[str, Any]:
        """Paced: the item on screen's tally, truth and models; self-paced: every item's."""
        self.check_teacher(token)
        with self._lock:
            if self.lesson.pace is Pace.SELF:
                self.phase = Phase.REVEALED
                if self.ended_at is None:  # no more answers: the lesson is over
                    self.ended_at = self.clock()
                self.changed()
                return {"items": [self.item_tally(i) for i in range(len(self.lesson.items))]}
            if self.phase not in (Phase.OPEN, Phase.REVEALED):
                raise ClassError("there is no item on screen to reveal: press Next first")
            self.phase = Phase.REVEALED
            self.deadline = None
            self.changed()
            return self.item_tally(self.index)

    def finish(self, token: str) -> None:
        self.check_teacher(token)
        with self._lock:
            self._end()

    def _end(self) -> None:
        self.phase, self.deadline = Phase.FINISHED, None
        if self.ended_at is None:
            self.ended_at = self.clock()
        self.changed()

    def changed(self) -> None:
        """What everyone sees has changed (the class closed, too): every page is told."""
        self.stage.bump()
        self.tally.bump()

    # --- what everyone sees ---------------------------------------------------------------------

    def seconds_left(self, student: Student | None = None) -> float | None:
        seconds = self.lesson.seconds
        if not seconds:
            return None
        if self.lesson.pace is Pace.PACED:
            return None if self.deadline is None else max(0.0, self.deadline - self.clock())
        if student is None or student.index >= len(self.lesson.items):
            return None
        shown = student.shown_at.get(student.index)
        return seconds if shown is None else max(0.0, shown + seconds - self.clock())

    def status(self, token: str) -> dict[str, Any]:
        """The presenter's view: where the class is and how many have answered."""
        self.check_teacher(token)
        with self._lock:
            total = len(self.lesson.items)
            if self.lesson.pace is Pace.SELF:
                answered = sum(len(s.answers) for s in self.students.values())
                done = sum(1 for s in self.students.values() if s.index >= total)
                return {"code": self.code, "pace": self.lesson.pace.value, "phase": self.phase.value,
                        "items": total, "students": len(self.students), "answers": answered, "done": done}  # fmt: skip
            answered = sum(1 for s in self.students.values() if self.index in s.answers)
            return {
                "code": self.code, "pace": self.lesson.pace.value, "phase": self.phase.value,
                "index": self.index if self.phase is not Phase.LOBBY else None, "items": total,
                "students": len(self.students), "answered": answered, "seconds_left": self.seconds_left(),
            }  # fmt: skip

    def item_for(self, token: str) -> dict[str, Any]:
        """What a student's page shows: the item (never its truth or tally before the reveal)."""
        with self._lock:
            student = self.student(token)
            total = len(self.lesson.items)
            if self.lesson.pace is Pace.SELF:
                if student.index >= total:
                    state = Phase.REVEALED.value if self.phase is Phase.REVEALED else "done"
                    return {"state": state, "index": None, "items": total, "answered": len(student.answers)}
                index = student.index
                student.shown_at.setdefault(index, self.clock())
                state = "answering"
            else:
                if self.phase in (Phase.LOBBY, Phase.FINISHED):
                    return {"state": self.phase.value, "index": None, "items": total, "name": student.name}
                index = self.index
                if self.phase is Phase.REVEALED:
                    state = "revealed"
                elif index in student.answers:
                    state = "answered"
                elif self.seconds_left() == 0.0:
                    state = "closed"
                else:
                    state = "answering"
            benchmark, item = self.lesson.items[index]
            view = {
                "state": state, "index": index, "items": total, "name": student.name,
                "question": item.question,
                "options": list(item.options), "labels": item.labels if item.options else [],
                "kind": item.kind.value, "seconds_left": self.seconds_left(student),
                "answer": _shown(item, student.answers[index]) if index in student.answers else None,
            }  # fmt: skip
            if state == "revealed":
                view["truth"] = _truth(item)
                mine = student.answers.get(index)
                view["right"] = None if mine is None else mine.correct
            return view

    def image(self, token: str, index: int | None = None):
        """The picture of the item a student (or the teacher) is on, as PIL images."""
        with self._lock:
            if secrets.compare_digest(token or "", self.teacher_token):
                at = self.index if index is None else index
            else:
                student = self.student(token)
                at = student.index if self.lesson.pace is Pace.SELF else self.index
        if not 0 <= at < len(self.lesson.items):
            return []
        return [source.load() for source in self.lesson.items[at][1].images]

    # --- answers ------------------------------------------------------------------------------

    def answer(self, token: str, text: str) -> dict[str, Any]:
        with self._lock:
            student = self.student(token)
            text = (text or "").strip()
            if not text:
                raise ClassError("choose an answer first")
            if len(text) > MAX_ANSWER:
                raise ClassError(f"an answer has at most {MAX_ANSWER} characters")
            index = self._answerable(student)
            benchmark, item = self.lesson.items[index]
            seconds = self._seconds_taken(student, index)
            # Tagged with the class and the student's number (hex, as every person's tag is): two
            # students who type the same nickname never share (or, once published, overwrite)
            # each other's answers, nor do two classes.
            tag = hashlib.sha256(f"class {self.code} student {student.number}".encode()).hexdigest()[:12]
            result = answer_result(benchmark, item, text, student.name, seconds, tag=tag)
            if result.status is not Status.ANSWERED:
                raise ClassError("that answer could not be read: tap one of the answers")
            if self.allowance is not None:
                self.allowance()
            student.answers[index] = result
            self.answers += 1
            self.tally.bump()
            if self.lesson.pace is Pace.SELF:
                student.index = index + 1
            return {"received": True, "index": index, "answer": _shown(item, result)}

    def _answerable(self, student: Student) -> int:
        if self.phase is Phase.FINISHED:
            raise ClassError("this class has finished")
        if self.lesson.pace is Pace.SELF:
            if self.phase is Phase.REVEALED:
                raise ClassError("the answers have been revealed: no more answers")
            index = student.index
            if index >= len(self.lesson.items):
                raise ClassError("you have answered every item")
            shown = student.shown_at.get(index)
            if self.lesson.seconds and shown is not None and self.clock() > shown + self.lesson.seconds + GRACE_SECONDS:
                student.index = index + 1  # the time for this one is up: on to the next
                raise ClassError("too late: the time for that item ran out")
            return index
        if self.phase is Phase.LOBBY:
            raise ClassError("the class has not started yet")
        if self.phase is Phase.REVEALED:
            raise ClassError("too late: the answer has been revealed")
        if self.index in student.answers:
            raise ClassError("you have already answered this item")
        if self.deadline is not None and self.clock() > self.deadline + GRACE_SECONDS:
            raise ClassError("too late: the time for this item ran out")
        return self.index

    def _seconds_taken(self, student: Student, index: int) -> float:
        if self.lesson.pace is Pace.SELF:
            shown = student.shown_at.get(index, self.clock())
        else:
            shown = self.deadline - self.lesson.seconds if self.deadline and self.lesson.seconds else self.opened_at
        return max(0.0, self.clock() - shown)

    # --- models and tallies -------------------------------------------------------------------

    def set_model_answer(self, model: str, index: int, result: Result | str) -> None:
        """A model's answer to item `index` (a graded Result), or why it has none."""
        with self._lock:
            self.model_answers[(model, index)] = result

    def class_results(self) -> list[Result]:
        with self._lock:
            return [r for s in self.students.values() for r in s.answers.values()]

    def answers_by_who(self) -> list[tuple[Who | None, Result]]:
        """Every answer with the page and address its student joined from."""
        with self._lock:
            return [(s.who, r) for s in self.students.values() for r in s.answers.values()]

    def item_tally(self, index: int) -> dict[str, Any]:
        benchmark, item = self.lesson.items[index]
        answers = [s.answers[index] for s in self.students.values() if index in s.answers]
        counts = Counter(_shown(item, r) for r in answers)
        if item.options:  # every option, in the order shown, even those nobody chose
            order = [_shown_value(item, i) for i in range(len(item.options))]
            tally = [{"answer": a, "count": counts.get(a, 0)} for a in order]
        elif item.kind is AnswerKind.YES_NO:
            tally = [{"answer": a, "count": counts.get(a, 0)} for a in ("Yes", "No")]
        else:
            tally = [{"answer": a, "count": c} for a, c in sorted(counts.items(), key=_natural)]
        models = {}
        for model in self.lesson.models:
            found = self.model_answers.get((model, index))
            if isinstance(found, Result):
                models[model] = {"answer": _shown(item, found) if found.status is Status.ANSWERED else found.status.value,
                                 "correct": found.correct, "reply": found.reply or found.error or ""}  # fmt: skip
            else:
                models[model] = {"answer": None, "correct": None, "reply": found or "not asked yet"}
        right = sum(1 for r in answers if r.correct)
        return {"index": index, "truth": _truth(item), "tally": tally, "answered": len(answers), "right": right,
                "students": len(self.students), "models": models}  # fmt: skip


def _shown_value(item: Item, value: Any) -> str:
    """An answer as the class sees it: the option's label and text, Yes/No, a number."""
    if item.kind is AnswerKind.CHOICE and isinstance(value, int) and 0 <= value < len(item.options):
        return f"{item.labels[value]}. {item.options[value]}"
    if item.kind is AnswerKind.YES_NO:
        return "Yes" if value == "yes" else "No"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


def _shown(item: Item, result: Result) -> str:
    return _shown_value(item, result.parsed)


def _truth(item: Item) -> str | None:
    if item.target is None:
        return None
    target = list(item.target) if item.kind is AnswerKind.PAIR else item.target
    return _shown_value(item, target)


def _natural(pair: tuple[str, int]) -> tuple:
    text = pair[0]
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def tally_total(tally: Sequence[dict[str, Any]]) -> int:
    return sum(entry["count"] for entry in tally)
