"""Each main action scripted with gradio_client, as a Space is: probe, generate_stimulus,
run_eval, scoreboard."""

from __future__ import annotations

from gradio_client import Client


def test_every_main_api_name_answers_through_gradio_client(serve):
    client = Client(serve(), verbose=False)
    named = client.view_api(return_format="dict")["named_endpoints"]
    assert {"/probe", "/generate_stimulus", "/run_eval", "/scoreboard"} <= set(named)

    images, question, answer, status = client.predict(
        "blind/touching-circles", "gap=-0.1", 4, api_name="/generate_stimulus"
    )
    assert images and "circles" in question and status == ""
    outputs = client.predict("baseline/chance", None, None, None, 0, False, "none", "", "", api_name="/probe")
    assert outputs[0] == "1 of 1 answered" and "baseline/chance" in outputs[1] and outputs[2] in ("Yes", "No")

    named_inputs = [p["parameter_name"] for p in named["/run_eval"]["parameters"]]
    values = {"benchmarks": ["blind/touching-circles"], "data": "", "params": "", "models": ["baseline/chance"],
              "modes": ["0-shot"], "perturbations": ["none"], "limit": 6, "seed": 0, "concurrency": 0,
              "openai_key": "", "anthropic_key": ""}  # fmt: skip
    status, summary = client.predict(*[values[name] for name in named_inputs], api_name="/run_eval")
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
    assert sum(int(row["n"]) for row in measured if row["mode"] == "0-shot") == 7  # the eval's 6 and the probe's 1
