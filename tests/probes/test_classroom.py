"""The classroom's logic without a browser: a teacher opens a class, students join and answer, the
reveal tallies what they answered, nothing of the truth reaches a student before it, refusals
for everything a class must not take, and the end of the lesson's numbers and curve."""

from __future__ import annotations

import math
import random

import pytest

from probes.classroom import ClassBounds, ClassError, Classes, Lesson, Pace, answers_table, lesson_results
from probes.core.registry import get_benchmark
from probes.core.types import Condition, ItemRef, Mode
from probes.reading.grading import grade_reply
from tests.support.clock import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


def touching(n: int = 3):
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"], "gap": ["-0.1", "0.2"]})
    return [(benchmark, item) for item in benchmark.items()[:n]]


def open_class(clock, items=None, seconds=20.0, pace=Pace.PACED, models=(), bounds=None):
    classes = Classes(bounds, clock=clock)
    room = classes.open(Lesson(tuple(items or touching()), seconds, tuple(models), pace))
    return classes, room


def test_a_paced_lesson_tallies_what_the_students_tapped_and_hides_the_truth_until_the_reveal(clock):
    classes, room = open_class(clock, models=("baseline/pixels",))
    teacher = room.teacher_token
    tokens = [classes.join(room.code.lower(), name)[1] for name in ("Ada", "Bo", "Cy")]  # codes read in any case
    assert classes.by_token(tokens[0]) is room and room.item_for(tokens[0])["state"] == "lobby"
    room.next(teacher)
    benchmark, item = room.lesson.items[0]
    view = room.item_for(tokens[0])
    assert view["state"] == "answering" and view["question"] == item.question and view["seconds_left"] == 20.0
    assert "truth" not in view and "tally" not in view and "right" not in view
    tapped = ["Yes", "No", "Yes"]
    for token, answer in zip(tokens, tapped, strict=True):
        assert room.answer(token, answer)["received"]
    assert room.item_for(tokens[0])["state"] == "answered" and "truth" not in room.item_for(tokens[0])
    assert room.status(teacher)["answered"] == 3
    model = grade_reply(benchmark, item, "Yes", "baseline/pixels", Condition(Mode()), ItemRef.of(item))
    room.set_model_answer("baseline/pixels", 0, model)
    shown = room.reveal(teacher)
    assert {t["answer"]: t["count"] for t in shown["tally"]} == {"Yes": 2, "No": 1}
    assert shown["truth"] == item.target_text() and shown["models"]["baseline/pixels"]["answer"] == "Yes"
    after = room.item_for(tokens[1])
    assert after["state"] == "revealed" and after["truth"] == item.target_text()
    assert after["right"] == (item.target_text() == "No")


def test_refusals_count_nothing_twice(clock):
    classes, room = open_class(clock)
    teacher = room.teacher_token
    _, student = classes.join(room.code, "Ada")
    with pytest.raises(ClassError, match="not started"):
        room.answer(student, "Yes")
    room.next(teacher)
    with pytest.raises(ClassError, match="could not be read"):
        room.answer(student, "perhaps")
    room.answer(student, "Yes")
    with pytest.raises(ClassError, match="already answered"):
        room.answer(student, "No")
    # A student's token is not the teacher's.
    for act in (room.next, room.reveal, room.status, room.finish):
        with pytest.raises(ClassError, match="teacher"):
            act(student)
    with pytest.raises(ClassError, match="not valid"):
        classes.by_token("forged-token")
    with pytest.raises(ClassError, match="no open class"):
        classes.join("ZZZZZZ", "Bo")
    room.next(teacher)  # item 1: a countdown of 20 s
    _, late = classes.join(room.code, "Cy")
    clock.now += 20 + 2
    assert room.item_for(late)["state"] == "closed"
    with pytest.raises(ClassError, match="too late"):
        room.answer(late, "Yes")
    room.reveal(teacher)
    with pytest.raises(ClassError, match="revealed"):
        room.answer(student, "Yes")
    assert [len(s.answers) for s in room.students.values()] == [1, 0]
    assert room.item_tally(1)["answered"] == 0


def test_an_answer_in_the_last_moment_still_counts(clock):
    classes, room = open_class(clock, seconds=10)
    _, student = classes.join(room.code, "Ada")
    room.next(room.teacher_token)
    clock.now += 10.5  # arrived just after zero: within the grace a phone's network needs
    assert room.answer(student, "No")["received"]


def test_names_are_cleaned_bounded_and_never_shared(clock):
    classes, room = open_class(clock)
    _, a = classes.join(room.code, "<img src=x onerror=alert(1)>")
    _, b = classes.join(room.code, "")
    _, c = classes.join(room.code, "Ada " * 40)
    names = [room.student(t).name for t in (a, b, c)]
    assert "<" not in names[0] and ">" not in names[0] and names[1] == "student 2" and len(names[2]) <= 24
    room.next(room.teacher_token)
    _, d = classes.join(room.code, "Ada")
    _, e = classes.join(room.code, "Ada")
    room.answer(d, "Yes")
    room.answer(e, "No")
    models = {r.model for r in room.class_results()}
    assert len(models) == 2  # same nickname, two students: two model ids


def test_bounds_on_classes_students_items_and_time(clock):
    bounds = ClassBounds(max_classes=2, max_students=2, max_items=3, lifetime=3600)
    classes = Classes(bounds, clock=clock)
    first = classes.open(Lesson(tuple(touching())))
    classes.open(Lesson(tuple(touching())))
    with pytest.raises(ClassError, match="classes are open"):
        classes.open(Lesson(tuple(touching())))
    with pytest.raises(ClassError, match="at most 3 items"):
        Classes(bounds, clock=clock).open(Lesson(tuple(touching(4))))
    with pytest.raises(ClassError, match="seconds per item"):
        Classes(bounds, clock=clock).open(Lesson(tuple(touching()), seconds=1))
    classes.join(first.code, "a")
    classes.join(first.code, "b")
    with pytest.raises(ClassError, match="full"):
        classes.join(first.code, "c")
    clock.now += 3601  # expired: its tokens stop working and its place frees up
    with pytest.raises(ClassError, match="no open class"):
        classes.join(first.code, "d")
    with pytest.raises(ClassError, match="not valid"):
        classes.by_token(first.teacher_token)
    assert len(classes) == 0
    classes.open(Lesson(tuple(touching())))


def test_one_class_never_sees_another_s_students(clock):
    classes = Classes(clock=clock)
    one = classes.open(Lesson(tuple(touching())))
    two = classes.open(Lesson(tuple(touching())))
    _, student = classes.join(one.code, "Ada")
    assert classes.by_token(student) is one
    with pytest.raises(ClassError):
        two.item_for(student)
    with pytest.raises(ClassError, match="teacher"):
        two.reveal(one.teacher_token)


def test_a_self_paced_class_walks_each_student_through_the_items(clock):
    classes, room = open_class(clock, pace=Pace.SELF, seconds=30)
    _, quick = classes.join(room.code, "Quick")
    _, slow = classes.join(room.code, "Slow")
    for _ in range(3):
        assert room.item_for(quick)["state"] == "answering"
        room.answer(quick, "Yes")
    assert room.item_for(quick)["state"] == "done"
    assert room.item_for(slow)["index"] == 0
    clock.now += 40  # the slow student's first item timed out
    with pytest.raises(ClassError, match="too late"):
        room.answer(slow, "No")
    assert room.item_for(slow)["index"] == 1 and "truth" not in room.item_for(slow)
    status = room.status(room.teacher_token)
    assert status["answers"] == 3 and status["done"] == 1
    revealed = room.reveal(room.teacher_token)
    assert [entry["answered"] for entry in revealed["items"]] == [1, 1, 1]
    with pytest.raises(ClassError, match="revealed"):
        room.answer(slow, "No")


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_the_end_of_the_lesson_recovers_a_simulated_class_s_pse(clock):
    """30 students, each fooled the same way (PSE +0.08 against the inducers), on a swept
    Mueller-Lyer difference: the class's fitted PSE holds the true one within its interval."""
    pse, scale = 0.08, 0.05
    levels = ["-0.3", "-0.2", "-0.12", "-0.06", "0.02", "0.06", "0.1", "0.14", "0.2", "0.3"]
    sweep = get_benchmark("illusion/mueller-lyer", params={"difference": levels, "illusion_strength": ["30"],
                                                           "inducers": ["with"], "canvas": ["768"], "seed": ["0"]})  # fmt: skip
    items = [(sweep, item) for item in sweep.items() if item.params["prompt"] == "which-longer"]
    assert len(items) == len(levels)
    classes = Classes(ClassBounds(max_students=40), clock=clock)
    room = classes.open(Lesson(tuple(items), None, ("sim/geometry",)))
    rng = random.Random(4)
    students = [classes.join(room.code, f"s{n}")[1] for n in range(30)]
    for index, (_, item) in enumerate(items):
        room.next(room.teacher_token)
        for token in students:
            positive = rng.random() < _sigmoid((item.params["difference"] - pse) / scale)
            chosen = item.params["positive_answer"] if positive else 1 - item.params["positive_answer"]
            room.answer(token, item.labels[chosen])
        truth = grade_reply(sweep, item, item.labels[item.target], "sim/geometry", Condition(Mode()), ItemRef.of(item))
        room.set_model_answer("sim/geometry", index, truth)
        room.reveal(room.teacher_token)
    results = lesson_results(room)
    fits = {fit["who"]: fit for fit in results["fit"]}
    assert fits["class"]["pse_low"] <= pse <= fits["class"]["pse_high"], fits["class"]
    assert fits["class"]["n"] == 30 * len(levels)
    assert fits["sim/geometry"]["status"] == "separated"  # a geometry-only observer steps at 0
    assert results["overall"]["models"]["sim/geometry"]["accuracy"] == 100.0
    assert results["overall"]["class"]["students"] == 30 and results["overall"]["class"]["n"] == 30 * len(levels)
    right = sum(item["right"] for item in results["items"])
    assert results["overall"]["class"]["correct"] == right
    assert len(answers_table(room)) == 30 * len(levels)


def test_papers_human_figures_stand_beside_the_class(clock):
    from probes.analysis.scoring import published_rows
    from probes.core.benchmark import Benchmark
    from probes.core.types import AnswerKind, Item

    class Comprehension(Benchmark):  # IllusionVQA's id, one item of our own (its data is on the Hub)
        id = "illusionvqa/comprehension"

        def load_items(self) -> list[Item]:
            return [Item(self.id, "q", "Which line is longer?", (), AnswerKind.CHOICE, 0, options=("Top", "Bottom"))]

    benchmark = Comprehension()
    _, room = open_class(clock, items=[(benchmark, benchmark.items()[0])])
    people = lesson_results(room)["overall"]["people"]
    expected = [r for r in published_rows({benchmark.id}) if "human" in r.model.lower() and r.group == "overall"]
    assert expected and [(p["who"], p["accuracy"]) for p in people] == [(r.model, r.accuracy) for r in expected]
