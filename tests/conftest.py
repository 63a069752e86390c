"""Shared fixtures. Everything offline: servers on 127.0.0.1, models built from configs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from probes.running.store import Store

REPO = Path(__file__).resolve().parent.parent
KEY_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "PROBE_MODELS")


@pytest.fixture(autouse=True)
def no_ambient_credentials(monkeypatch, tmp_path):
    """Tests never see the developer's keys or endpoints, and never write outside tmp_path."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROBE_HOME", str(tmp_path / "probe-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "results.sqlite") as opened:
        yield opened


@pytest.fixture(scope="session")
def tiny_vlm(tmp_path_factory) -> Path:
    from tests.support.tiny_vlm import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m probes ...` in a fresh process, as a user would run it."""
    environment = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    environment["PYTHONPATH"] = str(REPO)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "probes", *args],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_python(code: str) -> str:
    """Run `code` in a fresh interpreter (nothing imported yet) from the repository; its stdout."""
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout


def run_python_json(code: str) -> Any:
    """Run `code` in a fresh interpreter; the JSON it prints on its last line."""
    return json.loads(run_python(code).strip().splitlines()[-1])


def make_folder(root: Path, records: list[dict], images: dict[str, Image.Image] | None = None) -> Path:
    """A custom benchmark folder: items.jsonl plus images."""
    root.mkdir(parents=True, exist_ok=True)
    for name, image in (images or {}).items():
        image.save(root / name)
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return root


def shapes_image(kind: str, size: int = 64) -> Image.Image:
    image = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(image)
    if kind == "circle":
        draw.ellipse((8, 8, size - 8, size - 8), fill="red")
    else:
        draw.rectangle((8, 8, size - 8, size - 8), fill="blue")
    return image
