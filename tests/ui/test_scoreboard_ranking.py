"""The leaderboard ranks like with like (issue 37): a mean over different benchmark sets is not a
ranking, so the rank is over the benchmarks every ranked row has, each figure with its n and
interval, and the note says which rows were left out and for want of what. Built from counts as
the Scoreboard keeps them, without a browser."""

from __future__ import annotations

import re
from collections import defaultdict

from probes.analysis.scoring import Counts
from probes.core.types import Result, Status
from ui.scoreboard.leaderboard import build, ranked_over

TOUCHING = "blind/touching-circles"  # the BlindTest paper publishes Gemini-1.5 Pro's 92.8 here
ILLUSION = "illusion/mueller-lyer"
LINES = "blind/line-intersections"
MEASURED = re.compile(r"^\d+\.\d \[\d+\.\d–\d+\.\d\] n=\d+$")


def counts(*runs: tuple[str, str, int, int]) -> dict[tuple, Counts]:
    """(benchmark, model, right, asked) runs as the Scoreboard's overall counts (0-shot, unperturbed)."""
    found: dict[tuple, list[Result]] = defaultdict(list)
    for benchmark, model, right, asked in runs:
        for number in range(asked):
            correct = number < right
            found[(benchmark, model, "0-shot", "none", "run")].append(
                Result(
                    benchmark,
                    f"item-{number}",
                    model,
                    "0-shot",
                    "none",
                    Status.ANSWERED,
                    reply="x",
                    correct=correct,
                    score=float(correct),
                )  # fmt: skip
            )
    return {head: Counts.of(results) for head, results in found.items()}


def row_of(board, model: str) -> dict:
    frame = board.table.data
    rows = frame[frame["model"] == model].to_dict("records")
    assert len(rows) == 1, (model, rows)
    return rows[0]


def test_models_on_disjoint_benchmarks_are_not_ranked_against_each_other():
    # The baseline is perfect on one benchmark, a model middling on another; the papers publish
    # numbers on each. A mean over whatever each row has put the baseline's 100 first, above
    # Gemini-1.5 Pro's 92.8 on another benchmark.
    board = build(counts((ILLUSION, "baseline/pixels", 40, 40), (TOUCHING, "sim/model", 24, 40)))
    assert board.benchmarks == (TOUCHING, ILLUSION)
    over = set(board.ranked_over)
    assert len(over) == 1  # no benchmark is shared by both models: one set, never a mix
    for key in board.ranked:
        assert over <= board.cells[key].keys(), key  # every ranked row has a figure on every benchmark ranked over
    gemini = next(key for key in board.cells if key[0] == "Gemini-1.5 Pro")
    pixels = ("baseline/pixels", "0-shot", "measured")
    assert not (gemini in board.ranked and pixels in board.ranked)
    left = pixels if pixels not in board.ranked else gemini
    assert board.left_out[left] == tuple(sorted(over - board.cells[left].keys()))
    # The table says it: ranks 1.. for the ranked, a dash for the rest (after them), the mean over
    # the ranked benchmarks only.
    ranks = [row["rank"] for row in board.table.data.to_dict("records") if row["source"] not in ("chance",)]
    numbered = [rank for rank in ranks if rank not in ("", "–")]
    assert numbered == [str(n) for n in range(1, len(board.ranked) + 1)]
    assert ranks.index("–") > ranks.index(numbered[-1])  # left-out rows come last
    assert row_of(board, left[0])["rank"] == "–" and row_of(board, left[0])["mean"] == "–"
    # ... and the note names what it left out and why.
    assert f"over {next(iter(over))}, the benchmark every ranked row has" in board.note
    assert "**Left out of the ranking** (shown last)" in board.note and left[0] in board.note
    assert f"for want of a figure on {next(iter(over))}: " in board.note
    # Every measured figure, and a measured row's mean, has its interval and n beside it.
    for model in ("baseline/pixels", "sim/model"):
        row = row_of(board, model)
        figures = [row[b] for b in board.benchmarks if row[b] != "–"]
        assert figures and all(MEASURED.match(figure) for figure in figures), row
    ranked_measured = [key for key in board.ranked if key[2] == "measured"]
    assert ranked_measured and all(MEASURED.match(row_of(board, key[0])["mean"]) for key in ranked_measured)


def test_the_ranking_is_over_the_benchmarks_the_models_share_and_orders_by_their_mean_there():
    # One model is excellent on a benchmark the other never ran: only what both ran is compared.
    board = build(
        counts(
            (TOUCHING, "sim/a", 20, 40), (LINES, "sim/a", 40, 40),
            (TOUCHING, "sim/b", 30, 40), (ILLUSION, "sim/b", 0, 40),
        )
    )  # fmt: skip
    assert board.ranked_over == (TOUCHING,)
    measured = [key[0] for key in board.ranked if key[2] == "measured"]
    assert measured == ["sim/b", "sim/a"]  # 75% against 50% where both were measured, whatever else they have
    assert row_of(board, "sim/b")["mean"].startswith("75.0 [") and row_of(board, "sim/a")["mean"].startswith("50.0 [")
    assert row_of(board, "sim/a")["rank"] != "–" and row_of(board, "sim/b")["rank"] != "–"


def test_the_set_ranked_over_keeps_the_most_measured_work():
    rows = {
        ("a", "0-shot", "measured"): frozenset({"b1", "b2", "b3"}),
        ("b", "0-shot", "measured"): frozenset({"b1", "b2", "b3"}),
        ("c", "0-shot", "measured"): frozenset({"b4"}),
        ("paper", "0-shot", "published (X)"): frozenset({"b4"}),
    }
    assert ranked_over(rows) == {"b1", "b2", "b3"}  # two models on three benchmarks, not one on one
    assert ranked_over({("a", "0-shot", "measured"): frozenset({"b1", "b2"}),
                        ("b", "0-shot", "measured"): frozenset({"b2", "b3"})}) == {"b2"}  # fmt: skip
    assert ranked_over({}) == frozenset()
