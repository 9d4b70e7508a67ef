"""No two modules of ours import each other, not even for a type: a circle
between files (``hand.py`` -> ``playout.py`` -> ``hand.py``) makes every one
of them unreadable alone and breaks at the first import-time use. Rooms
forming no circle (test_imports.py) does not catch one inside a room.

Every import counts (at the top, inside a function, under TYPE_CHECKING); an
import of a package counts as one of its ``__init__.py``."""

from __future__ import annotations

import ast
from pathlib import Path

from testsupport import REPO

PACKAGE = REPO / "host" / "tablesense"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_edges() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (resolved to files that exist)."""
    files = {_module(p): p for p in PACKAGE.rglob("*.py") if "migrations" not in p.parts}
    edges: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join([*base, node.module] if node.module else base)
                else:
                    module = node.module or ""
                # ``from package import module`` imports the module
                targets = [module] + [f"{module}.{a.name}" for a in node.names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.add(target)
        edges[name] = found
    return edges


def find_circle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                circle = visit(nxt)
                if circle:
                    return circle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            circle = visit(node)
            if circle:
                return circle
    return None


def test_no_module_imports_itself_back() -> None:
    circle = find_circle(module_edges())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_check_finds_a_circle() -> None:
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    edges = module_edges()
    assert "tablesense.games.dominoes.state" in edges["tablesense.games.dominoes.hand"]
