"""Each main action scripted with gradio_client, as a Space is: probe, generate_stimulus,
run_eval, scoreboard."""

from __future__ import annotations

from tests.ui.conftest import patient_client


def test_every_main_api_name_answers_through_gradio_client(serve):
    client = patient_client(serve())
    named = client.view_api(return_format="dict")["named_endpoints"]
    assert {"/probe", "/generate_stimulus", "/run_eval", "/scoreboard"} <= set(named)

    *images, question, answer, status = client.predict(
        "blind/touching-circles", "gap=-0.1", 4, api_name="/generate_stimulus"
    )
    assert images[0] and "circles" in question and status == ""
    status, grid, prompts, query = client.predict(
        "baseline/chance", None, None, None, ["as asked", "upside down"], "", "", api_name="/probe"
    )
    assert "2 of 2 answered" in status and "baseline/chance" in grid and ("Yes" in grid or "No" in grid)
    assert "Prompt: as asked" in prompts and query.startswith("?probe=")

    values = {"benchmarks": ["blind/touching-circles"], "data": "", "params": "", "models": ["baseline/chance"],
              "modes": ["0-shot"], "perturbations": ["none"], "limit": 6, "seed": 0, "concurrency": 0,
              "openai_key": "", "anthropic_key": ""}  # fmt: skip
    # Parameters the form leaves alone (a server of one's own) keep their defaults.
    named_inputs = [p["parameter_name"] for p in named["/run_eval"]["parameters"] if p["parameter_name"] in values]
    status, summary = client.predict(**{name: values[name] for name in named_inputs}, api_name="/run_eval")
    assert "6 / 6" in status or "6/6" in status
    assert any("baseline/chance" in str(row) for row in summary["data"])

    board_inputs = [p["parameter_name"] for p in named["/scoreboard"]["parameters"]]
    board = {"benchmark": "blind/touching-circles", "models": [], "mode": "all", "perturbation": "all",
             "group": "overall only", "agree_model": "baseline/chance", "agree_modes": []}  # fmt: skip
    result = client.predict(*[board[name] for name in board_inputs], api_name="/scoreboard")
    table = result[1]
    rows = [dict(zip(table["headers"], row, strict=True)) for row in table["data"]]
    measured = [row for row in rows if row["source"] == "measured"]
    assert {row["model"] for row in measured} == {"baseline/chance"}
    asked = [row for row in measured if row["mode"] == "0-shot" and row["perturbation"] == "none"]
    assert sum(int(row["n"]) for row in asked) >= 6  # the evaluation's 6 (the probe's clicks may be filtered out)
