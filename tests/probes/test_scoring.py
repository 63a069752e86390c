import pytest

from probes.analysis.scoring import aggregate, wilson
from probes.core.types import AnswerKind, Parsed, Result, Status
from probes.reading.correctness import is_correct as grade
from probes.reading.parsing import parse


def test_wilson_matches_published_values():
    # Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662; 15/148 -> 0.0624 to 0.1605
    low, high = wilson(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    low, high = wilson(15, 148)
    assert (round(low, 4), round(high, 4)) == (0.0624, 0.1605)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)
    assert wilson(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)


def test_grading_per_kind():
    assert grade(AnswerKind.YES_NO, parse("Yes.", AnswerKind.YES_NO), "yes") is True
    assert grade(AnswerKind.LETTER, parse("E", AnswerKind.LETTER), "e") is True
    assert grade(AnswerKind.PAIR, Parsed([5, 6], Status.ANSWERED), (5, 6)) is True
    assert grade(AnswerKind.TEXT, Parsed("The Cat!", Status.ANSWERED), "the cat") is True
    assert grade(AnswerKind.NUMBER, Parsed(None, Status.UNPARSED), 3) is False
    assert grade(AnswerKind.CHOICE, Parsed(None, Status.REFUSED), 0) is False


def _result(item, correct, status=Status.ANSWERED, group="a", latency=1.0):
    score = None if correct is None else float(correct)
    return Result("b", item, "m", "0-shot", "none", status, correct=correct, score=score, groups={"g": group},
                  latency=latency)  # fmt: skip


def test_fractional_scores_average_and_unscored_results_are_left_out():
    results = [
        Result("b", "1", "m", "0-shot", "none", Status.ANSWERED, score=1 / 3),
        Result("b", "2", "m", "0-shot", "none", Status.ANSWERED, score=2 / 3),
        Result("b", "3", "m", "0-shot", "none", Status.UNPARSED, score=None),  # malformed: excluded, counted
    ]
    [row] = aggregate(results)
    assert row.n == 2 and row.accuracy == 50.0 and row.unparsed == 1


def test_aggregate_counts_unparsed_as_wrong_and_leaves_errors_out():
    results = [
        _result("1", True),
        _result("2", True, group="b"),
        _result("3", False, Status.UNPARSED, group="b"),
        _result("4", None, Status.ERROR, latency=None),
    ]
    rows = {row.group: row for row in aggregate(results, by=["g"])}
    overall = rows["overall"]
    assert (overall.n, overall.correct, overall.unparsed, overall.errors) == (3, 2, 1, 1)
    assert overall.accuracy == pytest.approx(66.67)
    assert overall.ci_low < overall.accuracy < overall.ci_high
    assert rows["g=a"].n == 1 and rows["g=b"].accuracy == 50.0
    assert list(rows) == ["overall", "g=a", "g=b"]


def test_numeric_groups_sort_by_value():
    results = [_result(str(i), True, group=g) for i, g in enumerate(["1/4", "1/5", "-0.15", "+0.50", "+0.05"])]
    groups = [row.group for row in aggregate(results, by=["g"])]
    assert groups == ["overall", "g=-0.15", "g=+0.05", "g=1/5", "g=1/4", "g=+0.50"]


def _verdict(item, mode, correct, status=Status.ANSWERED, model="m", perturbation="none"):
    return Result("b", item, model, mode, perturbation, status, correct=correct)


def test_mode_agreement_counts_each_venn_region_once():
    from probes.analysis.scoring import mode_agreement

    right = {  # item -> modes that get it right
        "1": ("0-shot", "4-shot", "4-shot+CoT"),
        "2": ("0-shot", "4-shot", "4-shot+CoT"),
        "3": ("0-shot",),
        "4": ("4-shot", "4-shot+CoT"),
        "5": (),
        "6": ("4-shot+CoT",),
    }
    modes = ["0-shot", "4-shot", "4-shot+CoT"]
    results = [_verdict(item, mode, mode in modes_right) for item, modes_right in right.items() for mode in modes]
    agreement = mode_agreement(results, modes)
    assert agreement["items"] == 6 and agreement["modes"] == modes
    assert agreement["right"] == {"0-shot": 3, "4-shot": 3, "4-shot+CoT": 4}
    regions = agreement["regions"]
    assert len(regions) == 8 and sum(regions.values()) == 6
    assert regions[("0-shot", "4-shot", "4-shot+CoT")] == 2
    assert regions[("0-shot",)] == 1 and regions[("4-shot", "4-shot+CoT")] == 1 and regions[("4-shot+CoT",)] == 1
    assert regions[()] == 1 and regions[("0-shot", "4-shot")] == 0 and regions[("4-shot",)] == 0


def test_mode_agreement_leaves_out_items_not_graded_in_every_mode_and_keeps_models_apart():
    from probes.analysis.scoring import mode_agreement

    results = [
        _verdict("1", "0-shot", True),
        _verdict("1", "4-shot", False, Status.UNPARSED),  # unparsed is wrong, and counts
        _verdict("2", "0-shot", True),
        _verdict("2", "4-shot", None, Status.ERROR),  # no reply in 4-shot: item 2 is left out
        _verdict("3", "0-shot", True),  # never asked in 4-shot
        _verdict("1", "0-shot", True, model="other"),
        _verdict("1", "4-shot", True, model="other"),
        _verdict("1", "4-shot+CoT", True),  # a mode not asked about is ignored
    ]
    agreement = mode_agreement(results, ["0-shot", "4-shot"])
    assert agreement["items"] == 2
    assert agreement["regions"] == {(): 0, ("0-shot",): 1, ("4-shot",): 0, ("0-shot", "4-shot"): 1}
    with pytest.raises(ValueError):
        mode_agreement(results, ["0-shot", "0-shot"])
