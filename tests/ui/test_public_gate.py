"""One gate for public mode (issue 22): every way a benchmark id, a data folder, a model id or a
file reaches the app goes through `Limits.admit`, however it arrived: a `?probe=` replay link, an
API call, a session's saved state (the Human tab's test under way, the Evaluate tab's Resume), the
Stimulus lab. A refusal reads the same whether the server path exists or not, and never names it.

Handlers are called as the app calls them (a `gr.Request` carrying the session and the link's
query), with public mode on; one test opens a replay link in a real browser."""

from __future__ import annotations

import ast
import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr
import pytest
from playwright.sync_api import expect

from probes.core.errors import LimitExceeded
from probes.running import limits
from tests.conftest import make_folder, shapes_image
from ui import items
from ui.items import ItemSpec

SECRET_QUESTION = "What does the operator keep in this private folder?"
REFUSED = "runs no folders of the server"
UI = Path(__file__).resolve().parents[2] / "ui"


@pytest.fixture
def public(monkeypatch):
    monkeypatch.setenv("PROBE_PUBLIC", "1")
    limits.reload()
    items._benchmark.cache_clear()
    yield limits.current()
    monkeypatch.delenv("PROBE_PUBLIC")
    limits.reload()
    items._benchmark.cache_clear()


@pytest.fixture
def server_folder(tmp_path) -> Path:
    """A folder of the server that a visitor must not reach: a valid probe set."""
    records = [{"id": "q1", "image": "a.png", "question": SECRET_QUESTION, "answer": "yes"}]
    return make_folder(tmp_path / "operator-private", records, {"a.png": shapes_image("circle")})


def link_for(spec: ItemSpec, models=("baseline/chance",), conditions=("as asked",)) -> str:
    from ui.probe.share import encode

    value = encode(spec, list(models), list(conditions))
    assert value is not None
    return value


def request(session: str = "visitor", link: str | None = None) -> gr.Request:
    return gr.Request(session_hash=session, query_params={"probe": link} if link else {})


def shown_text(outputs: list) -> str:
    """Everything a handler's outputs would put on the page, as one string."""
    return " ".join(str(o.get("value", "")) if isinstance(o, dict) else str(o) for o in outputs)


# --- the gate itself ------------------------------------------------------------------------------


def test_the_gate_refuses_server_paths_in_public_mode_with_one_message_whether_they_exist_or_not(
    public, server_folder, tmp_path
):
    missing = tmp_path / "no-such-folder"
    messages = set()
    for folder in (server_folder, missing):
        named = f"custom:{folder}"
        with pytest.raises(LimitExceeded) as refused:
            public.admit(benchmark=named)
        messages.add(str(refused.value))
        for source in ("benchmark", "generated"):
            with pytest.raises(LimitExceeded) as refused:
                items.resolve(ItemSpec(source, named))
            messages.add(str(refused.value))
    assert len(messages) == 1 and REFUSED in messages.pop()
    data_messages = set()
    for folder in (server_folder, missing):
        with pytest.raises(LimitExceeded) as refused:
            items.resolve(ItemSpec("benchmark", "discribench", data=str(folder)))
        data_messages.add(str(refused.value))
    assert len(data_messages) == 1 and str(tmp_path) not in data_messages.pop()
    # Models: a local folder or an unlisted hub id, whether the folder exists or not.
    for model in (f"hf/{server_folder}", f"hf/{missing}", "hf//etc", "hf/someone/any-model"):
        with pytest.raises(LimitExceeded, match="local models here are only") as refused:
            public.admit(model=model, own_key=True)
        assert str(tmp_path) not in str(refused.value).replace(model, "")


def test_an_upload_spec_reads_only_gradios_uploads(public, server_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio-uploads"))
    outside = ItemSpec("upload", paths=(str(server_folder / "a.png"),), question="Is it red?")
    with pytest.raises(LimitExceeded, match="reads no files of the server") as refused:
        items.resolve(outside)
    assert str(server_folder) not in str(refused.value)
    for sneaky in (items.upload_roots()[0] / ".." / server_folder.name, "/etc/hostname"):
        with pytest.raises(LimitExceeded):
            items.resolve(ItemSpec("upload", paths=(str(sneaky),), question="Is it red?"))
    upload = items.upload_roots()[0] / "test-gate" / "a.png"  # where Gradio puts a visitor's file
    upload.parent.mkdir(parents=True, exist_ok=True)
    shapes_image("circle").save(upload)
    _, item = items.resolve(ItemSpec("upload", paths=(str(upload),), question="Is it red?"))
    assert item.question == "Is it red?"


def test_a_benchmark_built_before_public_mode_is_not_handed_out_from_the_cache(monkeypatch, server_folder):
    monkeypatch.delenv("PROBE_PUBLIC", raising=False)
    limits.reload()
    items._benchmark.cache_clear()
    spec = ItemSpec("benchmark", f"custom:{server_folder}")
    assert items.resolve(spec)[1].question == SECRET_QUESTION  # locally, the operator's folders are theirs
    monkeypatch.setenv("PROBE_PUBLIC", "1")
    limits.reload()
    try:
        with pytest.raises(LimitExceeded, match=REFUSED):
            items.resolve(spec)
    finally:
        monkeypatch.delenv("PROBE_PUBLIC")
        limits.reload()
        items._benchmark.cache_clear()


# --- every entry point ----------------------------------------------------------------------------


def test_a_replay_link_naming_a_server_folder_shows_nothing_of_it_and_reads_the_same_for_a_missing_one(
    public, server_folder, tmp_path
):
    from ui.probe import replay_link

    answers = []
    for folder in (server_folder, tmp_path / "missing"):
        for source in ("benchmark", "generated"):
            outputs = replay_link(request(link=link_for(ItemSpec(source, f"custom:{folder}"))))
            text = shown_text(outputs)
            assert REFUSED in text and str(tmp_path) not in text and SECRET_QUESTION not in text
            assert "items.jsonl" not in text and "exist" not in text
            assert all(o == gr.update() for o in outputs[:7])  # the stage keeps its item, its pictures
            answers.append(text)
    assert len(set(answers)) == 1  # whether the folder exists or not


def test_a_replay_link_naming_a_server_folder_as_a_model_is_refused_in_its_cells(public, tmp_path):
    from ui.probe import replay_link

    spec = items.generated_spec("blind/touching-circles", "", 0)
    outputs = replay_link(request(link=link_for(spec, models=(f"hf/{tmp_path}", "baseline/chance"))))
    grid = shown_text(outputs)
    assert "local models here are only" in grid and "press Ask to send it" in grid  # chance: not cached yet
    assert str(tmp_path) not in grid.replace(f"hf/{tmp_path}", "")  # the id is the visitor's; nothing else


def frames_of(generator) -> list:
    """Every frame an async handler yields, run on a loop of its own in a thread of its own (a
    browser test before may hold this thread's loop)."""

    async def collect() -> list:
        return [frame async for frame in generator]

    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, collect()).result(timeout=120)


def test_the_probe_api_refuses_a_spec_naming_a_server_folder(public, server_folder):
    from ui.probe import probe

    spec = ItemSpec("benchmark", f"custom:{server_folder}")
    frames = frames_of(probe(request(), spec, "baseline/chance", None, None, None, ["as asked"]))
    assert len(frames) == 1 and REFUSED in frames[0][0] and str(server_folder) not in frames[0][0]


def test_a_human_session_saved_with_a_server_folder_is_refused_when_it_resumes(public, server_folder):
    from ui.human import TakeSession, submit_answer

    for saved, refusal in (
        (TakeSession("Ada", f"custom:{server_folder}", None, (0,), tag="0" * 12, shown_at=1.0), REFUSED),
        (TakeSession("Ada", "discribench", str(server_folder), (0,), tag="0" * 12, shown_at=1.0), "reads no data"),
    ):
        status = shown_text(submit_answer(saved, "yes", "", request()))
        assert refusal in status and str(server_folder) not in status and SECRET_QUESTION not in status


def test_an_evaluation_resumed_with_a_server_folder_is_refused(public, server_folder):
    from ui.evaluate.runs import EvalConfig, build_plans

    for config in (
        EvalConfig((f"custom:{server_folder}",), ("baseline/chance",), ("0-shot",), ("none",)),
        EvalConfig(("discribench",), ("baseline/chance",), ("0-shot",), ("none",), data=str(server_folder)),
        EvalConfig(("blind/touching-circles",), (f"hf/{server_folder}",), ("0-shot",), ("none",)),
    ):
        with pytest.raises(LimitExceeded) as refused:
            build_plans(config, {})
        assert str(server_folder) not in str(refused.value).replace(config.models[0], "")


def test_the_stimulus_lab_and_its_export_pass_the_gate(public, server_folder):
    from ui.stimuli import export_stimuli, preview

    spec = {"task": f"custom:{server_folder}", "params": {}}
    assert REFUSED in preview(spec, 0)[-1]
    assert REFUSED in export_stimuli(spec, [], 1, 0)[1]


def test_no_module_of_the_playground_builds_a_benchmark_or_a_backend_past_the_gate():
    """Where the app turns words into a benchmark or a backend: only behind `Limits.admit`.
    (A new tab that calls get_benchmark or answerers.create directly fails here.)"""
    allowed = {
        "get_benchmark": {"items.py:_benchmark"},  # reached only through benchmark_of, which admits first
        # own_backend: a server the visitor names, refused outright on a public Space (checked below)
        "create": {"common.py:backend_for", "common.py:own_backend", "probe/share.py:replay"},
        "resolve": {"common.py:backend_for"},  # answerers.resolve
        "generated_set": {"stimuli/__init__.py:export_stimuli"},  # after _checked_spec, which admits
    }
    found: dict[str, set[str]] = {name: set() for name in allowed}
    for path in sorted(UI.rglob("*.py")):  # every tab's folder too
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func
                name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
                owner = getattr(callee.value, "id", "") if isinstance(callee, ast.Attribute) else ""
                if name in ("create", "resolve") and owner != "answerers":
                    continue
                if name in found:
                    found[name].add(f"{path.relative_to(UI).as_posix()}:{function.name}")
    assert found == allowed
    gated = {"items.py": "def benchmark_of", "common.py": "def backend_for", "probe/share.py": "def replay"}
    for module, function in gated.items():
        source = (UI / module).read_text(encoding="utf-8")
        body = source[source.index(function) :].split("\ndef ", 1)[0]
        assert "admit(" in body, f"{module}: {function} does not pass the gate"
    source = (UI / "common.py").read_text(encoding="utf-8")
    own = source[source.index("def own_backend") :].split("\ndef ", 1)[0]
    assert own.index("if limits().public:") < own.index("raise LimitExceeded") < own.index("answerers.create")


def test_a_replay_link_to_a_server_folder_in_the_browser_shows_the_example_and_a_refusal(
    serve, page, server_folder, tmp_path
):
    url = serve(PROBE_PUBLIC="1")
    for folder in (server_folder, tmp_path / "missing"):
        page.goto(f"{url}/?probe={link_for(ItemSpec('benchmark', f'custom:{folder}'))}")
        status = page.locator("#probe-status")
        expect(status).to_contain_text(REFUSED)
        shown = page.locator("body").inner_text()
        assert SECRET_QUESTION not in shown and str(tmp_path) not in shown
        assert not re.search(r"items\.jsonl|no such|does not exist", shown, re.IGNORECASE)
    # Ask then asks about the item on the stage (the first example), never the folder's.
    page.locator("#probe-ask").click()
    expect(page.locator("#probe-status")).to_contain_text("answered")
    assert SECRET_QUESTION not in page.locator("body").inner_text()
