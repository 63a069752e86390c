"""Gradio's list fields, with a refusal that does not repeat what was sent.

Gradio checks a Dropdown's, Radio's or CheckboxGroup's value against its choices before any
handler runs, and its error repeats the whole value and every choice: a caller of the API who
sends a 1 MB text as a benchmark's name gets a 1 MB error back, and the app's log gets it too.
These subclasses keep Gradio's check and say only that the value is not one offered.
They keep Gradio's names, so the page draws them with Gradio's own widgets.
"""

from __future__ import annotations

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
