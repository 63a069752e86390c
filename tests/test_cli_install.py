"""The checkout installs: `pip install -e .` gives a `probes` command and `python -m probes` from any folder.

The install goes into a fresh virtual environment that sees the packages this test run imports
(not the base interpreter's, which inside a virtual environment are another set: setuptools 65.5
and no `wheel` on our machines), so the editable build uses the setuptools that requirements-dev.txt
installs. No network: `--no-deps --no-build-isolation --no-index`. Every command runs from a
temporary folder outside the checkout with no PYTHONPATH, as a user's shell would.
"""

import ensurepip
import importlib.util
import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KEY_VARIABLES, REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin folder of a venv holding an editable install of this checkout."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=600)
    python = venv / "bin" / "python"
    _see_the_running_packages(python)
    # pip installs into the environment of the interpreter that runs it: the new venv.
    done = subprocess.run(
        _pip(python) + ["install", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(REPO)],
        cwd=venv,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return venv / "bin"


def running_site_directories() -> list[str]:
    """Where this test run's packages live: a venv's own, the base's when it sees them, the user's."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return [folder for folder in dict.fromkeys(folders) if Path(folder).is_dir()]


def _see_the_running_packages(python: Path) -> None:
    """A .pth in the new venv adds this run's site directories after its own (their .pth files too)."""
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout.strip()
    lines = [f"import site; site.addsitedir({folder!r})" for folder in running_site_directories()]
    (Path(own) / "_test_run_packages.pth").write_text("\n".join(lines) + "\n")


def _pip(python: Path) -> list[str]:
    """This run's pip; where it has none (a venv made --without-pip), the pip wheel Python bundles."""
    if importlib.util.find_spec("pip") is not None:
        return [str(python), "-m", "pip"]
    bundled = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))
    assert bundled, "no pip here and none bundled with Python: install pip into the test environment"
    # A wheel is a zip archive Python can run from: pip's own documented bootstrap.
    return [str(python), f"{bundled[-1]}/pip"]


def _environment(home: Path | None = None) -> dict[str, str]:
    skip = set(KEY_VARIABLES) | {"PYTHONPATH", "PROBE_HOME", "PROBE_PUBLIC", "SPACE_ID"}
    environment = {k: v for k, v in os.environ.items() if k not in skip}
    if home is not None:
        environment["PROBE_HOME"] = str(home)
    return environment


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=_environment(), capture_output=True, text=True, timeout=600)


def test_probes_command_and_python_m_probes_work_outside_the_checkout(installed, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert REPO not in elsewhere.parents

    helped = _run([str(installed / "probes"), "--help"], elsewhere)
    assert helped.returncode == 0, helped.stderr
    assert "run" in helped.stdout and "report" in helped.stdout

    module_help = _run([str(installed / "python"), "-m", "probes", "--help"], elsewhere)
    assert module_help.returncode == 0, module_help.stderr
    assert module_help.stdout == helped.stdout

    ran = _run(
        [str(installed / "python"), "-m", "probes", "run", "blind/touching-circles"]
        + ["--model", "baseline/chance", "--limit", "3", "--seed", "1"],
        elsewhere,
    )
    assert ran.returncode == 0, ran.stderr
    # The store lands in the folder the command ran from (the documented default, ./.probe/).
    assert (elsewhere / ".probe" / "results.sqlite").is_file()

    reported = _run([str(installed / "probes"), "report", "--format", "json"], elsewhere)
    assert reported.returncode == 0, reported.stderr
    rows = json.loads(reported.stdout)
    measured = [row for row in rows if row["source"] == "measured"]
    assert [(row["model"], row["n"]) for row in measured] == [("baseline/chance", 3)]
    # The published numbers are read from the checkout's assets, not from the working folder.
    assert any(row["source"].startswith("published") for row in rows)


def test_the_bundled_texture_sample_is_found_from_any_folder(installed, tmp_path):
    listed = _run([str(installed / "probes"), "list"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    line = next(line for line in listed.stdout.splitlines() if line.startswith("shitsukan/classification"))
    assert "22 items" in line
