"""What every director service shares: one event in one database, and one lock.

The director is a few services over the same tables (:mod:`.ingestion`,
:mod:`.rounds`, :mod:`.corrections`, the audit log of :mod:`.audit`); each
holds the same :class:`EventScope`, so they read one event and serialize
their writes through one lock (the database serializes writers of other
processes: see :func:`.audit._append_audit`).
"""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .db import Database, Event, Round


class EventScope:
    """One event of one database, with the lock its writers share in this process."""

    def __init__(self, db: Database, event_id: int) -> None:
        self.db = db
        self.event_id = event_id
        self._lock = threading.RLock()

    @property
    def lock(self) -> threading.RLock:
        """Held by every write of this process (a re-entrant lock)."""
        return self._lock

    def event(self, s: Session) -> Event:
        ev = s.get(Event, self.event_id)
        assert ev is not None
        return ev

    def options(self) -> dict[str, Any]:
        with self.db.session() as s:
            return dict(self.event(s).options)

    def current_round_no(self, s: Session | None = None) -> int:
        if s is None:
            with self.db.session() as s2:
                return self.current_round_no(s2)
        return int(s.scalar(select(func.max(Round.number)).where(Round.event_id == self.event_id)) or 0)
