"""A remote match reported to the tournament director (issue 32).

A real director (PostgreSQL, its bridge on the event's own TLS Mosquitto)
announces a pairs-pips match for table 1. Table 1 hosts it as a remote match
(`play --remote host --director ...`) on club A's broker; table 2 joins from
club B's, the two clubs' brokers bridged. The host table reports the match's
record signed with its table key, through its durable outbox, as a table
reports today; the director stores it. The record the director stored, the
host's and the joining table's are the same record.
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from remotekit import Broker, Play
from sqlalchemy import select

from tablesense.games.dominoes import replay_record
from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
from tablesense.tournament.db import Database, Result
from tablesense.tournament.mosquitto import Mosquitto, write_broker_config
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from testsupport import free_port

pytestmark = pytest.mark.broker

TARGET = 20


@pytest.fixture
def pg_url(postgres_url: str) -> Iterator[str]:
    """A fresh schema of the machine's PostgreSQL for this test, dropped afterwards."""
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


def test_a_remote_match_reaches_the_director_with_the_same_record(
    bridged: tuple[Broker, Broker], pg_url: str, tmp_path: Path
) -> None:
    club_a, club_b = bridged
    # the event's broker (the director's), TLS, and table 1's password in a file
    port = free_port()
    event = write_broker_config(tmp_path / "event-broker", tables=2, port=port, tls=True, run_as=getpass.getuser())
    password = tmp_path / "event-broker" / "table-1.password"
    password.write_text(event.credentials["table-1"] + "\n")
    password.chmod(0o600)
    director_url = f"mqtts://table-1@127.0.0.1:{port}?ca={event.ca}&password_file={password}"
    proc = Mosquitto(event.conf, port).start()
    d = Director.create_event(Database(pg_url), "Two clubs", format="swiss",
                              options={"target": TARGET, "lots_seed": "r"})
    for i in range(1, 3):
        d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"], [f"04a1b2c3d4e5{i}a", f"04a1b2c3d4e5{i}b"], seed=i)
    key = TableKey.from_seed(b"remote-table-1")
    key_file = tmp_path / "table-1.key"
    key.save(key_file)
    d.add_table(1, key.public)
    d.pair_next_round()
    host: Play | None = None
    join: Play | None = None
    try:
        with DirectorBridge(d, BrokerURL.parse(event.url("director", "127.0.0.1", port))) as bridge:
            assert bridge.wait_connected(10)
            bridge.announce_round()
            host = Play("--remote", "host", "--broker", club_a.url("table-1"), "--seed", "31",
                        "--journal", str(tmp_path / "a" / "journal.sqlite"), "--remote-timeout", "500",
                        "--director", director_url, "--table-no", "1", "--table-key", str(key_file))
            announced = host.wait_for("tournament match", 60)
            assert "Pair 1 v Pair 2" in announced and f"(to {TARGET})" in announced, announced
            code = host.wait_for("remote match code:", 60).split("remote match code:")[1].split()[0]
            join = Play("--remote", "join", code, "--broker", club_b.url("table-2"), "--seed", "32",
                        "--journal", str(tmp_path / "b" / "journal.sqlite"), "--remote-timeout", "500")
            rc_host, out_host = host.finish(540)
            rc_join, out_join = join.finish(60)
            assert wait_until(bridge.idle, 10)
    finally:
        for p in (host, join):
            if p is not None:
                p.kill()
        proc.stop()
    assert host is not None and join is not None
    assert rc_host == 0, "".join(host.lines)[-3000:]
    assert rc_join == 0, "".join(join.lines)[-3000:]
    assert "director: result accepted" in "".join(host.lines), "".join(host.lines)[-2000:]
    record = json.loads(out_host)
    assert json.loads(out_join) == record  # the same record at both tables
    result = replay_record(record)
    assert result.winner is not None and max(result.score) >= TARGET
    with d.db.session() as s:
        results = list(s.scalars(select(Result)))
    assert len(results) == 1
    stored: dict[str, Any] = results[0].payload
    assert stored["records"] == [record]  # ... and at the director
    assert [float(x) for x in stored["score"]] == [float(x) for x in result.score]
    (match,) = d.matches(1)
    assert [match.score_a, match.score_b] == [float(x) for x in result.score]
    assert sum(a["action"] == "result-accepted" for a in d.audit_log()) == 1


def test_director_goes_with_the_host_and_needs_its_table_key() -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app
    from tablesense.tournament.broker_client import PASSWORD_ENV

    runner = CliRunner(env={PASSWORD_ENV: "pw"})
    base = ["play", "--table", "dominoes-4-remote", "--broker", "mqtt://table-2@127.0.0.1:1"]
    joined = runner.invoke(app, [*base, "--remote", "join", "ABCDEF", "--director", "mqtt://table-2@127.0.0.1:1"])
    assert joined.exit_code == 2 and "--director goes with --remote host" in joined.output, joined.output
    hosted = runner.invoke(app, [*base, "--remote", "host", "--director", "mqtt://table-1@127.0.0.1:1"])
    assert hosted.exit_code == 2 and "--director needs --table-no and --table-key" in hosted.output, hosted.output
    shown = runner.invoke(app, [*base, "--remote", "host", "--director", "mqtt://table-1:pw@127.0.0.1:1",
                                "--table-no", "1", "--table-key", "/nonexistent"])
    assert shown.exit_code == 2 and "the broker password is written in --director" in " ".join(shown.output.split())
