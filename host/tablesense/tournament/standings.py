"""Standings and tie-breaks, recomputed from the match results alone.

A standing is never stored as a running total: it is the sum of the entrant's
counted matches, recomputed on demand, so a correction anywhere shows up
everywhere and "every standing equals the sum of its matches" holds by
construction. Tie-break definitions are in docs/tournament.md; the names
below are what an event's ``tiebreaks`` list may contain.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

EntrantId = int

TIEBREAKS: tuple[str, ...] = (
    "games_won",
    "point_difference",
    "points_for",
    "head_to_head",
    "buchholz",
    "buchholz_cut1",
    "buchholz_median",
    "sonneborn_berger",
    "placement_points",
    "lots",
)

#: The Brazilian Swiss-for-pairs default: games won, point difference, points for.
DEFAULT_TIEBREAKS: tuple[str, ...] = ("games_won", "point_difference", "points_for", "head_to_head", "lots")


class TiebreakError(ValueError):
    """An unknown or repeated tie-break name."""


@dataclass(frozen=True)
class MatchOutcome:
    """One counted match: ``b`` None is a bye (``kind`` says which)."""

    round: int
    a: EntrantId
    b: EntrantId | None
    score_a: float
    score_b: float
    winner: EntrantId | None
    kind: str = "match"  # "match", "pairing-bye" (a win), "requested-bye" (nothing)


@dataclass
class Standing:
    """One entrant's line. ``games_won`` counts a win 1 and a draw 1/2."""

    entrant: EntrantId
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points_for: float = 0.0
    points_against: float = 0.0
    rank: int = 0
    tiebreaks: dict[str, float] = field(default_factory=dict)

    @property
    def games_won(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def point_difference(self) -> float:
        return self.points_for - self.points_against


def validate_tiebreaks(names: Sequence[str]) -> list[str]:
    """Check an event's tie-break order; returns it as a list."""
    seen: set[str] = set()
    for n in names:
        if n not in TIEBREAKS:
            raise TiebreakError(f"unknown tie-break {n!r}; choose from {', '.join(TIEBREAKS)}")
        if n in seen:
            raise TiebreakError(f"tie-break {n!r} is listed twice")
        seen.add(n)
    return list(names)


def lots_value(seed: str, entrant: EntrantId) -> float:
    """The drawing of lots: a number in [0, 1) fixed by the event's seed and the entrant."""
    digest = hashlib.sha256(f"{seed}:{entrant}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def compute_standings(
    entrants: Iterable[EntrantId],
    matches: Iterable[MatchOutcome],
    tiebreaks: Sequence[str] = DEFAULT_TIEBREAKS,
    *,
    lots_seed: str = "",
) -> list[Standing]:
    """Standings in rank order. Entrants still tied after every criterion share a rank."""
    order = validate_tiebreaks(tiebreaks)
    table: dict[EntrantId, Standing] = {e: Standing(e) for e in entrants}
    # opponent -> per-entrant list of (opponent, result 1/0.5/0)
    results: dict[EntrantId, list[tuple[EntrantId, float]]] = {e: [] for e in table}
    h2h: dict[tuple[EntrantId, EntrantId], float] = {}
    for m in matches:
        sa = table.setdefault(m.a, Standing(m.a))
        results.setdefault(m.a, [])
        if m.b is None:
            if m.kind == "requested-bye":
                continue
            sa.played += 1
            sa.wins += 1
            sa.points_for += m.score_a
            sa.points_against += m.score_b
            continue
        sb = table.setdefault(m.b, Standing(m.b))
        results.setdefault(m.b, [])
        sa.played += 1
        sb.played += 1
        sa.points_for += m.score_a
        sa.points_against += m.score_b
        sb.points_for += m.score_b
        sb.points_against += m.score_a
        if m.winner == m.a:
            ra = 1.0
            sa.wins += 1
            sb.losses += 1
        elif m.winner == m.b:
            ra = 0.0
            sb.wins += 1
            sa.losses += 1
        else:
            ra = 0.5
            sa.draws += 1
            sb.draws += 1
        results[m.a].append((m.b, ra))
        results[m.b].append((m.a, 1.0 - ra))
        h2h[(m.a, m.b)] = h2h.get((m.a, m.b), 0.0) + ra
        h2h[(m.b, m.a)] = h2h.get((m.b, m.a), 0.0) + 1.0 - ra

    won = {e: s.games_won for e, s in table.items()}

    def buchholz(e: EntrantId, cut_low: int = 0, cut_high: int = 0) -> float:
        opp = sorted(won[o] for o, _ in results[e])
        if cut_low + cut_high >= len(opp):
            return 0.0
        return float(sum(opp[cut_low : len(opp) - cut_high]))

    keyfuncs: dict[str, Callable[[EntrantId], float]] = {
        "games_won": lambda e: won[e],
        "point_difference": lambda e: table[e].point_difference,
        "points_for": lambda e: table[e].points_for,
        "buchholz": lambda e: buchholz(e),
        "buchholz_cut1": lambda e: buchholz(e, 1, 0),
        "buchholz_median": lambda e: buchholz(e, 1, 1),
        "sonneborn_berger": lambda e: float(sum(won[o] * r for o, r in results[e])),
        "lots": lambda e: lots_value(lots_seed, e),
        # At a table of two, placement points are games won (see kway.py for tables of k).
        "placement_points": lambda e: won[e],
    }
    for e, s in table.items():
        for name in order:
            if name in keyfuncs:
                s.tiebreaks[name] = keyfuncs[name](e)

    def h2h_score(e: EntrantId, group: Sequence[EntrantId]) -> float:
        return float(sum(h2h.get((e, o), 0.0) for o in group if o != e))

    def split(group: list[EntrantId], key: Callable[[EntrantId], float]) -> list[list[EntrantId]]:
        group.sort(key=lambda e: (-key(e), e))
        out: list[list[EntrantId]] = []
        for e in group:
            if out and key(out[-1][0]) == key(e):
                out[-1].append(e)
            else:
                out.append([e])
        return out

    def rank(group: list[EntrantId], i: int) -> list[list[EntrantId]]:
        if len(group) <= 1 or i >= len(order):
            return [sorted(group)]
        name = order[i]
        if name != "head_to_head":
            out: list[list[EntrantId]] = []
            for sub in split(group, keyfuncs[name]):
                out.extend(rank(sub, i + 1))
            return out
        # Head-to-head: a mini-table of the tied entrants' games among themselves;
        # any subgroup still tied is compared again among its own members only.
        members = tuple(group)  # not the list being sorted: sort() hides a list's items from key functions
        subs = split(list(group), lambda e: h2h_score(e, members))
        if len(subs) == 1:
            return rank(group, i + 1)
        out = []
        for sub in subs:
            out.extend(rank(sub, i) if len(sub) > 1 else [sub])
        return out

    if "head_to_head" in order:
        # Shown value: the games won against the entrants level on every criterion before it.
        prior = order[: order.index("head_to_head")]
        level: dict[tuple[float, ...], list[EntrantId]] = {}
        for e in table:
            level.setdefault(tuple(keyfuncs[c](e) for c in prior), []).append(e)
        for members in level.values():
            for e in members:
                table[e].tiebreaks["head_to_head"] = h2h_score(e, members)

    tiers = rank(list(table), 0)
    ranked: list[Standing] = []
    place = 1
    for tier in tiers:
        for e in tier:
            st = table[e]
            st.rank = place
            st.tiebreaks = {name: st.tiebreaks[name] for name in order}  # the event's order
            ranked.append(st)
        place += len(tier)
    return ranked
