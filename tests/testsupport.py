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
