"""A class is its opener's and bounded: one visitor (and one address) holds a few open classes and
can close them; a class nobody joined, or whose lesson ended, frees its place soon; a page holds one
seat, an address a share of a class; wrong codes are throttled per address. Without a browser."""

from __future__ import annotations

import pytest

from probes.classroom import ClassBounds, ClassError, Classes, Lesson, Pace, Who
from probes.classroom.registry import CODE_ALPHABET, CODE_LENGTH
from tests.probes.test_classroom import touching
from tests.support.clock import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


def lesson(pace: Pace = Pace.PACED, n: int = 2) -> Lesson:
    return Lesson(tuple(touching(n)), None, (), pace)


def test_one_visitor_and_one_address_hold_a_few_classes_and_free_them_by_closing(clock):
    classes = Classes(ClassBounds(per_visitor=2, per_address=5), clock=clock)
    hoarder = Who("hoarder", "203.0.113.1")
    held = []
    refused = None
    for _ in range(45):  # the attack: one session opening class after class
        try:
            held.append(classes.open(lesson(), hoarder))
        except ClassError as exc:
            refused = str(exc)
    assert len(held) == 2 and "you have 2 classes open already" in refused
    # Other sessions of the same address (a school's other teachers) share the address's five ...
    neighbours = [classes.open(lesson(), Who(f"teacher {n}", "203.0.113.1")) for n in range(3)]
    with pytest.raises(ClassError, match="5 classes are open from your network"):
        classes.open(lesson(), Who("teacher 9", "203.0.113.1"))
    # ... and a teacher elsewhere is never refused for them.
    elsewhere = classes.open(lesson(), Who("teacher", "198.51.100.7"))
    assert len(classes) == 6
    # Closing: only with the teacher's token; then every token of the class stops working.
    student = classes.join(held[0].code, "Ada", Who("phone", "192.0.2.5"))[1]
    with pytest.raises(ClassError, match="teacher"):
        classes.close(student)
    classes.close(held[0].teacher_token)
    for token in (held[0].teacher_token, student):
        with pytest.raises(ClassError, match="not valid"):
            classes.by_token(token)
    with pytest.raises(ClassError, match="no open class"):
        classes.by_code(held[0].code)
    assert classes.open(lesson(), hoarder).code not in {room.code for room in held}  # its place is back
    assert elsewhere.owner == Who("teacher", "198.51.100.7") and neighbours[0].owner.address == "203.0.113.1"


def test_a_class_nobody_joined_or_whose_lesson_ended_frees_its_place(clock):
    bounds = ClassBounds(max_classes=3, empty_lifetime=15 * 60, grace=30 * 60, lifetime=4 * 3600)
    classes = Classes(bounds, clock=clock)
    empty = classes.open(lesson())
    taught = classes.open(lesson(n=1))
    homework = classes.open(lesson(Pace.SELF, n=1))
    with pytest.raises(ClassError, match="a place frees up in 15 minutes"):
        classes.open(lesson())
    ada = classes.join(taught.code, "Ada")[1]
    bo = classes.join(homework.code, "Bo")[1]
    clock.now += 15 * 60
    with pytest.raises(ClassError, match="no open class"):
        classes.by_code(empty.code)  # nobody came: gone after 15 minutes
    assert classes.by_token(ada) is taught and classes.by_token(bo) is homework  # joined: they stay
    taught.next(taught.teacher_token)
    taught.answer(ada, "Yes")
    taught.next(taught.teacher_token)  # past the last item: the lesson has ended
    homework.answer(bo, "No")
    homework.reveal(homework.teacher_token)  # self-paced: the reveal ends the answering
    clock.now += 29 * 60
    assert classes.by_token(taught.teacher_token).class_results()  # results and downloads meanwhile
    assert len(classes) == 2
    clock.now += 60
    assert len(classes) == 0  # half an hour after the end, both places are free
    for token in (ada, taught.teacher_token, bo):
        with pytest.raises(ClassError, match="not valid"):
            classes.by_token(token)


def test_a_page_holds_one_seat_and_an_address_a_share_of_the_class(clock):
    classes = Classes(ClassBounds(max_students=50, joins_per_address=30), clock=clock)
    room = classes.open(lesson())
    script = Who("one session", "203.0.113.9")
    tokens = {classes.join(room.code, f"bot {n}", script)[1] for n in range(1_200)}
    assert len(tokens) == 1 and len(room.students) == 1  # 1,200 joins from one page: one seat
    # Fresh made-up sessions from one address take at most its share ...
    taken, refused = 1, None
    for n in range(100):
        try:
            classes.join(room.code, f"bot {n}", Who(f"made-up {n}", "203.0.113.9"))
            taken += 1
        except ClassError as exc:
            refused = str(exc)
    assert taken == 30 and "30 students from your network" in refused
    # ... and a real student from elsewhere still joins, under their own name.
    _, ada = classes.join(room.code, "Ada", Who("ada's phone", "192.0.2.44"))
    assert room.student(ada).name == "Ada" and len(room.students) == 31
    # The class's own size still holds for everyone.
    for n in range(19):
        classes.join(room.code, None, Who(f"phone {n}", f"192.0.2.{100 + n}"))
    with pytest.raises(ClassError, match="full"):
        classes.join(room.code, None, Who("late", "192.0.2.250"))


def test_the_teacher_chooses_the_size_of_the_class_within_the_bound(clock):
    classes = Classes(ClassBounds(max_students=500), clock=clock)
    small = classes.open(lesson(), seats=3)
    for n in range(3):
        classes.join(small.code, None, Who(f"p{n}", "192.0.2.1"))
    with pytest.raises(ClassError, match=r"full \(3 students\)"):
        classes.join(small.code, None, Who("p9", "192.0.2.1"))
    for seats in (0, 501):
        with pytest.raises(ClassError, match="from 1 to 500"):
            classes.open(lesson(), seats=seats)


def test_wrong_codes_are_throttled_per_address_and_codes_are_not_to_be_guessed(clock):
    bounds = ClassBounds(failed_joins=100, failed_window=600)
    classes = Classes(bounds, clock=clock)
    room = classes.open(lesson())
    guesser = Who("guesser", "203.0.113.50")
    hits = 0
    for n in range(100):
        guess = "".join(CODE_ALPHABET[(n * 7 + k) % len(CODE_ALPHABET)] for k in range(CODE_LENGTH))
        try:
            classes.join(guess, None, guesser)
            hits += guess == room.code
        except ClassError as exc:
            assert "no open class has this code" in str(exc)
    # The 101st try is refused whatever it says, the right code included ...
    with pytest.raises(ClassError, match="too many wrong class codes from your network: try again in 10 minutes"):
        classes.join(room.code, None, guesser)
    # ... while another address joins as usual, and the guesser again once the window has passed.
    classes.join(room.code, "Ada", Who("ada", "192.0.2.8"))
    clock.now += 601
    classes.join(room.code, None, guesser)
    assert hits == 0
    # What guessing would take at this throttle, with every place on the server taken.
    codes = len(CODE_ALPHABET) ** CODE_LENGTH
    guesses_per_year = bounds.failed_joins * (365 * 24 * 3600 / bounds.failed_window)
    assert codes / bounds.max_classes / guesses_per_year > 1e3  # years for one address to expect a hit


def test_codes_are_read_with_spaces_dashes_and_in_any_case(clock):
    classes = Classes(clock=clock)
    room = classes.open(lesson())
    shown = f"{room.code[:4].lower()}-{room.code[4:]} "
    assert classes.join(shown, "Ada")[0] is room and len(room.code) == CODE_LENGTH


def test_the_answers_held_in_memory_are_bounded_over_every_class(clock):
    classes = Classes(ClassBounds(max_answers=5), clock=clock)
    first, second = classes.open(lesson(n=3)), classes.open(lesson(n=3))
    students = [
        classes.join(room.code, None, Who(f"p{n}", "192.0.2.1"))[1] for room in (first, second) for n in range(3)
    ]
    for room in (first, second):
        room.next(room.teacher_token)
    taken = []
    for token in students:
        try:
            classes.by_token(token).answer(token, "Yes")
            taken.append(token)
        except ClassError as exc:
            assert "as many class answers as it can" in str(exc)
    assert len(taken) == 5
    classes.close(first.teacher_token)  # its three answers go with it: room again
    late = students[-1]
    assert classes.by_token(late).answer(late, "Yes")["received"]
