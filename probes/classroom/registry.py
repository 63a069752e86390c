"""The open classes of this server: a registry behind a lock, bounded in number, size and
lifetime, found by the class code (students joining) or by a token (everything after).

A class lives in the server's memory, never in a browser session: the teacher's token says who
the teacher is, wherever they reload from. A class belongs to whoever opened it (`Who`: their
session and address, where the caller says): one visitor and one address hold at most a few open
classes, so nobody can take every place on a server. A class ends `lifetime` seconds after it
opened, `empty_lifetime` after it opened if nobody joined, `grace` after its lesson ended (for the
results and the downloads), or when its teacher closes it: its tokens stop working and its answers
are gone, unless the teacher published them. Opening a class past the server's bound is refused
with the time until a place frees up.

Joining: a page (a session) holds one seat in a class, whatever it sends again; one address takes
at most `joins_per_address` seats of a class (a lecture hall behind one school router fits; one
script does not fill a class); an address that sends `failed_joins` wrong codes in
`failed_window` seconds is refused for the rest of that window. A code has CODE_LENGTH characters
of 31 (8.5e11 codes): at that throttle one address expects to hit one of 40 open classes' codes
after about 4,000 years of guessing.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from probes.classroom.room import ClassError, ClassRoom, Lesson, Who

# A code is read off a projector and typed on a phone: no 0/O, 1/I/L.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8  # 31**8 = 8.5e11 codes
MAX_ADDRESSES = 100_000  # addresses whose wrong codes are remembered; the quietest forgotten first


@dataclass(frozen=True)
class ClassBounds:
    max_classes: int = 40
    max_students: int = 500  # the seats a teacher may give a class
    max_items: int = 60
    lifetime: float = 4 * 3600.0  # seconds: a lesson, with room to spare
    max_seconds_per_item: float = 600.0
    empty_lifetime: float = 15 * 60.0  # a class nobody joined
    grace: float = 30 * 60.0  # after the lesson's end: time for its results and downloads
    per_visitor: int = 2  # open classes one session holds (where the caller names its owner)
    per_address: int = 6  # ... and one address (a school's teachers behind one router)
    joins_per_address: int = 400  # seats one address takes in one class
    failed_joins: int = 100  # wrong codes one address may send in failed_window
    failed_window: float = 600.0
    # Answers held in memory over every open class (~1.1 KB each: a graded result): 200,000 is
    # ~230 MB, a dozen full lecture halls; past it an answer is refused until a class ends.
    max_answers: int = 200_000


class Classes:
    def __init__(self, bounds: ClassBounds | None = None, clock: Callable[[], float] = time.monotonic):
        self.bounds = bounds or ClassBounds()
        self.clock = clock
        self._rooms: dict[str, ClassRoom] = {}  # by code
        self._tokens: dict[str, str] = {}  # any token (teacher's or a student's) -> code
        self._failed: OrderedDict[str, deque[float]] = OrderedDict()  # address -> times of its wrong codes
        self._answers = 0  # held by the open classes
        self._lock = threading.Lock()

    def open(self, lesson: Lesson, owner: Who | None = None, seats: int | None = None) -> ClassRoom:
        """A new class of `lesson`, held by `owner` (None: nobody's, no bound per visitor) with
        `seats` students at most (None: the bound)."""
        bounds = self.bounds
        if len(lesson.items) > bounds.max_items:
            raise ClassError(f"a class takes at most {bounds.max_items} items; {len(lesson.items)} asked")
        if lesson.seconds is not None and not 3 <= lesson.seconds <= bounds.max_seconds_per_item:
            raise ClassError(f"seconds per item: from 3 to {bounds.max_seconds_per_item:g}, or untimed")
        seats = bounds.max_students if seats is None else seats
        if not 1 <= seats <= bounds.max_students:
            raise ClassError(f"students in a class: from 1 to {bounds.max_students}")
        with self._lock:
            self._sweep()
            if owner is not None:
                self._check_owner(owner)
            if len(self._rooms) >= bounds.max_classes:
                minutes = max(1, round((min(map(self._ends_at, self._rooms.values())) - self.clock()) / 60))
                raise ClassError(
                    f"{bounds.max_classes} classes are open on this server; a place frees up in {minutes} minutes"
                )
            code = self._new_code()
            room = ClassRoom(code, lesson, seats, self.clock, owner=owner, allowance=self._take_answer)
            self._rooms[code] = room
            self._tokens[room.teacher_token] = code
            return room

    def _take_answer(self) -> None:
        with self._lock:
            if self._answers >= self.bounds.max_answers:
                raise ClassError("this server holds as many class answers as it can: try again when a class has ended")
            self._answers += 1

    def may_open(self, owner: Who) -> None:
        """Refuse `owner` now if they could not open a class (before its pictures are drawn)."""
        with self._lock:
            self._sweep()
            self._check_owner(owner)

    def _check_owner(self, owner: Who) -> None:
        """Refuse a visitor or an address already holding its share of open classes (under the lock)."""
        mine = [room for room in self._rooms.values() if room.owner is not None]
        if sum(room.owner.session == owner.session for room in mine) >= self.bounds.per_visitor:
            raise ClassError(
                f"you have {self.bounds.per_visitor} classes open already: close one (Close the class) "
                "before opening another"
            )
        if sum(room.owner.address == owner.address for room in mine) >= self.bounds.per_address:
            raise ClassError(
                f"{self.bounds.per_address} classes are open from your network already: close one before opening another"
            )

    def join(self, code: str, name: str | None, who: Who | None = None) -> tuple[ClassRoom, str]:
        """A seat in the class with `code` for `who` (their seat again if they hold one)."""
        if who is not None:
            self._check_failures(who.address)
        try:
            room = self.by_code(code)
        except ClassError:
            if who is not None:
                self._failure(who.address)
            raise
        student = room.join(name, who, self.bounds.joins_per_address)
        with self._lock:
            self._tokens[student.token] = room.code
        return room, student.token

    def _check_failures(self, address: str) -> None:
        with self._lock:
            failed = self._failed.get(address)
            if failed is None:
                return
            now = self.clock()
            while failed and failed[0] <= now - self.bounds.failed_window:
                failed.popleft()
            if len(failed) >= self.bounds.failed_joins:
                minutes = max(1, round((failed[0] + self.bounds.failed_window - now) / 60))
                raise ClassError(f"too many wrong class codes from your network: try again in {minutes} minutes")

    def _failure(self, address: str) -> None:
        with self._lock:
            failed = self._failed.pop(address, None) or deque()
            failed.append(self.clock())
            while len(failed) > self.bounds.failed_joins:
                failed.popleft()
            self._failed[address] = failed
            while len(self._failed) > MAX_ADDRESSES:
                self._failed.popitem(last=False)

    def by_code(self, code: str) -> ClassRoom:
        wanted = "".join((code if isinstance(code, str) else "").replace("-", " ").split()).upper()[: CODE_LENGTH + 4]
        with self._lock:
            self._sweep()
            room = self._rooms.get(wanted)
        if room is None:
            raise ClassError("no open class has this code: check it on the teacher's screen")
        return room

    def by_token(self, token: str) -> ClassRoom:
        with self._lock:
            self._sweep()
            code = self._tokens.get(token or "")
            room = self._rooms.get(code) if code else None
        if room is None:
            raise ClassError("this class is over or the link is not valid: join again with the class code")
        return room

    def close(self, token: str) -> None:
        """The teacher ends the class now: its tokens stop working and its place frees up."""
        room = self.by_token(token)
        room.check_teacher(token)
        with self._lock:
            self._drop(room.code)

    def __len__(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._rooms)

    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if code not in self._rooms:
                return code

    def _ends_at(self, room: ClassRoom) -> float:
        """When `room` expires: its lifetime, sooner if nobody joined or once its lesson ended."""
        ends = room.opened_at + self.bounds.lifetime
        if not room.students:
            ends = min(ends, room.opened_at + self.bounds.empty_lifetime)
        if room.ended_at is not None:
            ends = min(ends, room.ended_at + self.bounds.grace)
        return ends

    def _sweep(self) -> None:
        """Drop expired classes (called under the lock; at most max_classes to look at)."""
        now = self.clock()
        for code in [c for c, room in self._rooms.items() if now >= self._ends_at(room)]:
            self._drop(code)

    def _drop(self, code: str) -> None:
        room = self._rooms.pop(code, None)
        if room is None:
            return
        for token in [room.teacher_token, *room.students]:
            self._tokens.pop(token, None)
        self._answers -= room.answers
        room.changed()  # its pages learn that it is over
