"""Players' ratings: openskill (Weng-Lin, Plackett-Luce) per game family, replayed from results.

Why openskill: one model rates two sides (a pair against a pair), three
players at a brazilian-points table and three or four Kems teams at once,
and every rating carries its uncertainty (``sigma``) next to its estimate
(``mu``), so a newcomer is shown as the guess it is.

Families are rated apart (a strong Kems player is not thereby a strong
dominoes player): ``dominoes-pairs`` (partnership dominoes, 4 seats),
``dominoes-individual`` (two-player pips, three-player brazilian-points) and
``kems``.

Only *confirmed* results of real matches count (``Match.confirmed`` and kind
``match``: no byes, nothing merely reported or disputed), and only matches
whose entrants are all linked to club players (``players.py``). They are
rated in a fixed order -- event, round, match number -- so the ratings are a
pure function of the stored results: :func:`recompute` from nothing gives
exactly what the incremental :func:`update` kept.

Every rated match writes one ``ts_rating_changes`` row per player (before and
after). :func:`update` compares the stored sequence (match and a digest of its
outcome) with the results as they are now; at the first difference -- a
corrected score, a result confirmed late for an earlier round -- it drops the
rows from there on and replays from the ratings just before it. So a
correction in evening 3 changes every later rating exactly as a recomputation
does (``tests/tournament/test_ratings.py``).

Provisional: a player is *provisional* in a family while they have fewer than
:data:`PROVISIONAL_GAMES` rated matches there or their ``sigma`` is above
:data:`PROVISIONAL_SIGMA` (a new player starts at mu 25, sigma 8.33).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce
from sqlalchemy import Float, ForeignKey, Index, Integer, String, delete, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from tablesense.games.registry import GAMES, find_game

from .audit import team_size
from .db import Base, Database, Entrant, Event, Match, match_entrants, match_scores
from .players import entrant_players

FAMILY_LABELS: dict[str, str] = {f: str(title) for g in GAMES.values() for f, title in g.rating_families.items()}
FAMILIES = tuple(FAMILY_LABELS)
#: A player is provisional with fewer rated matches than this in a family...
PROVISIONAL_GAMES = 8
#: ... or while their uncertainty is above this (the start is 25/3 = 8.33).
PROVISIONAL_SIGMA = 5.0
MU0 = 25.0
SIGMA0 = 25.0 / 3.0
#: One update at a time in a process (pages are drawn from a thread pool; two
#: concurrent replays would each drop and rewrite the same rows).
_UPDATE_LOCK = threading.Lock()


def family_of(game: str, variant: str, seats: int) -> str:
    """The rating family of an event's game."""
    return find_game(game).rating_family(variant, seats)


class RatingChange(Base):
    __tablename__ = "ts_rating_changes"
    __table_args__ = (Index("ix_ts_rating_changes_family_seq", "family", "seq"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    family: Mapped[str] = mapped_column(String(30))
    seq: Mapped[int] = mapped_column(Integer)
    player_id: Mapped[int] = mapped_column(ForeignKey("ts_players.id"), index=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("ts_events.id"), index=True)
    round_no: Mapped[int] = mapped_column(Integer)
    match_id: Mapped[int] = mapped_column(ForeignKey("ts_matches.id"), index=True)
    outcome: Mapped[str] = mapped_column(String(64))
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu_after: Mapped[float] = mapped_column(Float)
    sigma_after: Mapped[float] = mapped_column(Float)


@dataclass(frozen=True)
class Skill:
    """A player's rating in one family: estimate, uncertainty and rated matches so far."""

    mu: float = MU0
    sigma: float = SIGMA0
    games: int = 0

    @property
    def ordinal(self) -> float:
        """The conservative rating (mu - 3 sigma): what the club table is sorted by."""
        return self.mu - 3.0 * self.sigma

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES or self.sigma > PROVISIONAL_SIGMA

    def to_json(self) -> dict[str, object]:
        return {"mu": round(self.mu, 3), "sigma": round(self.sigma, 3), "ordinal": round(self.ordinal, 3),
                "games": self.games, "provisional": self.provisional}


@dataclass(frozen=True)
class RatedMatch:
    """One confirmed match as the rating sees it: the teams of players and their places."""

    match_id: int
    event_id: int
    round_no: int
    number: int
    teams: tuple[tuple[int, ...], ...]
    ranks: tuple[int, ...]
    """0 = first; equal numbers share a place (a draw)."""

    @property
    def order(self) -> tuple[int, int, int, int]:
        return (self.event_id, self.round_no, self.number, self.match_id)

    @property
    def outcome(self) -> str:
        """A digest of who played and who placed where: a changed result changes it."""
        return hashlib.sha256(json.dumps([self.teams, self.ranks]).encode()).hexdigest()


def model() -> PlackettLuce:
    return PlackettLuce(mu=MU0, sigma=SIGMA0)


def rate(skills: dict[int, Skill], m: RatedMatch, pl: PlackettLuce | None = None) -> dict[int, tuple[Skill, Skill]]:
    """Rate one match: updates ``skills`` in place; returns player -> (before, after)."""
    pl = pl or model()
    before = {p: skills.get(p, Skill()) for team in m.teams for p in team}
    teams = [[pl.rating(mu=before[p].mu, sigma=before[p].sigma) for p in team] for team in m.teams]
    new = pl.rate(teams, ranks=[float(r) for r in m.ranks])
    out: dict[int, tuple[Skill, Skill]] = {}
    for team, rated in zip(m.teams, new, strict=True):
        for p, r in zip(team, rated, strict=True):
            after = Skill(float(r.mu), float(r.sigma), before[p].games + 1)
            skills[p] = after
            out[p] = (before[p], after)
    return out


def replay(matches: Iterable[RatedMatch], start: Mapping[int, Skill] | None = None) -> dict[int, Skill]:
    """Ratings after ``matches`` in the given order, from ``start`` (default: everyone new)."""
    skills = dict(start or {})
    pl = model()
    for m in matches:
        rate(skills, m, pl)
    return skills


def places(scores: Sequence[float]) -> tuple[int, ...]:
    """Places from scores (higher is better): 0 for the best, ties share a place."""
    return tuple(sum(1 for o in scores if o > s) for s in scores)


# ------------------------------------------------------------ from the database


def collect(s: Session, family: str) -> list[RatedMatch]:
    """The family's confirmed, rateable matches in rating order (see the module docstring)."""
    events = {ev.id: ev for ev in s.scalars(select(Event))}
    ids = [i for i, ev in events.items() if family_of(ev.game, ev.variant, int(ev.options.get("seats", 4))) == family]
    if not ids:
        return []
    ms = list(s.scalars(select(Match).where(Match.event_id.in_(ids), Match.confirmed.is_(True), Match.kind == "match")))
    link = entrant_players(s, list({e for m in ms for e in match_entrants(m) if e is not None}))
    out = []
    for m in ms:
        ents = match_entrants(m)
        if len(ents) < 2 or any(e not in link for e in ents):
            continue
        scores = match_scores(m)
        if m.entrants and scores is not None:  # a table of three or four: places from the scores
            ranks = places(scores)
        elif m.winner_id is None:
            ranks = (0, 0) if m.score_a == m.score_b else places([m.score_a or 0.0, m.score_b or 0.0])
        else:
            ranks = (0, 1) if m.winner_id == ents[0] else (1, 0)
        teams = tuple(tuple(link[e]) for e in ents)
        if len({p for t in teams for p in t}) != sum(len(t) for t in teams):
            continue  # one player on two sides: not rateable
        out.append(RatedMatch(m.id, m.event_id, m.round_no, m.number, teams, ranks))
    out.sort(key=lambda r: r.order)
    return out


@dataclass(frozen=True)
class UpdateReport:
    family: str
    kept: int
    """Matches whose stored rating changes were still right."""
    replayed: int
    """Matches rated (again) from the first difference on."""


def update(db: Database, families: Sequence[str] = FAMILIES) -> list[UpdateReport]:
    """Bring the stored rating changes in line with the confirmed results (idempotent).

    Compares, match by match, the stored sequence with :func:`collect`; from
    the first difference on, the stored rows are dropped and the matches
    rated again from the ratings just before it."""
    with _UPDATE_LOCK:
        return [_update_family(db, fam) for fam in families]


def _update_family(db: Database, fam: str) -> UpdateReport:
    with db.session() as s:
        fresh = collect(s, fam)
        rows = list(s.scalars(select(RatingChange).where(RatingChange.family == fam).order_by(RatingChange.seq, RatingChange.id)))
        stored: list[tuple[int, str]] = []
        for r in rows:
            if len(stored) <= r.seq:
                stored.append((r.match_id, r.outcome))
        first = 0
        while first < min(len(stored), len(fresh)) and stored[first] == (fresh[first].match_id, fresh[first].outcome):
            first += 1
        if first == len(stored) == len(fresh):
            return UpdateReport(fam, first, 0)
        skills: dict[int, Skill] = {}
        for r in rows:
            if r.seq < first:
                skills[r.player_id] = Skill(r.mu_after, r.sigma_after, skills.get(r.player_id, Skill()).games + 1)
        s.execute(delete(RatingChange).where(RatingChange.family == fam, RatingChange.seq >= first))
        _write(s, fam, fresh[first:], first, skills)
        return UpdateReport(fam, first, len(fresh) - first)


def recompute(db: Database, families: Sequence[str] = FAMILIES) -> list[UpdateReport]:
    """Forget every stored rating change and rate all confirmed results again from nothing."""
    with _UPDATE_LOCK, db.session() as s:
        s.execute(delete(RatingChange).where(RatingChange.family.in_(list(families))))
    return update(db, families)


def _write(s: Session, fam: str, matches: Sequence[RatedMatch], seq0: int, skills: dict[int, Skill]) -> None:
    pl = model()
    for i, m in enumerate(matches, start=seq0):
        for p, (b, a) in rate(skills, m, pl).items():
            s.add(RatingChange(family=fam, seq=i, player_id=p, event_id=m.event_id, round_no=m.round_no,
                               match_id=m.match_id, outcome=m.outcome, mu_before=b.mu, sigma_before=b.sigma,
                               mu_after=a.mu, sigma_after=a.sigma))


def current(db: Database, family: str) -> dict[int, Skill]:
    """Every rated player's rating in ``family`` now (after :func:`update`)."""
    skills: dict[int, Skill] = {}
    with db.session() as s:
        for r in s.scalars(select(RatingChange).where(RatingChange.family == family).order_by(RatingChange.seq)):
            skills[r.player_id] = Skill(r.mu_after, r.sigma_after, skills.get(r.player_id, Skill()).games + 1)
    return skills


def stored_changes(db: Database, family: str) -> list[tuple[int, int, int, float, float, float, float]]:
    """The stored rows as plain tuples (seq, player, match, mu/sigma before, after): for comparisons."""
    with db.session() as s:
        return [(r.seq, r.player_id, r.match_id, r.mu_before, r.sigma_before, r.mu_after, r.sigma_after)
                for r in s.scalars(select(RatingChange).where(RatingChange.family == family)
                                   .order_by(RatingChange.seq, RatingChange.player_id))]


@dataclass(frozen=True)
class HistoryPoint:
    event_id: int
    round_no: int
    match_id: int
    before: Skill
    after: Skill


def history(db: Database, player_id: int) -> dict[str, list[HistoryPoint]]:
    """A player's rating after every rated match, per family (for the chart)."""
    out: dict[str, list[HistoryPoint]] = {}
    with db.session() as s:
        for r in s.scalars(select(RatingChange).where(RatingChange.player_id == player_id).order_by(RatingChange.family, RatingChange.seq)):
            pts = out.setdefault(r.family, [])
            g = len(pts)
            out[r.family].append(HistoryPoint(r.event_id, r.round_no, r.match_id, Skill(r.mu_before, r.sigma_before, g),
                                              Skill(r.mu_after, r.sigma_after, g + 1)))
    return out


def evening_changes(db: Database, event_id: int) -> dict[int, tuple[Skill, Skill]]:
    """Player -> (rating before the evening, after its confirmed matches so far)."""
    with db.session() as s:
        ev = s.get(Event, event_id)
        if ev is None:
            return {}
        fam = family_of(ev.game, ev.variant, int(ev.options.get("seats", 4)))
        games: dict[int, int] = {}
        out: dict[int, tuple[Skill, Skill]] = {}
        for r in s.scalars(select(RatingChange).where(RatingChange.family == fam).order_by(RatingChange.seq)):
            g = games.get(r.player_id, 0)
            games[r.player_id] = g + 1
            if r.event_id != event_id:
                continue
            b = out[r.player_id][0] if r.player_id in out else Skill(r.mu_before, r.sigma_before, g)
            out[r.player_id] = (b, Skill(r.mu_after, r.sigma_after, g + 1))
    return out


# ------------------------------------------------------------ using them


def team_strength(skills: Mapping[int, Skill], players: Sequence[int]) -> float:
    """An entrant's strength from its players: the sum of their mu (the model's own team
    strength), so a pair of a strong and a new player sits between two strong and two new."""
    return sum(skills.get(p, Skill()).mu for p in players)


def entrant_skills(db: Database, event_id: int) -> dict[int, float]:
    """Entrant -> strength (``team_strength``) in the event's family, ratings brought up to date first."""
    update(db)
    with db.session() as s:
        ev = s.get(Event, event_id)
        assert ev is not None
        fam = family_of(ev.game, ev.variant, int(ev.options.get("seats", 4)))
        ids = list(s.scalars(select(Entrant.id).where(Entrant.event_id == event_id)))
        size = team_size(ev.game, ev.variant, int(ev.options.get("seats", 4)))
        link = entrant_players(s, ids)
    skills = current(db, fam)
    return {e: team_strength(skills, link[e]) if e in link else MU0 * size for e in ids}


def rating_order(db: Database, event_id: int, entrant_ids: Sequence[int]) -> list[int]:
    """``entrant_ids`` strongest first (entrants without players count as new); ties keep the given order."""
    strength = entrant_skills(db, event_id)
    pos = {e: i for i, e in enumerate(entrant_ids)}
    return sorted(entrant_ids, key=lambda e: (-round(strength.get(e, 0.0), 9), pos[e]))
