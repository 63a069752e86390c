"""A store as a working session leaves it, for the Scoreboard's tests and screenshots, and what the
scoreboard builds from it checked without a browser.

The store holds: baseline/chance and baseline/pixels run through the real runner on BlindTest's
touching circles and on a Mueller-Lyer sweep; two simulated observers ("sim/...") answering
through the benchmarks' own parsing and grading (one fooled by the inducers as people are, one
less so); three people answering as the Human tab stores them (human/<name>, origin human);
answers under both option rotations of the Mueller-Lyer items (one observer always names the
first shown option); and single probe clicks (origin probe), which the tab's own view leaves out.
"""

from __future__ import annotations

import asyncio
import math
import random
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

import pytest

from probes.analysis.report import report_rows
from probes.analysis.scoring import aggregate
from probes.asking import perturb
from probes.core.benchmark import Benchmark
from probes.core.registry import get_benchmark
from probes.core.types import Condition, Item, ItemRef, Mode, Origin, Result, Status
from probes.people.human import answer_result
from probes.reading.grading import grade_reply
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store

TOUCHING = "blind/touching-circles"
ILLUSION = "illusion/mueller-lyer"
GAPS = ["-0.1", "-0.05", "0", "0.05", "0.1", "0.2", "0.3"]
DIFFERENCES = ["-0.3", "-0.2", "-0.1", "-0.05", "0.05", "0.1", "0.2", "0.3"]
PEOPLE = ("Ada", "Bo", "Cy")
FOOLED = "sim/fooled-observer"
STEADY = "sim/steady-observer"
FIRST = "sim/first-option"
PROBED = "openai/probe-only"  # a model only ever asked single items on the Probe tab
PEOPLE_SHIFT = 0.08  # how far the inducers move people's PSE (in `difference` units)
FOOLED_SHIFT = 0.12


def touching() -> Benchmark:
    params = {"gap": GAPS, "canvas": ["384"], "diameter": ["1/4"], "orientation": ["vertical", "horizontal"]}
    return get_benchmark(TOUCHING, params=params)


def illusion() -> Benchmark:
    params = {"difference": DIFFERENCES, "illusion_strength": ["30"], "canvas": ["384"], "seed": ["0", "1"]}
    return get_benchmark(ILLUSION, params=params)


def _run(benchmark: Benchmark, items: list[Item], model: str, mode: Mode, store: Store) -> None:
    plan = RunPlan(benchmark, items, [create(model)], mode)
    # Playwright's sync API holds this thread's event loop: the run gets a thread of its own.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, run(plan, store)).result()


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def seen_longer(shift: float, scale: float = 0.06) -> Callable[[Item], float]:
    """An observer of the illusion: P(choosing the target `difference > 0` favours), moved by
    `shift` against the inducers as drawn (polarity +1 needs a bigger difference)."""
    return lambda item: _sigmoid((item.params["difference"] - shift * item.params["polarity"]) / scale)


def _choice(item: Item, positive: bool) -> str:
    """The option's own word ("Top"), which reads the same whatever order the options are shown in."""
    index = item.params["positive_answer"] if positive else 1 - item.params["positive_answer"]
    return item.options[index]


def choosing(observer: Callable[[Item], float], rng: random.Random) -> Callable[[Item, Item], str]:
    """The reply of `observer`: the positive target's option with its probability, else the other."""
    return lambda original, asked: _choice(original, rng.random() < observer(original))


def _answers(benchmark: Benchmark, items: list[Item], model: str, mode: Mode, reply: Callable[[Item, Item], str],
             origin: Origin = Origin.RUN, perturbation: str = "none") -> list[tuple[Result, None, str]]:  # fmt: skip
    condition = Condition(mode, perturbation)
    entries = []
    for original in items:
        item = perturb.apply(benchmark, original, perturbation)
        answer = reply(original, item)  # the item as first drawn, and as asked (options rotated)
        result = grade_reply(benchmark, item, answer, model, condition, ItemRef.of(item, origin), latency=0.4)
        entries.append((result, None, ""))
    return entries


def fill(path: Path, seed: int = 0) -> dict[str, int]:
    """Writes the store described above at `path`; returns how many results of each origin."""
    rng = random.Random(seed)
    circles, lines = touching(), illusion()
    circle_items, line_items = circles.items(), lines.items()
    with Store(path) as store:
        for mode in (Mode(0), Mode(4)):
            _run(circles, circle_items, "baseline/chance", mode, store)
        _run(circles, circle_items, "baseline/pixels", Mode(0), store)
        _run(lines, line_items, "baseline/pixels", Mode(0), store)
        _run(lines, line_items, "baseline/chance", Mode(0), store)

        def right_more_often_when_wide(item: Item, _: Item) -> str:
            p_right = 0.55 + 0.4 * min(1.0, abs(float(item.params["gap"])) / 0.2)
            if rng.random() < p_right:
                return item.target_text()
            return "No" if item.target_text() == "Yes" else "Yes"

        entries = []
        for model in (FOOLED, STEADY):
            for mode in (Mode(0), Mode(4)):
                entries += _answers(circles, circle_items, model, mode, right_more_often_when_wide)
        for model, shift in ((FOOLED, FOOLED_SHIFT), (STEADY, 0.02)):
            for mode in (Mode(0), Mode(4)):
                entries += _answers(lines, line_items, model, mode, choosing(seen_longer(shift), rng))
        for rotation in ("rotate-options-0", "rotate-options-1"):
            entries += _answers(lines, line_items, FIRST, Mode(0), lambda _, asked: "a", perturbation=rotation)
            entries += _answers(
                lines, line_items, STEADY, Mode(0), choosing(seen_longer(0.02), rng), perturbation=rotation
            )
        person = choosing(seen_longer(PEOPLE_SHIFT), rng)
        for name in PEOPLE:
            for item in line_items:
                result = answer_result(lines, item, person(item, item), name, 2.5)
                entries.append((result, None, ""))
            for item in circle_items[:10]:
                entries.append((answer_result(circles, item, item.target_text(), name, 1.5), None, ""))
        # Single probe clicks: one on a measured benchmark by a model nothing else ran, one on an upload.
        entries += _answers(circles, circle_items[:1], PROBED, Mode(0), lambda *_: "Yes", origin=Origin.PROBE)
        upload = Result("upload", "probe-1", PROBED, "0-shot", "none", Status.ANSWERED, reply="Yes", correct=None,
                        item_ref=ItemRef("upload", "probe-1", Origin.PROBE))  # fmt: skip
        entries.append((upload, None, ""))
        store.record_many(entries)
        counts: dict[str, int] = {}
        for result in store.results():
            counts[result.origin.value] = counts.get(result.origin.value, 0) + 1
        return counts


# --- what the scoreboard builds from it, without a browser ----------------------------------------


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("scoreboard") / "results.sqlite"
    fill(path)
    return path


@pytest.fixture
def home(filled, monkeypatch):
    """The filled store as the app's own (PROBE_HOME), with the app's caches fresh."""
    from tests.ui.conftest import reset_caches

    monkeypatch.setenv("PROBE_HOME", str(filled.parent))
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("PROBE_PUBLIC", raising=False)
    reset_caches()
    yield filled
    reset_caches()


def decoded(path: Path, origins) -> list[Result]:
    """Every result of these origins, decoded: what the counts are checked against."""
    with Store(path) as store:
        return [r for r in store.results() if r.origin.value in origins]


def test_the_view_leaves_probe_clicks_out_and_the_api_default_counts_them(home):
    from ui.scoreboard.data import EVERY_ORIGIN, origins_for, shown, stored_tally

    tally = stored_tally()
    everything = decoded(home, EVERY_ORIGIN)
    probes = [r for r in everything if r.origin is Origin.PROBE]
    assert len(probes) == 2 and tally.count() == len(everything)
    assert tally.count() - tally.count(origins_for(False)) == 2
    heads = shown(tally, origins_for(False))
    assert {h[1] for h in heads}.isdisjoint({PROBED}) and "upload" not in {h[0] for h in heads}
    assert {h[4] for h in heads} == {Origin.RUN.value, Origin.HUMAN.value}
    assert tally.count(origins_for(True)) == len(everything)


def test_the_leaderboard_agrees_with_report_cell_for_cell(home):
    from ui.scoreboard.data import origins_for, shown, stored_tally
    from ui.scoreboard.leaderboard import build

    board = build(shown(stored_tally(), origins_for(False)))
    assert board.benchmarks == (TOUCHING, ILLUSION)
    unperturbed = [r for r in decoded(home, origins_for(False)) if r.perturbation == "none"]
    for row in aggregate([r for r in unperturbed if not r.model.startswith("human/")]):
        assert board.cells[(row.model, row.mode, "measured")][row.benchmark] == row.accuracy
    people = aggregate([replace(r, model="people") for r in unperturbed if r.model.startswith("human/")])
    for row in people:
        assert board.cells[("people (3 persons)", "0-shot", "people, pooled")][row.benchmark] == row.accuracy
    chance = {r.benchmark: r.accuracy for r in report_rows([], (), [ILLUSION, TOUCHING]) if r.source == "chance"}
    assert board.cells[("chance", "any", "chance")] == chance
    frame = board.table.data
    assert list(frame["source"][:2]) == ["chance", "people, pooled"]  # pinned above everything
    # The ranked rows (models and papers' numbers alike) best first by their mean over the benchmarks
    # every one of them has; the rows left out of the ranking after them, with no mean.
    ranked = frame[~frame["rank"].isin(["", "–"])]
    assert list(ranked["rank"]) == [str(n) for n in range(1, len(ranked) + 1)] and len(ranked) >= 2
    means = [float(m.split()[0]) for m in ranked["mean"]]
    assert means == sorted(means, reverse=True)
    assert all(board.ranked_over and set(board.ranked_over) <= set(board.cells[key]) for key in board.ranked)
    left = frame[frame["rank"] == "–"]
    assert (left["mean"] == "–").all() and left.index.min() > ranked.index.max()
    assert any(source.startswith("published (Rahmanzadehgervi") for source in frame["source"])
    assert {"baseline/pixels", FOOLED, STEADY} <= set(frame["model"]) and PROBED not in set(frame["model"])


def test_the_benchmark_table_pins_references_and_rounds_once(home):
    from ui.scoreboard.data import Filters, origins_for, pooled_people, scoreboard_rows, stored_tally
    from ui.scoreboard.tables import benchmark_table

    tally, origins = stored_tally(), origins_for(False)
    filters = Filters(ILLUSION, group="difference")
    rows = scoreboard_rows(tally, filters, origins)
    people = pooled_people(tally, filters, origins)
    # The rows report prints for the same results, decoded; people pooled as one observer.
    results = [r for r in decoded(home, origins) if r.benchmark == ILLUSION]
    assert rows == report_rows(results, ["difference"], [ILLUSION])
    humans = [replace(r, model="people (3 persons)") for r in results if r.model.startswith("human/")]
    assert people == aggregate(humans, by=["difference"])
    table = benchmark_table(rows + people, "difference")
    frame = table.table.data
    assert "benchmark" not in frame.columns and "difference" in frame.columns
    assert frame["source"].iloc[0] == "chance"  # pinned at the top, not hidden at the bottom
    pooled = frame[frame["model"] == "people (3 persons)"]
    assert len(pooled) == 1 + len(DIFFERENCES) and set(pooled["source"]) == {"people, pooled"}
    for value in frame["accuracy"]:
        assert value == "–" or len(value.split(".")[1]) == 1  # one decimal everywhere
    published = frame[frame["source"].str.startswith("published")]
    assert len(published) and all("[1]" in source for source in published["source"])  # VLMBias's note marker
    assert table.notes.startswith("[1] ")
    assert table.phone.count("<li") == len(frame)


def test_mode_agreement_defaults_to_modes_that_share_items(home):
    from ui.scoreboard.data import origins_for, stored_tally
    from ui.scoreboard.items import agreement_defaults

    origins = origins_for(False)
    model, modes, chosen = agreement_defaults(stored_tally(), TOUCHING, None, origins)
    assert len(chosen) >= 2 and set(chosen) <= set(modes)
    shown = decoded(home, origins)
    shared = None
    for mode in chosen:
        items = {r.item_id for r in shown if (r.benchmark, r.model, r.mode) == (TOUCHING, model, mode)}
        shared = items if shared is None else shared & items
    assert shared  # a diagram with items in it


def test_views_of_single_results_read_what_the_results_say(home):
    """Mode agreement and latencies, read as a few columns of one benchmark's results, agree with
    the same computed from every result decoded; and the table's own view leaves them to their
    view (an API call, which opens no view, gets them)."""
    import gradio as gr

    from probes.analysis.scoring import mode_agreement
    from ui.scoreboard import scoreboard
    from ui.scoreboard.data import Filters, origins_for, stored_tally
    from ui.scoreboard.items import agreement, latencies

    tally, origins = stored_tally(), origins_for(False)
    results = decoded(home, origins)
    for model, modes in ((FOOLED, ["0-shot", "4-shot"]), ("baseline/chance", ["0-shot", "4-shot"])):
        mine = [r for r in results if r.benchmark == TOUCHING and r.model == model]
        assert agreement(tally, Filters(TOUCHING), origins, model, modes) == mode_agreement(mine, modes)
    seconds: dict[tuple[str, str], list[float]] = {}
    for r in results:
        if r.benchmark == ILLUSION and r.latency is not None and r.status is not Status.ERROR:
            seconds.setdefault((r.model, r.mode), []).append(r.latency)
    expected = {key: (len(v), math.fsum(v) / len(v), sorted(v)[len(v) // 2]) for key, v in seconds.items()}
    assert latencies(tally, Filters(ILLUSION), origins) == expected and len(expected) > 3

    table_view = scoreboard(TOUCHING, [], "all", "all", "overall only", FOOLED, ["0-shot", "4-shot"], origins,
                            view="table")  # fmt: skip
    assert table_view[7] == table_view[8] == table_view[9] == gr.skip()  # agreement, its plot, latency
    api = scoreboard(TOUCHING, [], "all", "all", "overall only", FOOLED, ["0-shot", "4-shot"])
    assert set(api[7]["right in"]) >= {"both", "none"} and FOOLED in set(api[9]["model"])
    assert api[1].data.equals(scoreboard(TOUCHING, [], "all", "all", "overall only", None, [], origins=None,
                                         view="table")[1].data)  # fmt: skip


def test_the_visitors_store_is_counted_beside_the_operators(home, tmp_path, monkeypatch):
    """Public mode reads two stores: the counts of each, added, give the rows of their results."""
    from ui.scoreboard import data as scoreboard_data
    from ui.scoreboard.data import Filters, origins_for, pooled_people, scoreboard_rows, stored_tally
    from ui.sessions import shared_store

    own = Store(tmp_path / "visitor.sqlite")
    try:
        mine = [replace(r, model="openai/visitor") for r in decoded(home, origins_for(False))[:40]]
        again = [r for r in decoded(home, origins_for(False)) if r.benchmark == ILLUSION][:25]  # also the operator's
        own.record_many([(r, None, "") for r in mine + again])
        # Public mode's reading, as ui.sessions gives it: the operator's store and the visitor's own.
        monkeypatch.setattr(scoreboard_data, "reader_session", lambda request: "visitor")
        monkeypatch.setattr(scoreboard_data, "reading_session", lambda session: nullcontext([shared_store(), own]))
        tally, origins = stored_tally(), origins_for(False)
        both = decoded(home, origins) + [r for r in own.results() if r.origin.value in origins]
        for benchmark in (ILLUSION, TOUCHING):
            filters = Filters(benchmark, group="difference" if benchmark == ILLUSION else "gap")
            named = [r for r in both if r.benchmark == benchmark]
            assert scoreboard_rows(tally, filters, origins) == report_rows(named, filters.by, [benchmark])
            people = [replace(r, model="people (3 persons)") for r in named if r.model.startswith("human/")]
            assert pooled_people(tally, filters, origins) == aggregate(people, by=filters.by)
        assert tally.count(origins) == len(both)
    finally:
        own.close()


def test_new_results_show_without_a_refresh(filled, tmp_path, monkeypatch):
    """The counts are read again whenever a store changed: a result saved by the app's own
    connection or by another process shows on the next view."""
    from tests.ui.conftest import reset_caches
    from ui.scoreboard.data import stored_tally
    from ui.sessions import shared_store

    for part in filled.parent.glob(filled.name + "*"):
        shutil.copy(part, tmp_path / part.name)
    monkeypatch.setenv("PROBE_HOME", str(tmp_path))
    reset_caches()
    try:
        before = stored_tally()
        assert stored_tally() is before  # kept while nothing changed
        count = before.count()
        shared_store().record(Result(TOUCHING, "new-1", "openai/late", "0-shot", "none", Status.ANSWERED,
                                     correct=True, score=1.0))  # fmt: skip
        assert stored_tally().count() == count + 1
        with Store(tmp_path / filled.name) as other:  # another process's connection
            other.record(Result(TOUCHING, "new-2", "openai/late", "0-shot", "none", Status.ANSWERED, correct=False,
                                score=0.0))  # fmt: skip
        after = stored_tally()
        assert after.count() == count + 2
        assert after.overall[(TOUCHING, "openai/late", "0-shot", "none", "run")].scored == 2
    finally:
        shared_store().close()
        reset_caches()


def test_mode_agreement_defaults_are_the_modes_sharing_the_most_items(monkeypatch):
    """The chosen model and modes are those a direct count of the items each set of modes shares
    (set intersections) picks, on random coverage: models asked in 1 to 5 modes, items missing
    from some modes, a model asked for by name kept when it has two modes or more."""
    import itertools
    import random

    from ui.scoreboard import items as views
    from ui.scoreboard.answers import Answers
    from ui.scoreboard.data import mode_order

    modes = ["0-shot", "4-shot", "0-shot+CoT", "4-shot+CoT", "custom"]
    for seed in range(40):
        rng = random.Random(seed)
        rows = []
        for model in (f"m{n}" for n in range(rng.randint(1, 5))):
            for mode in rng.sample(modes, rng.randint(1, 5)):
                kept = rng.random()
                rows += [
                    (model, mode, f"i{i}", rng.choice(["none", "grayscale"])) for i in range(60) if rng.random() < kept
                ]
        read = Answers.of("b", [(m, o, p, i, "answered", i[-1] in "02468", None) for m, o, i, p in rows])
        monkeypatch.setattr(views, "answers", lambda *_, a=read: a)

        def shared(model, combo, r=rows):
            return len(set.intersection(*({(i, p) for m, o, i, p in r if (m, o) == (model, mode)} for mode in combo)))

        def best(model, r=rows):
            asked = sorted({o for m, o, *_ in r if m == model}, key=mode_order)
            found = (0, 0, asked[:3])
            for combo in itertools.chain(itertools.combinations(asked, 2), itertools.combinations(asked, 3)):
                if (shared(model, combo), len(combo)) > found[:2]:
                    found = (shared(model, combo), len(combo), list(combo))
            return found

        models = sorted({m for m, *_ in rows})
        asked_for = rng.choice(models + [None]) if models else None
        got = views.agreement_defaults(object(), "b", asked_for, ["run"])
        if not models:
            assert got == (None, [], [])
            continue
        several = asked_for is not None and len({o for m, o, *_ in rows if m == asked_for}) > 1
        candidates = [asked_for] if several else models
        chosen = max(candidates, key=lambda m: (best(m)[0], -candidates.index(m)))
        assert got == (chosen, sorted({o for m, o, *_ in rows if m == chosen}, key=mode_order), best(chosen)[2])
