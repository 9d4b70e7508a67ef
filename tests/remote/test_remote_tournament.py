"""The director pairs two tables at different venues into one remote match (issue 32).

The director (PostgreSQL, its bridge on the event's TLS Mosquitto) pairs the
round, then makes the match remote (`pair-remote`): its table (1, at venue
north) hosts, table 2 (at venue south) joins, and both tables' assignments
carry their part and the code the director drew. Each venue's TLS broker is
bridged to the director's; each table reads its assignment there and plays
its part with `play --remote auto`, over the two clubs' bridged remote
brokers, computer seats at both. The host reports the record, signed, as any
table; the director stores the record both tables printed.
"""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import pytest
from remotekit import Broker, Play

from tablesense.games.dominoes import replay_record
from tablesense.tournament.audit import DirectorError
from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
from tablesense.tournament.db import Database
from tablesense.tournament.mosquitto import Mosquitto, mosquitto_binary, write_broker_config
from tablesense.tournament.remote_pairs import CODE_ALPHABET, pair_remote
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from tablesense.tournament.venues import write_venue_config
from testsupport import free_port, need

TARGET = 5  # a hand or two: the path from pairing to stored result is the same for any length


def _event(db_url: str, tables: int, variant: str = "pairs-pips", pairs: int = 2) -> Director:
    d = Director.create_event(Database(db_url), "Two venues", format="swiss", variant=variant,
                              options={"target": TARGET, "lots_seed": "r"})
    for i in range(1, pairs + 1):
        if variant == "pairs-pips":
            d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"], [f"04a1b2c3d4e5{i}a", f"04a1b2c3d4e5{i}b"], seed=i)
        else:
            d.register(f"Player {i}", seed=i)
    for t in range(1, tables + 1):
        d.add_table(t, TableKey.from_seed(f"remote-table-{t}".encode()).public)
    return d


def test_pair_remote_puts_both_parts_in_the_assignments_and_refuses_what_cannot_be(tmp_path: Path) -> None:
    d = _event(f"sqlite:///{tmp_path / 'event.db'}", tables=3, pairs=4)
    d.pair_next_round()
    first, second = d.matches(1)
    assert (first.table_no, second.table_no) == (1, 2)
    for match, table, reason in [
        (999, 3, "no match 999"),
        (first.id, 1, "at table 1 already"),
        (first.id, 2, "table 2 plays match"),
        (first.id, 7, "table 7 is not registered"),
    ]:
        with pytest.raises(DirectorError, match=reason):
            pair_remote(d, match, table)
    p = pair_remote(d, first.id, 3)
    assert (p.host, p.join, p.round) == (1, 3, 1) and len(p.code) == 6 and set(p.code) <= set(CODE_ALPHABET)
    with pytest.raises(DirectorError, match=f"remote already: table 3 joins it \\(code {p.code}\\)"):
        pair_remote(d, first.id, 3)
    with pytest.raises(DirectorError, match="table 3 plays remote match"):
        pair_remote(d, second.id, 3)
    a = d.assignments()
    (hosted,) = [m for m in a[1]["matches"] if m["match"] == first.id]
    assert hosted["remote"] == {"role": "host", "code": p.code, "table": 3}
    (joined,) = a[3]["matches"]
    assert joined["remote"] == {"role": "join", "code": p.code, "table": 1,
                                "key": TableKey.from_seed(b"remote-table-1").public}
    assert {k: v for k, v in joined.items() if k != "remote"} == {k: v for k, v in hosted.items() if k != "remote"}
    assert "remote" not in a[2]["matches"][0]  # the other match plays at its table as ever
    assert [x["action"] for x in d.audit_log()].count("remote-paired") == 1
    other = _event(f"sqlite:///{tmp_path / 'singles.db'}", tables=2, variant="pips-two-player")
    other.pair_next_round()
    with pytest.raises(DirectorError, match="a remote match plays pairs-pips"):
        pair_remote(other, other.matches(1)[0].id, 2)


def test_pair_remote_command_and_auto_without_director(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tablesense.cli import app
    from tablesense.tournament.broker_client import PASSWORD_ENV

    runner = CliRunner(env={PASSWORD_ENV: "pw"})
    db = f"sqlite:///{tmp_path / 'event.db'}"
    d = _event(db, tables=2)
    d.pair_next_round()
    (match,) = d.matches(1)
    made = runner.invoke(app, ["tournament", "pair-remote", str(match.table_no), "--with-table", "2", "--db", db])
    code = d.assignments()[2]["matches"][0]["remote"]["code"]
    assert made.exit_code == 0 and f"round 1, table 1 hosts, table 2 joins; code {code}" in made.output, made.output
    again = runner.invoke(app, ["tournament", "pair-remote", str(match.table_no), "--with-table", "2", "--db", db])
    assert again.exit_code == 1 and "is remote already" in again.output, again.output
    base = ["play", "--table", "dominoes-4-remote", "--broker", "mqtt://table-2@127.0.0.1:1", "--remote", "auto"]
    alone = runner.invoke(app, base)
    assert alone.exit_code == 2 and "--remote auto plays the part the director assigned" in alone.output, alone.output
    coded = runner.invoke(app, [*base, "ABCDEF", "--director", "mqtt://table-2@127.0.0.1:1"])
    assert coded.exit_code == 2 and "takes the code from the director's assignment" in coded.output, coded.output


@pytest.mark.broker
def test_the_director_pairs_two_venues_tables_and_the_result_arrives(
    bridged: tuple[Broker, Broker], pg_url: str, tmp_path: Path
) -> None:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    club_a, club_b = bridged
    dport = free_port()
    event = write_broker_config(tmp_path / "director", tables=2, port=dport, tls=True, run_as=getpass.getuser())
    venues = {}
    for table, name in ((1, "north"), (2, "south")):
        port = free_port()
        venues[table] = (write_venue_config(tmp_path / name, venue=name, tables=2, director_dir=tmp_path / "director",
                                            director_host="127.0.0.1", director_port=dport, port=port, tls=True,
                                            run_as=getpass.getuser()), port)
    procs = [Mosquitto(event.conf, dport).start()]
    procs += [Mosquitto(v.broker.conf, port).start() for v, port in venues.values()]
    plays: list[Play] = []
    try:
        d = _event(pg_url, tables=2)
        d.pair_next_round()
        (match,) = d.matches(1)
        pair = pair_remote(d, match.id, 2)
        args: dict[int, list[str]] = {}
        for table, (venue, port) in venues.items():
            key_file = tmp_path / f"table-{table}.key"
            TableKey.from_seed(f"remote-table-{table}".encode()).save(key_file)
            password = tmp_path / f"table-{table}.password"
            password.write_text(venue.broker.credentials[f"table-{table}"] + "\n")
            password.chmod(0o600)
            url = f"mqtts://table-{table}@127.0.0.1:{port}?ca={venue.broker.ca}&password_file={password}"
            args[table] = ["--remote", "auto", "--director", url, "--table-no", str(table), "--table-key", str(key_file),
                           "--announce-wait", "30", "--remote-timeout", "400",
                           "--journal", str(tmp_path / f"t{table}" / "journal.sqlite")]
        with DirectorBridge(d, BrokerURL.parse(event.url("director", "127.0.0.1", dport))) as bridge:
            assert bridge.wait_connected(10)
            bridge.announce_round()
            # the joining table starts first: it waits for the host's lobby
            join = Play(*args[2], "--broker", club_b.url("table-2"), "--seed", "42")
            plays.append(join)
            assert f"joins remote match {pair.code} with table 1" in join.wait_for("tournament match", 60)
            host = Play(*args[1], "--broker", club_a.url("table-1"), "--seed", "41")
            plays.append(host)
            assert f"hosts remote match {pair.code} with table 2" in host.wait_for("this table hosts", 60)
            rc_host, out_host = host.finish(400)
            rc_join, out_join = join.finish(60)
            assert wait_until(bridge.idle, 10)
        stored = [r for r in _results(d)]
        (match,) = d.matches(1)
    finally:
        for p in plays:
            p.kill()
        for proc in reversed(procs):
            proc.stop()
    assert rc_host == 0, "".join(host.lines)[-3000:]
    assert rc_join == 0, "".join(join.lines)[-3000:]
    assert "director: result accepted" in "".join(host.lines), "".join(host.lines)[-2000:]
    record = json.loads(out_host)
    assert json.loads(out_join) == record  # the same record at both tables ...
    result = replay_record(record)
    assert result.winner is not None and max(result.score) >= TARGET
    assert len(stored) == 1 and stored[0]["records"] == [record]  # ... and at the director
    assert stored[0]["table"] == 1
    assert [match.score_a, match.score_b] == [float(x) for x in result.score]


def _results(d: Director) -> list[dict[str, object]]:
    from sqlalchemy import select

    from tablesense.tournament.db import Result

    with d.db.session() as s:
        return [dict(r.payload, table=r.table_no) for r in s.scalars(select(Result))]


def test_the_console_makes_a_match_remote_and_announces_both_tables(tmp_path: Path) -> None:
    import re

    from fastapi.testclient import TestClient

    from tablesense.tournament.web import create_app, hash_password

    d = _event(f"sqlite:///{tmp_path / 'event.db'}", tables=4, pairs=4)
    announced: list[int] = []
    c = TestClient(create_app(d, password_hash=hash_password("letmein"), secret_key="k",
                              on_round_paired=lambda: announced.append(d.current_round_no())))
    page = c.post("/login", data={"password": "letmein"}, follow_redirects=True).text
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token is not None
    assert 'action="/director/pair-remote"' not in page  # no round yet: nothing to make remote
    page = c.post("/director/pair", data={"csrf": token[1]}, follow_redirects=True).text
    announced.clear()
    # the form offers the round's unplayed matches' tables and the free ones
    form = page[page.index('action="/director/pair-remote"'):]
    form = form[:form.index("</form>")]
    assert re.findall(r'name="table">(.*?)</select>', form)[0].count("<option") == 2
    assert re.findall(r'<option value="(\d+)">', form.split('name="with_table"')[1]) == ["3", "4"]
    for fields, refused in [
        ({"table": "1", "with_table": "2"}, "table 2 plays match"),
        ({"table": "3", "with_table": "4"}, "table 3 has no match in round 1"),
        ({"table": "1", "with_table": "9"}, "table 9 is not registered"),
        ({"table": "one", "with_table": "3"}, "the table must be a whole number"),
    ]:
        r = c.post("/director/pair-remote", data={"csrf": token[1], **fields}, follow_redirects=True)
        assert refused in r.text, (fields, r.text[:3000])
    assert announced == [] and "remote_pairs" not in d.options()
    assert c.post("/director/pair-remote", data={"csrf": "forged", "table": "1", "with_table": "3"}).status_code == 403
    r = c.post("/director/pair-remote", data={"csrf": token[1], "table": "1", "with_table": "3"}, follow_redirects=True)
    assert announced == [1]  # both tables' assignments go out at once
    (joined,) = d.assignments()[3]["matches"]
    code = joined["remote"]["code"]
    assert f"round 1: table 1 hosts, table 3 joins; code {code}" in r.text
    assert joined["remote"] == {"role": "join", "code": code, "table": 1,
                                "key": TableKey.from_seed(b"remote-table-1").public}
    assert f"remote: table 3 joins · code {code}" in r.text and f"remote: plays table 1's match · code {code}" in r.text
    form = r.text[r.text.index('action="/director/pair-remote"'):]
    assert re.findall(r'<option value="(\d+)">', form[:form.index("</form>")].split('name="with_table"')[1]) == ["4"]
    audit = [a for a in d.audit_log() if a["action"] == "remote-paired"]
    assert [(a["actor"], a["detail"]) for a in audit] == [("director-web", {"host": 1, "join": 3})]
    # the live console carries each table's part (its cards draw it)
    from tablesense.tournament.console import console_state

    rows = {t["table"]: t["remote"] for t in console_state(d)["tables"]}
    assert rows[1] == {"role": "host", "code": code, "table": 3, "match": joined["match"]}
    assert rows[3] == {"role": "join", "code": code, "table": 1, "match": joined["match"]} and rows[2] is None
