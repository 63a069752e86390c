import pytest

from models.models_file import ModelsFileError
from models.registry import ModelIdError, catalogue, create, load_endpoints


def test_unknown_provider_lists_the_known_ones():
    with pytest.raises(ModelIdError, match="known providers are openai, anthropic, hf, baseline"):
        create("mystery/model")


def test_an_id_without_a_model_says_how_to_write_one():
    with pytest.raises(ModelIdError, match="provider/model"):
        create("openai")


def test_catalogue_lists_unavailable_models_with_reasons_and_never_hides_them():
    infos = {info.id: info for info in catalogue()}
    assert not infos["openai/gpt-4o"].available and "OPENAI_API_KEY" in infos["openai/gpt-4o"].reason
    assert not infos["anthropic/claude-sonnet-4-5"].available
    assert "hf/HuggingFaceTB/SmolVLM-256M-Instruct" in infos


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[endpoints]]\nname = "openai"\nbase_url = "http://x/v1"\nmodels = ["m"]', "taken by a built-in"),
        ('[[endpoints]]\nname = "e"\nbase_url = "ftp://x"\nmodels = ["m"]', "http"),
        ('[[endpoints]]\nname = "e"\nbase_url = "http://x/v1"\nmodels = "m"', "list of model names"),
        ("[[endpoints]\n", "not valid TOML"),
    ],
)
def test_models_file_mistakes_are_named(tmp_path, text, message):
    path = tmp_path / "models.toml"
    path.write_text(text)
    with pytest.raises(ModelsFileError, match=message):
        load_endpoints(path)


def test_models_file_from_environment(tmp_path, monkeypatch):
    path = tmp_path / "m.toml"
    path.write_text('[[endpoints]]\nname = "ollama"\nbase_url = "http://127.0.0.1:11434/v1"\nmodels = ["llava:7b"]\n')
    monkeypatch.setenv("PROBE_MODELS", str(path))
    endpoints = load_endpoints()
    assert [e.name for e in endpoints] == ["ollama"]
    ids = [info.id for info in catalogue(endpoints)]
    assert "ollama/llava:7b" in ids


def test_missing_models_file_is_an_error(tmp_path):
    with pytest.raises(ModelsFileError, match="does not exist"):
        load_endpoints(tmp_path / "nope.toml")
