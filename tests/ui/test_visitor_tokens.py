"""A browser keeps who it is across reloads with a token signed by the server: a made-up token (the
browser state's own secret is public in `/config`, so anyone can write one), an unsigned one of the
old shape, or one signed by another server starts a fresh visitor, never someone else's store."""

from __future__ import annotations

import json
import secrets
import urllib.request
from types import SimpleNamespace

from tests.ui.attacker import queue_call
from ui import sessions


def page(session: str) -> SimpleNamespace:
    return SimpleNamespace(session_hash=session, headers={}, client=SimpleNamespace(host="192.0.2.1"))


def test_only_tokens_this_server_signed_are_believed(monkeypatch):
    made = sessions.new_visitor_token()
    assert sessions.signed(made) and sessions.remember_visitor(made, page("reload")) == made
    random_part = made[2:34]
    forged = [
        "v-" + secrets.token_urlsafe(24),  # the shape tokens had before they were signed
        f"v-{random_part}.{'0' * 32}",
        f"v-{secrets.token_urlsafe(24)}.{made[-32:]}",  # another token's signature
        made[:-1] + ("a" if made[-1] != "a" else "b"),
        made + "0",
        made.upper(),
        "",
        None,
        7,
        ["v-x"],
    ]
    given = {sessions.remember_visitor(token, page(f"p{n}")) for n, token in enumerate(forged)}
    assert len(given) == len(forged)  # each a fresh visitor of its own
    assert all(sessions.signed(token) and token not in forged for token in given)
    # Signed by another server (another secret): a stranger here.
    monkeypatch.setenv("PROBE_SESSION_SECRET", "x" * 40)
    elsewhere = sessions.new_visitor_token()
    monkeypatch.setenv("PROBE_SESSION_SECRET", "y" * 40)
    assert not sessions.signed(elsewhere) and sessions.signed(sessions.new_visitor_token())


def _load_event(url: str) -> tuple[int, int]:
    """(fn_index, trigger_id) of the page load that hands the browser's token to the server."""
    with urllib.request.urlopen(url + "/config", timeout=60) as response:
        config = json.loads(response.read())
    states = {c["id"] for c in config["components"] if c.get("props", {}).get("storage_key") == "probe-visitor"}
    for index, dependency in enumerate(config["dependencies"]):
        targets = [list(target) for target in dependency.get("targets", [])]
        if any(event == "load" for _, event in targets) and set(dependency.get("inputs", [])) & states:
            return dependency.get("id", index), targets[0][0]
    raise AssertionError("no load event takes the visitor's token")


def test_two_browsers_sharing_a_made_up_token_are_two_visitors(serve):
    url = serve(PROBE_PUBLIC="1")
    load = _load_event(url)
    made_up = "v-" + secrets.token_urlsafe(24)
    first, second = (queue_call(url, secrets.token_hex(8), *load, [made_up])[0] for _ in range(2))
    assert made_up not in (first, second) and first != second
    assert sessions.signed(first) and sessions.signed(second)
    # The browser keeps what it was given: its reload is the same visitor.
    assert queue_call(url, secrets.token_hex(8), *load, [first])[0] == first
