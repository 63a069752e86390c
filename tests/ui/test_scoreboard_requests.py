"""How a Scoreboard handler answers what goes wrong: a refused request always in the handler's own
answer; any other failure only in a view that shows every failure in its place, else raised."""

from __future__ import annotations

import pytest

from probes.core.errors import LimitExceeded
from ui.common import INTERNAL_ERROR
from ui.scoreboard.requests import Refused, refused_as


def _failing(exc: Exception):
    def handler(x: int, request=None) -> str:
        raise exc

    return handler


def test_a_refused_request_is_answered_in_either_mode() -> None:
    for every in (False, True):
        handler = refused_as(lambda message: f"shown: {message}", every_failure=every)(_failing(Refused("too long")))
        assert handler(1) == "shown: too long"


def test_a_view_that_shows_every_failure_answers_a_bug_with_the_generic_message_and_a_mistake_with_its_own() -> None:
    answer = refused_as(lambda message: f"shown: {message}", every_failure=True)
    assert answer(_failing(RuntimeError("secret internals")))(1) == f"shown: {INTERNAL_ERROR}"
    assert answer(_failing(LimitExceeded("the question is over 2000 characters")))(1).startswith("shown: the question")


def test_a_handler_that_only_answers_refusals_lets_anything_else_go_on() -> None:
    handler = refused_as(lambda message: message)(_failing(RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        handler(1)


def test_the_handlers_signature_is_kept_for_gradio() -> None:
    import inspect

    handler = refused_as(str, every_failure=True)(_failing(ValueError()))
    assert list(inspect.signature(handler).parameters) == ["x", "request"]
