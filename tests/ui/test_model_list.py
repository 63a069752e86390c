"""The model dropdowns: the models that answer here first, then the unavailable ones, each with
its reason in a few words (the whole reason is in `python -m probes models` and in the error a
request for it gets)."""

from __future__ import annotations

import pytest

from probes.running import answerers
from ui import common
from ui.choices import short_reason


@pytest.fixture
def fresh(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SPACE_ID", "PROBE_PUBLIC", "PROBE_MODELS"):
        monkeypatch.delenv(name, raising=False)
    from tests.ui.conftest import reset_caches

    reset_caches()
    yield
    reset_caches()


def test_working_models_come_first_and_reasons_are_short(fresh):
    infos = answerers.catalogue(common.endpoints())
    working = [info.id for info in infos if info.available]
    choices = common.model_choices()
    ids = [model_id for _, model_id in choices]
    assert {"baseline/chance", "baseline/pixels"} <= set(working)
    assert ids[: len(working)] == working  # every model that answers, before any that cannot
    assert sorted(ids) == sorted(info.id for info in infos)  # none hidden
    unavailable = [label for label, model_id in choices if model_id not in working]
    assert len(unavailable) >= 5
    for label, model_id in choices:
        if model_id in working:
            continue
        reason = label.removeprefix(f"{model_id} (unavailable: ").removesuffix(")")
        assert reason != label and len(reason) <= 33, label
    assert "openai/gpt-4o (unavailable: needs a key)" in unavailable


def test_a_key_set_moves_its_models_up(fresh, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    ids = [model_id for _, model_id in common.model_choices()]
    first_unavailable = ids.index("anthropic/claude-sonnet-4-5")
    assert ids.index("openai/gpt-4o") < first_unavailable and ids.index("baseline/chance") < first_unavailable


@pytest.mark.parametrize(
    ("reason", "short"),
    [
        ("set TOY_API_KEY (or paste a key for this session)", "needs a key"),
        ("Org/Model is not downloaded here and the Hugging Face Hub (https://huggingface.co) cannot be reached "
         "(ConnectError): fetch it once online, or name a local folder", "not downloaded"),
        ("org/m is gated on the Hugging Face Hub: accept its terms there and set HF_TOKEN", "gated: needs HF_TOKEN"),
        ("local models need torch and transformers: pip install -r requirements.txt", "packages missing"),
        ("no model in /some/folder: expected a config.json saved by save_pretrained", "no model in /some/folder"),
        ("the server answered with something nobody expected at all, twice over", "the server answered with…"),
    ],
)  # fmt: skip
def test_short_reasons(reason, short):
    assert short_reason(reason) == short
