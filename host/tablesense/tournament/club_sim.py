"""A club's season, simulated in-process: players with a hidden skill, evening after evening.

``tablesense tournament simulate --club 40 --evenings 10`` runs this. It
exercises what a club keeps between evenings -- players, ratings, a season
-- rather than the tables and the broker (``simulate.py`` proves those, one
event at a time). Each player gets a hidden skill (normal, mean 0, sd 1);
each evening the players come, are paired into random partnerships (pairs
variants), registered from the club's players, and play a Swiss. A match's
result is drawn from the hidden skills (the favourite wins with probability
``1 / (1 + exp(-(skill difference) * SCALE))``) and entered through the
director's own result entry (:meth:`Director.correct`, with the reason
"club simulation"), so it is confirmed and audited like a hand-entered result.

A first-round match is *lopsided* when the hidden favourite's chance of
winning is at least :data:`LOPSIDED` -- the figure compared between first
rounds seeded by rating and drawn ones.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tablesense.games.common import say

from . import ratings as rt
from .db import Database
from .players import add_player, register_players
from .seasons import add_event, create_season, season_table
from .service import Director, team_size

#: How strongly the hidden skill difference (sum over a side) decides a match.
SCALE = 1.2
#: A first-round match whose favourite wins this often or more is lopsided.
LOPSIDED = 0.75


@dataclass
class ClubReport:
    players: int
    evenings: int
    first_round: str
    season_id: int = 0
    event_ids: list[int] = field(default_factory=list)
    first_round_matches: int = 0
    lopsided: int = 0
    """Lopsided first-round matches over evenings 2..K (evening 1 has no ratings yet)."""
    skill_correlation: float = 0.0
    """Spearman correlation of the final conservative ratings with the hidden skills."""
    table_stability: float = 0.0
    """Spearman correlation of the season table's order after the last two evenings."""
    leader: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"players": self.players, "evenings": self.evenings, "first_round": self.first_round,
                "season": self.season_id, "events": self.event_ids, "first_round_matches": self.first_round_matches,
                "lopsided": self.lopsided, "lopsided_share": round(self.lopsided / max(1, self.first_round_matches), 3),
                "skill_correlation": round(self.skill_correlation, 3),
                "table_stability": round(self.table_stability, 3), "leader": self.leader}


def win_chance(a: float, b: float) -> float:
    return 1.0 / (1.0 + math.exp(-(a - b) * SCALE))


def simulate_club(db_url: str, *, players: int = 40, evenings: int = 10, rounds: int = 4, seed: int = 0,
                  first_round: str = "rating", variant: str = "pairs-pips", game: str = "dominoes",
                  attendance: float = 1.0, best: int | None = None,
                  progress: Callable[[str], None] | None = None) -> ClubReport:
    """Run a season of ``evenings`` for a club of ``players``; returns the figures."""
    tell = progress or (lambda _m: None)  # Sentences: the command prints them in its language
    if players < 4:
        raise ValueError("a club needs at least 4 players")
    db = Database(db_url)
    rng = random.Random(seed)
    skill: dict[int, float] = {}
    for i in range(1, players + 1):
        pid = add_player(db, f"Player {i:02d}", badge=f"club-{seed}-{i}", club="Simulated club")
        skill[pid] = rng.gauss(0.0, 1.0)
    report = ClubReport(players, evenings, first_round)
    report.season_id = create_season(db, f"Simulated season (seed {seed})", best=best)
    prev_order: list[int] = []
    order: list[int] = []
    size = team_size(game, variant, 4)  # the evenings below keep the default four seats
    for k in range(1, evenings + 1):
        d = Director.create_event(db, f"Club night {k}", game=game, variant=variant, format="swiss",
                                  options={"rounds": rounds, "first_round": first_round, "lots_seed": f"club-{seed}-{k}"})
        with db.session() as s:
            size = team_size(game, variant, int(d.event(s).options.get("seats", 4)))
        here = [p for p in skill if rng.random() < attendance]
        rng.shuffle(here)
        here = here[: len(here) - len(here) % size]
        ents: dict[int, list[int]] = {}
        for i in range(0, len(here), size):
            team = here[i:i + size]
            ents[register_players(d, team)] = team
        for e in ents:
            d.check_in(e)
        for r in range(1, rounds + 1):
            d.pair_next_round("club-sim")
            for m in d.matches(r):
                if m.kind != "match" or m.entrant_b is None:
                    continue
                sa = sum(skill[p] for p in ents[m.entrant_a])
                sb = sum(skill[p] for p in ents[m.entrant_b])
                p_a = win_chance(sa, sb)
                if r == 1 and k > 1:
                    report.first_round_matches += 1
                    report.lopsided += max(p_a, 1 - p_a) >= LOPSIDED
                a_wins = rng.random() < p_a
                loser = float(rng.randint(10, 95))
                score = (100.0, loser) if a_wins else (loser, 100.0)
                d.correct(m.id, score, m.entrant_a if a_wins else m.entrant_b, "club simulation", "club-sim")
        add_event(db, report.season_id, d.event_id)
        report.event_ids.append(d.event_id)
        rt.update(db)
        prev_order, order = order, [r.player for r in season_table(db, report.season_id).rows]
        tell(say("evening {k}: {n} entrants, {rounds} rounds; season leader {leader}", k=k, n=len(ents), rounds=rounds,
                 leader=order[0] if order else "-"))
    fam = rt.family_of(game, variant, 4 if size == 2 else 2)
    final = rt.current(db, fam)
    rated = [p for p in skill if p in final]
    report.skill_correlation = spearman([final[p].ordinal for p in rated], [skill[p] for p in rated])
    if prev_order:
        common = [p for p in order if p in prev_order]
        report.table_stability = spearman([float(order.index(p)) for p in common], [float(prev_order.index(p)) for p in common])
    table = season_table(db, report.season_id)
    report.leader = table.rows[0].name if table.rows else ""
    db.close()
    return report


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    n = len(xs)
    if n < 2:
        return 0.0

    def ranks(v: list[float]) -> list[float]:
        idx = sorted(range(n), key=lambda i: v[i])
        out = [0.0] * n
        i = 0
        while i < n:
            j = i
            while j + 1 < n and v[idx[j + 1]] == v[idx[i]]:
                j += 1
            for t in range(i, j + 1):
                out[idx[t]] = (i + j) / 2.0
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    vy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (vx * vy) if vx and vy else 0.0
