"""A rehearsal on a broker that already runs (the club's, from ``tournament
mosquitto-config``): the director's URL with its password file, the tables'
accounts from the ``credentials`` file beside it; a real table to a winner,
and no rehearsal match left retained for a real table afterwards. Each thing
it needs and does not find is said in one sentence with its exit status,
before any table starts."""

from __future__ import annotations

import getpass
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.tournament import protocol as proto
from tablesense.tournament.db import Database
from tablesense.tournament.mosquitto import (
    Mosquitto,
    free_port,
    mosquitto_binary,
    write_broker_config,
)
from tablesense.tournament.rehearsal import Plan, Rehearsal
from tablesense.tournament.service import Director
from testsupport import need


class _Club:
    """The club's broker: TLS, accounts for two tables, as mosquitto-config writes it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.files = write_broker_config(folder, tables=2, port=self.port, run_as=getpass.getuser(), tls=True)
        self.broker = Mosquitto(self.files.conf, self.port).start()

    def url(self, password_file: Path | None = None, port: int | None = None, ca: Path | None = None) -> str:
        pw = password_file or self.folder / "director.password"
        return (f"mqtts://director@127.0.0.1:{port or self.port}?ca={ca or self.files.ca}&password_file={pw}")


@pytest.fixture
def club(tmp_path: Path) -> Iterator[_Club]:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    c = _Club(tmp_path / "club-broker")
    try:
        yield c
    finally:
        c.broker.stop()


def _rehearse(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(app, ["tournament", "rehearse", "--port", "0", *args])
    return done.exit_code, " ".join(done.output.split())


def test_what_the_rehearsal_needs_from_a_running_broker_is_said(club: _Club, tmp_path: Path) -> None:
    work = str(tmp_path / "w")
    code, out = _rehearse("--broker", club.url(port=free_port()), "--workdir", work)
    assert code == 3 and "cannot use the broker at 127.0.0.1:" in out and "nothing listens there" in out, out
    assert "leave out --broker" in out
    wrong = tmp_path / "wrong.password"
    wrong.write_text("not-the-password\n")
    code, out = _rehearse("--broker", club.url(password_file=wrong), "--credentials",
                          str(club.folder / "credentials"), "--workdir", work)
    assert code == 3 and "it refused director" in out and "check the password file" in out, out
    other = write_broker_config(tmp_path / "other", tables=1, port=1, run_as=getpass.getuser(), tls=True)
    assert other.ca is not None
    code, out = _rehearse("--broker", club.url(ca=other.ca), "--workdir", work)
    assert code == 3 and "TLS failed" in out and "the CA in ?ca= must be the broker's" in out, out
    code, out = _rehearse("--broker", f"mqtts://director@127.0.0.1:{club.port}", "--workdir", work)
    assert code == 2 and "needs the director's account and its password file" in out, out
    code, out = _rehearse("--broker", club.url(), "--credentials", str(tmp_path / "nowhere"), "--workdir", work)
    assert code == 2 and "cannot read the tables' broker passwords" in out and "--credentials" in out, out
    code, out = _rehearse("--broker", club.url(), "--tables", "3", "--pairs", "6", "--workdir", work)
    assert code == 2 and "has no broker account for tables 3 (it has 1, 2)" in out and "--tables 2" in out, out
    assert not list((tmp_path / "w").glob("table-*")), "no table was started"


def _retained(club: _Club, table: int) -> bytes | None:
    """The retained assignment of ``table`` on the club's broker (None: none)."""
    got: dict[str, bytes] = {}
    done = threading.Event()
    c = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, client_id="probe", protocol=mqtt.MQTTv311)
    c.username_pw_set("director", club.files.credentials["director"])
    c.tls_set(ca_certs=str(club.files.ca))

    def on_connect(client: Any, *_a: Any) -> None:
        client.subscribe(proto.assign_topic(table), 1)

    def on_message(_c: Any, _ud: Any, msg: Any) -> None:
        got["payload"] = msg.payload
        done.set()

    c.on_connect = on_connect
    c.on_message = on_message
    c.connect("127.0.0.1", club.port)
    c.loop_start()
    done.wait(2.0)
    c.disconnect()
    c.loop_stop()
    return got.get("payload") or None


def test_a_rehearsal_on_the_clubs_running_broker_reaches_a_winner(club: _Club, tmp_path: Path) -> None:
    said: list[str] = []
    plan = Plan(workdir=tmp_path / "evening", pairs=2, rounds=1, tables=1, target=5, speed=20.0, port=0,
                password="rehearsal-password", round_timeout=120.0, broker_url=club.url())
    r = Rehearsal(plan, tell=lambda line: said.append(str(line)))
    try:
        r.start()
        assert r.table_url(1).startswith(f"mqtts://table-1@127.0.0.1:{club.port}?password_file=")
        assert _retained(club, 1) is not None, "round 1 is announced on the club's broker"
        report = r.run()
    finally:
        r.stop()
    assert report.rounds == 1 and report.matches == 1 and report.winners, said
    assert any("using the broker at 127.0.0.1:" in x for x in said), said
    d = Director(Database(f"sqlite:///{tmp_path / 'evening' / 'rehearsal.db'}"), report.event_id)
    assert all(m.confirmed for m in d.matches(1))
    pw = tmp_path / "evening" / "broker" / "table-1.password"
    assert pw.read_text().strip() == club.files.credentials["table-1"] and pw.stat().st_mode & 0o077 == 0
    assert _retained(club, 1) is None, "the rehearsal left its match retained for a real table"
