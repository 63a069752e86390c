"""baseline/pixels: BlindTest and the parametric illusions answered by classical image analysis,
as a reference for what plain "seeing" achieves, and an independent check of the generators'
ground truth.

It reads only what a model is given, the last user turn's image and question text, never an
item's metadata or answer. The question's wording picks the task and the answer's format;
connected components, projections and line fits on the pixels give the answer. A grey copy is
read as a person reads it: a colour the question names is found as its grey, or the things it
names are told apart by their shape and course (`probes.core.truth.in_grey` says where that
holds). A question it does not know, or a picture it cannot read, raises ProviderError: it
never guesses.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from PIL import Image

from models.types import GenerateConfig, Message, Output, ProviderError, to_rgb
from probes.asking.prompting import Prompt
from probes.baselines.base import ItemBaseline
from probes.baselines.pixels import illusions, questions
from probes.baselines.pixels.circles import read_circle_pair
from probes.baselines.pixels.grid import read_grid
from probes.baselines.pixels.imaging import AnalysisError
from probes.baselines.pixels.letters import read_circled_letter
from probes.baselines.pixels.lines import count_line_meetings
from probes.baselines.pixels.questions import Question, Task
from probes.baselines.pixels.shapes import count_nested_squares, count_olympic_shapes
from probes.baselines.pixels.subway import count_paths
from probes.benchmarks.generated import format_answer
from probes.core.types import AnswerKind, Item

__all__ = ["PixelsBaseline", "answer"]

# Every family it answers, from what it reads: BlindTest's questions and each illusion it can measure.
ANSWERED = (
    f"BlindTest's questions ({questions.KNOWN}) and the illusions "
    f"({', '.join(illusions.PREFIX + family for family in illusions.FAMILIES)}), in colour or grayscale"
)

# A solver reads one task's picture: the reply in the question's format, and what it measured.
Solver = Callable[[Question, Image.Image], tuple[str, dict[str, Any]]]


class PixelsBaseline(ItemBaseline):
    """Offline, deterministic, no weights: each answer is a measurement of the image."""

    model_id = "baseline/pixels"
    # Versioned: cached answers of an earlier analysis must not be served for a changed one.
    # v2: answers illusion/* too; v3: reads a subway map upside down; v4: grey copies, the circled letter
    endpoint = "local:pixels-v4"
    default_concurrency = 2  # CPU-bound numpy work in threads: about one per core

    async def answer(self, item: Item, prompt: Prompt, config: GenerateConfig) -> Output:
        """Reads what the model would be sent: the last user turn's question and image."""
        started = time.perf_counter()
        text, image = _last_question(prompt.messages)
        if item.benchmark.startswith(illusions.PREFIX):
            reply, raw = await asyncio.to_thread(_illusion, item, text, image)
        else:
            reply, raw = await asyncio.to_thread(answer, text, image)
        return Output(text=reply, latency=time.perf_counter() - started, raw=raw)


def _illusion(item: Item, text: str, image: Image.Image) -> tuple[str, dict[str, Any]]:
    """A two-alternative illusion question: the geometry-only observer measures the targets."""
    try:
        reply, measured = illusions.answer(item.benchmark, item.question, item.options, image)
    except AnalysisError as exc:
        raise ProviderError(f"baseline/pixels could not read the image as {item.benchmark}: {exc}") from None
    return questions.final(text, reply), measured


def _last_question(messages: Sequence[Message]) -> tuple[str, Image.Image]:
    turns = [m for m in messages if m.role == "user"]
    if not turns:
        raise ProviderError("baseline/pixels needs a user turn with an image and a question")
    last = turns[-1]
    if not last.images:
        raise ProviderError("baseline/pixels reads the picture, and the last user turn has no image")
    return last.text, last.images[0].rgb


def answer(text: str, image: Image.Image) -> tuple[str, dict[str, Any]]:
    """The reply to `text` about `image`, and what was measured to give it."""
    question = questions.recognise(text)
    if question is None:
        raise ProviderError(f"baseline/pixels does not know this question; it answers {ANSWERED}")
    try:
        reply, measured = SOLVERS[question.task](question, to_rgb(image))
    except AnalysisError as exc:
        raise ProviderError(f"baseline/pixels could not read the image as {question.task.value}: {exc}") from None
    return questions.final(text, reply), {"task": question.task.value, **measured}


def _circles(question: Question, image: Image.Image) -> tuple[str, dict[str, Any]]:
    pair = read_circle_pair(image)
    verdict = pair.touching if question.task is Task.TOUCHING else pair.overlapping
    measured = {"apart": pair.apart, "overlap_depth_px": round(pair.depth, 2), "diameter_px": round(pair.diameter, 1)}
    return format_answer(question.text, AnswerKind.YES_NO, "yes" if verdict else "no"), measured


def _counted(count: Callable[[Image.Image], int]) -> Solver:
    def solve(question: Question, image: Image.Image) -> tuple[str, dict[str, Any]]:
        value = count(image)
        return format_answer(question.text, AnswerKind.NUMBER, value), {"count": value}

    return solve


def _grid(question: Question, image: Image.Image) -> tuple[str, dict[str, Any]]:
    rows, columns = read_grid(image)
    return format_answer(question.text, AnswerKind.PAIR, (rows, columns)), {"rows": rows, "columns": columns}


def _subway(question: Question, image: Image.Image) -> tuple[str, dict[str, Any]]:
    start, end = question.stations
    value = count_paths(image, start, end)
    return format_answer(question.text, AnswerKind.NUMBER, value), {"from": start, "to": end, "count": value}


def _circled(question: Question, image: Image.Image) -> tuple[str, dict[str, Any]]:
    letter = read_circled_letter(image)
    return format_answer(question.text, AnswerKind.LETTER, letter), {"letter": letter}


SOLVERS: dict[Task, Solver] = {
    Task.TOUCHING: _circles,
    Task.OVERLAPPING: _circles,
    Task.NESTED_SQUARES: _counted(count_nested_squares),
    Task.GRID: _grid,
    Task.OLYMPIC: _counted(count_olympic_shapes),
    Task.LINES: _counted(count_line_meetings),
    Task.SUBWAY: _subway,
    Task.CIRCLED: _circled,
}
