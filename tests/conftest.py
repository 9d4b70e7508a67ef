"""Fixtures and rules shared by every test suite.

A test that needs a service (a broker, a database, Node.js, Chromium) calls
:func:`need`: in CI (``CI=true``) a missing service is a failure, elsewhere a
skip whose reason pytest prints (``-ra``), never a silent pass.
Room-specific fixtures live in ``tests/<room>/conftest.py``.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need(available: bool, reason: str) -> None:
    """Skip (locally) or fail (in CI) unless ``available``."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def tcp_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections at host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def node_binary() -> str | None:
    return shutil.which("node")


def micropython_wasm_dir() -> Path:
    """Where ``npm install`` puts the MicroPython WebAssembly port."""
    return REPO / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run long soaks marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
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
