"""`import` grades a standalone record (one that carries its target) exactly as the benchmark's own
items are graded: the benchmark's answer kind and option labels, its category aliases; the
replies' own label style on request; non-finite targets refused."""

import json
import re
from pathlib import Path

import pytest

from probes.analysis.scoring import aggregate, published_rows
from probes.core.registry import get_benchmark
from probes.core.types import Status
from probes.running.importing import RecordError, import_file
from tests.conftest import REPO, run_cli

REFERENCE = REPO.parent / "shared" / "reference" / "illusionvqa" / "result_jsons"
TEXTURE_OPTIONS = ["つるつる", "ざらざら", "ふわふわ"]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def imported(tmp_path, store, benchmark_id: str, records: list[dict], **options) -> list:
    path = write_jsonl(tmp_path / "replies.jsonl", [{"item_id": i, **r} for i, r in enumerate(records)])
    import_file(path, get_benchmark(benchmark_id), "elsewhere", "0-shot", store, **options)
    return sorted(store.results(), key=lambda r: int(r.item_id))


# (benchmark, records, what each reply reads as): one case per benchmark family. A reply that a
# person reads as the target must be answered and right; a wrong one answered and wrong.
CASES = {
    "blind/circled-letter": (
        [{"response": "The letter being circled is 'g'.", "target": "g"},
         {"response": "The circled letter is **K**.", "target": "k"},
         {"response": "Answer: {T}", "target": "t"},
         {"response": "e", "target": "a"}],
        ["g", "K", "T", "e"], [True, True, True, False],
    ),
    "blind/line-intersections": (
        [{"response": "The lines intersect 2 times.", "target": 2}, {"response": "{0}", "target": "0"},
         {"response": "They cross once.", "target": 2}],
        [2, 0, 1], [True, True, False],
    ),
    "blind/touching-circles": (
        [{"response": "Yes, they are touching.", "target": "Yes"}, {"response": "No.", "target": False},
         {"response": "No", "target": "yes"}],
        ["yes", "no", "no"], [True, True, False],
    ),
    "blind/olympic-circles": ([{"response": "There are {5} circles.", "target": 5}], [5], [True]),
    "blind/olympic-pentagons": ([{"response": "{7}", "target": "6"}], [7], [False]),
    "blind/nested-squares": ([{"response": "I count 3 squares.", "target": "{3}"}], [3], [True]),
    "blind/subway-paths": ([{"response": "{2}", "target": 2}], [2], [True]),
    "blind/grid-count": (
        [{"response": "rows={5} columns={6}", "target": [5, 6]}, {"response": "(4,5)", "target": "(4, 5)"},
         {"response": "The table has 7 rows and 8 columns.", "target": "8x7"}],
        [[5, 6], [4, 5], [7, 8]], [True, True, False],
    ),
    # The paper's digits 0..N-1, full-width and Japanese answer forms included.
    "shitsukan/classification": (
        [{"response": "1", "target": "ざらざら", "options": TEXTURE_OPTIONS},
         {"response": "２", "target": "2", "options": TEXTURE_OPTIONS},
         {"response": "答え：0", "target": "ふわふわ", "options": TEXTURE_OPTIONS}],
        [1, 2, 0], [True, True, False],
    ),
    # Options "Image 1".."Image 4" are the benchmark's own: a record may leave them out, and its
    # target is the image number, as in the release.
    "discribench": (
        [{"response": "Answer: Image 2\nReason: the bowl of broccoli.", "target": 2}, {"response": "3", "target": 3},
         {"response": "Answer: 4", "target": 1}],
        [1, 2, 3], [True, True, False],
    ),
    "illusionvqa/soft-localization": (
        [{"response": "b", "target": "The right object",
          "options": ["The left object", "The right object", "Both objects", "Neither object"]}],
        [1], [True],
    ),
    "illusion/mueller-lyer": (
        [{"response": "a", "target": "top", "options": ["top", "bottom"]},
         {"response": "The bottom one.", "target": "a", "options": ["top", "bottom"]}],
        [0, 1], [True, False],
    ),
}  # fmt: skip


# Every illusion family is a two-alternative choice labelled a/b, as illusion/mueller-lyer above.
for _family in ("ponzo", "ebbinghaus", "delboeuf", "vertical-horizontal", "zoellner", "poggendorff"):
    CASES[f"illusion/{_family}"] = (
        [{"response": "Answer: b", "target": "second", "options": ["first", "second"]}],
        [1],
        [True],
    )


@pytest.mark.parametrize("benchmark_id", list(CASES))
def test_a_standalone_record_is_read_with_the_benchmarks_own_kind_and_labels(tmp_path, store, benchmark_id):
    records, parsed, correct = CASES[benchmark_id]
    results = imported(tmp_path, store, benchmark_id, records)
    assert [r.status for r in results] == [Status.ANSWERED] * len(records), [r.reply for r in results]
    assert [r.parsed for r in results] == parsed
    assert [r.correct for r in results] == correct


def test_texture_words_are_scored_by_match_rate(tmp_path, store):
    [result] = imported(tmp_path, store, "shitsukan/generation",
                        [{"response": "つやつや、ふわふわ、硬い", "target": ["つやつや", "硬い", "冷たい"]}])  # fmt: skip
    assert result.status is Status.ANSWERED and result.score == pytest.approx(2 / 3)


def test_a_yes_no_reply_in_the_questions_words_reads_when_the_record_gives_the_question(tmp_path, store):
    [result] = imported(tmp_path, store, "blind/touching-circles", [{
        "response": "They do not overlap.", "target": "no",
        "question": "Are the two circles overlapping? Answer with Yes/No.",
    }])  # fmt: skip
    assert (result.status, result.parsed, result.correct) == (Status.ANSWERED, "no", True)


@pytest.mark.parametrize(
    ("benchmark_id", "record", "message"),
    [("blind/line-intersections", {"target": "two"}, "not an answer of blind/line-intersections (a whole number)"),
     ("blind/touching-circles", {"target": 3}, "(yes or no)"),
     ("blind/grid-count", {"target": [5]}, "([rows, columns])"),
     ("blind/circled-letter", {"target": "gh"}, "(a single letter)"),
     ("shitsukan/classification", {"target": "0"}, "multiple choice: give the item's options"),
     ("discribench", {"target": 5}, "not one of the options (an option's text, or its label: 1, 2, 3, 4)")],
)  # fmt: skip
def test_a_target_of_another_kind_is_refused_with_what_the_benchmark_expects(
    tmp_path, store, benchmark_id, record, message
):
    with pytest.raises(RecordError, match=re.escape(message)):
        imported(tmp_path, store, benchmark_id, [{"response": "x", **record}])
    assert store.count() == 0


@pytest.mark.parametrize("number", ["NaN", "1e400", "-Infinity", "[1e400, 2]"])
def test_non_finite_targets_are_refused(tmp_path, number):
    path = tmp_path / "r.jsonl"
    path.write_text(f'{{"item_id": 1, "response": "3", "target": {number}}}\n')
    done = run_cli("import", str(path), "--benchmark", "blind/grid-count" if "[" in number else "blind/nested-squares",
                   "--model", "m", "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: r.jsonl line 1: holds") and "not a finite number" in done.stderr
    assert done.stderr.count("\n") == 1


def test_claudes_misc_category_sits_beside_the_published_miscellaneous_row(tmp_path, store):
    options = ["No.", "Yes."]
    results = imported(tmp_path, store, "illusionvqa/comprehension",
                       [{"response": "b", "target": "Yes.", "options": options, "category": "misc"},
                        {"response": "a", "target": "Yes.", "options": options, "category": "counting"}])  # fmt: skip
    assert {r.groups["category"] for r in results} == {"Miscellaneous"}
    assert [r.groups["raw_category"] for r in results] == ["misc", "counting"]
    measured = {row.group for row in aggregate(results, by=["category"])}
    published = {row.group for row in published_rows(["illusionvqa/comprehension"], by=["category"])}
    assert "category=Miscellaneous" in measured & published


def test_replies_in_another_label_style_read_with_labels(tmp_path, store):
    options = ["No.", "Yes.", "Cannot tell from the image."]
    records = [{"response": "2", "target": "Yes.", "options": options}, {"response": "3", "target": "2",
                                                                        "options": options}]  # fmt: skip
    results = imported(tmp_path, store, "illusionvqa/comprehension", records, labels="digit1")
    assert [(r.status, r.parsed, r.correct) for r in results] == [(Status.ANSWERED, 1, True),
                                                                  (Status.ANSWERED, 2, False)]  # fmt: skip


INSTRUCTBLIP = REFERENCE / "instructBLIP_comprehension.json"


@pytest.mark.skipif(
    not INSTRUCTBLIP.is_file(), reason="the papers' reference data (../shared/reference) is not beside the checkout"
)
def test_instructblips_released_digits_import_to_the_papers_figure(tmp_path):
    """InstructBLIP's replies are 1-based digits ("2"): read as letters nothing is answered; read
    with --labels digit1 the total is the paper's Table 1 figure within a point."""
    released = json.loads(INSTRUCTBLIP.read_text(encoding="utf-8"))
    path = write_jsonl(tmp_path / "blip.jsonl", [
        {"item_id": r["id"], "response": r["blip_answer"], "target": r["answer"], "options": r["options"],
         "category": r["category"]}
        for r in released
    ])  # fmt: skip
    [paper] = [row.accuracy for row in published_rows(["illusionvqa/comprehension"])
               if row.model == "InstructBLIP" and row.group == "overall"]  # fmt: skip
    totals = {}
    for labels in ("letter", "digit1"):
        store = tmp_path / f"{labels}.sqlite"
        done = run_cli("import", str(path), "--benchmark", "illusionvqa/comprehension", "--model", "InstructBLIP",
                       "--labels", labels, "--store", str(store))  # fmt: skip
        assert done.returncode == 0, done.stderr
        rows = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--no-references").stdout)
        [overall] = [r for r in rows if r["group"] == "overall"]
        totals[labels] = overall
    assert totals["letter"]["accuracy"] == 0.0 and totals["letter"]["unparsed"] == len(released)
    assert totals["digit1"]["n"] == len(released) and totals["digit1"]["unparsed"] <= 5
    assert abs(totals["digit1"]["accuracy"] - paper) <= 1.0, (totals["digit1"]["accuracy"], paper)


def test_an_unknown_label_style_is_a_usage_error(tmp_path):
    path = write_jsonl(
        tmp_path / "r.jsonl", [{"item_id": 1, "response": "a", "target": "No.", "options": ["No.", "Y"]}]
    )
    done = run_cli("import", str(path), "--benchmark", "illusionvqa/comprehension", "--model", "m", "--labels", "roman",
                   "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr and "digit1" in done.stderr
