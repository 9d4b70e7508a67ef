"""Live progress from the tables: what each table's display shows, relayed to the director.

A table publishes a small public progress message on its own ``live`` topic
(``tablesense/tables/table-N/live``) after moves and after every hand:
round, match, hand number, the match score, and the pieces each seat holds
(counts only: never a hidden piece); a real table adds its display's whole
public ``view`` (what its screen shows), which the director's per-table
spectator page draws with the display's own renderer. It is QoS 0, not signed and not
journalled, and it never goes through the outbox: live view and results
travel separately, so a lost or forged live message can only make a page
briefly wrong, never touch a result.

The director keeps the latest message per table (:class:`LiveBoard`, fed by
the result bridge's connection, which hands live messages straight to the
board and never to its result queue, under a per-table token bucket; or, for
a process that is not the director, by :class:`LiveRelay`); the console shows "playing
hand 3 · 45–30" from it and ``/live`` shows every table to spectators.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from .protocol import TOPIC_ROOT, table_from_topic

log = logging.getLogger(__name__)

#: A progress message is a few hundred bytes, one with a real table's whole
#: display view a few kilobytes; anything longer is dropped unread.
MAX_LIVE_BYTES = 65536
MAX_NAME = 60
"""The longest player name a progress message carries (longer ones are cut)."""
LIVE_TOPIC_FILTER = f"{TOPIC_ROOT}/tables/+/live"


def live_topic(table: int) -> str:
    return f"{TOPIC_ROOT}/tables/table-{table}/live"


def progress(round_no: Any, match: Any, hand: int, scores: Any, counts: Any = None, state: str = "playing",
             view: dict[str, Any] | None = None, *, turn: int | None = None, player: str | None = None,
             moves: int | None = None, moved: float | None = None, problem: str | None = None) -> dict[str, Any]:
    """The public progress message of a table (see the module docstring). ``view``: a real
    table's whole display view (the display's public ``view`` event), for its spectator page;
    ``turn``: the seat to play, ``player`` its player's name; ``moves``: moves in this hand; ``moved``: when the last move
    was made (the table's clock, seconds since the epoch); ``problem``: what holds the game
    up at the table (:data:`PROBLEMS`)."""
    body: dict[str, Any] = {"round": round_no, "match": match, "hand": int(hand), "state": state,
                            "scores": [_num(x) for x in scores], "ts": time.time()}
    if counts is not None:
        body["counts"] = [int(c) for c in counts]
    if view is not None:
        body["view"] = view
    if turn is not None:
        body["turn"] = int(turn)
    if player:
        body["player"] = str(player)[:MAX_NAME]
    if moves is not None:
        body["moves"] = int(moves)
    if moved:
        body["moved"] = float(moved)
    if problem is not None:
        body["problem"] = problem
    return body


PROBLEMS = ("correction", "paused")
"""What can hold a real table up: a correction the players are asked for (a piece on a
wrong cell, an unknown tag), or a pause (a board offline)."""


def _small_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 10_000


def _num(x: Any) -> int | float:
    v = float(x)
    return int(v) if v.is_integer() else v


class LiveBoard:
    """The latest progress of each table (thread-safe; in memory only)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: dict[int, dict[str, Any]] = {}
        self.dropped = 0
        self.version = 0
        """Grows by one with every stored message (pages push when it changes)."""

    def update(self, table: int, payload: bytes, now: float | None = None) -> bool:
        """Keep ``payload`` as table ``table``'s progress when it is a well-formed live message."""
        if len(payload) > MAX_LIVE_BYTES:
            self.dropped += 1
            return False
        data: Any = None
        try:
            data = json.loads(payload)
            ok = (isinstance(data, dict) and isinstance(data.get("hand"), int) and isinstance(data.get("scores"), list)
                  and len(data["scores"]) <= 8 and all(isinstance(x, int | float) for x in data["scores"]))
        except ValueError:
            ok = False
        if not ok:
            self.dropped += 1
            return False
        entry = {k: data[k] for k in ("round", "match", "hand", "state", "scores", "counts", "ts") if k in data}
        entry.update({k: data[k] for k in ("turn", "moves") if _small_int(data.get(k))})
        if isinstance(data.get("moved"), int | float) and not isinstance(data.get("moved"), bool):
            entry["moved"] = float(data["moved"])
        if isinstance(data.get("player"), str) and data["player"]:
            entry["player"] = data["player"][:MAX_NAME]
        if data.get("problem") in PROBLEMS:
            entry["problem"] = data["problem"]
        if isinstance(data.get("view"), dict):
            entry["view"] = data["view"]
        entry["received"] = time.time() if now is None else now
        with self._lock:
            self.version += 1
            entry["seq"] = self.version  # the order of views across reconnections (display.js keeps the newest)
            self._latest[table] = entry
        return True

    def get(self, table: int) -> dict[str, Any] | None:
        with self._lock:
            e = self._latest.get(table)
            return dict(e) if e is not None else None

    def snapshot(self) -> dict[int, dict[str, Any]]:
        with self._lock:
            return {t: dict(e) for t, e in self._latest.items()}


class LiveRelay:
    """Subscribes to every table's live topic on the director's broker and fills a :class:`LiveBoard`.

    Its own connection, for a process other than the director's (the director
    feeds its board from the result bridge's connection): the broker binds a
    client id to its user, so two connections under one user take each
    other's place; give the relay a user of its own.
    """

    def __init__(self, broker: Any, board: LiveBoard | None = None, *, client_id: str = "tablesense-live") -> None:
        from .broker_client import make_client

        self.board = board or LiveBoard()
        self.broker = broker
        self._client = make_client(client_id, broker, clean=True)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message
        self.connected = threading.Event()

    def start(self) -> LiveRelay:
        self._client.connect_async(self.broker.host, self.broker.port, keepalive=5)
        self._client.loop_start()
        return self

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: Any, _ud: Any, _flags: Any, rc: Any, _props: Any = None) -> None:
        if getattr(rc, "is_failure", False):
            log.warning("live relay: broker refused the connection: %s", rc)
            return
        client.subscribe(LIVE_TOPIC_FILTER, 0)
        self.connected.set()

    def _on_message(self, _client: Any, _ud: Any, msg: Any) -> None:
        table = table_from_topic(msg.topic)
        if table is not None:
            self.board.update(table, bytes(msg.payload))
