"""Issue 31: ``sim boards`` on a busy table-top port answers as ``play`` and
``demo`` do for theirs: it names the busy port, a free one and the command
to type, exits 1 (docs/troubleshooting.md) and starts no board; it never
moves the page to another port without a word. The command it prints works."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sim.test_tabletop_cli import wait
from tablesense.sim.cli import PORT_BUSY_EXIT

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port another program listens on while the test runs."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


def sim(*args: str) -> list[str]:
    return [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--table", "dominoes-4",
            "--host", "127.0.0.1", *args]


def test_a_busy_table_top_port_names_a_free_one_and_starts_nothing(held_port: int) -> None:
    done = subprocess.run(sim("--web-port", str(held_port)), capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert done.returncode == PORT_BUSY_EXIT == 1, done.stderr
    err = " ".join(done.stderr.split())
    assert f"port {held_port} is in use by another program" in err
    assert "Errno" not in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""  # no board's path: nothing was started
    assert "table top:" not in done.stderr and "virtual boards running" not in done.stderr
    command = err.split("for the table-top page: ")[1].split(" (")[0]
    assert command.startswith("tablesense sim boards --table dominoes-4 ")
    port = int(command.split("--web-port ")[1].split()[0])
    assert port != held_port

    # the suggested command, typed as printed, serves the page on that port
    args = command.split()[1:]
    proc = subprocess.Popen([sys.executable, "-m", "tablesense.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        err_stream = proc.stderr
        threading.Thread(target=lambda: lines.extend(err_stream), daemon=True).start()
        url = wait(lambda: next((m.group(1) for ln in lines if (m := re.search(r"table top: (\S+)", ln))), None),
                   60, "the table-top page's address")
        assert f"127.0.0.1:{port}/tabletop" in url
        # the command to referee it is one line, whatever the width: it is pasted as printed
        referee = wait(lambda: next((ln for ln in lines if "referee it:" in ln), None), 30, "the play command")
        assert re.search(r"referee it: tablesense play --table dominoes-4 (--port \S+ ){6}--seat-header \S+$",
                         referee.strip()), referee
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
