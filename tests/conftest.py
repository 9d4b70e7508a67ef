"""Hooks and fixtures shared by every test suite; helpers are in testsupport.py.

Room-specific fixtures live in ``tests/<room>/conftest.py``.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import time
from collections.abc import Generator, Iterator
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


#: The files that take longest (per-file sums of ``--durations=0`` under
#: load, longest first): collected first, so that with ``--dist loadfile``
#: each starts on a worker at once and the many short files fill the other
#: workers around them, instead of one of them starting last and running
#: alone at the end (longest first: the classic rule for parallel machines).
#: Only the order changes; tests/architecture/test_suite_schedule.py checks
#: every path exists. Not here: sim/test_rp2040_board.py (its emulated board,
#: started beside the rehearsal and the remote match under two CPU hogs,
#: answered deploy's handshakes too late; collected in its place it runs
#: beside lighter files).
LONG_FILES = (
    "remote/test_remote_faults.py",
    "tournament/test_security.py",
    "tournament/test_pages_lang_browser.py",
    "hw/test_kicad.py",
    "tournament/test_rehearsal_games.py",
    "remote/test_two_tables.py",
    "tournament/test_rehearsal.py",
    "remote/test_view_filter.py",
    "remote/test_remote_page.py",
    "remote/test_remote_tournament.py",
    "tournament/test_rehearsal_broker.py",
    "tournament/test_replay_kems.py",
    "sim/test_rp2040_own_boards.py",
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


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (user + system)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """With ``TABLESENSE_TEST_CPU_LOG=FILE``, append each test's CPU seconds
    (its worker's and its ended subprocesses': a browser or emulator ended
    by a module fixture counts to the module's last test) and wall seconds to
    FILE, a line ``path<TAB>test<TAB>cpu<TAB>wall``: where the suite spends
    the machine, which wall times alone hide on a shared machine."""
    log = os.environ.get("TABLESENSE_TEST_CPU_LOG")
    if not log:
        yield
        return
    cpu, wall = _cpu_seconds(), time.monotonic()
    yield
    cpu, wall = _cpu_seconds() - cpu, time.monotonic() - wall
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"{item.path.relative_to(REPO)}\t{item.name}\t{cpu:.2f}\t{wall:.2f}\n")


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
