"""The perception playground's web app. `python app.py` serves it on 0.0.0.0:7860 (a Hugging Face
Space's port). The tabs are composed here; all logic lives in ui/, probes/ and models/."""

from __future__ import annotations

import os
from pathlib import Path

import gradio as gr

from ui.about import build_about
from ui.evaluate import build_evaluate
from ui.human import build_human
from ui.probe import build_probe
from ui.scoreboard import build_scoreboard
from ui.stimuli import build_stimuli

CSS = (Path(__file__).parent / "assets" / "app.css").read_text(encoding="utf-8")


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="Perception playground") as demo:
        gr.Markdown("# Perception playground\nHow do vision-language models actually see? Probe them side by side.")
        with gr.Tabs():
            with gr.Tab("Probe", id="probe"):
                build_probe()
            with gr.Tab("Stimulus lab", id="stimuli"):
                build_stimuli()
            with gr.Tab("Evaluate", id="evaluate"):
                build_evaluate()
            with gr.Tab("Scoreboard", id="scoreboard"):
                build_scoreboard()
            with gr.Tab("Human", id="human"):
                build_human()
            with gr.Tab("About", id="about"):
                build_about()
    # API-bound events may overlap; local models serialise themselves (one copy, one lock).
    demo.queue(default_concurrency_limit=4)
    return demo


# How the app is served, here and in the tests: uploads over 50 MB are refused by Gradio before
# any of our code reads them (probes/files/images.py applies the same limit to files it is given).
LAUNCH_OPTIONS = {"css": CSS, "max_file_size": "50mb"}

if __name__ == "__main__":
    build_demo().launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        **LAUNCH_OPTIONS,
    )
