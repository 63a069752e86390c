"""The import graph of the project's own modules, read from the source (imports inside
functions and methods counted): for the layering test and for the tests that follow what the
page reaches."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """Module -> the modules it imports (anywhere in the file: top level, functions, methods),
    among the modules under `root` in `packages`. `from a.b import c` points at a.b.c when c is
    a module, else at a.b."""
    files = [p for package in packages for p in ([root / f"{package}.py"] + sorted((root / package).rglob("*.py")))]
    modules = {module_name(p, root): p for p in files if p.is_file()}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph
