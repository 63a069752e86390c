"""The Probe tab's answers: conditions to compare (each one change from the item as asked), and
the models x conditions grid with each cell's parsed answer, right or wrong, latency and reply;
below it the exact prompt of each condition, once, with its images.

Each condition's column shows what it sent: a thumbnail of the picture (flipped, grey, smaller,
or none) and the right answer for that picture, and its cells read each reply against the item
as that condition asked it (the options in the order shown, the truth of the picture sent).

Where the model gave answer probabilities (local hf/ models, OpenAI-compatible servers serving
logprobs), each cell shows them as small bars under the answer, one per answer of the item in the
order shown, and its reply panel the alternatives offered at the token that gave the answer.
Where it gave none there are no bars: they are never made up from the choice.

Rendered as HTML by us, every piece of model text through `html.escape`: nothing a model writes
is ever interpreted (no markup, no links, no images)."""

from __future__ import annotations

import base64
import html
import io
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from PIL import Image

from models.types import ImagePart, Message, fit_within
from probes.core.types import AnswerKind, Item, Result, Status
from probes.reading.probabilities import answer_forms, answer_key
from probes.running.budget import BUDGET_WORDS, BudgetExceeded, requests_words
from ui.page_words import page_words

# Each condition is one change from the item as asked, never a pile of them (probes.demo.conditions).
DEFAULT_CONDITIONS = ("as asked",)
THUMBNAIL = 160  # px, the longer side of a prompt's image in the prompt panel
# Where an answer came from, one vocabulary for the cell, a replay, the CSV and the API: asked for
# this click, or answered before (found in a cache: the visitor's own results, the Space's shared
# cache, a link's kept answers or the operator's prepared demo), which sent nothing. A visitor
# sees one thing however it was found; the tooltip says where (probes/running/store_chain.py).
ASKED_NOW = "asked now"
ANSWERED_BEFORE = "answered before"  # short enough to share a cell's line with its seconds
FOUND_IN = {
    None: "nothing sent: found in your own earlier results",
    "demo": "nothing sent: found in the answers this Space's maker prepared",
    "shared": "nothing sent: found in the answers this Space already bought for another visitor",
    "link": "nothing sent: found in the answers kept with this link",
}


@dataclass
class Sent:
    """One condition as sent: the item as it asked it (None: it could not be asked), its
    prompt's turns or why there is none, and a thumbnail (a data URI) of the item's first
    picture as sent (None: no picture was sent)."""

    item: Item | None
    messages: tuple[Message, ...] | None = None
    problem: str = ""
    thumbnail: str | None = None


def sent_as(item: Item, messages: tuple[Message, ...]) -> Sent:
    """A condition's `Sent`: its thumbnail made from the last user turn's first picture."""
    images = messages[-1].images if messages else ()
    thumbnail = None
    if images:
        thumbnail = thumbnail_uri(images[0].rgb)
        images[0].let_go()
    return Sent(item, messages, thumbnail=thumbnail)


@dataclass
class Cell:
    """One model under one condition: waiting, answered (a result), failed, or not applicable."""

    # waiting | done | failed | refused (a budget: `message` says which and what to do) | cannot
    # (an answerer that fails this request every time, with why) | n/a | missing (a replay found
    # no cached answer)
    state: str = "waiting"
    result: Result | None = None
    message: str = ""


def shown_answer(item: Item, value: object) -> str:
    """A parsed value as a person reads it: an option's label and text, Yes/No, (r, c) ..."""
    if value is None:
        return "—"
    if item.kind is AnswerKind.CHOICE and isinstance(value, int) and 0 <= value < len(item.options):
        text = item.options[value]
        return f"{item.labels[value]}. {text[:60]}{'…' if len(text) > 60 else ''}"
    if item.kind is AnswerKind.YES_NO:
        return "Yes" if value == "yes" else "No"
    if item.kind is AnswerKind.PAIR and isinstance(value, list | tuple) and len(value) == 2:
        return f"({value[0]}, {value[1]})"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


MAX_BARS = 10  # answers drawn per cell at most: a count's range keeps its likeliest ten


@dataclass(frozen=True)
class Chance:
    """One of the item's answers with the probability the model gave it, as a person reads it."""

    answer: str  # its label ("A", "Yes", "3")
    p: float
    chosen: bool  # the answer the reply gave
    right: bool  # the right answer for the picture sent
    text: str = ""  # an option's own words, for the bar's tooltip


def chances(item: Item, result: Result) -> tuple[Chance, ...]:
    """The answers' probabilities in the order the item shows them (`item` as the condition
    asked it: option indices are the shown order). Empty where the model gave none."""
    given = result.probabilities
    if not given:
        return ()
    keys = [key for key in answer_forms(item) if key in given] + [key for key in given if key not in answer_forms(item)]
    if len(keys) > MAX_BARS:  # the likeliest, still in the item's order
        likeliest = set(sorted(keys, key=lambda key: -given[key])[:MAX_BARS])
        keys = [key for key in keys if key in likeliest]
    chosen = answer_key(result.parsed) if result.parsed is not None else None
    right = answer_key(result.target) if result.target is not None else None
    out = []
    for key in keys:
        label, text = key, ""
        if item.kind is AnswerKind.CHOICE and key.isdigit() and int(key) < len(item.options):
            label, text = item.labels[int(key)], item.options[int(key)]
        elif item.kind is AnswerKind.YES_NO:
            label = key.capitalize()
        out.append(Chance(label, float(given[key]), key == chosen, key == right, text))
    return tuple(out)


def percent(p: float) -> str:
    """A probability as people read it: whole percent, "<1%" for what rounds to none."""
    return "<1%" if 0 < p < 0.005 else f"{p:.0%}"


def chances_words(shown_chances: Sequence[Chance]) -> str:
    """`A 62% · B 30% · ...`: the bars in words (tooltips, the CSV, the slide)."""
    return " · ".join(f"{c.answer} {percent(c.p)}" for c in shown_chances)


def alternatives_words(result: Result | None) -> str:
    """The tokens offered where the answer was given, most likely first, quoted so that a leading
    space shows (" A" and "A" are different tokens)."""
    if result is None or not result.alternatives:
        return ""
    return " · ".join(f"{token!r} {percent(p)}" for token, p in result.alternatives[:8])


@dataclass(frozen=True)
class Shown:
    """A cell as a person reads it, the same on the page and in the downloads: its verdict
    (right, wrong, ungraded, failed, refused, cannot answer, does not apply, not in the cache,
    asking, no reply), the answer as shown (an option's label and text), the seconds it took,
    where the answer came from, and a note (why it failed, why it is ungraded)."""

    verdict: str
    answer: str = ""
    latency: float | None = None
    note: str = ""
    reply: str = ""
    chances: tuple[Chance, ...] = ()  # the answers' probabilities, where the model gave them
    mass: float | None = None  # the share of probability that fell on the item's answers
    alternatives: str = ""  # the tokens offered at the answer, in words
    source: str = ""  # an answer's: ASKED_NOW or ANSWERED_BEFORE (empty: no answer)
    found_in: str = ""  # where an answer given before was found (FOUND_IN), for a tooltip


WORDS = {
    "failed": "failed",
    "refused": "refused",
    "cannot": "cannot answer",
    "n/a": "does not apply",
    "missing": "not in the cache",
    "waiting": "asking",
}


def shown_cell(item: Item, cell: Cell) -> Shown:
    """`item`: the item as this cell's condition asked it. Why a cell has no answer is the
    engine's message (a condition that does not apply, an item it could not build, a budget used
    up and what to do), in the page's words."""
    if cell.state != "done":
        return Shown(WORDS.get(cell.state, cell.state), note=page_words(cell.message))
    result = cell.result
    assert result is not None
    if result.status is Status.ERROR:
        return Shown("no reply", note=page_words(result.error or ""), latency=result.latency)
    verdict = {True: "right", False: "wrong", None: "ungraded"}[result.correct]
    answer = shown_answer(item, result.parsed) if result.status is Status.ANSWERED else result.status.value
    source = ANSWERED_BEFORE if result.cached else ASKED_NOW
    found_in = FOUND_IN.get(result.cached_from, FOUND_IN[None]) if result.cached else ""
    return Shown(verdict, answer, result.latency, result.ungraded or "", result.reply or "",
                 chances(item, result), result.probability_mass, alternatives_words(result), source, found_in)  # fmt: skip


# Each outcome of a cell, as the status line counts it (`outcome`).
ANSWERED, BEFORE, REFUSED, FAILED, CANNOT, NOT_APPLICABLE, MISSING, ASKING = (
    "answered", "answered before", "refused", "failed", "cannot answer", "does not apply", "not in the cache", "asking",
)  # fmt: skip


def outcome(cell: Cell) -> str:
    """What became of a cell, one of the outcomes above."""
    if cell.state == "done":
        assert cell.result is not None
        if cell.result.status is Status.ERROR:
            return FAILED
        return BEFORE if cell.result.cached else ANSWERED
    return {"refused": REFUSED, "cannot": CANNOT, "n/a": NOT_APPLICABLE, "missing": MISSING,
            "waiting": ASKING}.get(cell.state, FAILED)  # fmt: skip


def tally_words(cells: Sequence[Cell], refusals: Iterable[BudgetExceeded] = (), done: bool = True) -> str:
    """The status line: how many cells were answered (asked now, or answered before with nothing
    sent), then every other outcome counted (refused by a budget, and which; failed; cannot be
    answered by its model; does not apply; not in the cache). `done` False: answers still coming."""
    counts = Counter(outcome(cell) for cell in cells)
    answered = counts[ANSWERED] + counts[BEFORE]
    head = f"{answered} of {len(cells)} answered" + ("" if done else " so far")
    if counts[BEFORE]:
        head += f" ({counts[ANSWERED]} asked now, " if counts[ANSWERED] else " ("
        head += f"{counts[BEFORE]} answered before, nothing sent)"
    parts = [head]
    if counts[REFUSED]:
        budgets = sorted({f"{BUDGET_WORDS.get(r.which, 'a budget')} of {requests_words(r.limit)}" for r in refusals})
        why = f": {' and '.join(budgets)} {'is' if len(budgets) == 1 else 'are'} used up" if budgets else ""
        parts.append(f"{counts[REFUSED]} refused{why} (each refused cell says what you can do)")
    if counts[FAILED]:
        parts.append(f"{counts[FAILED]} failed")
    if counts[CANNOT]:
        parts.append(f"{counts[CANNOT]} cannot be answered by {'its' if counts[CANNOT] == 1 else 'their'} model")
    if counts[NOT_APPLICABLE]:
        parts.append(f"{counts[NOT_APPLICABLE]} {'does' if counts[NOT_APPLICABLE] == 1 else 'do'} not apply")
    if counts[MISSING]:
        parts.append(f"{counts[MISSING]} not in the cache")
    return " · ".join(parts)


MARKS = {"right": "✓", "wrong": "✗", "ungraded": "–"}
CLASSES = {"failed": "failed", "refused": "failed refused", "cannot answer": "na cannot", "does not apply": "na",
           "not in the cache": "missing", "no reply": "failed"}  # fmt: skip
LABELS = {"failed": "⚠ failed", "no reply": "⚠ no reply", "refused": "⚠ refused"}


def _cell_html(item: Item, cell: Cell) -> str:
    """`item`: the item as this cell's condition asked it."""
    shown = shown_cell(item, cell)
    if shown.verdict == "asking":
        return '<td class="cell waiting">asking…</td>'
    if shown.verdict in CLASSES:
        label = LABELS.get(shown.verdict, shown.verdict)
        note = html.escape(shown.note)
        if shown.verdict == "refused":  # read whole (which budget, when it refills, what to do): never cut
            reason = f'<small class="advice">{note}</small>'
        else:
            reason = f'<small class="reason" title="{note}">{note}</small>'
        return f'<td class="cell {CLASSES[shown.verdict]}"><b>{label}</b>{reason}</td>'
    latency = "" if shown.latency is None else f"{shown.latency:.2f} s · "
    source = f'<span class="source" title="{html.escape(shown.found_in)}">{shown.source}</span>'
    why = f'<small class="why">{html.escape(shown.note)}</small>' if shown.note else ""
    return (
        f'<td class="cell {shown.verdict}"><b>{MARKS[shown.verdict]} {html.escape(shown.answer)}</b>{why}'
        f"{_chances_html(shown)}"
        f'<small class="seconds">{latency}{source}</small>'
        f"<details><summary>reply</summary><pre>{html.escape(shown.reply)}</pre>{_alternatives_html(shown)}</details></td>"
    )


def _chances_html(shown: Shown) -> str:
    """Small bars, one per answer, the chosen one in the cell's colour, the right one's label
    underlined; the exact figures in the tooltip and for screen readers."""
    if not shown.chances:
        return ""
    words = chances_words(shown.chances)
    bars = []
    for chance in shown.chances:
        kinds = " chosen" * chance.chosen + " right" * chance.right
        tip = f"{chance.answer}{'. ' + chance.text[:60] if chance.text else ''}: {percent(chance.p)}"
        bars.append(
            f'<span class="chance{kinds}" title="{html.escape(tip)}" style="--p:{chance.p:.4f}">'
            f"<i></i><em>{html.escape(chance.answer[:3])}</em></span>"
        )
    chosen = next((c for c in shown.chances if c.chosen), None)
    said = f'<small class="p-chosen">{percent(chosen.p)}</small>' if chosen is not None else ""
    return (
        f'<span class="chances" role="img" aria-label="answer probabilities: {html.escape(words)}"'
        f' title="{html.escape(words)}">{"".join(bars)}</span>{said}'
    )


def _alternatives_html(shown: Shown) -> str:
    lines = []
    if shown.alternatives:
        lines.append(f"At the answer token: {html.escape(shown.alternatives)}")
    if shown.chances:
        lines.append(f"Over the item's answers: {html.escape(chances_words(shown.chances))}")
        if shown.mass is not None and shown.mass < 0.995:
            lines.append(f"{percent(shown.mass)} of the probability fell on the item's answers")
    if not lines:
        return '<small class="alternatives">no answer probabilities given</small>'
    return "".join(f'<small class="alternatives">{line}</small>' for line in lines)


def grid_html(
    item: Item,
    models: Sequence[str],
    conditions: Sequence[str],
    cells: Mapping[tuple[str, str], Cell],
    sent: Mapping[str, Sent] | None = None,
) -> str:
    """The models x conditions table; empty before anything is asked. `item` is the item as
    asked; `sent` each condition's item and picture as sent (absent: shown as asked)."""
    if not models or not conditions:
        return ""
    sent = sent or {}
    asked = {name: (sent[name].item if name in sent and sent[name].item is not None else item) for name in conditions}
    head = "".join(_condition_head(name, sent.get(name)) for name in conditions)
    rows = []
    for model in models:
        tds = "".join(_cell_html(asked[name], cells.get((model, name), Cell())) for name in conditions)
        rows.append(f'<tr><th class="model">{html.escape(model)}</th>{tds}</tr>')
    expected = ""
    if item.target is not None:
        expected = f'<p class="expected">Right answer as asked: <b>{html.escape(shown_answer(item, target_value(item)))}</b></p>'
    return (
        f'<div class="probe-grid-wrap">{expected}<table class="probe-grid"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _condition_head(name: str, sent: Sent | None) -> str:
    """A condition's column head: its name, the picture it sent and the right answer for it."""
    if sent is None or sent.item is None:
        return f'<th class="condition">{html.escape(name)}</th>'
    if sent.thumbnail:
        picture = f'<img class="sent-picture" alt="picture sent: {html.escape(name)}" src="{sent.thumbnail}">'
    else:
        picture = '<span class="sent-picture none">no picture</span>'
    asked = sent.item
    if asked.target is not None:
        truth = f"right: {html.escape(shown_answer(asked, target_value(asked)))}"
    else:
        truth = html.escape(asked.ungraded_because or "not graded")
    return f'<th class="condition">{html.escape(name)}{picture}<small class="truth">{truth}</small></th>'


def target_value(item: Item) -> object:
    if item.kind is AnswerKind.PAIR:
        return list(item.target)
    return item.target


def prompts_html(sent: Mapping[str, Sent]) -> str:
    """Each condition's prompt once: its turns in order, images as small pictures where they stand.
    A condition whose prompt could not be built says why instead."""
    blocks = []
    for name, one in sent.items():
        if one.messages is None:
            body = f"<p>{html.escape(one.problem)}</p>"
            count = ""
        else:
            images = sum(len(m.images) for m in one.messages)
            count = f" · {len(one.messages)} turn{'s' * (len(one.messages) != 1)}, {images} image{'s' * (images != 1)}"
            body = "".join(_turn_html(message) for message in one.messages)
        blocks.append(f"<details><summary>Prompt: {html.escape(name)}{count}</summary>{body}</details>")
    return f'<div class="probe-prompts">{"".join(blocks)}</div>' if blocks else ""


def _turn_html(message: Message) -> str:
    pieces = []
    for part in message.parts:
        if isinstance(part, ImagePart):
            pieces.append(f'<img class="prompt-image" alt="image sent" src="{thumbnail_uri(part.rgb)}">')
            part.let_go()  # one picture's pixels at a time (four 16 MP uploads are 200 MB decoded)
        else:
            pieces.append(f"<pre>{html.escape(part.text)}</pre>")
    return f'<div class="turn {message.role}"><span class="role">{message.role}</span>{"".join(pieces)}</div>'


def thumbnail_uri(image: Image.Image) -> str:
    small = fit_within(image, THUMBNAIL, reducing_gap=2.0)
    buffer = io.BytesIO()
    small.convert("RGB").save(buffer, format="PNG", optimize=False)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
