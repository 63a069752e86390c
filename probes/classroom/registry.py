"""The open classes of this server: a registry behind a lock, bounded in number, size and
lifetime, found by the class code (students joining) or by a token (everything after).

A class lives in the server's memory, never in a browser session: the teacher's token says who
the teacher is, wherever they reload from. A class expires `lifetime` seconds after it opened
(its tokens stop working and its answers are gone, unless the teacher published them), and the
registry holds at most `max_classes` classes: opening one more is refused with the time until a
place frees up.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from probes.classroom.room import ClassError, ClassRoom, Lesson

# A code is read off a projector and typed on a phone: no 0/O, 1/I/L.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


@dataclass(frozen=True)
class ClassBounds:
    max_classes: int = 40
    max_students: int = 120
    max_items: int = 60
    lifetime: float = 4 * 3600.0  # seconds: a lesson, with room to spare
    max_seconds_per_item: float = 600.0


class Classes:
    def __init__(self, bounds: ClassBounds | None = None, clock: Callable[[], float] = time.monotonic):
        self.bounds = bounds or ClassBounds()
        self.clock = clock
        self._rooms: dict[str, ClassRoom] = {}  # by code
        self._tokens: dict[str, str] = {}  # any token (teacher's or a student's) -> code
        self._lock = threading.Lock()

    def open(self, lesson: Lesson) -> ClassRoom:
        bounds = self.bounds
        if len(lesson.items) > bounds.max_items:
            raise ClassError(f"a class takes at most {bounds.max_items} items; {len(lesson.items)} asked")
        if lesson.seconds is not None and not 3 <= lesson.seconds <= bounds.max_seconds_per_item:
            raise ClassError(f"seconds per item: from 3 to {bounds.max_seconds_per_item:g}, or untimed")
        with self._lock:
            self._sweep()
            if len(self._rooms) >= bounds.max_classes:
                oldest = min(room.opened_at for room in self._rooms.values())
                minutes = max(1, round((oldest + bounds.lifetime - self.clock()) / 60))
                raise ClassError(
                    f"{bounds.max_classes} classes are open on this server; a place frees up in {minutes} minutes"
                )
            code = self._new_code()
            room = ClassRoom(code, lesson, bounds.max_students, self.clock)
            self._rooms[code] = room
            self._tokens[room.teacher_token] = code
            return room

    def join(self, code: str, name: str | None) -> tuple[ClassRoom, str]:
        room = self.by_code(code)
        student = room.join(name)
        with self._lock:
            self._tokens[student.token] = room.code
        return room, student.token

    def by_code(self, code: str) -> ClassRoom:
        wanted = "".join((code or "").split()).upper()[: CODE_LENGTH + 4]
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

    def _sweep(self) -> None:
        """Drop expired classes (called under the lock; at most max_classes to look at)."""
        now = self.clock()
        for code in [c for c, room in self._rooms.items() if now - room.opened_at > self.bounds.lifetime]:
            self._drop(code)

    def _drop(self, code: str) -> None:
        room = self._rooms.pop(code, None)
        if room is None:
            return
        for token in [room.teacher_token, *room.students]:
            self._tokens.pop(token, None)
