"""Two `play --remote` processes, each on its own virtual table (virtual
boards running the real firmware, computer seats and virtual hands), each
on its own club's Mosquitto (TLS, the remote ACL), the two brokers bridged: a pairs-pips match is played to
its end, every remote play lights its stock piece and target cell at the
other table before a hand moves it, and both tables print the same record,
which replays as a legal match."""

from __future__ import annotations

import json
import stat
import threading
import time
from typing import Any

import pytest
from remotekit import Broker, Play

from tablesense.games.dominoes import replay_record
from tablesense.games.record import replay
from tablesense.remote.wire import ROOT, password_file
from tablesense.tournament.broker_client import PASSWORD_ENV, BrokerURL, make_client

pytestmark = pytest.mark.broker  # brokers and two processes (the few option checks ride along)


# A match to 6 is a hand or two (every check below falls in one); to 20, several
# hands, is a soak: under the whole suite's load it took most of its 300 s.
@pytest.mark.parametrize("target", [pytest.param(6, id="to-6"),
                                    pytest.param(20, id="to-20", marks=[pytest.mark.slow, pytest.mark.timeout(900)])])
def test_two_tables_at_two_clubs_play_a_pairs_pips_match_over_bridged_tls_brokers(
        bridged: tuple[Broker, Broker], target: int) -> None:
    club_a, club_b = bridged
    # the code typed in lower case: the joining table takes it as printed
    host, join, record_host, record_join = _play_match(club_a, club_b, "dominoes-4-remote", str(target), 400,
                                                       seeds=(11, 12), lower_code=True)
    assert record_host == record_join  # the same record on both sides
    result = replay_record(record_host)
    assert result.winner is not None and max(result.score) >= target
    # every remote play of the other table lit its stock piece and target before a hand moved it
    for proc in (host, join):
        placed = [x for x in proc.lines if x.startswith("remote piece:")]
        assert placed and all("(lit" in x for x in placed), placed
    assert all("ms after the authority sent the move" in x for x in join.lines if x.startswith("remote piece:"))
    assert "table-2 joined: seats East, West" in "".join(host.lines)


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
        (["--remote", "host", "ABCDEF", "--journal", "/nonexistent/j.sqlite"], "no remote match ABCDEF was hosted here"),
    ],
)
def test_bad_remote_options_exit_2_with_a_sentence(args: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app

    broker = [] if args == ["--remote", "host"] else ["--broker", "mqtt://table-1@127.0.0.1:1"]
    result = CliRunner(env={PASSWORD_ENV: "from-the-environment"}).invoke(
        app, ["play", "--table", "dominoes-4-remote", *args, *broker])
    assert result.exit_code == 2, result.output
    assert message in result.output


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mqtts://table-1:s3cret@127.0.0.1:1?ca=ca.crt", "where ps shows it to every user of this machine"),
        ("mqtt://table-1:s3cret@127.0.0.1:1", "add &password_file=FILE to the URL"),
        ("mqtt://table-1@127.0.0.1:1", "no password for broker user table-1"),
        ("mqtt://table-1@127.0.0.1:1?password_file=/nonexistent/table-1.password", "cannot read the broker password file"),
    ],
)
def test_a_password_on_the_command_line_is_refused(url: str, message: str) -> None:
    """``ps`` shows every argument to every user of the machine: the password
    comes from a file or the environment, never from --broker (exit 2, nothing started)."""
    from typer.testing import CliRunner

    from tablesense.cli import app

    result = CliRunner(env={PASSWORD_ENV: ""}).invoke(
        app, ["play", "--table", "dominoes-4-remote", "--remote", "host", "--broker", url])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()), result.output
    assert "s3cret" not in result.output
    assert "remote match code" not in result.output


def test_the_password_from_its_file_or_the_environment_reaches_the_broker(remote_broker: Broker) -> None:
    """broker-config's table-N.password file, or the environment, logs a table in:
    a join of an unknown code gets as far as the broker's lobby (exit 1, not 2)."""
    files = remote_broker.files
    assert stat.S_IMODE(password_file(files, "table-2").stat().st_mode) == 0o600
    by_file = Play("--remote", "join", "ABCDEF", "--broker", remote_broker.url("table-2"), "--remote-timeout", "60")
    rc, _ = by_file.finish(90)
    assert rc == 1 and "no match with code ABCDEF on this broker" in "".join(by_file.lines), "".join(by_file.lines)
    no_file = remote_broker.url("table-2").split("&password_file=")[0]
    by_env = Play("--remote", "join", "ABCDEF", "--broker", no_file, "--remote-timeout", "60",
                  env={PASSWORD_ENV: files.credentials["table-2"]})
    rc, _ = by_env.finish(90)
    assert rc == 1 and "no match with code ABCDEF on this broker" in "".join(by_env.lines), "".join(by_env.lines)


def test_a_table_without_a_stock_is_refused() -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app

    result = CliRunner(env={PASSWORD_ENV: "from-the-environment"}).invoke(
        app, ["play", "--table", "dominoes-4", "--remote", "host", "--broker", "mqtt://table-1@127.0.0.1:1"])
    assert result.exit_code == 2
    assert "table dominoes-4 cannot play a remote pairs-pips match (4 seats)" in " ".join(result.output.split())
    assert "such as dominoes-4-remote" in " ".join(result.output.split())


@pytest.mark.parametrize(
    ("table", "args", "message"),
    [
        ("dominoes-4-remote", ["--variant", "pips-two-player"], "such as dominoes-2-remote"),
        ("kems-4", [], "such as kems-4-remote"),
        ("kems-4-remote", ["--game", "dominoes"], "such as dominoes-4-remote"),
        ("kems-4-remote", ["--variant", "pairs-pips"], "kems has no variant 'pairs-pips'"),
        ("kems-4-remote", ["--seats", "Ana,bot"], "the table-top page seats people at a remote match of tiles on a line only"),
    ],
)
def test_a_layout_that_does_not_fit_the_match_is_refused(table: str, args: list[str], message: str) -> None:
    """The host's layout names the game; the variant must seat as many as the
    layout has seats, with a stock for its whole set (exit 2, nothing started)."""
    from typer.testing import CliRunner

    from tablesense.cli import app

    result = CliRunner(env={PASSWORD_ENV: "from-the-environment"}).invoke(
        app, ["play", "--table", table, "--remote", "host", *args, "--broker", "mqtt://table-1@127.0.0.1:1"])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()), result.output
    assert "remote match code" not in result.output


def _play_match(host_broker: Broker, join_broker: Broker, table: str, target: str, timeout: float,
                seeds: tuple[int, int] = (21, 22),
                lower_code: bool = False) -> tuple[Play, Play, dict[str, Any], dict[str, Any]]:
    """A whole match between two `play --remote` processes on two virtual
    tables of ``table``; both exit 0; their records."""
    host = Play("--remote", "host", "--broker", host_broker.url("table-1"), "--seed", str(seeds[0]),
                "--journal", str(host_broker.files.conf.parent / "journal.sqlite"),
                "--target", target, "--remote-timeout", str(timeout), table=table)
    join: Play | None = None
    try:
        line = host.wait_for("remote match code:", 60)
        code = line.split("remote match code:")[1].split()[0]
        join = Play("--remote", "join", code.lower() if lower_code else code, "--broker", join_broker.url("table-2"),
                    "--seed", str(seeds[1]),
                    "--remote-timeout", str(timeout), table=table)
        rc_host, out_host = host.finish(timeout + 20)
        rc_join, out_join = join.finish(60)
    finally:
        host.kill()
        if join is not None:
            join.kill()
    assert join is not None
    assert rc_host == 0, "".join(host.lines)[-3000:]
    assert rc_join == 0, "".join(join.lines)[-3000:]
    return host, join, json.loads(out_host), json.loads(out_join)


@pytest.mark.slow  # two play processes through a whole match: a soak (--runslow); test_match_sides plays every variant in one process
@pytest.mark.timeout(900)
def test_two_tables_at_two_clubs_play_a_kems_match_over_bridged_tls_brokers(bridged: tuple[Broker, Broker]) -> None:
    """Kems on two kems-4-remote virtual tables, one team at each: every card
    the other team gave to the board (and every refresh's cards) lit in the
    stock with its slot before a hand laid it, and both tables print the
    same record, which replays as a legal Kems match."""
    club_a, club_b = bridged
    host, join, record_host, record_join = _play_match(club_a, club_b, "kems-4-remote", "2", 800)
    assert record_host == record_join  # the same record on both sides
    assert record_host["game"] == "kems" and record_host["variant"] == "classic"
    result = replay(record_host)
    assert result.winner is not None and max(result.score) >= 2
    events = [e for h in record_host["hands"] for e in h["events"]]
    assert any("swap" in e and e["seat"] in (0, 2) for e in events) and any("swap" in e and e["seat"] in (1, 3) for e in events)
    assert any(e.get("call") == "kems" for e in events)
    for proc in (host, join):
        placed = [x for x in proc.lines if x.startswith("remote piece:")]
        assert placed and all("(lit" in x and "slot-" in x for x in placed), placed
    assert "table-2 joined: seats Seat 2, Seat 4" in "".join(host.lines)
    assert "the 32 pieces face down in the stock" in "".join(join.lines)


@pytest.mark.slow  # two play processes through a whole match: a soak (--runslow); test_match_sides plays every variant in one process
@pytest.mark.timeout(900)
def test_two_tables_play_pips_two_player_with_draws_from_the_stock(remote_broker: Broker) -> None:
    """One seat at each table: a draw by the other table's seat lights nothing
    here (its tile stays face down in the stock), a draw by this table's seat
    lights its tile for the seat; the same record on both sides."""
    host, join, record_host, record_join = _play_match(remote_broker, remote_broker, "dominoes-2-remote", "20", 800)
    assert record_host == record_join
    assert record_host["variant"] == "pips-two-player"
    replay(record_host)
    draws = [m for h in record_host["hands"] for m in h["moves"] if "draw" in m]
    assert {m["seat"] for m in draws} == {0, 1}, draws  # both tables' seats drew from their stocks
    assert "table-2 joined: seats North" in "".join(host.lines)
