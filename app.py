"""The perception playground's web app. `python app.py` serves it on 0.0.0.0:7860 (a Hugging Face
Space's port). The tabs are composed here; all logic lives in ui/, probes/ and models/."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import gradio as gr
from starlette.middleware import Middleware

# ZeroGPU needs its GPU function to exist when the app starts (it does nothing where ZeroGPU is absent).
import models.hf_zerogpu  # noqa: F401
from models.types import BackendError
from probes.core.errors import ProbeError, UsageError
from probes.running.heap import give_back_large_buffers
from probes.running.limits import current as limits
from probes.running.settings import check as check_settings
from ui.about import build_about
from ui.about.my_results import FOLDER as MY_RESULTS
from ui.body_bound import BodyBound
from ui.class_api_rate import ClassApiRate
from ui.classroom import browser_tokens, build_class, student_page
from ui.cleanup import start_sweeper
from ui.common import IMAGE_FILES
from ui.evaluate import build_evaluate
from ui.human import build_human
from ui.mining import WORK as MINING_DIR
from ui.mining import build_mining
from ui.probe import build_probe
from ui.probe.export import EXPORTS as GRID_EXPORTS
from ui.projector import HEAD as PROJECTOR_HEAD
from ui.projector import build_switch as projector_switch
from ui.projector import wire as wire_projector
from ui.scoreboard import build_scoreboard
from ui.scoreboard.data import EXPORTS
from ui.session_bound import SessionBound
from ui.sessions import SESSIONS, remember_visitor, sweep_links, visitor_state
from ui.stimuli import LAB_DIR, build_stimuli

CSS = (Path(__file__).parent / "assets" / "app.css").read_text(encoding="utf-8")
# The Class tab's presenter follows its class's event stream (the count as answers arrive).
PRESENTER_HEAD = (
    f"<script>{(Path(__file__).parent / 'assets' / 'class' / 'presenter.js').read_text(encoding='utf-8')}</script>"
)
QUEUE_SIZE = 64


def build_demo() -> gr.Blocks:
    # Every variable the engine reads, the models file among them: one that does not parse stops
    # the app here, with what to write instead, not a visitor's request later.
    check_settings()
    give_back_large_buffers()
    start_sweeper(
        [IMAGE_FILES, LAB_DIR, EXPORTS, GRID_EXPORTS, MINING_DIR, MY_RESULTS], also=[SESSIONS.sweep, sweep_links]
    )
    # Gradio's own cache (uploads, served files) is emptied of files older than an hour, hourly.
    with gr.Blocks(title="Perception playground", delete_cache=(3600, 3600)) as demo:
        # Projector mode (ui/projector.py): a switch beside the title, or `?projector=1` in the address.
        with gr.Row(equal_height=False, elem_id="app-head"):
            gr.Markdown("# Perception playground\nHow do vision-language models actually see? Probe them side by side.",
                        elem_id="app-title")  # fmt: skip
            projector = projector_switch()
        class_teacher = browser_tokens()
        # Who this browser is, across reloads: its results, budgets and name tag stay its own.
        visitor = visitor_state()
        # Every tab one tap away on a phone: the tab bar wraps instead of folding tabs into "•••".
        with gr.Tabs(overflow_behavior="wrap", elem_id="app-tabs") as tabs:
            with gr.Tab("Probe", id="probe"):
                probe = build_probe()
            with gr.Tab("Stimulus lab", id="stimuli"):
                lab = build_stimuli()
            with gr.Tab("Evaluate", id="evaluate"):
                build_evaluate()
            with gr.Tab("Scoreboard", id="scoreboard"):
                build_scoreboard()
            with gr.Tab("Look-alikes", id="mining"):
                build_mining()
            with gr.Tab("Human", id="human"):
                build_human()
            with gr.Tab("Class", id="class"):
                lesson = build_class(class_teacher, tabs, "class")
            with gr.Tab("About", id="about"):
                build_about()
        # "Ask models about this": the lab's stimulus goes on the Probe stage (the last item's answers
        # and address go, as for any new item), and the Probe tab opens.
        chosen = lab["ask"].click(
            lab["to_probe"], [lab["spec"], lab["variant"]], probe["spec"], api_visibility="private"
        )
        probe["new_item"](chosen.success, probe["show"], probe["spec"], probe["stage"], api_visibility="private")
        chosen.success(None, js=lab["show_probe_js"])
        # A `?probe=` address replays a probe from the cache as the page opens.
        demo.load(remember_visitor, visitor, visitor, api_visibility="private")
        probe["after_load"](demo.load(*probe["on_load"], api_visibility="private"))
        # A `?class=` link opens the Class tab with its code; a reload finds a class in progress.
        demo.load(**lesson["load"], api_visibility="private")
        wire_projector(demo, projector)
    # API-bound events may overlap; local models serialise themselves (one copy, one lock). The
    # queue is bounded: past it a visitor is told to come back, instead of the server piling up work.
    # Gradio's queue rebuilds a pandas summary of its last 10,000 events after every event (for
    # its monitoring page, which this app does not show): 15-20% of the server's CPU with a class
    # polling (py-spy, BENCHMARKS "A class in the room"). Kept, but recomputed once per 1,000 events.
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000")
    os.environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", "1000")
    demo.queue(default_concurrency_limit=4, max_size=QUEUE_SIZE)
    return demo


def launch_options() -> dict:
    """How the app is served, here and in the tests: uploads over 50 MB are refused by Gradio
    before any of our code reads them (probes/files/images.py applies the same limit to files it
    is given), and any other request's body past ui/body_bound.py's bound before it is parsed.
    Gradio keeps at most `max_sessions` sessions' state, and in public mode one address opens at
    most `new_sessions` of them in ten minutes (ui/session_bound.py, after the body's bound); one
    address calls the class's named endpoints at most `class_api_rate` times a second (ui/class_api_rate.py).
    The student page of a class (`/class/CODE` and its JSON routes, ui/classroom/student_page.py)
    is served beside Gradio's routes. A new dict each time: Gradio's launch writes into app_kwargs."""
    return {"css": CSS, "head": PRESENTER_HEAD + PROJECTOR_HEAD, "max_file_size": "50mb", "state_session_capacity": limits().max_sessions,
            "app_kwargs": {"middleware": [Middleware(BodyBound), Middleware(ClassApiRate), Middleware(SessionBound)],
                           "routes": student_page.routes()}}  # fmt: skip


def server_port() -> int:
    """GRADIO_SERVER_PORT, read like a flag: a port out of range would fail in Gradio's launch with
    a traceback. (One that is not a number never gets here: Gradio reads it as it is imported.)"""
    raw = os.environ.get("GRADIO_SERVER_PORT", "").strip() or "7860"
    if not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise UsageError(f"GRADIO_SERVER_PORT={raw[:40]!r}: write a port number from 1 to 65535 (default 7860)")
    return int(raw)


if __name__ == "__main__":
    try:
        port = server_port()
        demo = build_demo()
    except (ProbeError, BackendError) as exc:  # a setting that does not parse: say which, and stop
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"), server_port=port, **launch_options())
