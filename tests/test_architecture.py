"""The package's import graph: no cycles, and the core never imports a front end.

The graph is read from the source with `ast` (module-level and function-level imports
alike: a lazy import is still a dependency), so it needs no third-party tool.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Where each installed package's source lives (pyproject's package-dir).
PACKAGE_DIRS = {"memwarden": ROOT / "memwarden", "memwarden.policies": ROOT / "policies",
                "memwarden.apply": ROOT / "apply", "memwarden.hooks": ROOT / "hooks"}
FRONT_ENDS = ("memwarden.cli", "memwarden.hooks", "memwarden.service", "memwarden.action")
CORE = ("memwarden.model", "memwarden.git", "memwarden.tokens", "memwarden.read",
        "memwarden.report", "memwarden.policies", "memwarden.apply")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in folder.rglob("*.py"):
            if "example" in path.relative_to(folder).parts:
                continue
            rel = path.relative_to(folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((package, *rel))
            # policies/ is installed as memwarden.policies, not as a sub-folder of memwarden/
            found.setdefault(name, path)
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name if is_package else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] != "memwarden":
                    continue
                resolved = _resolve(target, modules)
                if resolved and resolved != name:
                    edges.add(resolved)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_core_imports_no_front_end():
    bad = sorted(f"{src} -> {dst}" for src, dsts in import_graph().items()
                 if src.startswith(CORE) for dst in dsts if dst.startswith(FRONT_ENDS))
    assert bad == []


def test_the_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_lazy_and_relative_imports():
    graph = import_graph()
    assert "memwarden.cli.main" in graph  # the CLI is walked
    assert any(dst.startswith("memwarden.policies") for dst in graph["memwarden.cli.check"])
