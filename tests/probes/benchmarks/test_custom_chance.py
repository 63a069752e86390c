"""baseline/chance on a custom folder guesses among answers of each item's own kind: a yes/no item
is answered Yes or No, a counting item with a number, never another kind's answer."""

import asyncio
import json

from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind, Status
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from tests.conftest import make_folder, run_cli, shapes_image


def blindtest_like_folder(root):
    """Items in the shapes a folder of the paper's BlindTest images has: touching circles (yes/no),
    line intersections (0-2), nested squares (2-5), grids (rows, columns), a circled letter."""
    records = []
    for i in range(8):
        records.append({"id": f"touch-{i}", "image": "c.png", "question": "Are the two circles touching each other? "
                        "Answer with Yes/No.", "answer": "yes" if i % 2 else "no", "category": "touching"})  # fmt: skip
        records.append({"id": f"lines-{i}", "image": "c.png", "question": "How many times do the lines intersect?",
                        "answer": i % 3, "category": "lines"})  # fmt: skip
        records.append({"id": f"squares-{i}", "image": "s.png", "question": "Count the total number of squares.",
                        "answer": 2 + i % 4, "category": "squares"})  # fmt: skip
    records.append({"id": "grid", "image": "s.png", "question": "How many rows and columns?", "answer": [5, 6]})
    records.append({"id": "grid2", "image": "s.png", "question": "How many rows and columns?", "answer": [4, 4]})
    records.append({"id": "letter", "image": "c.png", "question": "Which letter is circled?", "answer": "g",
                    "kind": "letter"})  # fmt: skip
    return make_folder(root, records, {"c.png": shapes_image("circle"), "s.png": shapes_image("square")})


def test_each_item_draws_from_its_own_kind(tmp_path):
    items = {item.id: item for item in get_benchmark(f"custom:{blindtest_like_folder(tmp_path / 'set')}").items()}
    assert items["touch-0"].possible_answers() == ("Yes", "No")
    # Numbers: every whole number between the folder's smallest and largest count, nothing else.
    assert items["lines-0"].possible_answers() == ("0", "1", "2", "3", "4", "5")
    assert items["squares-3"].possible_answers() == items["lines-0"].possible_answers()
    assert set(items["grid"].possible_answers()) == {"(5, 6)", "(4, 4)"}
    # One letter in the folder: a guess among all 26, not the answer itself.
    assert len(items["letter"].possible_answers()) == 26


def test_a_single_number_does_not_make_chance_always_right(tmp_path):
    folder = make_folder(tmp_path / "one", [{"id": "a", "image": "c.png", "question": "How many?", "answer": 3}],
                         {"c.png": shapes_image("circle")})  # fmt: skip
    [item] = get_benchmark(f"custom:{folder}").items()
    assert item.possible_answers() == tuple(str(n) for n in range(7))


def test_a_huge_span_of_numbers_falls_back_to_the_answers_themselves(tmp_path):
    folder = make_folder(tmp_path / "far", [
        {"id": "a", "image": "c.png", "question": "How many?", "answer": 3},
        {"id": "b", "image": "c.png", "question": "How many?", "answer": 10**9},
    ], {"c.png": shapes_image("circle")})  # fmt: skip
    item = get_benchmark(f"custom:{folder}").items()[0]
    assert item.possible_answers() == ("3", "1000000000")


def test_chance_answers_every_item_in_its_own_kind(tmp_path, store):
    benchmark = get_benchmark(f"custom:{blindtest_like_folder(tmp_path / 'set')}")
    asyncio.run(run(RunPlan(benchmark, benchmark.items(), [create("baseline/chance")]), store))
    results = store.results()
    assert len(results) == len(benchmark.items())
    # Every guess reads as an answer of the item's kind: none unparsed, as on the folder
    # (14 of 16 touching-circle items answered with numbers).
    assert all(r.status is Status.ANSWERED for r in results), [(r.item_id, r.reply) for r in results]
    kinds = {item.id: item.kind for item in benchmark.items()}
    for result in results:
        if kinds[result.item_id] is AnswerKind.YES_NO:
            assert result.reply in ("Yes", "No")
        elif kinds[result.item_id] is AnswerKind.NUMBER:
            assert result.reply.isdigit() and 0 <= int(result.reply) <= 5


def test_chance_through_the_cli_on_yes_no_items_is_near_half(tmp_path):
    folder = make_folder(tmp_path / "yn", [
        {"id": f"q{i}", "image": "c.png", "question": "Touching?", "answer": "yes" if i % 2 else "no"}
        for i in range(40)
    ] + [{"id": f"n{i}", "image": "c.png", "question": "How many?", "answer": 10 + i} for i in range(10)],
        {"c.png": shapes_image("circle")})  # fmt: skip
    store = tmp_path / "r.sqlite"
    done = run_cli("run", f"custom:{folder}", "--model", "baseline/chance", "--store", str(store))
    assert done.returncode == 0, done.stderr
    rows = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--no-references").stdout)
    [overall] = [r for r in rows if r["group"] == "overall"]
    assert overall["unparsed"] == 0 and overall["n"] == 50
