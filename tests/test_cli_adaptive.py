"""`run --until-pse-width W` through the command line, against a local OpenAI-protocol server that
answers as a simulated observer with a known PSE (tests/support/observer.py): it recognises the
picture it is shown, and gives the answer "top line longer" with probability
logistic((difference - pse) / slope), the more likely answer as its reply and both as its logprobs."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from tests.conftest import run_cli
from tests.support.fake_servers import FakeOpenAIServer
from tests.support.observer import Observer, drawn_differences

DIFFERENCES = "-0.2,-0.15,-0.1,-0.05,0,0.05,0.1,0.15,0.2,0.25,0.3"
SWEEP = ["--param", f"difference={DIFFERENCES}", "--param", "illusion_strength=30", "--param", "inducers=with",
         "--param", "canvas=384", "--param", "seed=0,1,2"]  # fmt: skip
GRID = 11 * 3 * 2  # differences x seeds x the two wordings
SLOPE = 0.04
PSES = {"early": -0.07, "late": 0.06}  # each model's point of subjective equality
LINE = re.compile(
    r"until PSE width (\S+): openai/(\w+) 0-shot none: (\d+) of (\d+) items asked \((\d+) sent; (\d+) by probabilities, "
    r"(\d+) by choice\), (.*?); report --fit difference: (.*)"
)
OK = re.compile(r"(\w+) ok, PSE (\S+), 95% interval \[(\S+), (\S+)\]")


@pytest.fixture(scope="module")
def drawn_difference() -> dict[str, float]:
    """Each picture of the sweep (by its pixels) -> the difference it was drawn with."""
    return drawn_differences({name: values.split(",") for name, _, values in (p.partition("=") for p in SWEEP[1::2])})


def observer(drawn: dict[str, float], **kwargs) -> Observer:
    return Observer(drawn, PSES, SLOPE, **kwargs)


def sweep_lines(stdout: str) -> dict[str, re.Match]:
    found = {m.group(2): m for m in map(LINE.match, stdout.splitlines()) if m}
    return found


def verdicts(line: re.Match) -> dict[str, str]:
    """The closing line's fits, by source: "choices ok, PSE ..." and so on."""
    return {part.split(" ", 1)[0]: part for part in line.group(9).split("; ")}


def pse_of(verdict: str) -> tuple[float, float, float]:
    _, pse, low, high = OK.fullmatch(verdict).groups()
    return float(pse), float(low), float(high)


def stored_items(store) -> list[tuple[str, str]]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT model, item_id FROM results").fetchall()


def test_the_sweep_stops_at_the_width_long_before_the_grid_and_stores_what_it_asked(tmp_path, drawn_difference):
    store = tmp_path / "r.sqlite"
    args = ["run", "illusion/mueller-lyer", *SWEEP, "--model", "openai/early", "--model", "openai/late",
            "--until-pse-width", "0.1", "--store", str(store)]  # fmt: skip
    with observer(drawn_difference) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-adaptive"}
        done = run_cli(*args, env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        lines = sweep_lines(done.stdout)
        assert set(lines) == {"early", "late"}, done.stdout
        sent = server.request_count
        asked_by_model = {}
        for model, line in lines.items():
            asked, pool, sent_here, graded, chosen = (int(line.group(i)) for i in range(3, 8))
            assert line.group(8).startswith("stopped for the width")
            assert pool == GRID and asked < 0.6 * GRID  # far fewer than the full grid
            assert sent_here == asked and graded == asked and chosen == 0  # every reply graded by its probabilities
            pse, low, high = pse_of(verdicts(line)["probabilities"])  # the fit that stopped it: narrower than asked
            assert high - low < 0.1 and low <= PSES[model] <= high and abs(pse - PSES[model]) < 0.02
            asked_by_model[model] = asked
        bodies = [r["body"] for r in server.requests]
        assert all(body["logprobs"] is True for body in bodies)  # the sweep asks for probabilities
        assert sent == sum(asked_by_model.values())
        # Stored: exactly what was asked, each item once per model.
        rows = stored_items(store)
        assert len(rows) == len(set(rows)) == sent
        assert {model: sum(m == f"openai/{model}" for m, _ in rows) for model in PSES} == asked_by_model
        # The same command again asks the same items and finds them all in the store: nothing sent.
        again = run_cli(*args, env=env, timeout=600)
        assert again.returncode == 0, again.stderr
        assert server.request_count == sent
        repeated = sweep_lines(again.stdout)
        for model, line in lines.items():
            same = (3, 6, 8, 9)  # items asked, graded, why it stopped, the fits
            assert [repeated[model].group(i) for i in same] == [line.group(i) for i in same]
            assert repeated[model].group(5) == "0"  # sent
    # `report --fit difference` reads them: a graded fit of the answers asked, near each PSE, the
    # very interval the line printed (and that stopped the sweep).
    report = run_cli("report", "--store", str(store), "--format", "json", "--fit", "difference")
    assert report.returncode == 0, report.stderr
    graded = {row["model"]: row for row in json.loads(report.stdout) if row["source"] == "probabilities"}
    for model, asked in asked_by_model.items():
        row = graded[f"openai/{model}"]
        assert row["n"] == asked and abs(row["pse"] - PSES[model]) < 0.02
        shown = f"probabilities ok, PSE {row['pse']:.4g}, 95% interval [{row['pse_low']:.4g}, {row['pse_high']:.4g}]"
        assert verdicts(lines[model])["probabilities"] == shown


def test_choices_alone_steer_the_sweep_and_max_requests_caps_it(tmp_path, drawn_difference):
    store = tmp_path / "r.sqlite"
    with observer(drawn_difference, logprobs="omit") as server:  # a server that answers without logprobs
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-adaptive"}
        done = run_cli("run", "illusion/mueller-lyer", *SWEEP, "--model", "openai/late", "--until-pse-width", "0.01",
                       "--max-requests", "12", "--store", str(store), env=env, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.request_count == 12
    [line] = sweep_lines(done.stdout).values()
    assert (line.group(3), line.group(6), line.group(7)) == ("12", "0", "12")
    assert line.group(8).startswith("reached --max-requests")
    assert len(stored_items(store)) == 12
    # The design asks where the answer turns (the observer's step, between 0.05 and 0.1), not
    # down the grid: most of its requests are next to the step, and both sides of it are asked.
    asked = [server.difference(r["body"]) for r in server.requests]
    near = [x for x in asked if 0 <= x <= 0.15]
    assert 0.05 in asked and 0.1 in asked and len(near) >= 8, asked


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--until-pse-width", "0"], "give a positive number"),
        (["--until-pse-width", "-0.05"], "give a positive number"),
        (["--until-pse-width", "nan"], "give a positive number"),
        (["--until-pse-width", "wide"], "give a positive number"),
        (["--until-pse-width", "0.05", "--max-requests", "0"], "--max-requests must be at least 1"),
        (["--max-requests", "5"], "--max-requests goes with --until-pse-width"),
    ],
)
def test_a_width_that_is_not_a_positive_number_is_refused_in_one_line(tmp_path, extra, says):
    with FakeOpenAIServer() as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-adaptive"}
        done = run_cli("run", "illusion/mueller-lyer", *SWEEP, "--model", "openai/late", *extra,
                       "--store", str(tmp_path / "r.sqlite"), env=env)  # fmt: skip
        assert server.request_count == 0
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and says in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("bench_id", "params", "says"),
    [
        ("blind/circled-letter", [], "needs items with a 'difference'"),
        ("illusion/mueller-lyer", ["--param", "difference=0.1", "--param", "canvas=384"], "needs a swept difference"),
    ],
)
def test_a_run_with_nothing_to_sweep_is_refused_in_one_line(tmp_path, bench_id, params, says):
    done = run_cli("run", bench_id, *params, "--model", "baseline/chance", "--until-pse-width", "0.05",
                   "--store", str(tmp_path / "r.sqlite"))  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and says in done.stderr
    assert not (tmp_path / "r.sqlite").exists() or stored_items(tmp_path / "r.sqlite") == []
