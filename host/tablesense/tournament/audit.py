"""The director's leaf pieces that every part of the tournament room uses:
its error, the limits of what a person types, team sizes, badge checks and the
append-only audit chain, and :class:`AuditTrail`, the director's audit
service (budgeted entries, the log as pages read it, the chain's check).
Kept apart from :mod:`.service` (the Director) so that the formats, players
and ratings modules can use them without importing the Director, which
imports them.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from tablesense.games.common import say
from tablesense.games.registry import find_game

from .db import AuditEntry, Event
from .protocol import MAX_ID
from .scope import EventScope


class DirectorError(ValueError):
    """A director action that cannot be done (the message says why)."""


MAX_NAME = 200


def _clip(text: str, limit: int = 200) -> str:
    """A reason or key as stored and echoed: at most ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_text(text: str, what: str, limit: int = MAX_NAME) -> str:
    """A name or reason typed by a person: stripped, no control characters (a NUL
    byte cannot be stored in PostgreSQL), at most ``limit`` characters."""
    text = str(text).strip()
    if len(text) > limit:
        raise DirectorError(say("{what} has at most {limit} characters, this one has {n}", what=say(what), limit=limit, n=len(text)))
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise DirectorError(say("{what} may not contain control characters (NUL, tab, newline)", what=say(what)))
    return text


def _check_id(value: object, what: str) -> int:
    """An id typed by a person: a whole number the database can hold."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ID:
        raise DirectorError(say("no {what} {value} in this event", what=say(what), value=str(value)[:20]))
    return value


def team_size(game: str, variant: str, seats: int) -> int:
    """Players per entrant: pairs for 4-seat partnership games, else individuals."""
    return find_game(game).players_per_team(variant, seats)


def _check_badge(badge: str) -> str:
    """A badge is a tag UID in hex (4 to 10 bytes)."""
    b = str(badge).strip().lower()
    if not 1 <= len(b) <= 64 or any(c not in "0123456789abcdefghijklmnopqrstuvwxyz-_:" for c in b):
        raise DirectorError(say("badge {badge} is not a tag UID (letters and digits, at most 64)", badge=repr(b[:20])))
    return b


def _audit_hash(prev: str, ts: float, actor: str, action: str, match_id: int | None, reason: str, detail: dict[str, Any]) -> str:
    blob = json.dumps([prev, repr(ts), actor, action, match_id, reason, detail], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _append_audit(s: Session, event_id: int, actor: str, action: str, match_id: int | None, reason: str, detail: dict[str, Any]) -> None:
    """Append one entry, chained to the last one.

    Serialized by the database, not only by this process's lock: the CLI and a
    running director may write at once. The no-op UPDATE of the event's row
    takes its row lock on PostgreSQL and the write lock on SQLite before the
    last entry is read, so two writers can never chain to the same entry
    (which would fork the chain); the lock is held until the commit."""
    s.execute(update(Event).where(Event.id == event_id).values(id=Event.id).execution_options(synchronize_session=False))
    last = s.scalar(select(AuditEntry).where(AuditEntry.event_id == event_id).order_by(AuditEntry.id.desc()).limit(1))
    prev = last.hash if last is not None else "0" * 64
    ts = time.time()
    detail = json.loads(json.dumps(detail, allow_nan=False))
    s.add(AuditEntry(event_id=event_id, ts=ts, actor=actor, action=action, match_id=match_id, reason=reason,
                     detail=detail, prev_hash=prev, hash=_audit_hash(prev, ts, actor, action, match_id, reason, detail)))
    s.flush()


class AuditChain:
    """Many entries appended in one transaction: the chain's lock is taken and
    its last entry read once, each new entry chained to the one before in
    memory, and all inserted by :meth:`flush` in one executemany, in order
    (no ORM objects, no ids read back). Nothing else may append in the same
    transaction meanwhile; the caller flushes before its commit."""

    def __init__(self, s: Session, event_id: int) -> None:
        self.s = s
        self.event_id = event_id
        self._prev: str | None = None
        self._rows: list[dict[str, Any]] = []

    def flush(self) -> None:
        """Insert the entries appended since the last flush, in chain order."""
        if self._rows:
            self.s.execute(insert(AuditEntry.metadata.tables[AuditEntry.__tablename__]), self._rows)
            self._rows = []

    def append(self, actor: str, action: str, match_id: int | None, reason: str, detail: dict[str, Any]) -> None:
        if self._prev is None:
            # the same lock as _append_audit: two writers never chain to the same entry
            self.s.execute(update(Event).where(Event.id == self.event_id).values(id=Event.id)
                           .execution_options(synchronize_session=False))
            last = self.s.scalar(select(AuditEntry.hash).where(AuditEntry.event_id == self.event_id)
                                 .order_by(AuditEntry.id.desc()).limit(1))
            self._prev = last or "0" * 64
        ts = time.time()
        detail = json.loads(json.dumps(detail, allow_nan=False))
        h = _audit_hash(self._prev, ts, actor, action, match_id, reason, detail)
        self._rows.append({"event_id": self.event_id, "ts": ts, "actor": actor, "action": action, "match_id": match_id,
                           "reason": reason, "detail": detail, "prev_hash": self._prev, "hash": h})
        self._prev = h


#: Refusals (and failed logins) one source may write to the audit log per
#: window; beyond that they are counted in memory and written as one
#: ``refusals-suppressed`` entry, so a flood cannot grow the database.
AUDIT_BUDGET = 20
AUDIT_WINDOW_S = 60.0
#: How often the audit chain is re-hashed from its start (otherwise incrementally).
FULL_CHECK_S = 600.0


class AuditTrail:
    """The director's audit service: entries within a source's budget, the log
    as pages read it, and the chain's verification."""

    def __init__(self, scope: EventScope) -> None:
        self.db = scope.db
        self.event_id = scope.event_id
        self._lock = scope.lock
        self._budget: dict[str, list[float]] = {}  # source -> [window start, written, suppressed, bytes]
        self._verified: tuple[int, str] = (0, "0" * 64)  # audit chain checked up to (id, hash)
        self._full_checked = -FULL_CHECK_S  # monotonic time of the last full check
        self._verify_lock = threading.Lock()

    def write(self, actor: str, action: str, *, match_id: int | None = None, reason: str = "", **detail: Any) -> None:
        """One entry, in its own transaction."""
        with self._lock, self.db.session() as s:
            _append_audit(s, self.event_id, actor, action, match_id, reason, detail)

    def audit_limited(self, source: str, action: str, reason: str = "", cost: int = 0, **detail: Any) -> bool:
        """Audit something a table or an address caused, at most ``AUDIT_BUDGET``
        entries per ``AUDIT_WINDOW_S`` for one source; the rest are counted and
        written as one ``refusals-suppressed`` entry when the window ends.
        Returns True when this one was written."""
        with self._lock:
            if not self.take_budget(source, cost):
                return False
            with self.db.session() as s:
                _append_audit(s, self.event_id, source, action, None, reason, detail)
            return True

    def take_budget(self, source: str, cost: int = 0) -> bool:
        """One write of ``source``'s budget: False (and counted) when it is spent."""
        now = time.monotonic()
        with self._lock:
            b = self._budget.setdefault(source, [now, 0, 0, 0])
            if now - b[0] >= AUDIT_WINDOW_S:
                self._flush_budget(source, b)
                b[:] = [now, 0, 0, 0]
            if b[1] >= AUDIT_BUDGET:
                b[2] += 1
                b[3] += cost
                return False
            b[1] += 1
            return True

    def flush_audit_budget(self, *, force: bool = False) -> None:
        """Write the suppressed counts of windows that ended (all of them if ``force``)."""
        now = time.monotonic()
        with self._lock:
            for source, b in self._budget.items():
                if force or now - b[0] >= AUDIT_WINDOW_S:
                    self._flush_budget(source, b)
                    b[:] = [now, 0, 0, 0]

    def _flush_budget(self, source: str, b: list[float]) -> None:
        if b[2]:
            with self.db.session() as s:
                _append_audit(s, self.event_id, source, "refusals-suppressed", None,
                              f"{int(b[2])} more refused in {AUDIT_WINDOW_S:g} s", {"count": int(b[2]), "bytes": int(b[3])})

    def data_version(self) -> int:
        """The newest audit entry's id in the database: every change to an event
        writes one in the same transaction, so an unchanged number means
        unchanged data (one indexed read; what :meth:`memo` keys on)."""
        with self.db.session() as s:
            return int(s.scalar(select(AuditEntry.id).order_by(AuditEntry.id.desc()).limit(1)) or 0)

    def audit_count(self) -> int:
        """How many entries the audit log has (a COUNT, for paging)."""
        with self.db.session() as s:
            return int(s.scalar(select(func.count(AuditEntry.id)).where(AuditEntry.event_id == self.event_id)) or 0)

    def audit_log(self, last: int | None = None, skip: int = 0) -> list[dict[str, Any]]:
        """The audit log in order; ``last`` keeps only the newest entries (what a
        page shows; ``skip`` newer ones passed over first), read with a LIMIT so a
        page never loads the whole log."""
        with self.db.session() as s:
            q = select(AuditEntry).where(AuditEntry.event_id == self.event_id)
            if last is not None:
                rows = list(s.scalars(q.order_by(AuditEntry.id.desc()).offset(skip).limit(last)))[::-1]
            else:
                rows = list(s.scalars(q.order_by(AuditEntry.id)))
            return [
                {"id": a.id, "ts": a.ts, "actor": a.actor, "action": a.action, "match": a.match_id,
                 "reason": a.reason, "detail": a.detail, "hash": a.hash}
                for a in rows
            ]

    def verify_audit_chain(self, *, full: bool = False) -> bool:
        """True when no audit entry was altered, removed or reordered.

        Incremental by default: entries up to the last one this director
        checked are trusted once that entry is still there with the same hash
        (the database refuses UPDATE and DELETE on the log), and only newer
        entries are hashed, so a page costs a few rows, not the whole log.
        Someone who drops that protection to edit an old row is caught by the
        full check: ``full``, the first check of a director, and one every
        ``FULL_CHECK_S`` seconds. Its own lock: a long check never holds up ingestion."""
        with self._verify_lock:
            if time.monotonic() - self._full_checked >= FULL_CHECK_S:
                full = True
            upto, prev = (0, "0" * 64) if full else self._verified
            with self.db.session() as s:
                if upto:
                    anchor = s.get(AuditEntry, upto)
                    if anchor is None or anchor.hash != prev:
                        self._verified = (0, "0" * 64)
                        return False
                q = (select(AuditEntry).where(AuditEntry.event_id == self.event_id, AuditEntry.id > upto)
                     .order_by(AuditEntry.id).execution_options(yield_per=2000))
                for a in s.scalars(q):
                    if a.prev_hash != prev or a.hash != _audit_hash(a.prev_hash, a.ts, a.actor, a.action, a.match_id, a.reason, a.detail):
                        return False
                    upto, prev = a.id, a.hash
            self._verified = (upto, prev)
            if full:
                self._full_checked = time.monotonic()
            return True
