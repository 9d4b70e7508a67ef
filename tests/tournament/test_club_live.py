"""Live tables: each table's public progress relayed to the director (its own
topic, QoS 0, outside the outbox), shown on the console and on /live; a lost
or forged live message never touches a result."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from tablesense.tournament.bridge import BrokerURL, DirectorBridge, make_client, wait_until
from tablesense.tournament.console import console_state
from tablesense.tournament.db import Database
from tablesense.tournament.live import LiveBoard, LiveRelay, live_topic, progress
from tablesense.tournament.mosquitto import DIRECTOR_USER
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from tablesense.tournament.table_client import HeadlessTable
from tablesense.tournament.web import create_app, hash_password

from .conftest import Broker


def test_live_board_keeps_only_well_formed_messages() -> None:
    b = LiveBoard()
    assert b.update(1, json.dumps(progress(1, 7, 2, [30.0, 12], [3, 5])).encode())
    e = b.get(1)
    assert e is not None and e["scores"] == [30, 12] and e["counts"] == [3, 5]
    assert not b.update(1, b"\x00not json")
    assert not b.update(1, json.dumps({"hand": "two", "scores": []}).encode())
    assert not b.update(1, b"{" + b" " * 5000 + b"}")
    e = b.get(1)
    assert b.dropped == 3 and e is not None and e["hand"] == 2


def _url(broker: Broker, user: str) -> BrokerURL:
    return BrokerURL("127.0.0.1", broker.port, user, broker.files.credentials[user])


def test_tables_progress_reaches_console_and_spectators_and_never_results(broker: Broker, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'club.db'}"
    d = Director.create_event(Database(url), "Live night", variant="pips-two-player",
                              options={"target": 60, "rounds": 1, "confirm": "director", "lots_seed": "l"})
    for n in ("Ana", "Bia", "Caio", "Duda"):
        d.register(n)
    keys = {t: TableKey.from_seed(f"live-{t}".encode()) for t in (1, 2)}
    for t, k in keys.items():
        d.add_table(t, k.public)
    bridge = DirectorBridge(d, _url(broker, DIRECTOR_USER)).start()
    relay = LiveRelay(_url(broker, DIRECTOR_USER)).start()
    tables: list[HeadlessTable] = []
    try:
        assert bridge.wait_connected(10) and relay.connected.wait(10)
        d.pair_next_round()
        bridge.announce_round()
        tables = [HeadlessTable(t, k, tmp_path / f"t{t}.journal", _url(broker, f"table-{t}"), seed=t,
                                move_delay=0.02, resend_interval=0.3).start() for t, k in keys.items()]
        # the console shows a table's hand and score while it plays
        def playing() -> bool:
            rows = console_state(d, live=relay.board)["tables"]
            return any(r["state"] == "playing" and r["live"] and r["live"]["hand"] >= 1 for r in rows)
        assert wait_until(playing, 30)
        c = TestClient(create_app(d, password_hash=hash_password("club-night-password"), secret_key="k", live=relay.board))
        spect = c.get("/api/live").json()
        assert {t["table"] for t in spect} == {1, 2} and any(t["hand"] for t in spect)
        assert all("badges" not in json.dumps(t) for t in spect)
        assert "Live tables" in c.get("/live").text
        # a forged live message (table 1's broker password) changes a page at most, never a result
        intruder = make_client("live-intruder", _url(broker, "table-1"), clean=True)
        intruder.connect("127.0.0.1", broker.port)
        intruder.loop_start()
        intruder.publish(live_topic(1), json.dumps(progress(1, 999, 9, [999, 0])), qos=1).wait_for_publish(5)
        intruder.publish(live_topic(1), b"garbage", qos=1).wait_for_publish(5)
        intruder.disconnect()
        intruder.loop_stop()
        # live progress can stop altogether: results still arrive (they travel in the outbox)
        relay.stop()
        assert wait_until(lambda: all(m.status == "reported" for m in d.matches(1)), 90)
    finally:
        for t in tables:
            t.close()
        relay.stop()
        bridge.stop()
    for m in d.matches(1):
        assert m.score_a is not None and max(m.score_a, m.score_b or 0) >= 60
    assert not [a for a in d.audit_log() if a["action"] == "refused"]
