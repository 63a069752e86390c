"""The playground checks every variable it reads, the models file among them, as it starts: one
that does not parse stops `python app.py` with one `error:` line and exit status 2 (as a budget
that does not parse always did), before any visitor can meet it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from models.models_file import ModelsFileError
from models.types import BackendError
from probes.core.errors import ProbeError
from probes.running import limits, settings
from tests.conftest import REPO

VARIABLES = ("PROBE_MODELS", "PROBE_IMAGE_CACHE_MB", "PROBE_DRAWING_PROCESS", "PROBE_MAX_LOCAL_MODELS",
             "PROBE_TRUSTED_PROXIES", "PROBE_MAX_ITEMS", "PROBE_PUBLIC", "PROBE_SESSION_BUDGET",
             "PROBE_CLIENT_BUDGET", "PROBE_GLOBAL_BUDGET", "PROBE_HF_MODELS", "PROBE_ALLOWED_MODELS", "SPACE_ID",
             "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "PROBE_HF_IMAGES", "PROBE_HF_PREPARE_THREADS",
             "PROBE_CLASS_PUBLISH")  # fmt: skip


def start_app(tmp_path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    environment.update(PYTHONPATH=str(REPO), PROBE_HOME=str(tmp_path / "home"), GRADIO_SERVER_NAME="127.0.0.1",
                       GRADIO_ANALYTICS_ENABLED="False", **env)  # fmt: skip
    # The app serves forever when its settings are good: the bound is only for a failure of this test.
    return subprocess.run([sys.executable, "app.py"], cwd=REPO, env=environment, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def assert_stopped_with_one_line(done: subprocess.CompletedProcess, *fragments: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-3000:]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_the_app_stops_at_start_on_a_hostile_models_file(tmp_path):
    models = tmp_path / "models.toml"
    models.write_text('endpoints = "ollama"\n')
    done = start_app(tmp_path, PROBE_MODELS=str(models))
    assert_stopped_with_one_line(done, f"models file {models} (named by PROBE_MODELS), line 1", "`endpoints` is")


@pytest.mark.parametrize(("variable", "value"), [("PROBE_IMAGE_CACHE_MB", "abc"), ("GRADIO_SERVER_PORT", "99999")])
def test_the_app_stops_at_start_on_a_variable_that_does_not_parse(tmp_path, variable, value):
    assert_stopped_with_one_line(start_app(tmp_path, **{variable: value}), f"{variable}={value!r}")


@pytest.fixture
def clean_environment(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    limits._current = None
    yield monkeypatch
    limits._current = None


@pytest.mark.parametrize(
    ("variable", "value", "fragment"),
    [("PROBE_IMAGE_CACHE_MB", "nan", "PROBE_IMAGE_CACHE_MB='nan': write a number of megabytes"),
     ("PROBE_IMAGE_CACHE_MB", "0", "from 1 to 1,048,576"),
     ("PROBE_DRAWING_PROCESS", "yes please", "PROBE_DRAWING_PROCESS='yes please'"),
     ("PROBE_MAX_LOCAL_MODELS", "1e400", "PROBE_MAX_LOCAL_MODELS must be a whole number of at least 1"),
     ("PROBE_MAX_LOCAL_MODELS", "-2", "not '-2'"),
     ("PROBE_TRUSTED_PROXIES", "nan", "PROBE_TRUSTED_PROXIES='nan' is not a whole number of proxies"),
     ("PROBE_TRUSTED_PROXIES", "-1", "PROBE_TRUSTED_PROXIES='-1': write a number of proxies from 0 to 16"),
     ("PROBE_TRUSTED_PROXIES", "1000000", "from 0 to 16"),
     ("PROBE_SESSION_BUDGET", "1e400", "PROBE_SESSION_BUDGET='1e400' is not a whole number of requests"),
     ("PROBE_CLIENT_BUDGET", "-1", "PROBE_CLIENT_BUDGET='-1': write a number of requests of 0 or more"),
     ("PROBE_GLOBAL_BUDGET", "inf", "PROBE_GLOBAL_BUDGET='inf'"),
     ("PROBE_MAX_ITEMS", "-1", "PROBE_MAX_ITEMS='-1'"),
     ("PROBE_PUBLIC", "2", "PROBE_PUBLIC='2'"),
     ("PROBE_CLASS_PUBLISH", "sometimes", "PROBE_CLASS_PUBLISH='sometimes': write 1"),
     ("PROBE_HF_IMAGES", "cuda", "PROBE_HF_IMAGES is one of auto, pil, torchvision, gpu, not 'cuda'"),
     ("PROBE_HF_PREPARE_THREADS", "100000", "PROBE_HF_PREPARE_THREADS='100000': write a whole number of threads"),
     ("PROBE_HF_PREPARE_THREADS", "two", "from 1 to 64"),
     ("PROBE_HF_MODELS", "hf/HuggingFaceTB/SmolVLM-256M-Instruct", "write 'HuggingFaceTB/SmolVLM-256M-Instruct' "
                                                                   "without hf/"),
     ("PROBE_ALLOWED_MODELS", "gpt-4o", "'gpt-4o' is not a model id: write provider/model"),
     ("PROBE_MODELS", "{missing}", "does not exist"),
     ("OPENAI_BASE_URL", "localhost:8000", "OPENAI_BASE_URL is 'localhost:8000', not http:// or https://"),
     ("ANTHROPIC_BASE_URL", "http://h:99999/v1", "ANTHROPIC_BASE_URL is 'http://h:99999/v1', not a URL with a valid"),
     ("ANTHROPIC_BASE_URL", "http://u:pw@h:99999/v1", "ANTHROPIC_BASE_URL is an address with a user name or password")],
)  # fmt: skip
def test_every_variable_is_checked_at_start(tmp_path, clean_environment, variable, value, fragment):
    clean_environment.setenv(variable, value.format(missing=tmp_path / "nope.toml"))
    with pytest.raises((ProbeError, BackendError)) as caught:
        settings.check()
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_good_and_huge_but_meaningful_values_pass(tmp_path, clean_environment):
    models = tmp_path / "models.toml"
    models.write_text('[[endpoints]]\nname = "lab"\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["m"]\n')
    for variable, value in {"PROBE_MODELS": str(models), "PROBE_IMAGE_CACHE_MB": "1048576",
                            "PROBE_DRAWING_PROCESS": "off", "PROBE_MAX_LOCAL_MODELS": "3",
                            "PROBE_HF_IMAGES": "pil", "PROBE_HF_PREPARE_THREADS": "4", "PROBE_CLASS_PUBLISH": "1",
                            "PROBE_TRUSTED_PROXIES": "2", "PROBE_SESSION_BUDGET": "1" + "0" * 30,
                            "PROBE_HF_MODELS": "HuggingFaceTB/SmolVLM-256M-Instruct, /srv/models/my model",
                            "PROBE_ALLOWED_MODELS": "openai/gpt-4.1", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                            "ANTHROPIC_BASE_URL": "https://user:pw@127.0.0.1:9"}.items():  # fmt: skip
        clean_environment.setenv(variable, value)
    settings.check()
    bounds = limits.current()
    assert bounds.trusted_proxies == 2 and bounds.session_budget == 10**30
    assert bounds.hf_models == ("HuggingFaceTB/SmolVLM-256M-Instruct", "/srv/models/my model")


def test_building_the_app_with_a_bad_models_file_raises_the_one_line(tmp_path, clean_environment):
    models = tmp_path / "models.toml"
    models.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    clean_environment.setenv("PROBE_MODELS", str(models))
    clean_environment.setenv("PROBE_HOME", str(tmp_path / "home"))
    import app

    with pytest.raises(ModelsFileError, match=r"\(named by PROBE_MODELS\), line 1: brackets nest more than 8 deep"):
        app.build_demo()
