"""The suite's schedule: the files started first (tests/conftest.py LONG_FILES) exist."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _long_files() -> list[str]:
    """LONG_FILES as tests/conftest.py writes it, read from its text: importing
    ``conftest`` by name finds whichever folder's conftest was loaded first."""
    tree = ast.parse((TESTS / "conftest.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign):
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "LONG_FILES":
            return list(ast.literal_eval(value))
    raise AssertionError("tests/conftest.py has no LONG_FILES")


def test_every_long_file_exists() -> None:
    missing = [name for name in _long_files() if not (TESTS / name).is_file()]
    assert not missing, f"tests/conftest.py LONG_FILES names files that are gone: {missing}"
