"""The command line reads its models file and its variables as it reads its flags (issue 22): a
models file asking for a million workers, `endpoints` of the wrong shape or 5,000 brackets deep,
and PROBE_IMAGE_CACHE_MB=abc (nan, inf, 1e400) are each one `error:` line and exit status 2,
before anything is built, sent or stored; never an internal error."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli
from tests.test_cli_hardening import assert_one_error_line

SERVER = '[[endpoints]]\nname = "lab"\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["m"]\n'
RUN = ("run", "blind/touching-circles", "--model", "baseline/chance", "--limit", "2")

ATTACKS = {
    "a million workers": (SERVER + "concurrency = 1000000\n", ("line 5", "`concurrency` is 1000000", "1 to 64")),
    "2e7 workers": (SERVER + "concurrency = 2e7\n", ("line 5", "`concurrency` is 20000000.0", "1 to 64")),
    "endpoints a string": ('endpoints = "lab"\n', ("line 1", "`endpoints` is 'lab'", "[[endpoints]]")),
    "endpoints a table": ('[endpoints]\nname = "lab"\n', ("line 1", "a single table", "[[endpoints]]")),
    "5,000 brackets deep": ("a = " + "[" * 5000 + "]" * 5000 + "\n", ("line 1", "brackets nest more than 8 deep")),
    "5,000 tables deep": ("a = " + "{b = " * 5000 + "1" + "}" * 5000 + "\n", ("line 1", "nest more than 8 deep")),
    "a key in api_key_env": (
        SERVER + 'api_key_env = "sk-abcdefghijklmnop0123456789"\n',
        ("line 5", "looks like a key"),
    ),
    "a misspelt field": (SERVER + "concurency = 2\n", ("line 5", "did you mean `concurrency`?")),
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_hostile_models_file_is_one_line_and_exit_2(tmp_path, attack):
    text, fragments = ATTACKS[attack]
    path = tmp_path / "models.toml"
    path.write_text(text)
    done = run_cli("models", "--models-file", str(path))
    assert_one_error_line(done, f"models file {path}", *fragments)
    assert "sk-abcdefghijklmnop" not in done.stderr


def test_run_refuses_a_models_file_from_the_environment_before_anything_is_stored(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text(SERVER + "concurrency = 1000000\n")
    store = tmp_path / "s.sqlite"
    done = run_cli("run", "blind/touching-circles", "--model", "lab/m", "--limit", "2", "--store", str(store),
                   env={"PROBE_MODELS": str(path)})  # fmt: skip
    assert_one_error_line(done, f"models file {path} (named by PROBE_MODELS), line 5", "`concurrency` is 1000000")
    assert not store.exists()


def test_a_good_models_file_still_lists_its_models(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text(SERVER + "concurrency = 64\n")
    done = run_cli("models", "--models-file", str(path))
    assert done.returncode == 0, done.stderr
    assert any(line.startswith("lab/m ") for line in done.stdout.splitlines())


@pytest.mark.parametrize(
    ("variable", "value", "fragment"),
    [("PROBE_IMAGE_CACHE_MB", "abc", "write a number of megabytes from 1 to 1,048,576"),
     ("PROBE_IMAGE_CACHE_MB", "nan", "PROBE_IMAGE_CACHE_MB='nan'"),
     ("PROBE_IMAGE_CACHE_MB", "inf", "PROBE_IMAGE_CACHE_MB='inf'"),
     ("PROBE_IMAGE_CACHE_MB", "1e400", "PROBE_IMAGE_CACHE_MB='1e400'"),
     ("PROBE_IMAGE_CACHE_MB", "-5", "PROBE_IMAGE_CACHE_MB='-5'"),
     ("PROBE_IMAGE_CACHE_MB", "1e12", "PROBE_IMAGE_CACHE_MB='1e12'"),
     ("PROBE_DRAWING_PROCESS", "maybe", "write 1 (draw in a child process, the default) or 0"),
     ("PROBE_MAX_ITEMS", "1e400", "PROBE_MAX_ITEMS='1e400' is not a whole number of items"),
     ("PROBE_MAX_ITEMS", "0", "write a number of items of 1 or more"),
     ("PROBE_PUBLIC", "maybe", "PROBE_PUBLIC='maybe': write 1 (public mode) or 0")],
)  # fmt: skip
def test_a_variable_that_does_not_parse_is_one_line_and_exit_2(tmp_path, variable, value, fragment):
    store = tmp_path / "s.sqlite"
    done = run_cli(*RUN, "--store", str(store), env={variable: value})
    assert_one_error_line(done, fragment)
    assert not store.exists()  # refused before the store was made


@pytest.mark.parametrize(("variable", "value"), [("PROBE_IMAGE_CACHE_MB", "64"), ("PROBE_IMAGE_CACHE_MB", "1.5"),
                                                 ("PROBE_DRAWING_PROCESS", "0"), ("PROBE_DRAWING_PROCESS", "false")])  # fmt: skip
def test_good_values_still_run(tmp_path, variable, value):
    done = run_cli(*RUN, "--store", str(tmp_path / "s.sqlite"), env={variable: value})
    assert done.returncode == 0, done.stderr


def test_a_provider_address_that_is_no_url_is_refused_before_its_requests_fail(tmp_path):
    store = tmp_path / "s.sqlite"
    done = run_cli("run", "blind/touching-circles", "--model", "openai/gpt-4o", "--limit", "1", "--store", str(store),
                   env={"OPENAI_BASE_URL": "localhost:8000", "OPENAI_API_KEY": "sk-never-sent-000000"})  # fmt: skip
    assert_one_error_line(done, "OPENAI_BASE_URL is 'localhost:8000', not http:// or https://")
    assert not store.exists()
    # A run that asks no OpenAI model does not read it.
    done = run_cli(*RUN, "--store", str(store), env={"OPENAI_BASE_URL": "localhost:8000"})
    assert done.returncode == 0, done.stderr
