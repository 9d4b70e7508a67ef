"""Helpers of the remote tests: the brokers (one club, or two bridged) and a
`play --remote` process whose stderr is read as it comes."""

from __future__ import annotations

import contextlib
import getpass
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablesense.remote.wire import bridge_brokers, table_url, write_remote_broker
from tablesense.tournament.mosquitto import BrokerFiles, Mosquitto, mosquitto_binary
from testsupport import free_port, need


class Broker:
    def __init__(self, files: BrokerFiles, port: int, proc: Mosquitto | None = None) -> None:
        self.files, self.port, self.proc = files, port, proc

    def url(self, user: str) -> str:
        """``user``'s URL, the password in its file (``play --remote`` refuses one in the URL)."""
        return table_url(self.files, user, "127.0.0.1", self.port)

    def url_with_password(self, user: str) -> str:
        """For clients in the test's own process (nothing on a command line)."""
        return self.files.url(user, "127.0.0.1", self.port)


@pytest.fixture
def remote_broker(tmp_path: Path) -> Iterator[Broker]:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    port = free_port()
    files = write_remote_broker(tmp_path / "broker", tables=3, port=port, tls=True, run_as=getpass.getuser())
    proc = Mosquitto(files.conf, port).start()
    try:
        yield Broker(files, port)
    finally:
        proc.stop()


@pytest.fixture
def bridged(tmp_path: Path) -> Iterator[tuple[Broker, Broker]]:
    """Two clubs' brokers (TLS, the remote ACL), club B's bridged to club A's."""
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    port_a, port_b = free_port(), free_port()
    a = write_remote_broker(tmp_path / "club-a", tables=2, port=port_a, tls=True, run_as=getpass.getuser())
    b = write_remote_broker(tmp_path / "club-b", tables=2, port=port_b, tls=True, run_as=getpass.getuser())
    bridge_brokers(b, a, "127.0.0.1", port_a, "bridge-club-b")
    proc_a = Mosquitto(a.conf, port_a).start()
    proc_b = Mosquitto(b.conf, port_b).start()
    try:
        yield Broker(a, port_a, proc_a), Broker(b, port_b, proc_b)
    finally:
        proc_b.stop()
        proc_a.stop()


class Play:
    """One `tablesense play --remote ...` process; stderr read as it comes."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, table: str = "dominoes-4-remote") -> None:
        env = {**os.environ, "COLUMNS": "250", **(env or {})}
        if "--journal" not in args:  # never the user's own journal folder
            env.setdefault("TABLESENSE_JOURNAL", str(Path(tempfile.mkdtemp(prefix="remote-play-")) / "journal.sqlite"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tablesense.cli", "play", "--table", table, *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []
        stream = self.proc.stderr
        assert stream is not None
        self._reader = threading.Thread(target=lambda: self.lines.extend(iter(stream.readline, "")), daemon=True)
        self._reader.start()

    def wait_for(self, text: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((x for x in self.lines if text in x), None)
            if found is not None:
                return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never printed: {''.join(self.lines)[-3000:]}")

    def finish(self, timeout: float) -> tuple[int, str]:
        """Wait for the end; the exit code and stdout (stderr stays with the reader thread)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        self._reader.join(5)
        return self.proc.returncode, out

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()




@pytest.fixture
def pg_url(postgres_url: str) -> Iterator[str]:
    """A fresh schema of the machine's PostgreSQL for one test, dropped afterwards."""
    import uuid

    import psycopg
    import psycopg.sql

    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    schema = "ts_remote_" + uuid.uuid4().hex[:12]
    with psycopg.connect(plain, autocommit=True) as c:
        c.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))
    sep = "&" if "?" in postgres_url else "?"
    try:
        yield f"{postgres_url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(plain, autocommit=True) as c:
            c.execute(psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(psycopg.sql.Identifier(schema)))


class DirectorEvent:
    """A real director on ``db_url`` with its own TLS Mosquitto and bridge: an
    event of two pairs, table 1 registered with its key, round 1 announced.
    ``host_args`` are the host table's ``--director ... --table-no 1 --table-key ...``."""

    def __init__(self, director: Any, bridge: Any, host_args: list[str]) -> None:
        self.director, self.bridge, self.host_args = director, bridge, host_args

    def results(self) -> list[dict[str, Any]]:
        """The results the director stored (their payloads)."""
        from sqlalchemy import select

        from tablesense.tournament.db import Result

        with self.director.db.session() as s:
            return [r.payload for r in s.scalars(select(Result))]


@contextlib.contextmanager
def director_event(tmp_path: Path, db_url: str, target: int) -> Iterator[DirectorEvent]:
    from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
    from tablesense.tournament.db import Database
    from tablesense.tournament.mosquitto import write_broker_config
    from tablesense.tournament.security import TableKey
    from tablesense.tournament.service import Director

    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    port = free_port()
    event = write_broker_config(tmp_path / "event-broker", tables=2, port=port, tls=True, run_as=getpass.getuser())
    password = tmp_path / "event-broker" / "table-1.password"
    password.write_text(event.credentials["table-1"] + "\n")
    password.chmod(0o600)
    proc = Mosquitto(event.conf, port).start()
    try:
        d = Director.create_event(Database(db_url), "Two clubs", format="swiss",
                                  options={"target": target, "lots_seed": "r"})
        for i in range(1, 3):
            d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"], [f"04a1b2c3d4e5{i}a", f"04a1b2c3d4e5{i}b"], seed=i)
        key = TableKey.from_seed(b"remote-table-1")
        key_file = tmp_path / "table-1.key"
        key.save(key_file)
        d.add_table(1, key.public)
        d.pair_next_round()
        with DirectorBridge(d, BrokerURL.parse(event.url("director", "127.0.0.1", port))) as bridge:
            assert bridge.wait_connected(10)
            bridge.announce_round()
            url = f"mqtts://table-1@127.0.0.1:{port}?ca={event.ca}&password_file={password}"
            yield DirectorEvent(d, bridge, ["--director", url, "--table-no", "1", "--table-key", str(key_file)])
            assert wait_until(bridge.idle, 10)
    finally:
        proc.stop()
