"""`run --until-pse-width`'s closing line is `report --fit difference` of the same store (issue 34):
one answer per run, whichever command is asked. Against the simulated observer of
tests/support/observer.py, two models side by side: one fooled (a real PSE; its probabilities
exact, its choice drawn from them once per item, as a model sampling its reply would choose) and
one blind (0.7 on whichever option is listed first, whatever the picture). The blind one gets no PSE from either source; the fooled one the
same PSE from its choices, its probabilities and the line; and every fit the line quotes is,
character for character, what `report --fit difference` prints, with or without its filters,
also once the store holds more than one sweep's answers."""

from __future__ import annotations

import math
import random
import re

from tests.conftest import run_cli
from tests.support.observer import Observer
from tests.test_cli_adaptive import SWEEP, sweep_lines, verdicts
from tests.test_cli_adaptive import drawn_difference as drawn_difference  # the module's fixture

FOOLED_PSE, SLOPE = 0.06, 0.04
OK = re.compile(r"(\w+) ok, PSE (\S+), 95% interval \[(\S+), (\S+)\]")
SEPARATED = re.compile(r"(\w+) separated, PSE (\S+) between (\S+) and (\S+)")


class FooledAndBlind(Observer):
    """The observer of tests/support/observer.py as `fooled`, but as a model is: the probability
    it gives is its own belief shaken a little (noise on the log-odds, drawn once per item from
    the picture and the prompt), and its choice is drawn from that probability. `blind` ignores
    the picture."""

    def p_top(self, body: dict) -> tuple[float, str, str]:
        p, top, bottom = super().p_top(body)
        if body["model"] == "blind":
            return (0.7 if top < bottom else 0.3), top, bottom  # the first letter listed gets 0.7
        shaken = math.log(p / (1 - p)) + self.draw(body).gauss(0, 0.7)
        return 1 / (1 + math.exp(-shaken)), top, bottom

    def reply(self, body: dict) -> str:
        if body["model"] == "blind":
            return super().reply(body)
        p, top, bottom = self.p_top(body)
        draw = self.draw(body)
        draw.gauss(0, 1)  # past the shake's draw
        return top if draw.random() < p else bottom

    def draw(self, body: dict) -> random.Random:
        text = next(part["text"] for part in body["messages"][-1]["content"] if part["type"] == "text")
        return random.Random(f"{self.picture(body)}:{text}")


def reported(store, *filters: str) -> dict[tuple[str, str], str]:
    """`report --fit difference` as printed (its table), each row's fit said as the closing line
    says one, from the printed cells: (model, source) -> "choices ok, PSE ..."."""
    done = run_cli("report", "--store", str(store), "--fit", "difference", *filters)
    assert done.returncode == 0, done.stderr
    header, *lines = done.stdout.splitlines()
    names = re.split(r"\s{2,}", header)
    said = {}
    for line in lines:
        row = dict(zip(names, re.split(r"\s{2,}", line), strict=True))
        pse, low, high = row["pse"], row["pse_low"], row["pse_high"]
        if row["status"] == "ok":
            text = f"{row['source']} ok, PSE {pse}, 95% interval [{low}, {high}]"
        elif row["status"] == "separated":
            text = f"{row['source']} separated, PSE {pse} between {low} and {high}"
        else:
            assert pse == low == high == "-", row  # no PSE: nothing printed for it
            text = f"{row['source']} {row['status']}, no PSE"
        said[(row["model"].removeprefix("openai/"), row["source"])] = text
    return said


def interval(text: str) -> tuple[float, float, float]:
    """(pse, low, high) of a quoted fit with a PSE: an interval, or a step's bracket."""
    found = OK.fullmatch(text) or SEPARATED.fullmatch(text)
    assert found, text
    return tuple(float(found.group(i)) for i in (2, 3, 4))


def test_the_closing_line_is_report_fit_of_the_same_store(tmp_path, drawn_difference):
    store = tmp_path / "r.sqlite"
    args = ["run", "illusion/mueller-lyer", *SWEEP, "--model", "openai/fooled", "--model", "openai/blind",
            "--until-pse-width", "0.02", "--max-requests", "50", "--store", str(store)]  # fmt: skip
    with FooledAndBlind(drawn_difference, {"fooled": FOOLED_PSE, "blind": 0.0}, SLOPE) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-closing"}
        done = run_cli(*args, env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        lines = sweep_lines(done.stdout)
        assert set(lines) == {"fooled", "blind"}, done.stdout
        said = reported(store)
        for model, line in lines.items():
            quoted = verdicts(line)
            assert set(quoted) == {"choices", "probabilities"}, line.group(0)
            for source, text in quoted.items():
                assert text == said[(model, source)]  # the line is the report, character for character
            # ... and the report with the filters the line names.
            alone = reported(store, "--model", f"openai/{model}", "--mode", "0-shot", "--perturbation", "none")
            assert alone == {key: text for key, text in said.items() if key[0] == model}
        # The blind one: no PSE from its choices nor from its probabilities, though it was asked
        # as many items as the fooled one (it never pinned anything, so it ran to the cap).
        blind = verdicts(lines["blind"])
        assert all(re.fullmatch(rf"{source} (flat|outside the sweep), no PSE", text) for source, text in blind.items())
        assert lines["blind"].group(8).startswith("reached --max-requests")
        # The fooled one: the same PSE from both sources, each interval holding the truth.
        fooled = {source: interval(text) for source, text in verdicts(lines["fooled"]).items()}
        for source, (_, low, high) in fooled.items():
            assert low <= FOOLED_PSE <= high, (source, fooled)
        (_, c_low, c_high), (_, p_low, p_high) = fooled["choices"], fooled["probabilities"]
        assert p_low <= c_high and c_low <= p_high
        # A second sweep (other items first) adds to the store: its line is the report of all of it.
        again = run_cli(*args[:-4], "--max-requests", "60", "--seed", "7", "--store", str(store), env=env, timeout=600)
        assert again.returncode == 0, again.stderr
    said = reported(store)
    for model, line in sweep_lines(again.stdout).items():
        assert {source: text for source, text in verdicts(line).items()} == {
            source: text for (who, source), text in said.items() if who == model
        }
