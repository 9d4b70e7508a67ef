"""The wire: `remote broker-config` for two clubs (the second bridged to the
first), both brokers started; a host's signed lobby found across the bridge
by its code, signed messages both ways, and a message that does not verify
refused."""

from __future__ import annotations

import getpass
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.remote.wire import (
    CODE_ALPHABET,
    Wire,
    WireError,
    check_code,
    code_of,
    inbox_topic,
    new_code,
)
from tablesense.tournament.broker_client import BrokerURL, make_client
from tablesense.tournament.mosquitto import Mosquitto, mosquitto_binary, read_credentials
from tablesense.tournament.security import TableKey
from testsupport import free_port, need

runner = CliRunner()


def test_codes_are_short_unambiguous_and_checked() -> None:
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200 and all(len(c) == 6 and set(c) <= set(CODE_ALPHABET) for c in codes)
    assert not set("IL01O") & set(CODE_ALPHABET)
    assert check_code(" abc-def ") == "ABCDEF"
    for bad in ("ABCDE", "ABCDEFG", "ABCDE1", "ABCDEO"):
        with pytest.raises(WireError, match="is not a match code"):
            check_code(bad)


@pytest.fixture
def clubs(tmp_path: Path) -> Iterator[tuple[list[str], list[str]]]:
    """Club A's and club B's brokers from `tablesense remote broker-config`, B bridged to A."""
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    port_a, port_b = free_port(), free_port()
    me = getpass.getuser()
    a = runner.invoke(app, ["remote", "broker-config", "--out", str(tmp_path / "a"), "--port", str(port_a), "--user", me])
    assert a.exit_code == 0, a.output
    b = runner.invoke(app, ["remote", "broker-config", "--out", str(tmp_path / "b"), "--port", str(port_b), "--user", me,
                            "--bridge-to", str(tmp_path / "a"), "--bridge-port", str(port_a)])
    assert b.exit_code == 0, b.output
    urls: list[list[str]] = []
    for club, result in (("a", a), ("b", b)):
        creds = read_credentials(tmp_path / club)
        lines = [x for x in result.stdout.splitlines() if x.startswith("mqtts://")]
        assert len(lines) == 2 and "@" in lines[0] and ":" not in lines[0].split("@")[0][len("mqtts://"):]  # no password
        assert not any(creds[f"table-{n}"] in x for n, x in enumerate(lines, 1))
        # the printed URLs log in as they are: each reads its table's password from its file
        assert all(BrokerURL.parse(x).password == creds[f"table-{n}"] for n, x in enumerate(lines, 1))
        urls.append(lines)
    brokers = [Mosquitto(tmp_path / "a" / "mosquitto.conf", port_a).start()]
    try:
        brokers.append(Mosquitto(tmp_path / "b" / "mosquitto.conf", port_b).start())
        yield urls[0], urls[1]
    finally:
        for proc in reversed(brokers):
            proc.stop()


def test_a_lobby_crosses_the_bridge_and_signed_messages_flow_both_ways(clubs: tuple[list[str], list[str]]) -> None:
    club_a, club_b = clubs
    host = Wire(BrokerURL.parse(club_a[0]), TableKey.generate())
    guest = Wire(BrokerURL.parse(club_b[1]), TableKey.generate())
    host.connect()
    guest.connect()
    try:
        code = code_of(host.key.public)  # the code a host draws names its key (test_host_check.py)
        host.announce(code, {"variant": "pairs-pips"})
        user, lobby = guest.find(code, timeout=15)
        assert (user, lobby["variant"], lobby["key"]) == ("table-1", "pairs-pips", host.key.public)
        guest.send(user, {"type": "join", "code": code, "key": guest.key.public})
        got = host.receive(15)
        assert got is not None and got[0] == "table-2" and got[1]["type"] == "join"
        host.trusted["table-2"] = got[1]["key"]
        host.send("table-2", {"type": "welcome", "seats": [1, 3]})
        back = guest.receive(15)
        assert back is not None and back == ("table-1", {**back[1], "type": "welcome", "seats": [1, 3]})
        # a message signed with another key, on table-1's topic (its own password): refused, not queued
        forged = TableKey.generate().sign({"type": "frame", "from": "table-1"})
        raw = make_client("forger", BrokerURL.parse(club_a[0]), clean=True)
        url = BrokerURL.parse(club_a[0])
        raw.connect(url.host, url.port)
        raw.loop_start()
        raw.publish(inbox_topic("table-1", "table-2"), json.dumps(forged), qos=1).wait_for_publish(5)
        deadline = time.monotonic() + 10
        while not guest.refused and time.monotonic() < deadline:
            time.sleep(0.05)
        raw.loop_stop()
        raw.disconnect()
        assert guest.refused and "does not verify" in guest.refused[0]
        assert guest.receive(0.5) is None
        host.withdraw(code)
    finally:
        host.close()
        guest.close()


def test_bridge_to_a_folder_without_a_broker_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["remote", "broker-config", "--out", str(tmp_path / "b"), "--bridge-to", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert "holds no broker" in result.output
