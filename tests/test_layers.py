"""Imports run downward: no two packages of ``footnote`` import each other, directly or round a loop
(docs/architecture.md, "The packages"). Module-level imports count; an import under ``TYPE_CHECKING``
or inside a function (a heavy model loaded lazily) does not."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "footnote"


def _unit(module: str) -> str:
    """``footnote.retrieve.plan`` → ``retrieve``; ``footnote.engine`` → ``engine``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_imports(tree: ast.Module) -> list[str]:
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for n in node.body if isinstance(node, ast.Try) else [node]:
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                out.append(n.module)
            elif isinstance(n, ast.Import):
                out.extend(a.name for a in n.names)
    return [m for m in out if m.startswith("footnote.")]


def package_graph() -> dict[str, dict[str, list[str]]]:
    """unit → {unit it imports: [the importing modules]}."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in SRC.rglob("*.py"):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")
        for target in _module_imports(ast.parse(path.read_text(encoding="utf-8"))):
            a, b = _unit(module), _unit(target)
            if a and b and a != b:
                graph[a][b].append(module)
    return graph


def loops(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected groups of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_no_two_packages_import_each_other() -> None:
    graph = package_graph()
    assert "records" in graph["store"] and "store" in graph["retrieve"]  # the walk sees the real imports
    bad = loops(graph)
    detail = {tuple(g): {a: {b: graph[a][b][:2] for b in g if b in graph[a]} for a in g} for g in bad}
    assert bad == [], detail


def test_the_records_are_the_ground_floor() -> None:
    """``records/`` imports no other package of footnote but the text rules and the errors."""
    assert set(package_graph()["records"]) <= {"text", "errors"}


def test_a_loop_is_found() -> None:
    assert loops({"a": {"b": ["x"]}, "b": {"c": ["y"]}, "c": {"a": ["z"]}, "d": {"a": ["w"]}}) == [["a", "b", "c"]]
