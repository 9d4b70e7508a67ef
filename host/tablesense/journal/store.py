"""The durable journal: every accepted move, on disk before anyone sees it.

One SQLite file (WAL mode, ``synchronous=FULL``: each commit is fsynced
before :meth:`Journal.append` returns). The referee calls ``append`` BEFORE
it changes the game state or tells the table, so a move the players saw
accepted is always in the journal, whatever happens next (power cut,
``kill -9``). The entries are the referee's event-sourcing log (see
:mod:`tablesense.referee.core`): replaying them rebuilds the match exactly.

Tables::

    matches(id TEXT PRIMARY KEY, started REAL, spec TEXT, status TEXT, ended REAL)
    entries(seq INTEGER PRIMARY KEY AUTOINCREMENT, match_id TEXT, ts REAL, entry TEXT)

``status`` is ``running`` until the match ends (``finished``) or is given up
(``abandoned``); ``tablesense play`` resumes the last ``running`` match.
The same file is the table's outbox towards a tournament director: a match's
entries and records stay until they are acknowledged elsewhere.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablesense.table.words import say

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    started REAL NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running',
    ended REAL
);
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id TEXT NOT NULL REFERENCES matches(id),
    ts REAL NOT NULL,
    entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_match ON entries(match_id, seq);
"""


class JournalError(RuntimeError):
    """The journal cannot be opened or written (disk full, read-only, corrupt)."""


@dataclass(frozen=True)
class MatchRow:
    id: str
    started: float
    spec: dict[str, Any]
    status: str
    ended: float | None
    entries: int


class Journal:
    """An append-only, fsynced log of the referee's entries, per match.

    Thread-safe (one lock); ``clock`` is injected for tests.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time
    ) -> None:
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a folder that cannot be made (read-only, no such device)
            raise JournalError(say("cannot open the journal {path}: {error}", path=str(self.path),
                                   error=exc.strerror or str(exc))) from None
        try:
            self._db = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False
            )
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(say("{path}: SQLite refused WAL mode (got {mode})", path=str(self.path), mode=mode))
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            if self.path.exists():
                raise JournalError(say("cannot open the journal {path}: {error} (the file is left as it is)",
                                       path=str(self.path), error=str(exc))) from None
            raise JournalError(say("cannot open the journal {path}: {error}", path=str(self.path),
                                   error=str(exc))) from None
        self.match_id: str | None = None

    # -- matches -----------------------------------------------------------
    def begin(self, spec: dict[str, Any], match_id: str | None = None) -> str:
        """Start a new match (its first entry is written by the referee)."""
        mid = match_id or uuid.uuid4().hex[:12]
        with self._lock:
            self._write(
                "INSERT INTO matches (id, started, spec, status) VALUES (?, ?, ?, 'running')",
                (mid, self._clock(), json.dumps(spec, sort_keys=True)),
            )
        self.match_id = mid
        return mid

    def resume(self, match_id: str) -> None:
        """Append to an existing match."""
        if self.match(match_id) is None:
            raise JournalError(say("no match {id!r} in {path}", id=match_id, path=str(self.path)))
        self.match_id = match_id

    def running(self) -> MatchRow | None:
        """The last match still running (what ``play`` resumes), if any.

        :raises JournalError: the file cannot be read (damaged); it is left as it is.
        """
        with self._reading():
            row = self._db.execute(
                "SELECT id FROM matches WHERE status = 'running' "
                "ORDER BY started DESC, rowid DESC LIMIT 1"
            ).fetchone()
            return self.match(row[0]) if row else None

    def match(self, match_id: str) -> MatchRow | None:
        with self._reading():
            row = self._db.execute(
                "SELECT id, started, spec, status, ended FROM matches WHERE id = ?", (match_id,)
            ).fetchone()
            if row is None:
                return None
            count = self._db.execute(
                "SELECT COUNT(*) FROM entries WHERE match_id = ?", (match_id,)
            ).fetchone()[0]
            spec = json.loads(row[2])
            if not isinstance(spec, dict):
                raise ValueError(f"match {row[0]}: its description is not a JSON object")
            return MatchRow(row[0], row[1], spec, row[3], row[4], int(count))

    def matches(self) -> list[MatchRow]:
        with self._reading():
            ids = [r[0] for r in self._db.execute("SELECT id FROM matches ORDER BY started, rowid")]
            return [m for m in (self.match(i) for i in ids) if m is not None]

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """A read that fails (a damaged file, a row that is not JSON) is a
        :class:`JournalError` saying so; nothing is written or deleted."""
        try:
            yield
        except JournalError:
            raise
        except (sqlite3.Error, ValueError, TypeError, IndexError) as exc:
            raise JournalError(
                say("cannot read the journal {path}: {error} (the file is damaged; it is left as it is)",
                    path=str(self.path), error=str(exc))
            ) from None

    def close_match(self, status: str = "finished", match_id: str | None = None) -> None:
        mid = match_id or self.match_id
        if mid is None:
            return
        with self._lock:
            self._write(
                "UPDATE matches SET status = ?, ended = ? WHERE id = ?",
                (status, self._clock(), mid),
            )

    # -- entries -----------------------------------------------------------
    def append(self, entry: dict[str, Any]) -> int:
        """Store one entry durably (committed and fsynced) and return its seq.

        :raises JournalError: when it could not be stored; then nothing was.
        """
        if self.match_id is None:
            raise JournalError("no match is open in the journal: begin() or resume() first")
        text = json.dumps(entry, sort_keys=True, separators=(",", ":"))
        with self._lock:
            cur = self._write(
                "INSERT INTO entries (match_id, ts, entry) VALUES (?, ?, ?)",
                (self.match_id, self._clock(), text),
            )
        return int(cur.lastrowid or 0)

    def entries(self, match_id: str | None = None) -> list[dict[str, Any]]:
        mid = match_id or self.match_id
        with self._reading():
            rows = self._db.execute(
                "SELECT entry FROM entries WHERE match_id = ? ORDER BY seq", (mid,)
            )
            out = [json.loads(r[0]) for r in rows]
            if not all(isinstance(e, dict) for e in out):
                raise ValueError(f"match {mid}: an entry is not a JSON object")
            return out

    def _write(self, sql: str, args: tuple[Any, ...]) -> sqlite3.Cursor:
        try:
            cur = self._db.execute("BEGIN IMMEDIATE")
            cur = self._db.execute(sql, args)
            self._db.execute("COMMIT")
            return cur
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise JournalError(say("cannot write the journal {path}: {error}", path=str(self.path), error=str(exc))) from None

    def close(self) -> None:
        """Idempotent."""
        with contextlib.suppress(sqlite3.Error):
            self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
