"""DESIGN.md's one-way imports: app/ui -> probes -> models. Checked on the source, and on what
actually gets imported."""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


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


def test_models_never_import_probes_ui_or_gradio():
    for path, names in imported_top_level_names("models").items():
        assert not names & {"probes", "ui", "gradio", "app"}, path


def test_probes_never_import_ui_or_gradio():
    for path, names in imported_top_level_names("probes").items():
        assert not names & {"ui", "gradio", "app"}, path


def test_listing_benchmarks_and_models_does_not_load_torch_or_sdks():
    code = (
        "import sys, contextlib, io\n"
        "from probes.cli.commands import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['list']); main(['models'])\n"
        "print(sorted(m for m in ('torch', 'transformers', 'openai', 'anthropic', 'gradio') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
