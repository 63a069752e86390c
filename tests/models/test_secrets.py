"""Redaction: a key comes back from a server in many forms, and none of them may be shown or
stored; ordinary replies are left as they are."""

from __future__ import annotations

import base64

import pytest

from models.base import redact
from tests.support.hostile_servers import ANTHROPIC_KEY, OPENAI_KEY, key_forms, leaks

FORMS = key_forms(OPENAI_KEY)

# What models answer, and what surrounds an answer: none of it is a key.
ORDINARY = [
    "Yes",
    "B",
    "There are 4 squares.",
    "The answer is (C) 12, since the lines cross twice... wait, three times. Final answer: 3",
    "Let me think step by step.\n1. The top line is longer.\n2. So: top.\nAnswer: top",
    '{"answer": "B", "confidence": 0.8}',
    "I count **five** circles — the fifth is partly hidden behind the square.",
    "sk-... is how OpenAI keys begin; the rest is secret.",
    "The image shows ****** five stars and a row of dots........ then text.",
    "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 4).decode(),
    "def f(x):\n    return x * 2  # a 4-line function\n\nprint(f(21))",
    "円が2つあります。答え: はい",
]


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_of_a_key_is_redacted_and_the_text_around_it_kept(form):
    text = f"The server said: {FORMS[form]} (end of message)"
    redacted = redact(text, [OPENAI_KEY])
    assert leaks(text, OPENAI_KEY), "the checker must see the key in the form as sent"
    assert not leaks(redacted, OPENAI_KEY), redacted
    assert redacted.startswith("The server said: ") and redacted.endswith(" (end of message)")
    assert "[redacted]" in redacted


def test_keys_in_the_environment_are_redacted_without_being_named(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("MY_SERVER_KEY", "vllm-" + OPENAI_KEY[::-1][:30])  # README's models file variable
    echoed = "\n".join(
        [*key_forms(OPENAI_KEY).values(), *key_forms(ANTHROPIC_KEY).values(), "vllm-" + OPENAI_KEY[::-1][:30]]
    )
    redacted = redact(echoed)
    assert not leaks(redacted, OPENAI_KEY) and not leaks(redacted, ANTHROPIC_KEY)
    assert OPENAI_KEY[::-1][:30] not in redacted


def test_a_key_split_across_an_escaped_error_body_is_redacted():
    # An SDK's error quotes the body as a Python dict: line breaks show as backslash-n.
    body = {"error": {"message": "bad key:\n" + "\n".join(OPENAI_KEY[i : i + 9] for i in range(0, len(OPENAI_KEY), 9))}}
    text = f"AuthenticationError: Error code: 401 - {body!r}"
    assert leaks(text, OPENAI_KEY)
    assert not leaks(redact(text, [OPENAI_KEY]), OPENAI_KEY)


def test_ordinary_replies_are_left_exactly_as_they_are(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    for text in ORDINARY:
        assert redact(text, [OPENAI_KEY, ANTHROPIC_KEY]) == text


def test_a_short_secret_is_redacted_whole_in_any_case_but_not_by_its_pieces():
    secret = "hunter22"
    assert redact("pw=HUNTER22 or 22retnuh", [secret]) == "pw=[redacted] or [redacted]"
    assert redact("the hunter went home", [secret]) == "the hunter went home"
