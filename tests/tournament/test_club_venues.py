"""Two venues: a venue's Mosquitto bridged to the director's (generated config),
tables at the far venue, the link cut and restored mid-round; every result
arrives exactly once."""

from __future__ import annotations

import getpass
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
from tablesense.tournament.console import confirm_reported
from tablesense.tournament.db import Database, Result
from tablesense.tournament.mosquitto import (
    DIRECTOR_USER,
    Mosquitto,
    mosquitto_binary,
    write_broker_config,
)
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from tablesense.tournament.table_client import HeadlessTable
from tablesense.tournament.venues import VenueError, add_venue_user, write_venue_config
from testsupport import free_port, need


def test_venue_names_and_accounts(tmp_path: Path) -> None:
    with pytest.raises(VenueError, match="lower-case letters"):
        add_venue_user(tmp_path, "North Hall")
    with pytest.raises(VenueError, match="generate the director's broker first"):
        add_venue_user(tmp_path, "north")
    files = write_broker_config(tmp_path / "d", tables=2, port=free_port(), run_as=getpass.getuser())
    user, pw = add_venue_user(tmp_path / "d", "north")
    user2, pw2 = add_venue_user(tmp_path / "d", "north")  # again: the password is replaced, the ACL block kept once
    assert user == user2 == "venue-north" and pw != pw2
    assert files.passwd.read_text().count("venue-north:") == 1
    assert files.acl.read_text().count("user venue-north\n") == 1
    assert (tmp_path / "d" / "credentials").read_text().count("venue-north ") == 1


def test_results_from_a_bridged_venue_arrive_exactly_once_across_a_cut(sqlite_url: str, tmp_path: Path) -> None:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    dport, vport = free_port(), free_port()
    dfiles = write_broker_config(tmp_path / "director", tables=4, port=dport, run_as=getpass.getuser())
    venue = write_venue_config(tmp_path / "north", venue="north", tables=4, director_dir=tmp_path / "director",
                               director_host="127.0.0.1", director_port=dport, port=vport, run_as=getpass.getuser())
    conf = venue.broker.conf.read_text()
    assert "connection tablesense-venue-north" in conf and f"address 127.0.0.1:{dport}" in conf
    assert venue.broker.conf.stat().st_mode & 0o077 == 0, "the bridge's password must not be world-readable"
    dbroker = Mosquitto(dfiles.conf, dport).start()
    vbroker = Mosquitto(venue.broker.conf, vport).start()
    d = Director.create_event(Database(sqlite_url), "Two halls", variant="pips-two-player",
                              options={"target": 40, "rounds": 2, "confirm": "director", "lots_seed": "v"})
    for n in ("Ana", "Bia", "Caio", "Duda"):
        d.register(n)
    keys = {t: TableKey.from_seed(f"venue-{t}".encode()) for t in (3, 4)}  # tables 3 and 4 play at the far venue
    for t, k in keys.items():
        d.add_table(t, k.public)
    bridge = DirectorBridge(d, BrokerURL("127.0.0.1", dport, DIRECTOR_USER, dfiles.credentials[DIRECTOR_USER]))
    bridge.start()
    tables: list[HeadlessTable] = []
    try:
        assert bridge.wait_connected(30)
        for t, k in keys.items():
            url = BrokerURL("127.0.0.1", vport, f"table-{t}", venue.broker.credentials[f"table-{t}"])
            tables.append(HeadlessTable(t, k, tmp_path / f"t{t}.journal", url, seed=t, resend_interval=0.3,
                                        heartbeat_interval=0.5, move_delay=0.01).start())
        for rnd in (1, 2):
            d.pair_next_round()
            bridge.announce_round()
            if rnd == 1:
                # cut the link while the far tables play: the director's broker goes away for 2 s
                assert wait_until(lambda: any(t.playing for t in tables), 30)
                assert [m for m in d.matches(1) if m.status == "pending"], "the cut must land before the results"
                dbroker.restart(down_for=2.0)
            assert wait_until(lambda r=rnd: all(m.status == "reported" for m in d.matches(r)), 90), \
                [(m.table_no, m.status) for m in d.matches(rnd)]
            confirm_reported(d, "director-test", rnd)
        assert wait_until(bridge.idle, 10)
        time.sleep(1.0)  # late copies from the bridge, if any, come now
        assert wait_until(bridge.idle, 10)
    finally:
        for t in tables:
            t.close()
        bridge.stop()
        vbroker.stop()
        dbroker.stop()
    matches = [m for m in d.matches() if m.kind == "match"]
    assert len(matches) == 4 and all(m.confirmed for m in matches)
    with d.db.session() as s:
        stored = s.scalar(select(func.count(Result.id)).where(Result.event_id == d.event_id))
    accepted = [a for a in d.audit_log() if a["action"] == "result-accepted"]
    assert stored == 4 and len(accepted) == 4, "every result exactly once"
    assert sorted(a["match"] for a in accepted) == sorted(m.id for m in matches)
