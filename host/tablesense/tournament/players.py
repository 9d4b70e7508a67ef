"""A club's players: people who persist across events (name, badge, club).

An event's *entrant* stays what it was (a name, its members' names and
badges, one evening's standing); this module adds who the entrant *is*: one
player (individual games) or two (a pair), linked in ``ts_entrant_players``.
Ratings (``ratings.py``) and seasons (``seasons.py``) follow players, never
entrants, so Ana's rating and season points follow her from one evening's
partner to the next.

Registering from known players goes through :meth:`Director.register` (so
the entrant gets the players' names and badges, the badge check-in at a
table keeps working, and the audit log has the registration), then links the
entrant to the players in the same call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Float, ForeignKey, Index, Integer, String, func, or_, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from tablesense.games.common import say
from tablesense.i18n import N_

from .audit import MAX_NAME, DirectorError, _check_badge
from .db import Base, Database, Entrant


class Registrar(Protocol):
    """What registering players needs of an event's Director
    (:class:`~tablesense.tournament.service.Director`): its database, its
    event and its ``register`` (named here so that this module, which the
    Director's ratings use, does not import the Director)."""

    db: Database
    event_id: int

    def register(self, name: str, members: Sequence[str] = (), badges: Sequence[str] = (), seed: int = 0) -> int: ...

#: Longest badge id (the column's width).
MAX_BADGE = 64
#: Most players a search returns (the director's search-as-you-type list).
SEARCH_LIMIT = 20


class Player(Base):
    __tablename__ = "ts_players"
    __table_args__ = (Index("ix_ts_players_name", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(MAX_NAME))
    badge: Mapped[str | None] = mapped_column(String(MAX_BADGE), nullable=True, unique=True)
    club: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[float] = mapped_column(Float, default=time.time)


class EntrantPlayer(Base):
    __tablename__ = "ts_entrant_players"
    entrant_id: Mapped[int] = mapped_column(ForeignKey("ts_entrants.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("ts_players.id"), index=True)


@dataclass(frozen=True)
class PlayerInfo:
    id: int
    name: str
    badge: str | None
    club: str

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "name": self.name, "badge": self.badge, "club": self.club}


def _info(p: Player) -> PlayerInfo:
    return PlayerInfo(p.id, p.name, p.badge, p.club)


def _clean(text: str, what: str, limit: int) -> str:
    t = " ".join(str(text).split())
    if not t:
        raise DirectorError(say("{what} must not be empty", what=say(what)))
    if len(t) > limit:
        raise DirectorError(say("{what} has at most {limit} characters", what=say(what), limit=limit))
    if any(ord(c) < 32 for c in t):
        raise DirectorError(say("{what} must not contain control characters", what=say(what)))
    return t


def add_player(db: Database, name: str, *, badge: str | None = None, club: str = "") -> int:
    """A new club player; a badge belongs to one player only (refused otherwise)."""
    name = _clean(name, N_("a player's name"), MAX_NAME)
    badge = _check_badge(badge) if badge else None  # the same form as an entrant's badge (lower-case UID)
    club = " ".join(club.split())[:200]
    with db.session() as s:
        if badge and s.scalar(select(Player.id).where(Player.badge == badge)):
            raise DirectorError(say("badge {badge} already belongs to another player", badge=badge))
        p = Player(name=name, badge=badge, club=club, created_at=time.time())
        s.add(p)
        s.flush()
        return p.id


def get_player(db: Database, player_id: int) -> PlayerInfo:
    with db.session() as s:
        p = s.get(Player, player_id)
        if p is None:
            raise DirectorError(say("no player {id} in this club", id=player_id))
        return _info(p)


def by_badge(db: Database, badge: str) -> PlayerInfo | None:
    """The player a badge belongs to (a table's badge reader), or None."""
    with db.session() as s:
        p = s.scalar(select(Player).where(Player.badge == badge.strip().lower()))
        return _info(p) if p else None


def search(db: Database, query: str, limit: int = SEARCH_LIMIT) -> list[PlayerInfo]:
    """Players whose name starts with (or has a word starting with) ``query``, or whose badge is it.

    Case-insensitive; names that start with the query come first. An empty
    query lists the club's players by name."""
    q = " ".join(query.split()).lower()[:MAX_NAME]
    with db.session() as s:
        stmt = select(Player)
        if q:
            like = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            stmt = stmt.where(or_(
                func.lower(Player.name).like(f"{like}%", escape="\\"),
                func.lower(Player.name).like(f"% {like}%", escape="\\"),
                func.lower(Player.badge) == q,
            ))
        rows = list(s.scalars(stmt.order_by(Player.name, Player.id).limit(max(limit * 5, limit))))
    rows.sort(key=lambda p: (not p.name.lower().startswith(q), p.name.lower(), p.id))
    return [_info(p) for p in rows[:limit]]


def all_players(db: Database) -> list[PlayerInfo]:
    with db.session() as s:
        return [_info(p) for p in s.scalars(select(Player).order_by(Player.name, Player.id))]


def register_players(director: Registrar, player_ids: Sequence[int], name: str | None = None, seed: int = 0) -> int:
    """Enter known players for this event: one (individual) or two (a pair).

    The entrant's name defaults to the players' names ("Ana & Bia"); its
    members and badges are the players', so a badge check-in at a table finds
    the entrant. A player may be in one entrant of an event only."""
    ids = [int(i) for i in player_ids]
    if len(set(ids)) != len(ids):
        raise DirectorError(say("the same player twice in one entrant"))
    db = director.db
    with db.session() as s:
        players = [s.get(Player, i) for i in ids]
        missing = [i for i, p in zip(ids, players, strict=True) if p is None]
        if missing:
            raise DirectorError(say("no player {id} in this club", id=missing[0]))
        known = [p for p in players if p is not None]
        taken = _players_in_event(s, director.event_id)
        for p in known:
            if p.id in taken:
                raise DirectorError(say("{name} is already entered in this event", name=p.name))
        members = [p.name for p in known]
        badges = [p.badge for p in known if p.badge]
    entrant_id = director.register(name or " & ".join(members), members, badges, seed=seed)
    with db.session() as s:
        for pos, pid in enumerate(ids):
            s.add(EntrantPlayer(entrant_id=entrant_id, position=pos, player_id=pid))
    return entrant_id


def _players_in_event(s: Session, event_id: int) -> set[int]:
    return set(s.scalars(
        select(EntrantPlayer.player_id).join(Entrant, Entrant.id == EntrantPlayer.entrant_id).where(Entrant.event_id == event_id)
    ))


def entrant_players(s: Session, entrant_ids: Sequence[int] | None = None) -> dict[int, list[int]]:
    """Entrant id -> its players' ids in position order (entrants without players are absent)."""
    stmt = select(EntrantPlayer).order_by(EntrantPlayer.entrant_id, EntrantPlayer.position)
    if entrant_ids is not None:
        stmt = stmt.where(EntrantPlayer.entrant_id.in_(list(entrant_ids)))
    out: dict[int, list[int]] = {}
    for ep in s.scalars(stmt):
        out.setdefault(ep.entrant_id, []).append(ep.player_id)
    return out


def player_names(s: Session) -> dict[int, str]:
    return {pid: name for pid, name in s.execute(select(Player.id, Player.name))}
