"""A table's durable outbox towards the tournament director, one table's own.

What a table must not lose between itself and the director lives here, in a
small SQLite file (WAL): the director's latest assignment for the table, the
signed messages (check-in, result, confirmation) the director has not yet
acknowledged, the state of each announced match (playing, reporting, done)
and a few counters (a round's result revision). A host that crashes or loses
power resumes from it: unacknowledged messages are sent again.

Every row belongs to one table number, and every match row to one event too:
two tables whose hosts share a folder (and so the default ``outbox.sqlite``
beside the journal) keep apart, and an assignment that names another table
is refused (:class:`WrongTable`) and never stored, so a table can never
announce another's match.

The store knows nothing of MQTT or signatures: the tournament room sends and
signs (:mod:`tablesense.tournament.table_link`); ``digest`` (injected) names
a message the way the director's acknowledgement names it.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

Digest = Callable[[dict[str, Any]], str]
"""The identity of a signed message (the director's ack names it)."""

MatchState = tuple[str, list[dict[str, Any]], int | None]
"""A match at this table: its phase, the game records so far, the result revision."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS table_messages (
    table_no INTEGER NOT NULL, key TEXT NOT NULL, digest TEXT, payload TEXT, created REAL,
    acked INTEGER DEFAULT 0, ack_status TEXT, PRIMARY KEY (table_no, key));
CREATE TABLE IF NOT EXISTS table_values (
    table_no INTEGER NOT NULL, k TEXT NOT NULL, v TEXT, PRIMARY KEY (table_no, k));
CREATE TABLE IF NOT EXISTS table_matches (
    table_no INTEGER NOT NULL, event INTEGER NOT NULL, match INTEGER NOT NULL, state TEXT, hands TEXT,
    revision INTEGER, PRIMARY KEY (table_no, event, match));
"""

ASSIGNMENT = "assignment"


class WrongTable(ValueError):
    """An assignment that names another table than this outbox's."""


class TableOutbox:
    """One table's outbox (see the module docstring). Thread-safe."""

    def __init__(self, path: Path, table: int, digest: Digest) -> None:
        self.path = Path(path)
        self.table = int(table)
        self._digest = digest
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._lock = threading.Lock()
        with self._lock:
            self._db.executescript(SCHEMA)
            self._adopt_unkeyed()
            # The ack names the digest of the whole signed message (older versions
            # digested it without its signature): bring waiting entries up to date.
            for key, payload, dig in list(self._db.execute(
                    "SELECT key, payload, digest FROM table_messages WHERE table_no=? AND acked=0", (self.table,))):
                full = digest(json.loads(payload))
                if full != dig:
                    self._db.execute("UPDATE table_messages SET digest=? WHERE table_no=? AND key=?",
                                     (full, self.table, key))

    def _adopt_unkeyed(self) -> None:
        """Take over a file written before rows were keyed by table (one table per
        file then): each message goes to the table its key names, the values and
        matches to the first table that opens the file, under the event of the
        assignment stored with them."""
        names = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "outbox" not in names:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for key, dig, payload, created, acked, status in list(self._db.execute(
                    "SELECT key, digest, payload, created, acked, ack_status FROM outbox")):
                parts = str(key).split("/")
                owner = int(parts[3]) if len(parts) == 5 and parts[3].isdigit() else self.table
                self._db.execute("INSERT OR IGNORE INTO table_messages VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 (owner, key, dig, payload, created, acked, status))
            event = 0
            for k, v in list(self._db.execute("SELECT k, v FROM kv")):
                if k == ASSIGNMENT:
                    event = int((json.loads(v) or {}).get("event") or 0)
                self._db.execute("INSERT OR IGNORE INTO table_values VALUES (?, ?, ?)", (self.table, k, v))
            for match, state, hands, revision in list(self._db.execute(
                    "SELECT match, state, hands, revision FROM matches")):
                self._db.execute("INSERT OR IGNORE INTO table_matches VALUES (?, ?, ?, ?, ?, ?)",
                                 (self.table, event, match, state, hands, revision))
            self._db.execute("DROP TABLE outbox")
            self._db.execute("DROP TABLE IF EXISTS kv")
            self._db.execute("DROP TABLE IF EXISTS matches")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        log.info("outbox %s: rows of the older layout now belong to table %d", self.path, self.table)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------ values

    def get(self, k: str, default: Any = None) -> Any:
        with self._lock:
            row = self._db.execute("SELECT v FROM table_values WHERE table_no=? AND k=?", (self.table, k)).fetchone()
        return default if row is None else json.loads(row[0])

    def put(self, k: str, v: Any) -> None:
        if k == ASSIGNMENT and v is not None:
            self._check_table(v)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO table_values VALUES (?, ?, ?)", (self.table, k, json.dumps(v)))

    def assignment(self) -> dict[str, Any] | None:
        """The director's latest assignment for this table (None before the first)."""
        a = self.get(ASSIGNMENT)
        return a if isinstance(a, dict) and a else None

    def assign(self, payload: dict[str, Any]) -> bool:
        """Keep the director's assignment when it is not older than the one kept
        (event, round); True when it was kept. Raises :class:`WrongTable` for an
        assignment that names another table (nothing is stored)."""
        self._check_table(payload)
        cur = self.assignment()
        if cur is not None and (payload.get("event"), payload.get("round")) < (cur.get("event"), cur.get("round")):
            return False
        self.put(ASSIGNMENT, payload)
        return True

    def _check_table(self, payload: Any) -> None:
        named = payload.get("table") if isinstance(payload, dict) else None
        if named is not None and named != self.table:
            raise WrongTable(f"an assignment for table {named} reached table {self.table}'s outbox")

    # ------------------------------------------------------------ messages

    def queue(self, key: str, message: dict[str, Any]) -> None:
        """Keep a signed message until the director's ack names its digest (signature
        included: a refused copy with a broken signature names another digest)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO table_messages (table_no, key, digest, payload, created) VALUES (?, ?, ?, ?, ?)",
                (self.table, key, self._digest(message), json.dumps(message), time.time()),
            )

    def pending(self) -> list[tuple[str, str]]:
        """This table's messages not yet acknowledged, oldest first: (key, payload)."""
        with self._lock:
            return list(self._db.execute(
                "SELECT key, payload FROM table_messages WHERE table_no=? AND acked=0 ORDER BY created", (self.table,)))

    def acked(self, key: str, dig: str, status: str) -> bool:
        """Mark ``key`` acknowledged if the ack names our content; True when it did."""
        with self._lock:
            cur = self._db.execute(
                "UPDATE table_messages SET acked=1, ack_status=? WHERE table_no=? AND key=? AND digest=? AND acked=0",
                (status, self.table, key, dig),
            )
            return cur.rowcount > 0

    def forget(self, key: str) -> None:
        """Drop an acknowledged message so the same key can be sent again with new
        content (a check-in refused for a wrong badge, then made with the right one)."""
        with self._lock:
            self._db.execute("DELETE FROM table_messages WHERE table_no=? AND key=? AND acked=1", (self.table, key))
            self._db.execute("DELETE FROM table_values WHERE table_no=? AND k=?", (self.table, f"reason/{key}"))

    def ack_status(self, key: str) -> str | None:
        """The director's answer to ``key`` (accepted, duplicate, refused), None before it."""
        with self._lock:
            row = self._db.execute("SELECT ack_status FROM table_messages WHERE table_no=? AND key=? AND acked=1",
                                   (self.table, key)).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------ matches

    def match(self, event: int, match_id: int) -> MatchState | None:
        with self._lock:
            row = self._db.execute(
                "SELECT state, hands, revision FROM table_matches WHERE table_no=? AND event=? AND match=?",
                (self.table, int(event), int(match_id))).fetchone()
        if row is None:
            return None
        return str(row[0]), json.loads(row[1]), row[2]

    def save_match(self, event: int, match_id: int, state: str, games: list[dict[str, Any]],
                   revision: int | None = None) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO table_matches VALUES (?, ?, ?, ?, ?, ?)",
                             (self.table, int(event), int(match_id), state, json.dumps(games), revision))
