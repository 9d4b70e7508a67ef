"""Seasons: a championship of a club's players over several evenings (events).

A season lists its events and how an evening scores:

- ``scoring="placement"`` (default): each player earns the points of their
  entrant's final place that evening from ``points`` (default
  :data:`DEFAULT_POINTS`, 25-18-15-12-10-8-6-4-2-1, then 0); entrants sharing
  a place (a tie the tie-breaks do not split) each earn that place's points;
- ``scoring="match-points"``: each player earns their entrant's match points
  that evening (a win 1, a draw 1/2; tables of three or four: placement
  points, one per entrant finished ahead of).

``best`` N: only a player's best N evenings count (all when unset), so a
missed evening or two does not decide the championship. The table is sorted
by counted points, then evenings won, then the best single evening, then
name. A pair's result counts for both its players.

An evening counts once it is over (its last round confirmed, the same rule
as the event's winner banner), so the table is live as evenings end. Events
whose entrants are not linked to club players (``players.py``) add nothing.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, select
from sqlalchemy.orm import Mapped, mapped_column

from .console import final_result
from .db import Base, Database, Event
from .players import entrant_players, player_names
from .service import Director, DirectorError

SCORINGS = ("placement", "match-points")
DEFAULT_POINTS = (25, 18, 15, 12, 10, 8, 6, 4, 2, 1)


class Season(Base):
    __tablename__ = "ts_seasons"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)


class SeasonEvent(Base):
    __tablename__ = "ts_season_events"
    season_id: Mapped[int] = mapped_column(ForeignKey("ts_seasons.id"), primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("ts_events.id"), primary_key=True)


def create_season(db: Database, name: str, *, scoring: str = "placement", best: int | None = None,
                  points: Sequence[float] | None = None, events: Sequence[int] = ()) -> int:
    """A new season; refuses unknown scorings, a ``best`` below 1 and negative points."""
    name = " ".join(name.split())
    if not name or len(name) > 200:
        raise DirectorError("a season needs a name of 1 to 200 characters")
    if scoring not in SCORINGS:
        raise DirectorError(f"unknown season scoring {scoring!r}; choose from {', '.join(SCORINGS)}")
    if best is not None and (isinstance(best, bool) or not isinstance(best, int) or best < 1):
        raise DirectorError("best N evenings: N is a whole number from 1")
    pts = [float(p) for p in (points if points is not None else DEFAULT_POINTS)]
    if any(p < 0 or p != p for p in pts):
        raise DirectorError("placement points are numbers from 0")
    with db.session() as s:
        season = Season(name=name, options={"scoring": scoring, "best": best, "points": pts}, created_at=time.time())
        s.add(season)
        s.flush()
        sid = season.id
    for e in events:
        add_event(db, sid, e)
    return sid


def add_event(db: Database, season_id: int, event_id: int) -> None:
    with db.session() as s:
        if s.get(Season, season_id) is None:
            raise DirectorError(f"no season {season_id}")
        if s.get(Event, event_id) is None:
            raise DirectorError(f"no event {event_id}")
        if s.get(SeasonEvent, (season_id, event_id)) is None:
            s.add(SeasonEvent(season_id=season_id, event_id=event_id))


def seasons(db: Database) -> list[dict[str, Any]]:
    with db.session() as s:
        return [{"id": x.id, "name": x.name, **x.options} for x in s.scalars(select(Season).order_by(Season.id))]


@dataclass
class SeasonRow:
    player: int
    name: str
    rank: int = 0
    total: float = 0.0
    evenings: dict[int, float] = field(default_factory=dict)
    """Event id -> points that evening (only evenings the player played)."""
    counted: set[int] = field(default_factory=set)
    wins: int = 0
    best_place: int = 0

    def to_json(self, event_ids: Sequence[int]) -> dict[str, Any]:
        return {"rank": self.rank, "player": self.player, "name": self.name, "total": self.total,
                "played": len(self.evenings), "wins": self.wins,
                "evenings": [{"event": e, "points": self.evenings.get(e), "counted": e in self.counted} for e in event_ids]}


@dataclass
class SeasonTable:
    id: int
    name: str
    options: dict[str, Any]
    events: list[dict[str, Any]]
    """Every event of the season: id, name, over (counted yet)."""
    rows: list[SeasonRow]

    def to_json(self) -> dict[str, Any]:
        ids = [e["id"] for e in self.events]
        return {"season": {"id": self.id, "name": self.name, **self.options}, "events": self.events,
                "table": [r.to_json(ids) for r in self.rows]}

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["rank", "player", "total", "played", "wins", *[e["name"] for e in self.events]])
        ids = [e["id"] for e in self.events]
        for r in self.rows:
            cells = []
            for e in ids:
                p = r.evenings.get(e)
                cells.append("" if p is None else (_num(p) if e in r.counted else f"({_num(p)})"))
            w.writerow([r.rank, r.name, _num(r.total), len(r.evenings), r.wins, *cells])
        return buf.getvalue()


def _num(x: float) -> str:
    return f"{x:g}"


def evening_points(db: Database, event_id: int, scoring: str, points: Sequence[float]) -> tuple[dict[int, float], dict[int, int]] | None:
    """Player -> points and player -> place for one evening, or None while it is not over."""
    director = Director(db, event_id)
    if final_result(director) is None:
        return None
    table = director.standings()
    with db.session() as s:
        link = entrant_players(s, [st.entrant for st in table])
    pts: dict[int, float] = {}
    place: dict[int, int] = {}
    for st in table:
        if scoring == "placement":
            value = float(points[st.rank - 1]) if 0 < st.rank <= len(points) else 0.0
        else:
            value = float(st.tiebreaks.get("placement_points", st.games_won))
        for p in link.get(st.entrant, ()):
            pts[p] = value
            place[p] = st.rank
    return pts, place


def season_table(db: Database, season_id: int) -> SeasonTable:
    """The season's table now (evenings that are over), best N counted."""
    with db.session() as s:
        season = s.get(Season, season_id)
        if season is None:
            raise DirectorError(f"no season {season_id}")
        opts = dict(season.options)
        name = season.name
        evs = list(s.execute(select(Event.id, Event.name).join(SeasonEvent, SeasonEvent.event_id == Event.id)
                             .where(SeasonEvent.season_id == season_id).order_by(Event.id)))
        names = player_names(s)
    rows: dict[int, SeasonRow] = {}
    events = []
    for eid, ename in evs:
        got = evening_points(db, eid, opts["scoring"], opts["points"])
        events.append({"id": eid, "name": ename, "over": got is not None})
        if got is None:
            continue
        pts, place = got
        for p, v in pts.items():
            row = rows.setdefault(p, SeasonRow(p, names.get(p, f"player {p}")))
            row.evenings[eid] = v
            row.wins += place[p] == 1
            row.best_place = place[p] if not row.best_place else min(row.best_place, place[p])
    best = opts.get("best")
    for row in rows.values():
        ranked = sorted(row.evenings.items(), key=lambda kv: (-kv[1], kv[0]))
        keep = ranked if best is None else ranked[: int(best)]
        row.counted = {e for e, _ in keep}
        row.total = sum(v for _, v in keep)
    order = sorted(rows.values(), key=lambda r: (-r.total, -r.wins, r.best_place or 10**9, r.name, r.player))
    prev: tuple[float, int, int] | None = None
    for i, r in enumerate(order, start=1):
        key = (r.total, r.wins, r.best_place)
        r.rank = order[i - 2].rank if prev == key else i
        prev = key
    return SeasonTable(season_id, name, opts, events, order)
