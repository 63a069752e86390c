"""`mine`, `mine --draft` and `ease` from the command line, on tiny random CLIP and DINOv2 models
built by the tests: a mined folder drafted by a model over the OpenAI protocol, eased, and run as
DiscriBench."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import run_cli
from tests.support.fake_servers import FakeOpenAIServer
from tests.support.tiny_encoders import build_tiny_clip, build_tiny_dino

DRAFT = {
    "situation": "Two friends are choosing a photo for a poster.",
    "conversation": [
        {"speaker": "Emma", "line": "Let's use the one with the dark corner."},
        {"speaker": "Jack", "line": "No, the brighter one looks better on paper."},
        {"speaker": "Emma", "line": "Fine, the brighter one, but with the stripe."},
    ],
    "question": "Which photo will they use?",
    "answer": 2,
    "misleading_toward": 1,
}


@pytest.fixture(scope="module")
def encoders(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("encoders")
    return build_tiny_clip(root / "clip"), build_tiny_dino(root / "dino")


def photos(folder: Path, count: int) -> None:
    folder.mkdir(parents=True)
    base = np.random.default_rng(1).integers(0, 255, (40, 48, 3))
    for i in range(count):
        noise = np.random.default_rng(100 + i).normal(0, 10 + 5 * i, base.shape)
        Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8)).save(folder / f"p{i:02d}.png")


def test_mine_with_drafts_then_ease_then_run_as_discribench(encoders, tmp_path):
    clip, dino = encoders
    photos(tmp_path / "photos", 8)
    out = tmp_path / "mined"
    home = {"PROBE_HOME": str(tmp_path / "home")}
    with FakeOpenAIServer(responder=lambda body: json.dumps(DRAFT)) as server:
        env = {**home, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-draft"}
        # Thresholds that every set meets: the search is tested on planted vectors elsewhere.
        done = run_cli("mine", str(tmp_path / "photos"), "--out", str(out), "--clip", str(clip), "--dino", str(dino),
                       "--clip-min", "-1", "--dino-max", "1", "--draft", "openai/drafter", env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.request_count == 2  # two quadruples from eight images without reuse
    records = [json.loads(line) for line in (out / "discribench_en_200.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["draft"] and r["draft_model"] == "openai/drafter" for r in records)
    assert all(r["answer"] == 2 and "Situation: " in r["context"] for r in records)
    assert len(list((out / "contact_sheets").glob("*.png"))) == 2

    # A person checks the drafts, keeps them, and writes a caption for the language-only subset.
    for record in records:
        record.pop("draft")
        record["caption"] = "A bright photo with a stripe."
    (out / "discribench_en_200.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    eased = run_cli("ease", str(out), "--clip", str(clip), env=home)
    assert eased.returncode == 0, eased.stderr
    assert (out / "ablation" / "vis_easy_en_100.jsonl").is_file()
    assert (out / "ablation" / "lan_easy_en_100.jsonl").is_file()

    for subset in ("main", "vis_easy", "lan_easy"):
        run = run_cli("run", "discribench", "--data", str(out), "--param", f"subset={subset}", "--model",
                      "baseline/chance", "--store", str(tmp_path / "r.sqlite"), env=home)  # fmt: skip
        assert run.returncode == 0, (subset, run.stderr)


def test_mine_refuses_thresholds_that_are_not_similarities(tmp_path):
    done = run_cli("mine", str(tmp_path), "--out", str(tmp_path / "o"), "--clip-min", "nan")
    assert done.returncode == 2 and "between -1 and 1" in done.stderr and "Traceback" not in done.stderr
