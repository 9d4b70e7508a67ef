"""Fixtures of the tournament tests: databases (SQLite and PostgreSQL) and a real Mosquitto."""

from __future__ import annotations

import getpass
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablesense.tournament.mosquitto import (
    BrokerFiles,
    Mosquitto,
    mosquitto_binary,
    write_broker_config,
)
from testsupport import free_port, need


def _pg_schema_url(postgres_url: str) -> Iterator[str]:
    """A fresh schema per test (search_path in the URL), dropped afterwards: parallel runs never collide."""
    import psycopg
    import psycopg.sql

    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    schema = "ts_test_" + uuid.uuid4().hex[:12]
    with psycopg.connect(plain, autocommit=True) as c:
        c.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))
    sep = "&" if "?" in postgres_url else "?"
    try:
        yield f"{postgres_url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(plain, autocommit=True) as c:
            c.execute(psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(psycopg.sql.Identifier(schema)))


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Every storage test runs on both backends."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'event.db'}"
        return
    pg = request.getfixturevalue("postgres_url")
    yield from _pg_schema_url(pg)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'event.db'}"


class Broker:
    def __init__(self, files: BrokerFiles, proc: Mosquitto) -> None:
        self.files = files
        self.proc = proc
        self.port = proc.port

    def url(self, user: str) -> str:
        return self.files.url(user, "127.0.0.1", self.port)


def _broker(tmp_path: Path, tls: bool) -> Iterator[Broker]:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    port = free_port()
    files = write_broker_config(tmp_path / "broker", tables=4, port=port, run_as=getpass.getuser(), tls=tls)
    proc = Mosquitto(files.conf, port).start()
    try:
        yield Broker(files, proc)
    finally:
        proc.stop()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """A real Mosquitto with the generated users, passwords and ACL (4 tables), in clear."""
    yield from _broker(tmp_path, tls=False)


@pytest.fixture
def tls_broker(tmp_path: Path) -> Iterator[Broker]:
    """The same over TLS with the generated CA (what ``mosquitto-config`` writes by default)."""
    yield from _broker(tmp_path, tls=True)
