"""People's yes/no judgement of generated texture words: the judgement score of Eq. 1.

Texture generation (`shitsukan/generation`, SPEC.md section 3) is scored twice in the paper:
the match rate against the words people wrote (Eq. 2, the benchmark's own grade), and a
judgement score (Eq. 1): judges mark each of a model's three words natural or not, and the
score is the mean over judges h and items i of (yes count / 3).

Judgements live in the results store as the pseudo-benchmark `shitsukan/judgement`, one result
per (generated item, judge):
- model, mode and perturbation: those of the generation judged, so a model's 0-shot and 4-shot
  words are judged apart;
- item_id `<generation item id>|<judge>` (a judge's name holds no "|"), so a judge who marks an
  item again replaces their earlier verdict and is never counted twice;
- score = yes / 3, correct = None (a verdict is not right or wrong), target = the three words
  judged, parsed = the three verdicts, groups {"judge", "lang"}, latency = the judge's seconds.
The report's accuracy for that pseudo-benchmark is then the mean score over every (item, judge)
pair, which is Eq. 1 when every judge judges every item (and its natural reading when not), and
`report --by judge` gives each judge's own mean. It is not a registered benchmark: it has no
items to ask a model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from probes.benchmarks.shitsukan.generation import BENCHMARK_ID as GENERATION_ID
from probes.benchmarks.shitsukan.generation import WORDS_ASKED
from probes.core.errors import BenchmarkError
from probes.core.types import AnswerKind, Condition, Item, ItemRef, Mode, Origin, Result, Status
from probes.people.human import check_name
from probes.reading.grading import new_result

BENCHMARK_ID = "shitsukan/judgement"
SEPARATOR = "|"


@dataclass(frozen=True)
class Generated:
    """One well-formed generation (three words) that people can judge."""

    item_id: str
    model: str
    mode: str
    perturbation: str
    words: tuple[str, ...]
    object: str | None  # the object's name as the prompt gave it, when the store knows it
    lang: str | None
    image: str | None  # the image file the model saw, when the store knows it

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.model, self.mode, self.perturbation)


@dataclass(frozen=True)
class Score:
    """Eq. 1 for one model (and mode, perturbation): percent, over n (item, judge) pairs."""

    value: float | None
    n: int
    judges: int
    items: int


def judgeable(results: Iterable[Result]) -> list[Generated]:
    """The generation results that hold exactly three words; malformed replies are not judged
    (the paper judged only the outputs it kept)."""
    found = []
    for result in results:
        words = result.parsed
        if (
            result.benchmark != GENERATION_ID
            or result.status is not Status.ANSWERED
            or not isinstance(words, list)
            or len(words) != WORDS_ASKED
            or not all(isinstance(w, str) for w in words)
        ):
            continue
        ref = result.item_ref or ItemRef(result.benchmark, result.item_id)
        found.append(
            Generated(
                result.item_id,
                result.model,
                result.mode,
                result.perturbation,
                tuple(words),
                ref.params.get("object"),
                ref.params.get("lang") or result.groups.get("lang"),
                next((path for path in ref.image_files if Path(path).is_file()), None),
            )  # fmt: skip
        )
    return sorted(found, key=lambda g: (g.key, g.item_id))


def item_key(item_id: str, judge: str) -> str:
    return f"{item_id}{SEPARATOR}{check_name(judge)}"


def judged_by(results: Iterable[Result], judge: str, key: tuple[str, str, str]) -> set[str]:
    """Generation item ids this judge has already judged for (model, mode, perturbation)."""
    suffix = SEPARATOR + check_name(judge)
    return {
        r.item_id.removesuffix(suffix)
        for r in results
        if r.benchmark == BENCHMARK_ID
        and (r.model, r.mode, r.perturbation) == key
        and r.groups.get("judge") == check_name(judge)
    }


def judgement_result(generated: Generated, judge: str, natural: Sequence[bool], seconds: float) -> Result:
    """One judge's verdicts on one generation's three words."""
    if len(natural) != len(generated.words):
        raise BenchmarkError(f"judge all {len(generated.words)} words: {len(natural)} verdicts given")
    name = check_name(judge)
    verdicts = [bool(v) for v in natural]
    groups = {"judge": name} | ({"lang": generated.lang} if generated.lang else {})
    # The judged "item" is one generation seen by one judge: a judge who marks it again
    # replaces their earlier verdict.
    judged = Item(BENCHMARK_ID, item_key(generated.item_id, name), "", (), AnswerKind.WORDS, list(generated.words),
                  groups=groups)  # fmt: skip
    condition = Condition(Mode.parse(generated.mode), generated.perturbation)
    ref = ItemRef(GENERATION_ID, generated.item_id, Origin.JUDGEMENT, judge=name)
    return new_result(
        judged,
        generated.model,
        condition,
        ref,
        Status.ANSWERED,
        reply=", ".join("natural" if v else "not natural" for v in verdicts),
        parsed=verdicts,
        correct=None,
        score=sum(verdicts) / len(verdicts),
        latency=round(max(0.0, seconds), 3),
    )


def judgement_score(results: Iterable[Result], key: tuple[str, str, str] | None = None) -> Score:
    """Eq. 1 over the judgements in `results` (of one model, mode and perturbation if `key`)."""
    chosen = [
        r
        for r in results
        if r.benchmark == BENCHMARK_ID
        and r.score is not None
        and (key is None or (r.model, r.mode, r.perturbation) == key)
    ]
    if not chosen:
        return Score(None, 0, 0, 0)
    judges = {r.groups.get("judge") for r in chosen}
    items = {r.item_ref.item_id if r.item_ref else r.item_id.rpartition(SEPARATOR)[0] for r in chosen}
    value = round(100 * sum(r.score for r in chosen) / len(chosen), 2)
    return Score(value, len(chosen), len(judges), len(items))
