"""Helpers shared by every test suite (import: ``from testsupport import need``).

A test that needs a service (a broker, a database, Node.js, Chromium) calls
:func:`need`: in CI (``CI=true``) a missing service is a failure, elsewhere a
skip whose reason pytest prints (``-ra``), never a silent pass.
Room-specific fixtures live in ``tests/<room>/conftest.py``.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

REPO = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
T = TypeVar("T")


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


def wait_until(
    condition: Callable[[], T | None | bool],
    timeout: float = 10.0,
    interval: float = 0.01,
    what: str = "",
) -> T:
    """Poll ``condition`` until it returns something truthy, and return that.

    The one waiting loop of the suite: it starts at a short interval (most
    conditions hold within milliseconds) and backs off to at most 0.1 s, so a
    test waits as little as the thing it waits for, and on a busy machine no
    less than ``timeout``. A timeout fails the test with ``what`` (or the
    condition's name), never a silent pass.
    """
    deadline = time.monotonic() + timeout
    delay = interval
    while True:
        value = condition()
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            name = what or getattr(condition, "__name__", "condition")
            pytest.fail(f"timed out after {timeout:g} s waiting for {name}", pytrace=False)
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)
