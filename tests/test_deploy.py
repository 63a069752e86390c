"""What a Space or a container needs: the README front matter, the Dockerfile, and an app that
starts quickly and without torch (torch loads when a local model is first used)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request

from tests.conftest import REPO
from tests.ui.conftest import free_port


def front_matter() -> dict[str, str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "README.md must open with the Space's front matter"
    return dict(line.split(": ", 1) for line in match.group(1).splitlines())


def test_readme_front_matter_describes_a_gradio_space():
    meta = front_matter()
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"
    assert (REPO / meta["app_file"]).is_file()
    assert meta["python_version"].strip('"') == "3.11"
    pinned = re.search(r"^gradio==(\S+)$", (REPO / "requirements.txt").read_text(), re.MULTILINE)
    assert pinned and meta["sdk_version"] == pinned.group(1)


def test_dockerfile_runs_the_app_as_a_non_root_user_on_7860_and_copies_files_that_exist():
    lines = [
        line.strip()
        for line in (REPO / "Dockerfile").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert "EXPOSE 7860" in lines
    assert lines[-1] == 'CMD ["python", "app.py"]'
    for line in lines:
        if line.startswith("COPY "):
            sources = [part for part in line.split()[1:-1] if not part.startswith("--")]
            for source in sources:
                assert (REPO / source).exists(), f"Dockerfile copies {source}, which does not exist"


def test_building_the_app_does_not_import_torch():
    code = "import sys, app; app.build_demo(); print('torch' in sys.modules, 'transformers' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False False"


def test_python_app_py_serves_on_the_configured_port(tmp_path):
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1",
           "PROBE_HOME": str(tmp_path), "PYTHONPATH": str(REPO)}  # fmt: skip
    process = subprocess.Popen([sys.executable, "app.py"], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    assert response.status == 200
                    assert "Perception playground" in response.read().decode("utf-8", "replace")
                    return
            except OSError:
                time.sleep(0.5)
        raise AssertionError("the app did not answer within 180 s")
    finally:
        process.terminate()
        process.wait(timeout=30)
