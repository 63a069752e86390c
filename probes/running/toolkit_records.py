"""Other toolkits' replies as one kind of record, whatever file they came from: where the reply
came from, the question and options as they asked them, their answer key, their scorer's
verdict, and which of our benchmarks it answers.

lmms-eval's tasks that match ours (its source: `lmms_eval/tasks/illusionvqa/`, `vlmsareblind/`):
- `illusionvqa_comprehension`, `illusionvqa_soft_localization`: `input` is the pre-prompt (the
  authors' notebooks' instruction), the question, then one `A. option` line per option; `target`
  the right option's letter; the verdict `exact_match` (after the "flexible-extract" filter,
  which keeps the letter of a reply that starts "B.", and the reply itself otherwise).
- `vlmsareblind` (one task holding the 8 sub-tasks; `vlmsareblind_lite`: the first 100 docs of
  each): `input` is the release's prompt plus "\\nAnswer only in the required format."; `target`
  the release's groundtruth; the sub-task in each doc's `accuracy_by_task`; the verdict `accuracy`
  (a reply must be exactly yes/no, or its FIRST number is taken).
- a task written by `generate --format lmms-eval`: each doc's `probe` names our item and set.
- a `multiple_choice` task (any of ours named with --benchmark, or IllusionVQA's run that way):
  no reply, each option's score (`api/task.py`: lmms-eval's models return the continuation's loss,
  and it chooses the smallest, `acc` its verdict); read where the doc's input lists its options.

VLMEvalKit has no IllusionVQA or BlindTest dataset: its users run them as custom multiple-choice
tables. A row's verdict is its evaluation record's `hit` where the file has one; otherwise the
reading of VLMEvalKit's exact-matching evaluation (`vlmeval/utils/matching_util.py`'s
`can_infer`), restated in `vlmevalkit_reading` below.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from probes.benchmarks.blind.released import TASKS as RELEASE_TASKS
from probes.core.errors import InputRejected
from probes.files.set_spec import SetSpec
from probes.files.toolkit_logs import LmmsRun, PredictionRow

ILLUSIONVQA_TASKS = {
    "illusionvqa_comprehension": "illusionvqa/comprehension",
    "illusionvqa_soft_localization": "illusionvqa/soft-localization",
}
BLIND_TASKS = ("vlmsareblind", "vlmsareblind_lite")
# The defaults of lmms-eval's task YAMLs, used where the run's results file does not say.
ILLUSIONVQA_PRE_PROMPT = (
    "You'll be given an image, an instruction and some options. You have to select the correct one. Do not "
    "explain your reasoning. Answer with only the letter which corresponds to the correct option. Do not repeat "
    "the entire answer."
)
BLIND_POST_PROMPT = "\nAnswer only in the required format."
BLIND_SUBTASKS = {name.lower(): benchmark for benchmark, (names, _) in RELEASE_TASKS.items() for name in names}
# No reply at all: the toolkit's own marks for a request that failed.
FAILED = ("[LMMS_EVAL_REQUEST_FAILED", "[LMMS_EVAL_BUDGET_EXCEEDED]", "Failed to obtain answer via API")
LITE_PER_TASK = 100


@dataclass
class Foreign:
    """One reply from another toolkit."""

    toolkit: str  # lmms-eval, vlmevalkit
    task: str  # their task or dataset name
    where: str  # file and line (or row), for messages
    position: int | str  # their doc_id / index
    reply: str
    benchmark: str  # our benchmark it answers
    question: str = ""  # as they asked it, their instruction taken off ("" where unknown)
    options: tuple[str, ...] = ()
    target: Any = None  # their answer key: an option's letter, a groundtruth text
    their_correct: bool | None = None  # their scorer's verdict (None: none in the file)
    their_reading: str | None = None  # what their scorer read, where the file says
    item_id: str | None = None  # our item's id, when the log names it (sets exported from here)
    spec: SetSpec | None = None  # the set it was drawn from, likewise
    sampled: str | None = None  # how their docs were sampled from the release (lite: first 100 per task)
    category: str | None = None
    scores: tuple[float, ...] | None = None  # a multiple_choice doc: each option's score, no reply to read

    @property
    def failed(self) -> bool:
        return self.reply.lstrip().startswith(FAILED)


def lmms_records(run: LmmsRun, benchmark: str | None = None) -> list[Foreign]:
    """The run's samples as records; `benchmark` reads a task we do not know as that benchmark."""
    if any(isinstance(s.metrics.get("probe"), dict) for s in run.samples):
        return [_exported(run, sample) for sample in run.samples]
    if run.task in ILLUSIONVQA_TASKS or (benchmark or "").startswith("illusionvqa/"):
        pre, post = _prompts(run, ILLUSIONVQA_PRE_PROMPT, "")
        return [_multiple_choice(run, s, benchmark or ILLUSIONVQA_TASKS[run.task], pre, post, "exact_match")
                for s in run.samples]  # fmt: skip
    if run.task in BLIND_TASKS:
        _, post = _prompts(run, "", BLIND_POST_PROMPT)
        return [_blind(run, sample, post) for sample in run.samples]
    if benchmark is None:
        raise InputRejected(
            f"{run.path.name}: lmms-eval task {run.task} has no benchmark here (IllusionVQA, vlmsareblind and sets "
            "written by generate --format lmms-eval are known); name ours with --benchmark"
        )
    return [_multiple_choice(run, s, benchmark, "", "", None) for s in run.samples]


def _where(run: LmmsRun, line: int) -> str:
    return f"{run.path.name} line {line}"


def _exported(run: LmmsRun, sample) -> Foreign:
    probe = sample.metrics.get("probe")
    where = _where(run, sample.line)
    _no_scores(run, sample)
    if not isinstance(probe, dict) or not isinstance(probe.get("id"), str) or not isinstance(probe.get("set"), dict):
        raise InputRejected(f"{where}: the sample's probe record lacks the item id or the set (a damaged log?)")
    spec = SetSpec.from_dict(probe["set"], where)
    correct = probe.get("correct")
    return Foreign("lmms-eval", run.task, where, sample.doc_id, sample.reply, spec.benchmark, sample.input or "",
                   target=sample.target, their_correct=correct if isinstance(correct, bool) else None,
                   their_reading=_text(probe.get("parsed")), item_id=probe["id"], spec=spec)  # fmt: skip


def _multiple_choice(run: LmmsRun, sample, benchmark: str, pre: str, post: str, metric: str | None) -> Foreign:
    question, options = split_options(sample.input or "", pre, post)
    if sample.scores is None:
        verdict = _verdict(sample.metrics, metric)
        return Foreign("lmms-eval", run.task, _where(run, sample.line), sample.doc_id, sample.reply, benchmark,
                       question, options, sample.target, verdict, sample.filtered)  # fmt: skip
    # A multiple_choice doc: the options scored (its model's loss per option, the smallest
    # chosen), graded by `acc`; its target is the right option's place, where it is a number.
    if not options:
        raise InputRejected(f"{_where(run, sample.line)}: a scored (multiple_choice) doc is read where its input lists "
                            "its options (A. ..., B. ...), so each score has its option")  # fmt: skip
    target = sample.target
    if target is not None and target.strip().isdigit() and int(target) < len(options):
        target = options[int(target)]
    chosen = min(range(len(sample.scores)), key=sample.scores.__getitem__)
    return Foreign("lmms-eval", run.task, _where(run, sample.line), sample.doc_id, sample.reply, benchmark, question,
                   options, target, _verdict(sample.metrics, "acc"), chr(ord("A") + chosen), scores=sample.scores)  # fmt: skip


def _no_scores(run: LmmsRun, sample) -> None:
    if sample.scores is not None:
        raise InputRejected(f"{_where(run, sample.line)}: a scored (multiple_choice) doc of {run.task}: scores are read "
                            "for multiple-choice tasks whose input lists the options")  # fmt: skip


def _blind(run: LmmsRun, sample, post: str) -> Foreign:
    where = _where(run, sample.line)
    _no_scores(run, sample)
    by_task = sample.metrics.get("accuracy_by_task")
    name = by_task.get("task") if isinstance(by_task, dict) else None
    if not isinstance(name, str) or name.strip().lower() not in BLIND_SUBTASKS:
        raise InputRejected(f"{where}: no known vlmsareblind sub-task in accuracy_by_task (got {str(name)[:40]!r})")
    question = _without(sample.input or "", "", post)
    return Foreign("lmms-eval", run.task, where, sample.doc_id, sample.reply, BLIND_SUBTASKS[name.strip().lower()],
                   question, (), sample.target, _verdict(sample.metrics, "accuracy"), sample.filtered,
                   sampled="lite" if run.task.endswith("_lite") else None)  # fmt: skip


def _prompts(run: LmmsRun, pre: str, post: str) -> tuple[str, str]:
    """The pre- and post-prompt the run used: its results file's task config where present."""
    kwargs = run.config.get("lmms_eval_specific_kwargs")
    if isinstance(kwargs, dict) and isinstance(kwargs.get("default"), dict):
        kwargs = kwargs["default"]
    if isinstance(kwargs, dict):
        pre = kwargs.get("pre_prompt", pre) if isinstance(kwargs.get("pre_prompt", pre), str) else pre
        post = kwargs.get("post_prompt", post) if isinstance(kwargs.get("post_prompt", post), str) else post
    return pre, post


def _verdict(metrics: Mapping[str, Any], name: str | None) -> bool | None:
    for key in (name,) if name else ("exact_match", "accuracy", "acc", "score"):
        value = metrics.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
            return bool(value)
    return None


def _without(text: str, pre: str, post: str) -> str:
    if post and text.endswith(post):
        text = text[: -len(post)]
    if pre and text.startswith(pre):
        text = text[len(pre) :]
    return text.strip()


_OPTION_LINE = re.compile(r"([A-Z])\. (.*)")


def split_options(text: str, pre: str = "", post: str = "") -> tuple[str, tuple[str, ...]]:
    """(question, options) of a prompt that lists its options as trailing `A. text` lines; the
    whole text and no options where it does not."""
    body = _without(text, pre, post)
    lines = body.split("\n")
    found: list[tuple[str, str]] = []
    for line in reversed(lines):
        match = _OPTION_LINE.fullmatch(line.strip())
        if match is None:
            break
        found.insert(0, (match.group(1), match.group(2).strip()))
        if match.group(1) == "A":
            break
    letters = [letter for letter, _ in found]
    if len(found) < 2 or letters != [chr(ord("A") + i) for i in range(len(found))]:
        return body, ()
    return "\n".join(lines[: len(lines) - len(found)]).strip(), tuple(text for _, text in found)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return str(value)


# --- VLMEvalKit -----------------------------------------------------------------------------


def vlmevalkit_records(rows: Sequence[PredictionRow], dataset: str, benchmark: str, file: str) -> list[Foreign]:
    records = []
    for row in rows:
        position: int | str = int(row.index) if row.index.isdigit() else row.index
        choices = {chr(ord("A") + i): option for i, option in enumerate(row.options)}
        reading = vlmevalkit_reading(row.prediction, choices) if choices else None
        verdict = row.hit if row.hit is not None else (reading == row.answer if choices else None)
        records.append(Foreign("vlmevalkit", dataset, f"{file} row {row.row}", position, row.prediction, benchmark,
                               row.question.strip(), row.options, row.answer or None, verdict, reading,
                               category=row.extra.get("category") or None))  # fmt: skip
    return records


_REFUSALS = ("Sorry, I can't help with images of people yet.", "I can't process this file.",
             "I'm sorry, but without the image provided", "Cannot determine the answer")  # fmt: skip
_ANSWER_IS = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")
_PUNCTUATION = str.maketrans({c: " " for c in ".()[],:;!*#{}"})


def vlmevalkit_reading(prediction: str, choices: Mapping[str, str]) -> str | None:
    """The option letter VLMEvalKit's exact-matching evaluation reads in a prediction, "Z" where
    it reads a refusal, None where it reads nothing (it then scores the row a miss). Restated from
    its `can_infer` so its figure can be shown beside ours: the letters standing alone among the
    reply's words once `.()[],:;!*#{}` are blanked; exactly one of them, among the last five
    words, is the answer; else "answer is X"; else the one option whose text the (short) reply
    contains."""
    if "Failed to obtain answer via API" in prediction:
        return None
    if any(refusal in prediction for refusal in _REFUSALS):
        return "Z"
    words = prediction.translate(_PUNCTUATION).split()
    named = [letter for letter in choices if letter in words]
    if len(named) == 1 and words.index(named[0]) > len(words) - 5:
        return named[0]
    if not named and "Z" in words:
        return "Z"
    match = _ANSWER_IS.search(prediction)
    if match and match.group(1).upper() in choices:
        return match.group(1).upper()
    lowered = prediction.lower()
    if len(lowered) > 2 * sum(len(str(text)) for text in choices.values()):
        return None
    found = [letter for letter, text in choices.items() if str(text).lower() in lowered]
    return found[0] if len(found) == 1 else None
