"""Browser test helpers: screenshots under test-artifacts/web/ (the Chromium
fixture, ``browser``, is the suite's own, in tests/conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from testsupport import REPO

ARTIFACTS = REPO / "test-artifacts" / "web"

# The helper next to this file (pagestate) import as top-level
# modules, as testsupport does (pytest runs with --import-mode=importlib).
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
