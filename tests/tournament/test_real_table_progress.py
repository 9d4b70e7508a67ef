"""A real table's progress on the director's console (issue 30): the display's
view, relayed by ``play --director``'s reporter, names the announced match, so
the console shows "playing hand N" with the score, whose turn and the time of
the last move, and flags a correction, a pause, a stalled or an offline table;
spectators see the table playing, never what holds it up."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tablesense.outputs.events import EventBus
from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
from tablesense.tournament.console import STALLED_AFTER_S, console_state, table_progress
from tablesense.tournament.db import Database
from tablesense.tournament.live import LiveBoard, progress
from tablesense.tournament.pages import live_view
from tablesense.tournament.reporter import TableReporter
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director

from .conftest import Broker


def _url(broker: Broker, user: str) -> BrokerURL:
    return BrokerURL("127.0.0.1", broker.port, user, broker.files.credentials[user])


def _view(moves: int, **extra: Any) -> dict[str, Any]:
    """A real table's public display view after ``moves`` moves (the display's own preview builder)."""
    import random

    from tablesense.games.dominoes import DominoMatch
    from tablesense.games.registry import find_game
    from tablesense.web.preview import dominoes_view, random_domino_moves

    rng = random.Random(5)
    m = DominoMatch("pairs-pips", {"target": 100})
    hand = m.new_hand(rng=rng)
    random_domino_moves(hand, rng, moves)
    view = dominoes_view(m, hand, facts=find_game("dominoes").page_facts(), hand_no=4)
    view["scores"] = [45, 30]
    view["moves"] = moves
    view.update(extra)
    return view


def _row(d: Director, board: LiveBoard, table: int = 1, now: float | None = None) -> dict[str, Any]:
    return next(r for r in console_state(d, now=now, live=board)["tables"] if r["table"] == table)


def test_a_real_tables_hand_and_score_reach_the_console(broker: Broker, tmp_path: Path) -> None:
    d = Director.create_event(Database(f"sqlite:///{tmp_path / 'club.db'}"), "Real night",
                              options={"target": 100, "lots_seed": "r", "confirm": "director"})
    for i in range(1, 3):
        d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"])
    key = TableKey.from_seed(b"real-1")
    d.add_table(1, key.public)
    d.pair_next_round()
    board = LiveBoard()
    bus = EventBus()
    with DirectorBridge(d, _url(broker, "director"), live=board) as bridge:
        assert bridge.wait_connected(30)
        bridge.announce_round()
        reporter = TableReporter(1, key, tmp_path / "outbox.sqlite", _url(broker, "table-1"), bus=bus)
        reporter.attach(bus)
        reporter.start()
        try:
            m = reporter.current_match(timeout=10)
            assert m is not None
            assert wait_until(lambda: _row(d, board)["online"], 10)
            assert _row(d, board)["state"] == "waiting", "announced, not started: no progress yet"
            reporter.show_match(m)
            bus.publish("view", **_view(5))
            assert wait_until(lambda: _row(d, board)["live"] is not None, 10), "the real table stays invisible"
            row = _row(d, board)
            assert row["state"] == "playing"
            live = row["live"]
            assert live["hand"] == 4 and live["scores"] == [45, 30] and live["moves"] == 5
            assert live["player"] and isinstance(live["turn"], int) and live["since_move_s"] < 60
            # a piece on a wrong cell: the console says a correction is pending at once
            bus.publish("view", **_view(5, correction={"text": "put 3-4 back", "cells": []}))
            assert wait_until(lambda: _row(d, board)["state"] == "correction", 10)
            assert live_view(d, board)[0]["state"] == "playing", "spectators never see the correction"
            bus.publish("view", **_view(6, paused=True))
            assert wait_until(lambda: _row(d, board)["state"] == "paused", 10)
            bus.publish("view", **_view(7))
            assert wait_until(lambda: _row(d, board)["state"] == "playing", 10)
            # nobody has moved for minutes (the table's own progress says when it last moved)
            entry = board.get(1)
            assert entry is not None
            idle = progress(entry["round"], entry["match"], 4, [45, 30], turn=1, moves=7,
                            moved=time.time() - STALLED_AFTER_S - 60)
            assert board.update(1, json.dumps(idle).encode())
            row = _row(d, board)
            assert row["state"] == "stalled" and row["live"]["since_move_s"] >= STALLED_AFTER_S
        finally:
            reporter.close()
        # the table drops off: offline, whatever its last progress said
        assert wait_until(lambda: _row(d, board)["state"] == "offline", 15)


def test_the_time_since_the_last_move_uses_each_clock_for_its_part() -> None:
    """The table's clock for the age when sent (a table's clock may be off), the director's since."""
    board = LiveBoard()
    body = progress(1, 7, 2, [10, 0], turn=1, player="Ana", moves=3, moved=1000.0)
    body["ts"] = 1030.0  # the table sent it 30 s after the move, by its own clock
    assert board.update(7, json.dumps(body).encode(), now=5000.0)  # the director's clock is far ahead
    shown = table_progress(board.get(7), now=5010.0)
    assert shown is not None and shown["since_move_s"] == 40.0 and shown["player"] == "Ana"
    assert not board.update(7, json.dumps({**body, "turn": True, "moves": -1, "problem": "<b>"}).encode()) or (
        "turn" not in (board.get(7) or {}) and "problem" not in (board.get(7) or {}))
