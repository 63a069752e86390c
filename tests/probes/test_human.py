"""People as answerers: names, and answers graded by the benchmark's own parser and grader."""

import pytest

from probes.analysis.scoring import aggregate
from probes.core.registry import get_benchmark
from probes.core.types import Status
from probes.people import human


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("Ada", "Ada"),
        ("  Ada   Lovelace ", "Ada Lovelace"),
        ("ada_2-b", "ada_2-b"),
        ("さくら", "さくら"),
        ("x" * 40, "x" * 40),
    ],
)
def test_names_are_trimmed_and_kept(given, stored):
    assert human.check_name(given) == stored
    assert human.model_id(given) == f"human/{stored}"


@pytest.mark.parametrize(
    ("given", "message"),
    [("", "enter your name"), ("   ", "enter your name"), ("x" * 41, "at most 40"), ("a|b", r"not \|"),
     ("../etc", "not . /"), ("<b>", "not < >")],
)  # fmt: skip
def test_bad_names_say_what_is_allowed(given, message):
    with pytest.raises(human.NameRejected, match=message):
        human.check_name(given)


def test_a_yes_no_answer_is_graded_and_timed():
    benchmark = get_benchmark("blind/touching-circles")
    item = benchmark.items()[0]
    right = item.target_text()
    wrong = "No" if right == "Yes" else "Yes"
    good = human.answer_result(benchmark, item, right, "Ada", 3.21234)
    bad = human.answer_result(benchmark, item, wrong, "Ada", 1.0)
    assert (good.correct, good.score, good.status) == (True, 1.0, Status.ANSWERED)
    assert (bad.correct, bad.score) == (False, 0.0)
    assert (good.model, good.mode, good.perturbation, good.latency) == ("human/Ada", "0-shot", "none", 3.212)
    assert good.reply == right and good.parsed == item.target
    assert good.groups == dict(item.groups) and good.item_ref.item_id == item.id


def test_a_chosen_label_and_typed_numbers_and_pairs_go_through_the_parser(tmp_path):
    choice = get_benchmark("shitsukan/classification")
    item = choice.items()[0]
    label = item.labels[item.target]
    assert human.answer_result(choice, item, label, "Ada", 0).correct is True
    pairs = get_benchmark("blind/grid-count")
    grid = pairs.items()[0]
    rows, columns = grid.target
    result = human.answer_result(pairs, grid, f"{rows}x{columns}", "Ada", 0)
    assert (result.parsed, result.correct) == ([rows, columns], True)
    assert human.answer_result(pairs, grid, "three and four?", "Ada", 0).status is Status.UNPARSED


def test_people_score_beside_models_in_the_report(store):
    benchmark = get_benchmark("blind/touching-circles")
    first, second = benchmark.items()[:2]
    wrong = "No" if second.target_text() == "Yes" else "Yes"
    store.record_many([(human.answer_result(benchmark, first, first.target_text(), "Ada", 2.0), None, ""),
                       (human.answer_result(benchmark, second, wrong, "Ada", 4.0), None, "")])  # fmt: skip
    [row] = aggregate(store.results())
    assert (row.model, row.n, row.correct, row.accuracy, row.mean_latency) == ("human/Ada", 2, 1, 50.0, 3.0)


@pytest.mark.parametrize(
    "benchmark_id",
    ["illusion/mueller-lyer", "illusion/zoellner", "blind/touching-circles", "blind/olympic-circles",
     "blind/nested-squares", "shitsukan/classification", "blind/line-intersections"],
)  # fmt: skip
def test_a_tapped_answer_is_read_as_the_reader_reads_it(benchmark_id):
    """A button's or a key's answer takes the short path (`human.tapped`): the same value, grade
    and result as the full reader gives the same text, for every answer a button can send."""
    from probes.reading.grading import grade_reply

    benchmark = get_benchmark(benchmark_id)
    for item in benchmark.items()[:12]:
        sent = [*item.labels, *(label.upper() for label in item.labels)] if item.options else []
        sent += ["Yes", "no", " yes "] + [str(n) for n in (0, 3, 7, 12, 140)]
        for answer in sent:
            quick = human.tapped(benchmark, item, answer)
            full = benchmark.parse_reply(answer, item)
            if quick is not None:
                assert (quick.value, quick.status) == (full.value, full.status), (benchmark_id, answer)
            tapped_result = human.answer_result(benchmark, item, answer, "Ada", 1.0)
            read = grade_reply(benchmark, item, answer, tapped_result.model, human.CONDITION, tapped_result.item_ref,
                               latency=1.0)  # fmt: skip
            assert (tapped_result.status, tapped_result.parsed, tapped_result.correct, tapped_result.score) == (
                read.status, read.parsed, read.correct, read.score), (benchmark_id, answer)  # fmt: skip
