"""DESIGN.md's one-way imports: app/ui -> probes -> models, and no import loop between any two
modules, counting imports inside functions. Checked on the source, and on what actually gets
imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import run_python
from tests.support.import_graph import import_graph

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "ui", "probes", "models")


def imported_top_level_names(package: str) -> dict[str, set[str]]:
    found = {}
    for path in (REPO / package).rglob("*.py"):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(REPO))] = names
    return found


def import_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or around a loop (Tarjan's strongly
    connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative depth-first search: the graph is deep enough to make recursion a risk.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    loops.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return loops


def test_models_never_import_probes_ui_or_gradio():
    for path, names in imported_top_level_names("models").items():
        assert not names & {"probes", "ui", "gradio", "app"}, path


def test_probes_never_import_ui_or_gradio():
    for path, names in imported_top_level_names("probes").items():
        assert not names & {"ui", "gradio", "app"}, path


def test_no_two_modules_import_each_other_anywhere():
    loops = import_loops(import_graph(REPO, PACKAGES))
    assert loops == [], "import loops: " + "; ".join(" <-> ".join(loop) for loop in loops)


def test_the_loop_finder_sees_a_loop_made_by_an_import_inside_a_function(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import helper\n")
    (package / "b.py").write_text("def helper():\n    from pkg.sub import c\n    return c\n")
    (package / "sub" / "c.py").write_text("class C:\n    def method(self):\n        from ..a import helper\n")
    (package / "d.py").write_text("import pkg.a\n")  # imports into the loop, is not part of it
    assert import_loops(import_graph(tmp_path, ["pkg"])) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    (package / "sub" / "c.py").write_text("class C:\n    pass\n")
    assert import_loops(import_graph(tmp_path, ["pkg"])) == []


def test_listing_benchmarks_and_models_does_not_load_torch_or_sdks():
    code = (
        "import sys, contextlib, io\n"
        "from probes.cli.commands import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['list']); main(['models'])\n"
        "print(sorted(m for m in ('torch', 'transformers', 'openai', 'anthropic', 'gradio') if m in sys.modules))\n"
    )
    out = run_python(code)
    assert out.strip() == "[]", out


def test_a_report_loads_only_what_a_report_needs(tmp_path):
    """`python -m probes report` is parsed with `report` alone and loads none of the other
    commands (half a second at each start), nor the views of single results or the benchmarks
    its store does not hold (numpy among them); it still reads a store and says its mistakes."""
    from probes.core.types import Result, Status
    from probes.running.store import Store

    path = tmp_path / "results.sqlite"
    with Store(path) as store:
        store.record(Result("blind/touching-circles", "i1", "m", "0-shot", "none", Status.ANSWERED, correct=True))
    code = (
        "import sys, contextlib, io\n"
        "from probes.cli import main\n"
        "printed = io.StringIO()\n"
        "with contextlib.redirect_stdout(printed):\n"
        f"    assert main(['report', '--store', {str(path)!r}, '--format', 'json']) == 0\n"
        f"    assert main(['report', '--store', {str(tmp_path / 'none.sqlite')!r}]) == 2\n"
        "assert '\"correct\": 1' in printed.getvalue(), printed.getvalue()\n"
        "print(sorted(m for m in ('probes.cli.commands', 'probes.cli.run_command', 'models.registry', 'torch',\n"
        "                         'gradio', 'probes.analysis.paired', 'probes.analysis.consistency',\n"
        "                         'probes.analysis.polarity', 'probes.benchmarks.illusion.common', 'numpy')\n"
        "             if m in sys.modules))\n"
    )
    assert run_python(code).strip() == "[]"


@pytest.mark.parametrize(
    "argv", [["report", "--help"], ["report", "--bogus"], ["report", "--format", "xml"], ["report"]]
)
def test_a_reports_help_and_mistakes_are_the_whole_command_lines(argv, capsys):
    from probes.cli import commands, main

    said = []
    for entry in (main, commands.main):
        try:
            code = entry(argv)
        except SystemExit as exit:
            code = exit.code
        said.append((code, capsys.readouterr()))
    assert said[0] == said[1] and said[0][1].out + said[0][1].err
