"""The director's leaf pieces that every part of the tournament room uses:
its error, the limits of what a person types, team sizes, badge checks and the
append-only audit chain. Kept apart from :mod:`.service` (the Director) so
that the formats, players and ratings modules can use them without importing
the Director, which imports them.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tablesense.games.common import say
from tablesense.games.registry import find_game

from .db import AuditEntry, Event


class DirectorError(ValueError):
    """A director action that cannot be done (the message says why)."""


MAX_NAME = 200


def _clip(text: str, limit: int = 200) -> str:
    """A reason or key as stored and echoed: at most ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
