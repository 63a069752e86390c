"""The page never names a command-line option: every message of the engine's modules the page
imports, as `user_message` shows it, names the page's fields instead (ui/page_words.py).

The messages are read from the source itself (every string that is not a docstring, in every
module reachable from ui/ and app.py through imports and in every benchmark and reader the engine
loads by name), so a message added later is checked too; and a few are raised for real and
passed through `user_message`."""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from pathlib import Path

import pytest

from probes.benchmarks.discribench import DiscriBench
from probes.core.errors import ProbeError
from probes.core.registry import get_benchmark
from probes.core.types import Condition, ItemRef
from probes.reading.grading import error_result
from probes.running.limits import Limits
from probes.running.runner import RunPlan, preflight
from tests.support.import_graph import import_graph
from ui.common import user_message
from ui.page_words import page_words
from ui.probe.grid import Cell, shown_cell

ROOT = Path(__file__).resolve().parents[2]
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")


@functools.cache
def _engine_modules_the_page_imports() -> list[Path]:
    graph = import_graph(ROOT, ("app", "ui", "probes"))
    # The page's own code, and what the engine loads by name rather than by an import: every
    # benchmark (probes/core/registry.py walks probes/benchmarks) and every reader (probes/reading/parsing.py).
    todo = [name for name in graph if name.split(".")[0] in ("app", "ui")]
    todo += [name for name in graph if name.startswith(("probes.benchmarks.", "probes.reading."))]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph[name]
    return sorted(_file(name) for name in seen if name.startswith("probes."))


def _file(module: str) -> Path:
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _not_messages(tree: ast.AST) -> set[int]:
    """Docstrings, and the literal parts of f-strings (read once, as the whole f-string)."""
    nodes = (tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))))
    docstrings = {
        id(node.body[0].value)
        for node in nodes
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    parts = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    return docstrings | parts


def _text(node: ast.AST) -> str | None:
    """A string literal as a message reads, with each {value} of an f-string as VALUE."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "VALUE" for part in node.values)
    return None


# Functions whose strings are no message but the words of a shell command, written into files
# for the command line (a set's description and dataset card name the command that wrote it).
COMMANDS = {"probes/files/set_spec.py": {"command"}}


def _in_commands(tree: ast.AST, names: set[str]) -> set[int]:
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in names]
    return {id(node) for function in functions for node in ast.walk(function)}


def _messages_naming_options() -> list[tuple[str, str]]:
    found = []
    for path in _engine_modules_the_page_imports():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _not_messages(tree) | _in_commands(tree, COMMANDS.get(str(path.relative_to(ROOT)), set()))
        for node in ast.walk(tree):
            text = _text(node) if id(node) not in skip else None
            if text and FLAG.search(text):
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", text))
    return found


MESSAGES = _messages_naming_options()


def test_the_scan_reaches_the_engine_and_finds_its_messages():
    modules = {str(path.relative_to(ROOT)) for path in _engine_modules_the_page_imports()}
    assert {
        "probes/running/runner.py",
        "probes/running/limits.py",
        "probes/tools/mining.py",
        "probes/benchmarks/discribench.py",
    } <= modules
    command_line_only = [module for module in modules if "/cli/" in module or "toolkit" in module]
    assert not command_line_only
    assert len(MESSAGES) >= 10, MESSAGES  # --data, --param, --clip-min, --store ... are in there


@pytest.mark.parametrize(("where", "text"), MESSAGES, ids=[where for where, _ in MESSAGES])
def test_no_engine_message_names_an_option_on_the_page(where, text):
    shown = page_words(text)
    assert not FLAG.search(shown), f"{where}: {shown}"


def test_real_refusals_reach_the_page_in_its_words():
    circles = get_benchmark("blind/touching-circles")
    raised = []
    for attempt in (
        lambda: DiscriBench(None).select_examples(None, 4),
        lambda: dataclasses.replace(Limits.from_environment({}), max_values=3).values("gap", 5),
        lambda: preflight(RunPlan(circles, circles.items()[:1], models=[])),
    ):
        with pytest.raises(Exception) as caught:
            attempt()
        raised.append(caught.value)
    shown = [user_message(exc) for exc in raised]
    assert not any(FLAG.search(text) for text in shown), shown
    assert "tick 0-shot only" in shown[0] and "parameter gap" in shown[1] and "choose a model" in shown[2]


def test_a_probe_cell_says_why_it_has_no_answer_in_the_page_s_words():
    """The Probe grid shows the engine's message itself for a condition that does not apply and
    for an item it could not build (the runner keeps it on the result): DiscriBench at 4-shot."""
    with pytest.raises(ProbeError) as caught:
        DiscriBench(None).select_examples(None, 4)
    why = str(caught.value)
    assert FLAG.search(why)  # the engine's own words name the option
    item = get_benchmark("blind/touching-circles").items()[0]
    failed = error_result(item, "openai/m", Condition(), ItemRef.of(item), why)
    for cell in (Cell("n/a", message=why), Cell("done", result=failed)):
        note = shown_cell(item, cell).note
        assert "tick 0-shot only" in note and not FLAG.search(note), note
