"""The models file is read like the flags it stands for: every field's type and bounds, unknown
fields, duplicates, the file's size and nesting before it is parsed; each mistake one line naming
the file, the line, the field and what to write instead. Keys pasted into it are never repeated."""

from __future__ import annotations

import tomllib
import tracemalloc

import pytest

from models import models_file
from models.models_file import MAX_CONCURRENCY, ModelsFileError, read_endpoints
from models.registry import load_endpoints
from probes.running import limits

SERVER = '[[endpoints]]\nname = "lab"\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["llava:7b"]\n'


def refused(tmp_path, text: str | bytes, *fragments: str) -> str:
    path = tmp_path / "models.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ModelsFileError) as caught:
        load_endpoints(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"models file {path}"), message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_a_well_written_file_gives_its_servers(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text(
        SERVER + 'concurrency = 64\napi_key_env = "LAB_KEY"\n\n[[endpoints]]\nname = "b.2_x-y"\n'
        'base_url = "https://models.example.org:8443/v1"\nmodels = ["Qwen/Qwen2.5-VL-7B-Instruct", "[odd] {name}"]\n'
        "# a comment with [[[[[[[[[[ brackets ]]]]]]]]]]\n"
    )
    first, second = load_endpoints(path)
    assert (first.name, first.concurrency, first.api_key_env, first.models) == ("lab", 64, "LAB_KEY", ("llava:7b",))
    assert second.models == ("Qwen/Qwen2.5-VL-7B-Instruct", "[odd] {name}") and second.concurrency == 4


def test_the_concurrency_bound_is_the_command_lines():
    assert MAX_CONCURRENCY == limits.MAX_CONCURRENCY


@pytest.mark.parametrize(
    ("value", "shown"),
    [("1000000", "is 1000000"), ("2e7", "is 20000000.0 (not a whole number)"), ("0", "is 0"), ("-3", "is -3"),
     ("65", "is 65"), ("true", "is true"), ('"4"', "is '4'"), ("2.5", "is 2.5 (not a whole number)"),
     ("nan", "is nan"), ("inf", "is inf"), ("[4]", "is a list of 1 values"), ("9" * 40, "is a 40-digit number")],
)  # fmt: skip
def test_concurrency_past_the_flags_bounds_is_refused(tmp_path, value, shown):
    refused(tmp_path, SERVER + f"concurrency = {value}\n", "line 5", "endpoint 1", "`concurrency` " + shown,
            f"write a whole number from 1 to {MAX_CONCURRENCY}")  # fmt: skip


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ('endpoints = "ollama"\n', ("line 1", "`endpoints` is 'ollama'", "[[endpoints]] table per server")),
        ("endpoints = 3\n", ("line 1", "`endpoints` is 3")),
        ('[endpoints]\nname = "x"\n', ("line 1", "a single table", "[[endpoints]] (two brackets)")),
        ('endpoints = ["a", "b"]\n', ("line 1", "endpoint 1 is 'a'", "a table with name, base_url")),
        ("", ("names no endpoints", "[[endpoints]]")),
        ("endpoints = []\n", ("names no endpoints",)),
        ("# only a comment\n", ("names no endpoints",)),
        (SERVER + "[servers]\nx = 1\n", ("line 5", "unknown setting `servers`", "[[endpoints]] tables only")),
        ('[[endpoint]]\nname = "x"\n', ("line 1", "unknown setting `endpoint` (did you mean `endpoints`?)")),
    ],
)
def test_the_endpoints_list_itself(tmp_path, text, fragments):
    refused(tmp_path, text, *fragments)


@pytest.mark.parametrize(
    ("field", "fragments"),
    [
        ('name = "my server"', ("line 2", "`name` is 'my server'", "letters, digits")),
        ('name = ""', ("line 2", "`name` is an empty string")),
        ('name = "a/b"', ("line 2", "`name` is 'a/b'")),
        ("name = 5", ("line 2", "`name` is 5")),
        ('name = "' + "n" * 65 + '"', ("line 2", "at most 64")),
        ('name = "openai"', ("line 2", "taken by a built-in provider")),
        ('name = "baseline"', ("line 2", "taken by a built-in provider")),
        ('name = "human"', ("line 2", "taken by a built-in provider")),
        ('base_url = "ftp://x/v1"', ("line 3", "`base_url` is 'ftp://x/v1', not http:// or https://")),
        ('base_url = "localhost:11434"', ("line 3", "not http:// or https://")),
        ('base_url = "http:///v1"', ("line 3", "names no host")),
        ('base_url = "http://h:99999/v1"', ("line 3", "valid host and port")),
        ('base_url = "http://h /v1"', ("line 3", "spaces or control characters")),
        ("base_url = 80", ("line 3", "`base_url` is 80")),
        ('base_url = "http://h/' + "p" * 2100 + '"', ("line 3", "at most 2,000")),
        ('models = "llava"', ("line 4", "`models` is 'llava'", 'models = ["llava:7b"]')),
        ("models = []", ("line 4", "`models` is an empty list")),
        ("models = [1]", ("line 4", "`models` holds 1", "model's name")),
        ('models = [""]', ("line 4", "`models` holds an empty string")),
        ('models = [" llava"]', ("line 4", "no spaces around it")),
        ('models = ["a\\u001b[31m"]', ("line 4", "'a\\x1b[31m'")),
        ('models = ["a", "b", "a"]', ("line 4", "lists 'a' twice")),
        ('models = ["' + "m" * 201 + '"]', ("line 4", "1 to 200 characters")),
        ('api_key_env = "MY KEY"', ("line 5", "the NAME of an environment variable")),
        ("api_key_env = 7", ("line 5", "the NAME of an environment variable")),
        ("concurency = 3", ("line 5", "unknown field `concurency` (did you mean `concurrency`?)")),
        ('base-url = "http://x"', ("line 5", "unknown field `base-url` (did you mean `base_url`?)")),
        ('"\\u001b[2J" = 1', ("line 1", "unknown field '\\x1b[2J'")),  # an escaped key: its table's line
        ("[endpoints.extra]\nx = 1", ("unknown field `extra`",)),
    ],
)
def test_each_field_is_checked_like_a_flag(tmp_path, field, fragments):
    key = field.split("=")[0].strip()
    lines = SERVER.splitlines()
    replaced = [field if line.startswith(f"{key} =") else line for line in lines]
    text = "\n".join(replaced if replaced != lines else [*lines, field]) + "\n"
    refused(tmp_path, text, "endpoint 1", *fragments)


def test_missing_fields_and_duplicate_names(tmp_path):
    refused(tmp_path, '[[endpoints]]\nname = "x"\nmodels = ["m"]\n', "line 1", "`base_url` is missing")
    refused(tmp_path, '[[endpoints]]\nbase_url = "http://h/v1"\nmodels = ["m"]\n', "`name` is missing")
    refused(tmp_path, SERVER + "\n" + SERVER, "line 7", "endpoint 2", "name 'lab' is endpoint 1's already")


def test_endpoints_written_inline_are_checked_too(tmp_path):
    text = 'endpoints = [{name = "a", base_url = "http://h/v1", models = ["m"], concurrency = 1000000}]\n'
    message = refused(tmp_path, text, "endpoint 1", "`concurrency` is 1000000")
    assert ", line " not in message  # no line claimed where the form does not show one


def test_too_many_endpoints_or_models(tmp_path):
    many = "".join(f'[[endpoints]]\nname = "e{i}"\nbase_url = "http://h/v1"\nmodels = ["m"]\n' for i in range(101))
    refused(tmp_path, many, "101 endpoints; at most 100")
    models = ", ".join(f'"m{i}"' for i in range(1001))
    refused(tmp_path, SERVER.replace('["llava:7b"]', f"[{models}]"), "lists 1,001 names; at most 1,000")


KEYS = [
    "sk-proj-Abc123def456ghi789jkl012mno345",  # OpenAI's form: not a variable's name at all
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",  # passes as a name: caught by its looks
    "Xk29fLq8ZpR3vT7wN1mB5cY4",  # no prefix: long, mixed case and digits
]


@pytest.mark.parametrize("key", KEYS)
def test_a_key_pasted_into_api_key_env_is_refused_and_never_repeated(tmp_path, key):
    message = refused(tmp_path, SERVER + f'api_key_env = "{key}"\n', "line 5", "`api_key_env`", "MY_SERVER_KEY")
    assert key not in message and key[:12] not in message and key[-12:] not in message


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "MY_SERVER_KEY", "hf_token", "LabServerKey", "X"])
def test_ordinary_variable_names_pass(tmp_path, name):
    path = tmp_path / "models.toml"
    path.write_text(SERVER + f'api_key_env = "{name}"\n')
    assert load_endpoints(path)[0].api_key_env == name


def test_a_key_written_into_the_file_or_the_url_is_never_repeated(tmp_path):
    secret = "sk-live-Secret123Secret456Secret789"
    message = refused(tmp_path, SERVER + f'api_key = "{secret}"\n', "line 5", "holds no keys", "api_key_env")
    assert secret not in message and "Secret" not in message
    url = SERVER.replace("http://127.0.0.1:9/v1", f"http://user:{secret}@127.0.0.1:9/v1")
    message = refused(tmp_path, url, "line 3", "user name or password", "api_key_env")
    assert "Secret" not in message and "user:" not in message


def test_a_huge_file_is_refused_without_being_read_whole(tmp_path):
    path = tmp_path / "models.toml"
    with path.open("wb") as handle:  # 4 GB, sparse: reading it whole would take seconds and gigabytes
        handle.truncate(4 * 2**30)
    tracemalloc.start()
    try:
        with pytest.raises(ModelsFileError, match=r"is larger than 1,024 KB.*is this the right file"):
            load_endpoints(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20  # the bound plus a byte, not the file
    refused(tmp_path, "# " + "x" * models_file.MAX_FILE_BYTES + "\n", "larger than 1,024 KB")


@pytest.mark.parametrize(
    "nested",
    ["a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 5000 + "1" + "}" * 5000, "a = " + "[" * 900_000],
)
def test_deep_nesting_is_refused_before_the_parser_recurses(tmp_path, monkeypatch, nested):
    parsed = []
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or {})
    refused(tmp_path, SERVER + nested + "\n", "line 5", "brackets nest more than 8 deep")
    assert parsed == []  # the parser was never handed the file


def test_brackets_inside_strings_and_comments_do_not_count_and_a_broken_string_is_the_parsers_to_name(tmp_path):
    models = '["[[[[[[[[[[", \'{{{{{{{{{{\', """]]]][[[[[[[[[[""", \'\'\'[[[[[[[[[[[\'\'\', "\\"[[[[[[[[[["]'
    text = SERVER.replace('["llava:7b"]', models) + "# [[[[[[[[[[[[\n"
    path = tmp_path / "models.toml"
    path.write_text(text)
    assert load_endpoints(path)[0].models == (
        "[[[[[[[[[[",
        "{{{{{{{{{{",
        "]]]][[[[[[[[[[",
        "[[[[[[[[[[[",
        '"[[[[[[[[[[',
    )
    refused(tmp_path, SERVER + 'x = """' + "[" * 100_000 + "\n", "is not valid TOML", "Unterminated string")


def test_other_undecodable_files(tmp_path):
    refused(tmp_path, SERVER.encode() + b"# \xff\xfe\n", "line 5", "not UTF-8")
    refused(tmp_path, "[[endpoints]\n", "is not valid TOML", "line 1")
    refused(tmp_path, SERVER + "concurrency = 1" + "0" * 5000 + "\n", "is not valid TOML", "thousands of digits")


def test_the_variable_that_named_the_file_is_named(tmp_path, monkeypatch):
    path = tmp_path / "models.toml"
    path.write_text(SERVER + "concurrency = 1000000\n")
    monkeypatch.setenv("PROBE_MODELS", str(path))
    with pytest.raises(ModelsFileError, match=r"^models file .* \(named by PROBE_MODELS\), line 5: endpoint 1"):
        load_endpoints()
    with pytest.raises(ModelsFileError) as given:
        read_endpoints(path)
    assert "PROBE_MODELS" not in str(given.value)
