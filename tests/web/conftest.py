"""Browser fixtures: one headless Debian Chromium per test module (Playwright's
Python API; never `playwright install`), screenshots under test-artifacts/web/."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testsupport import REPO, need

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = REPO / "test-artifacts" / "web"

# The helper next to this file (pagestate) import as top-level
# modules, as testsupport does (pytest runs with --import-mode=importlib).
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    need(
        Path(CHROMIUM).exists() or shutil.which("chromium") is not None,
        "Debian's chromium is not installed (/usr/bin/chromium)",
    )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - depends on the environment
        need(False, "the playwright Python package is not installed")
        raise
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
