"""Hooks and fixtures shared by every test suite; helpers are in testsupport.py.

Room-specific fixtures live in ``tests/<room>/conftest.py``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testsupport import REPO, need, tcp_open

#: What a test needs that takes seconds to start, found from its fixtures or
#: its module's source, so a new test is marked without anyone remembering
#: to: ``scripts/test.sh --quick`` leaves these out.
SERVICE_FIXTURES = {
    "browser": {"browser"},
    "broker": {"broker", "tls_broker"},
}
SERVICE_SOURCE = {
    "browser": re.compile(r"sync_playwright"),
    "broker": re.compile(r"\bMosquitto\(|mosquitto_binary\(|club_sim|--director"),
    "emulator": re.compile(r"mpboard\.available|MicroPythonBoard|Rp2040Board|rp2040\.board|--boards.{0,6}rp2040"),
}


#: Files whose tests take a minute or more (measured with ``--durations``
#: under load): collected first, so that with ``--dist loadfile`` each starts
#: on its own worker at once and the many short files fill the other workers
#: around them, instead of one of them starting last and running alone at
#: the end (longest first: the classic rule for parallel machines). Only the
#: order changes; tests/architecture/test_suite_schedule.py checks every path exists.
#: Not here: sim/test_rp2040_board.py. Started beside the rehearsal and the remote
#: match under two CPU hogs, its emulated board answered deploy's 1 s handshakes too
#: late for the whole confirmation (four failures); where it is collected it ran
#: beside lighter files.
LONG_FILES = (
    "remote/test_remote_faults.py",
    "tournament/test_rehearsal.py",
    "tournament/test_pages_lang_browser.py",
    "hw/test_kicad.py",
    "remote/test_view_filter.py",
    "remote/test_two_tables.py",
    "web/test_display_virtual_table.py",
    "web/test_coach_seat_page.py",
)


def _long_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: LONG_FILES first, in that order; the rest as collected."""
    tests = Path(__file__).resolve().parent
    rank = {str(tests / name): i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(str(item.path), len(rank)))  # stable: a file's tests keep their order


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run long soaks marked slow")
    parser.addoption(
        "--quick",
        action="store_true",
        help="leave out the tests that need a browser, a broker or an emulated board (scripts/test.sh --quick)",
    )


@functools.cache
def _module_source(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError:
        return ""


def service_marks(item: pytest.Item) -> set[str]:
    """The services ``item`` needs: ``browser``, ``broker``, ``emulator``."""
    fixtures = set(getattr(item, "fixturenames", ()))
    marks = {name for name, names in SERVICE_FIXTURES.items() if fixtures & names}
    source = _module_source(str(item.path))
    marks |= {name for name, pattern in SERVICE_SOURCE.items() if pattern.search(source)}
    return marks | {m.name for m in item.iter_markers() if m.name in SERVICE_SOURCE}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    quick = config.getoption("--quick")
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        marks = service_marks(item)
        for name in marks:
            item.add_marker(getattr(pytest.mark, name))
        (left_out if quick and marks else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept
    _long_first(items)
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="long soak: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of the PostgreSQL server the machine runs (127.0.0.1:5432, database test)."""
    url = os.environ.get("TABLESENSE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    need(tcp_open("127.0.0.1", 5432), "PostgreSQL is not running on 127.0.0.1:5432")
    return url


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Debian Chromium per test module (Playwright's Python API;
    never ``playwright install``); each test opens its own context or page.
    Module-scoped, not session-scoped: Playwright's sync API keeps an event
    loop on the thread, which must not outlive the module into tests that run
    their own asyncio loops in the same worker."""
    need(Path(CHROMIUM).exists() or shutil.which("chromium") is not None,
         "Debian's chromium is not installed (/usr/bin/chromium)")
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
