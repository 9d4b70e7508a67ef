"""Two `play --remote` processes, each on its own virtual table (virtual
boards running the real firmware, computer seats and virtual hands), each
on its own club's Mosquitto (TLS, the remote ACL), the two brokers bridged: a pairs-pips match is played to
its end, every remote play lights its stock piece and target cell at the
other table before a hand moves it, and both tables print the same record,
which replays as a legal match."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablesense.games.dominoes import replay_record
from tablesense.remote.wire import ROOT, bridge_brokers, write_remote_broker
from tablesense.tournament.broker_client import BrokerURL, make_client
from tablesense.tournament.mosquitto import BrokerFiles, Mosquitto, mosquitto_binary
from testsupport import free_port, need


class Broker:
    def __init__(self, files: BrokerFiles, port: int, proc: Mosquitto | None = None) -> None:
        self.files, self.port, self.proc = files, port, proc

    def url(self, user: str) -> str:
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

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "COLUMNS": "250"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4-remote", *args],
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
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self._reader.join(5)
        return self.proc.returncode, out

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def test_two_tables_at_two_clubs_play_a_pairs_pips_match_over_bridged_tls_brokers(bridged: tuple[Broker, Broker]) -> None:
    club_a, club_b = bridged
    host = Play("--remote", "host", "--broker", club_a.url("table-1"), "--seed", "11",
                "--target", "20", "--remote-timeout", "400")
    join: Play | None = None
    try:
        line = host.wait_for("remote match code:", 60)
        code = line.split("remote match code:")[1].split()[0]
        join = Play("--remote", "join", code.lower(), "--broker", club_b.url("table-2"), "--seed", "12",
                    "--remote-timeout", "400")
        rc_host, out_host = host.finish(420)
        rc_join, out_join = join.finish(60)
    finally:
        host.kill()
        if join is not None:
            join.kill()
    assert join is not None
    assert rc_host == 0, "".join(host.lines)[-3000:]
    assert rc_join == 0, "".join(join.lines)[-3000:]
    record_host, record_join = json.loads(out_host), json.loads(out_join)
    assert record_host == record_join  # the same record on both sides
    result = replay_record(record_host)
    assert result.winner is not None and max(result.score) >= 20
    # every remote play of the other table lit its stock piece and target before a hand moved it
    for proc in (host, join):
        placed = [x for x in proc.lines if x.startswith("remote piece:")]
        assert placed and all("(lit" in x for x in placed), placed
    assert all("ms after the authority sent the move" in x for x in join.lines if x.startswith("remote piece:"))
    assert "table-2 joined: seats East, West" in "".join(host.lines)


def test_a_cut_link_and_a_killed_table_pause_the_match_which_resumes_exactly(bridged: tuple[Broker, Broker]) -> None:
    """Club B's broker (and with it the bridge) goes down for 5 s mid-match,
    later the joining table's process is killed and started again with the
    code: both times the host pauses the match and resumes it where it was,
    and the restarted table ends with the same record as the host."""
    club_a, club_b = bridged
    assert club_b.proc is not None
    host = Play("--remote", "host", "--broker", club_a.url("table-1"), "--seed", "31",
                "--target", "25", "--remote-timeout", "500")
    join: Play | None = None
    again: Play | None = None
    try:
        code = host.wait_for("remote match code:", 60).split("remote match code:")[1].split()[0]
        join = Play("--remote", "join", code, "--broker", club_b.url("table-2"), "--seed", "32", "--remote-timeout", "500")
        join.wait_for("remote piece:", 120)
        club_b.proc.restart(down_for=5.0)
        host.wait_for("is away: the match pauses", 30)
        host.wait_for("is back: the match resumes", 90)
        seen = len([x for x in join.lines if x.startswith("remote piece:")])
        deadline = time.monotonic() + 120
        while len([x for x in join.lines if x.startswith("remote piece:")]) < seen + 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        join.kill()
        again = Play("--remote", "join", code, "--broker", club_b.url("table-2"), "--seed", "33", "--remote-timeout", "500")
        host.wait_for("started again: it gets the match from its first frame", 90)
        rc_host, out_host = host.finish(500)
        rc_again, out_again = again.finish(60)
    finally:
        for proc in (host, join, again):
            if proc is not None:
                proc.kill()
    assert again is not None
    assert rc_host == 0, "".join(host.lines)[-3000:]
    assert rc_again == 0, "".join(again.lines)[-3000:]
    assert json.loads(out_host) == json.loads(out_again)
    assert replay_record(json.loads(out_host)).winner is not None


def test_the_remote_acl_keeps_each_table_to_its_own_inbox(remote_broker: Broker) -> None:
    """table-3 reads its own inbox, but neither table-2's nor a message it
    wrote in table-1's name."""
    url1, url3 = BrokerURL.parse(remote_broker.url("table-1")), BrokerURL.parse(remote_broker.url("table-3"))
    got: list[tuple[str, bytes]] = []

    def on_connect(client: Any, *_: Any) -> None:
        client.subscribe([(f"{ROOT}/+/to/table-2", 1), (f"{ROOT}/+/to/table-3", 1)])

    subscribed = threading.Event()
    c3 = make_client("c3", url3, clean=True)
    c3.on_message = lambda _c, _u, m: got.append((m.topic, bytes(m.payload)))
    c3.on_subscribe = lambda *_: subscribed.set()
    c3.on_connect = on_connect
    c3.connect(url3.host, url3.port)
    c3.loop_start()
    sender = make_client("c1", url1, clean=True)
    sender.connect(url1.host, url1.port)
    sender.loop_start()
    try:
        assert subscribed.wait(10)
        time.sleep(0.3)
        c3.publish(f"{ROOT}/table-1/to/table-3", b"forged", qos=1)
        sender.publish(f"{ROOT}/table-1/to/table-2", b"secret", qos=1).wait_for_publish(5)
        sender.publish(f"{ROOT}/table-1/to/table-3", b"hello", qos=1).wait_for_publish(5)
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
    finally:
        for c in (c3, sender):
            c.loop_stop()
            c.disconnect()
    assert got == [(f"{ROOT}/table-1/to/table-3", b"hello")]


def test_join_with_a_code_nobody_hosts_exits_1(remote_broker: Broker) -> None:
    join = Play("--remote", "join", "ABCDEF", "--broker", remote_broker.url("table-2"), "--remote-timeout", "60")
    rc, _ = join.finish(90)
    assert rc == 1, "".join(join.lines)
    assert "no match with code ABCDEF on this broker" in "".join(join.lines), "".join(join.lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--remote", "join", "AB1"], "is not a match code"),
        (["--remote", "join"], "needs the code the host table printed"),
        (["--remote", "elsewhere"], "--remote is 'host'"),
        (["--remote", "host"], "needs the broker both tables reach"),
    ],
)
def test_bad_remote_options_exit_2_with_a_sentence(args: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app

    result = CliRunner().invoke(app, ["play", "--table", "dominoes-4-remote", *args, "--broker", "mqtt://table-1@127.0.0.1:1"]
                                if "host" not in args else ["play", "--table", "dominoes-4-remote", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_a_table_without_a_stock_is_refused() -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app

    result = CliRunner().invoke(app, ["play", "--table", "dominoes-4", "--remote", "host", "--broker", "mqtt://table-1@127.0.0.1:1"])
    assert result.exit_code == 2
    assert "has no stock for 28 tiles" in result.output
