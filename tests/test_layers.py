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


def _names(tree: ast.Module) -> set[str]:
    """Every name the module's code uses or imports (``Store``, ``footnote.store.protocol.Store``'s last part)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.rsplit(".", 1)[-1])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            out.add(node.value)  # a string annotation
    return out


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(SRC)), ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(SRC.rglob("*.py"))]


def test_the_answer_stage_imports_no_store() -> None:
    """The answer stage reaches the corpus only through the turn's reader (docs/architecture.md, "One door"):
    nothing in ``answer/`` imports ``footnote.store``, even under ``TYPE_CHECKING`` or inside a function."""
    bad = []
    for rel, tree in _modules():
        if not rel.startswith("answer/"):
            continue
        for node in ast.walk(tree):
            mods = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                    else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            bad += [f"{rel}: {m}" for m in mods if m == "footnote.store" or m.startswith("footnote.store.")]
    assert bad == []


def test_only_the_store_and_the_composition_root_name_the_whole_store() -> None:
    """Outside ``store/``, the composition root (``engine.py`` and its parts) and ``testing/``, code is typed by
    the capability protocols it uses (``SourceStore``, ``VectorStore``, ``LaneStore``…), never the whole ``Store``."""
    allowed = ("store/", "testing/", "engine.py", "engine_setup.py", "engine_status.py")
    bad = [rel for rel, tree in _modules() if not rel.startswith(allowed) and "Store" in _names(tree)]
    assert bad == []


def test_the_name_walk_sees_a_store() -> None:
    tree = ast.parse("from footnote.store import Store\ndef f(s: 'Store') -> None: ...\n")
    assert "Store" in _names(tree)
