"""Gradio's list fields, with a refusal that does not repeat what was sent.

Gradio checks a Dropdown's, Radio's or CheckboxGroup's value against its choices before any
handler runs, and its error repeats the whole value and every choice: a caller of the API who
sends a 1 MB text as a benchmark's name gets a 1 MB error back, and the app's log gets it too.
These subclasses keep Gradio's check and say only that the value is not one offered.
They keep Gradio's names, so the page draws them with Gradio's own widgets.

Also the model list's labels and order (`model_label`, `working_first`).
"""

from __future__ import annotations

import re

import gradio as gr

REFUSAL = "not one of the choices this field offers"


class _ShortRefusal:
    def preprocess(self, payload):  # noqa: ANN001, ANN201 - Gradio's own signature
        try:
            return super().preprocess(payload)
        except gr.Error:
            raise gr.Error(REFUSAL) from None


class Dropdown(_ShortRefusal, gr.Dropdown):
    pass


class Radio(_ShortRefusal, gr.Radio):
    pass


class CheckboxGroup(_ShortRefusal, gr.CheckboxGroup):
    pass


# --- the model list ------------------------------------------------------------------------------

# A dropdown's label says in a few words why a model cannot answer here; the whole reason is in
# the error a request for it gets and in `python -m probes models`. The patterns read the
# providers' own messages (models/), whose start says what is missing.
_SHORT_REASONS = (
    (re.compile(r"^set \w+"), "needs a key"),
    (re.compile(r"is not downloaded here"), "not downloaded"),
    (re.compile(r"is gated"), "gated: needs HF_TOKEN"),
    (re.compile(r"not installed|pip install"), "packages missing"),
)
_MAX_REASON = 32


def short_reason(reason: str) -> str:
    """Why a model is unavailable, in a few words."""
    for pattern, words in _SHORT_REASONS:
        if pattern.search(reason):
            return words
    first = re.split(r"[:;(]", reason, maxsplit=1)[0].strip()
    if len(first) <= _MAX_REASON:
        return first
    return first[:_MAX_REASON].rsplit(" ", 1)[0] + "…"  # at a word's end


def model_label(model_id: str, available: bool, reason: str) -> str:
    if available:
        return f"{model_id} ({reason})" if reason else model_id  # e.g. "downloads 513 MB on first use"
    return f"{model_id} (unavailable: {short_reason(reason)})"


def working_first(choices: list[tuple[str, str, bool]]) -> list[tuple[str, str]]:
    """(label, id) pairs, the models that answer here first: a presenter's two working models
    are not found under nine that need a key. Otherwise in the catalogue's order."""
    ordered = sorted(choices, key=lambda choice: not choice[2])
    return list(dict.fromkeys((label, model_id) for label, model_id, _ in ordered))
