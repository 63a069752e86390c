"""A class in the room: a teacher opens a class over a set of items, students answer on their
phones, the presenter's view shows the tally beside the models' answers, and the end of the
lesson puts the class's accuracy and psychometric curve beside the models'.

`registry.Classes` holds the open classes (bounded, expiring), `room.ClassRoom` one class's
logic, `results` the end of the lesson. No Gradio here: the Class tab and its API endpoints are
thin over this package.
"""

from probes.classroom.registry import ClassBounds, Classes
from probes.classroom.results import answers_table, lesson_results
from probes.classroom.room import ClassError, ClassRoom, Lesson, Pace, Phase, Who

__all__ = [
    "ClassBounds", "ClassError", "ClassRoom", "Classes", "Lesson", "Pace", "Phase", "Who", "answers_table", "lesson_results",
]  # fmt: skip
