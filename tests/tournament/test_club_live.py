"""Live tables: each table's public progress relayed to the director (its own
topic, QoS 0, outside the outbox), shown on the console and on /live; a lost
or forged live message never touches a result."""

from __future__ import annotations

import json
import time
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
    # one connection for results and live progress (the broker binds a client id to its user)
    board = LiveBoard()
    bridge = DirectorBridge(d, _url(broker, DIRECTOR_USER), live=board).start()
    tables: list[HeadlessTable] = []
    try:
        assert bridge.wait_connected(30)
        d.pair_next_round()
        bridge.announce_round()
        tables = [HeadlessTable(t, k, tmp_path / f"t{t}.journal", _url(broker, f"table-{t}"), seed=t,
                                move_delay=0.02, resend_interval=0.3).start() for t, k in keys.items()]
        # the console shows a table's hand and score while it plays
        def playing() -> bool:
            rows = console_state(d, live=board)["tables"]
            return any(r["state"] == "playing" and r["live"] and r["live"]["hand"] >= 1 for r in rows)
        assert wait_until(playing, 30)
        c = TestClient(create_app(d, password_hash=hash_password("club-night-password"), secret_key="k", live=board))
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
        bridge.live = None
        assert wait_until(lambda: all(m.status == "reported" for m in d.matches(1)), 90)
    finally:
        for t in tables:
            t.close()
        bridge.stop()
    for m in d.matches(1):
        assert m.score_a is not None and max(m.score_a, m.score_b or 0) >= 60
    assert not [a for a in d.audit_log() if a["action"] == "refused"]


def _view(moves: int) -> dict[str, object]:
    """A real table's public display view after ``moves`` moves (the display's own preview builder)."""
    import random

    from tablesense.games.dominoes import DominoMatch
    from tablesense.games.registry import find_game
    from tablesense.web.preview import dominoes_view, random_domino_moves

    rng = random.Random(5)
    m = DominoMatch("pairs-pips", {"target": 100})
    hand = m.new_hand(rng=rng)
    random_domino_moves(hand, rng, moves)
    return dominoes_view(m, hand, facts=find_game("dominoes").page_facts(), hand_no=1)


def test_a_real_tables_view_reaches_its_spectator_page(broker: Broker, tmp_path: Path, browser: object) -> None:
    """play --director's reporter relays the display's view; /live/table/N draws it with the display's renderer."""
    import threading

    import uvicorn

    from tablesense.outputs.events import EventBus
    from tablesense.tournament.reporter import TableReporter
    from testsupport import REPO, free_port

    url = f"sqlite:///{tmp_path / 'club.db'}"
    d = Director.create_event(Database(url), "Spectators", variant="pips-two-player", options={"lots_seed": "s"})
    d.add_table(1, TableKey.from_seed(b"t1").public)  # /live/table/N/ws serves the event's tables only
    relay = LiveRelay(_url(broker, DIRECTOR_USER)).start()
    bus = EventBus()
    reporter = TableReporter(1, TableKey.from_seed(b"t1"), tmp_path / "t1.journal", _url(broker, "table-1"), bus=bus)
    reporter.attach(bus)
    reporter.start()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(d, password_hash=hash_password("club-night-password"),
                                                      live=relay.board), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    page = browser.new_page(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    try:
        assert relay.connected.wait(10) and wait_until(lambda: server.started, 10)
        assert wait_until(lambda: reporter.table._client is not None and reporter.table._client.is_connected(), 10)
        first = _view(3)
        bus.publish("view", **first)
        assert wait_until(lambda: (relay.board.get(1) or {}).get("view") is not None, 10)
        page.goto(f"http://127.0.0.1:{port}/live/table/1")
        page.wait_for_selector("#line svg .tile", timeout=10_000)
        assert page.locator("#line svg .tile").count() == 3
        assert "Ana" in page.inner_text("#seats")
        time.sleep(0.3)  # the relay sends at most five views a second
        bus.publish("view", **_view(6))
        page.wait_for_function("document.querySelectorAll('#line svg .tile').length === 6", timeout=10_000)
        page.screenshot(path=str(REPO / "test-artifacts" / "web" / "club-live-table.png"))
        assert "hidden" not in json.dumps(first)
    finally:
        page.close()
        server.should_exit = True
        reporter.close()
        relay.stop()
