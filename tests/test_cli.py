"""`python -m probes` as people use it, each command in a fresh process."""

import json
import sqlite3

import pytest

from tests.conftest import make_folder, run_cli, shapes_image
from tests.support.fake_http import Fault, Reply
from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer, anthropic_images, openai_images


def report_rows(store_path, *extra):
    """The measured rows of `report --format json` (reference rows are tested on their own)."""
    done = run_cli("report", "--store", str(store_path), "--format", "json", *extra)
    assert done.returncode == 0, done.stderr
    return [row for row in json.loads(done.stdout) if row["source"] == "measured"]


def test_list_shows_touching_circles_and_explains_custom():
    done = run_cli("list")
    assert done.returncode == 0
    assert "blind/touching-circles" in done.stdout and "1344 items (672 images" in done.stdout
    assert "custom:PATH" in done.stdout and "items.jsonl" in done.stdout


def test_models_lists_unavailable_ones_with_the_reason():
    done = run_cli("models")
    assert done.returncode == 0
    line = next(line for line in done.stdout.splitlines() if line.startswith("openai/gpt-4o "))
    assert "unavailable" in line and "set OPENAI_API_KEY in the environment" in line
    assert any(line.startswith("baseline/chance") and " available" in line for line in done.stdout.splitlines())
    # A shell has no key box: nothing asks to paste a key.
    assert "paste" not in done.stdout


def test_a_run_without_its_key_names_the_variable_and_no_key_box(tmp_path):
    done = run_cli("run", "blind/touching-circles", "--model", "openai/gpt-4o", "--limit", "2", "--store",
                   str(tmp_path / "r.sqlite"))  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == "error: set OPENAI_API_KEY in the environment"


def test_chance_run_then_json_report(tmp_path):
    store = tmp_path / "r.sqlite"
    done = run_cli(
        "run",
        "blind/touching-circles",
        "--model",
        "baseline/chance",
        "--limit",
        "50",
        "--seed",
        "1",
        "--store",
        str(store),
    )
    assert done.returncode == 0, done.stderr
    assert "50/50" in done.stderr  # the progress bar
    [row] = report_rows(store)
    assert row["n"] == 50 and row["group"] == "overall" and row["model"] == "baseline/chance"
    assert row["ci_low"] < row["accuracy"] < row["ci_high"]
    assert set(row) >= {"benchmark", "model", "mode", "perturbation", "group", "n", "correct", "accuracy",
                        "ci_low", "ci_high", "unparsed", "errors"}  # fmt: skip
    by_prompt = report_rows(store, "--by", "prompt")
    assert {r["group"] for r in by_prompt} == {"overall", "prompt=touching", "prompt=overlapping"}
    assert sum(r["n"] for r in by_prompt if r["group"] != "overall") == 50
    csv_out = run_cli("report", "--store", str(store), "--format", "csv").stdout
    assert csv_out.splitlines()[0].startswith("benchmark,model,mode,perturbation,group,n,correct,accuracy")
    everything = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--by", "prompt").stdout)
    chance = next(r for r in everything if r["source"] == "chance")
    assert chance["accuracy"] == 50.0 and chance["n"] is None
    published = {(r["model"], r["group"]): r["accuracy"] for r in everything if r["source"] == "published"}
    assert published[("GPT-4o", "overall")] == 72.69 and published[("Sonnet-3.5", "prompt=touching")] == 94.49
    assert all("Vision language models are blind" in r["paper"] for r in everything if r["source"] == "published")
    bare = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--no-references").stdout)
    assert {r["source"] for r in bare} == {"measured"}


def test_openai_run_end_to_end_through_the_sdk_with_four_shots(tmp_path):
    store = tmp_path / "r.sqlite"
    with FakeOpenAIServer(responder=lambda body: "Let me look. The edges meet.\nAnswer: Yes") as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-cli"}
        args = ["run", "blind/touching-circles", "--model", "openai/gpt-test", "--limit", "6", "--shots", "4", "--cot",
                "--store", str(store)]  # fmt: skip
        done = run_cli(*args, env=env)
        assert done.returncode == 0, done.stderr
        assert server.request_count == 6
        body = server.requests[0]["body"]
        assert len(openai_images(body)) == 5
        assert [m["role"] for m in body["messages"]] == ["user", "assistant"] * 4 + ["user"]
        again = run_cli(*args, env=env)
        assert again.returncode == 0 and server.request_count == 6  # all cached
    [row] = report_rows(store)
    assert row["mode"] == "4-shot+CoT" and row["n"] == 6 and row["unparsed"] == 0


def test_an_answered_result_survives_a_later_failing_run_of_the_same_items(tmp_path):
    store = tmp_path / "r.sqlite"
    args = ["run", "blind/touching-circles", "--model", "openai/gpt-test", "--limit", "5", "--store", str(store)]
    with FakeOpenAIServer(responder=lambda body: "Yes") as server:
        done = run_cli(*args, env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-cli"})
        assert done.returncode == 0, done.stderr
    failing = Fault("reply", Reply(500, {"error": {"message": "down"}}))
    with FakeOpenAIServer(fault=lambda record: failing) as broken:
        # The same items, asked with another reply limit: not in the cache, so every request goes out, and fails.
        env = {"OPENAI_BASE_URL": broken.base_url, "OPENAI_API_KEY": "sk-test-cli"}
        done = run_cli(*args, "--max-tokens", "100", env=env)
        assert done.returncode == 1 and "5 request(s) failed" in done.stderr
        assert "run the same command again" in done.stderr  # a provider fault: a retry can help
    [row] = report_rows(store)
    assert row["n"] == 5 and row["errors"] == 0  # the answers stand; the failures replaced nothing


def test_anthropic_run_end_to_end_through_the_sdk(tmp_path):
    store = tmp_path / "r.sqlite"
    with FakeAnthropicServer(responder=lambda body: "No.") as server:
        env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-cli"}
        done = run_cli("run", "blind/touching-circles", "--model", "anthropic/claude-test", "--limit", "4", "--shots", "4",
                       "--store", str(store), env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.request_count == 4
        assert len(anthropic_images(server.requests[0]["body"])) == 5
    [row] = report_rows(store)
    assert row["model"] == "anthropic/claude-test" and row["n"] == 4


def test_local_hf_model_runs_through_the_cli(tmp_path, tiny_vlm):
    store = tmp_path / "r.sqlite"
    done = run_cli("run", "blind/touching-circles", "--model", f"hf/{tiny_vlm}", "--limit", "3", "--max-tokens", "4",
                   "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    [row] = report_rows(store)
    assert row["n"] == 3 and row["errors"] == 0
    replies = sqlite3.connect(store).execute("SELECT reply FROM results").fetchall()
    assert all(reply for (reply,) in replies)  # the model's own words, whatever they are


def test_missing_key_stops_before_sending_and_names_the_variable(tmp_path):
    with FakeOpenAIServer() as server:
        done = run_cli("run", "blind/touching-circles", "--model", "openai/gpt-4o", "--limit", "3",
                       "--store", str(tmp_path / "r.sqlite"), env={"OPENAI_BASE_URL": server.base_url})  # fmt: skip
        assert server.request_count == 0
    assert done.returncode == 2
    assert "OPENAI_API_KEY" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("malformed", "items.jsonl line 2: not valid JSON"),
        ("missing", "items.jsonl line 2: image 'gone.png' not found"),
        ("not-image", "items.jsonl line 2: image notes.png: not a PNG"),
    ],
)
def test_bad_custom_folder_gives_a_clear_message_and_exit_2(tmp_path, setup, expected):
    good = {"id": "1", "image": "c.png", "question": "Is it round?", "answer": "yes"}
    second = {
        "malformed": None,
        "missing": {"id": "2", "image": "gone.png", "question": "Q?", "answer": "no"},
        "not-image": {"id": "2", "image": "notes.png", "question": "Q?", "answer": "no"},
    }[setup]
    folder = make_folder(tmp_path / "mine", [good] + ([second] if second else []), {"c.png": shapes_image("circle")})
    (folder / "notes.png").write_text("just some notes")
    if setup == "malformed":
        with (folder / "items.jsonl").open("a") as handle:
            handle.write('{"id": "2", "image": "c.png",\n')
    done = run_cli("run", f"custom:{folder}", "--model", "baseline/chance", "--store", str(tmp_path / "r.sqlite"))
    assert done.returncode == 2
    assert expected in done.stderr and "Traceback" not in done.stderr


def test_custom_folder_runs_and_reports_by_category(tmp_path):
    folder = make_folder(
        tmp_path / "mine",
        [{"id": str(i), "image": "c.png" if i % 2 else "s.png", "question": "Which shape is this?",
          "options": ["circle", "square"], "answer": "circle" if i % 2 else "square", "category": f"c{i % 3}"}
         for i in range(12)],
        {"c.png": shapes_image("circle"), "s.png": shapes_image("square")},
    )  # fmt: skip
    store = tmp_path / "r.sqlite"
    done = run_cli("run", f"custom:{folder}", "--model", "baseline/chance", "--store", str(store))
    assert done.returncode == 0, done.stderr
    rows = report_rows(store, "--by", "category")
    assert {r["group"] for r in rows} == {"overall", "category=c0", "category=c1", "category=c2"}
    assert next(r for r in rows if r["group"] == "overall")["n"] == 12


def test_generate_writes_pngs_and_metadata_and_is_reproducible(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        done = run_cli("generate", "blind/touching-circles", "--n", "5", "--seed", "3", "--out", str(out))
        assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (first / "metadata.jsonl").read_text().splitlines()]
    assert len(rows) == 5 and len(list(first.glob("*.png"))) == 5
    assert all({"file_name", "prompt", "answer", "gap", "canvas", "diameter", "orientation"} <= set(r) for r in rows)
    assert all(r["answer"] in ("Yes", "No") for r in rows)
    for row in rows:
        assert (first / row["file_name"]).read_bytes() == (second / row["file_name"]).read_bytes()


def test_unknown_benchmark_and_bad_arguments_exit_2_without_traceback(tmp_path):
    done = run_cli("run", "blind/nothing", "--model", "baseline/chance", "--store", str(tmp_path / "r.sqlite"))
    assert done.returncode == 2 and "unknown benchmark" in done.stderr and "Traceback" not in done.stderr
    done = run_cli("run", "blind/touching-circles", "--model", "nobody/x", "--store", str(tmp_path / "r.sqlite"))
    assert done.returncode == 2 and "unknown provider" in done.stderr
    done = run_cli("report", "--store", str(tmp_path / "none.sqlite"))
    assert done.returncode == 2 and "no results store" in done.stderr


def test_a_local_model_that_cannot_load_stops_the_run_before_it_starts(tmp_path):
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no-such-architecture"}')
    store = tmp_path / "r.sqlite"
    done = run_cli("run", "blind/touching-circles", "--model", f"hf/{broken}", "--limit", "3", "--store", str(store))
    assert done.returncode == 2 and "could not be loaded" in done.stderr and "Traceback" not in done.stderr
    assert sqlite3.connect(store).execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0
