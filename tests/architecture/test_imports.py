"""docs/architecture.md is the law of imports: every import of ours that a
room's module makes (at the top or inside a function, TYPE_CHECKING too) must
be one the document's ``imports`` block allows, and the rooms must form no
circle. A change that needs a forbidden import changes the design or the
document, in the same commit; this test fails until it does."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from testsupport import REPO

PACKAGE = REPO / "host" / "tablesense"
DOC = REPO / "docs" / "architecture.md"
ANY = "any"


def room_of(path: Path) -> str:
    """``games`` for host/tablesense/games/dominoes/hand.py, ``sentence``
    for the leaf module host/tablesense/sentence.py, ``cli`` for the
    package's own cli.py."""
    parts = path.relative_to(PACKAGE).parts
    first = parts[0]
    return first if len(parts) > 1 else first.removesuffix(".py")


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_rooms(path: Path) -> set[str]:
    """The rooms of ours a file imports, wherever the import stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                names = [".".join([*base, node.module] if node.module else base)]
            else:
                names = [node.module or ""]
        for name in names:
            parts = name.split(".")
            if parts[0] == "tablesense" and len(parts) > 1:
                found.add(parts[1])
    return found


def allowed_imports() -> dict[str, set[str]]:
    """The ``imports`` block of docs/architecture.md: ``room: rooms`` and
    ``room/file.py: rooms`` (more for one file) lines."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```imports\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no ```imports block"
    rules: dict[str, set[str]] = {}
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, rooms = line.partition(":")
        rules[key.strip()] = set(rooms.split())
    return rules


def is_command_module(path: Path) -> bool:
    """A room's cli.py (or a module in a room's ``cli`` package): the thin
    commands that wire rooms together may import any room."""
    return path.name == "cli.py"


def source_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "migrations" not in p.parts)


def test_every_import_is_one_the_architecture_allows() -> None:
    rules = allowed_imports()
    wrong: list[str] = []
    for path in source_files():
        room = room_of(path)
        if room not in rules:
            wrong.append(f"{path.relative_to(REPO)}: room {room!r} is not in the imports block")
            continue
        if is_command_module(path):
            continue
        rel = "/".join(path.relative_to(PACKAGE).parts)
        allowed = rules[room] | rules.get(rel, set()) | {room}
        if ANY in allowed:
            continue
        for other in sorted(imported_rooms(path) - allowed):
            wrong.append(f"{path.relative_to(REPO)} imports {other}, which docs/architecture.md does not allow {room}")
    assert not wrong, "\n".join(wrong)


def test_the_rooms_form_no_circle() -> None:
    """Commands included: a cli.py that imports a room which imports the
    cli's room back closes a circle as surely as any other module."""
    edges: dict[str, set[str]] = defaultdict(set)
    for path in source_files():
        room = room_of(path)
        edges[room] |= imported_rooms(path) - {room}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(room: str) -> list[str] | None:
        state[room] = 1
        stack.append(room)
        for nxt in sorted(edges.get(room, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[room] = 2
        return None

    for room in sorted(edges):
        if room not in state:
            circle = visit(room)
            assert circle is None, "rooms import each other in a circle: " + " -> ".join(circle)


def test_the_imports_block_names_only_rooms_that_exist() -> None:
    rooms = {room_of(p) for p in source_files()} | {"firmware"}
    for key, targets in allowed_imports().items():
        assert key.split("/")[0] in rooms, f"docs/architecture.md names a room that does not exist: {key}"
        if "/" in key:
            assert (PACKAGE / key).exists(), f"docs/architecture.md names a file that does not exist: {key}"
        assert targets <= rooms | {ANY}, f"{key}: unknown rooms {sorted(targets - rooms - {ANY})}"
