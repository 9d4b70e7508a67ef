"""The suite's schedule: the files started first (tests/conftest.py LONG_FILES) exist."""

from __future__ import annotations

from pathlib import Path

from conftest import LONG_FILES  # tests/conftest.py (tests/ is on the path)

TESTS = Path(__file__).resolve().parents[1]


def test_every_long_file_exists() -> None:
    missing = [name for name in LONG_FILES if not (TESTS / name).is_file()]
    assert not missing, f"tests/conftest.py LONG_FILES names files that are gone: {missing}"
