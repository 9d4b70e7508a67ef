"""Hooks and fixtures shared by every test suite; helpers are in testsupport.py.

Room-specific fixtures live in ``tests/<room>/conftest.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testsupport import REPO, need, tcp_open


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
