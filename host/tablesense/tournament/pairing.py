"""Pairing formats: Swiss, round robin (Berger tables), knockout and groups.

Pure functions over entrant ids: no database, no clock. The director feeds them
the standings and the history of who met whom, and stores what they return.

Swiss is a minimum-cost perfect matching (dominoes and Kems have no colours,
so unlike chess there is nothing to balance but scores): the cost of pairing
two entrants grows with the square of their score difference, a rematch is
forbidden, and the pairing bye (odd field) is a virtual entrant that prefers
the lowest-ranked entrant who has not had one. The result is always the exact
optimum; large fields are matched on a band graph that provably contains an
optimal matching (:func:`_band_edges`), so a 1,000-entrant round stays well
under two seconds; see docs/tournament.md.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tablesense.games.common import say

EntrantId = int

#: The virtual opponent of the entrant that gets the pairing bye.
BYE: EntrantId = -1


class PairingError(ValueError):
    """No pairing satisfies the format's rules (the message says which)."""


@dataclass(frozen=True)
class Pairing:
    """One match of a round: ``a`` takes the first seats; ``b`` is None for a bye."""

    a: EntrantId
    b: EntrantId | None

    @property
    def is_bye(self) -> bool:
        return self.b is None


@dataclass(frozen=True)
class SwissPlayer:
    """What the Swiss pairer needs to know about one active entrant.

    ``score`` is the primary standing score (games won; a draw counts half),
    ``rank`` the entrant's place in the current standings (0 = first).
    """

    id: EntrantId
    score: float
    rank: int
    opponents: frozenset[EntrantId] = frozenset()
    had_bye: bool = False


# --------------------------------------------------------------------- Swiss


def swiss_first_round(
    entrants: Sequence[EntrantId], *, seeded: bool, rng: random.Random | None
) -> list[Pairing]:
    """Round one: drawn (shuffled, then 1-2, 3-4, ...) or seeded (top half v bottom half).

    With an odd field the last entrant of the drawn order (the lowest seed when
    seeded) gets the bye. ``rng`` None (not seeded): 1-2, 3-4 in the given
    order, unshuffled (first round by club rating: neighbours meet).
    """
    order = list(entrants)
    if not seeded and rng is not None:
        rng.shuffle(order)
    pairs: list[Pairing] = []
    bye: EntrantId | None = None
    if len(order) % 2:
        bye = order.pop()
    if seeded:
        half = len(order) // 2
        pairs = [Pairing(order[i], order[i + half]) for i in range(half)]
    else:
        pairs = [Pairing(order[i], order[i + 1]) for i in range(0, len(order), 2)]
    if bye is not None:
        pairs.append(Pairing(bye, None))
    return pairs


def pair_cost(a: SwissPlayer, b: SwissPlayer) -> int:
    """Cost of pairing two entrants: score gap squared dominates, rank gap breaks ties.

    Scores are in half points, so ``(2*gap)**2 * 10_000`` keeps every score
    consideration above any rank-distance consideration for fields below
    10,000 entrants.
    """
    gap = round(2 * abs(a.score - b.score))
    return gap * gap * 10_000 + abs(a.rank - b.rank)


def _bye_cost(p: SwissPlayer, n: int) -> int:
    # The lowest-ranked entrant is the cheapest bye; score matters most.
    return round(2 * p.score) * 10_000 * 4 + (n - p.rank)


def swiss_pairings(
    players: Sequence[SwissPlayer],
    *,
    exact_up_to: int = 80,
    allow_rematch: bool = False,
) -> list[Pairing]:
    """Pair one Swiss round (not the first): the minimum-cost perfect matching.

    Always the exact optimum of the documented cost (:func:`pair_cost`, a
    rematch forbidden, the bye by :func:`_bye_cost`). Fields of up to
    ``exact_up_to`` entrants are matched on the complete graph; larger ones
    on the *band* graph of :func:`_band_edges`, which provably holds an
    optimal matching (see there), so the answer is the same while a
    1,000-entrant round costs a few tens of thousands of edges instead of
    half a million. When the ranks do not follow the scores (an event whose
    first tie-break is not games won) the proof does not apply and the
    complete graph is used at any size. Raises :class:`PairingError` when no
    pairing avoids a rematch (and ``allow_rematch`` is false) or when every
    entrant has had the bye.
    """
    ordered = sorted(players, key=lambda p: p.rank)
    n = len(ordered)
    if n == 0:
        return []
    if n == 1:
        if ordered[0].had_bye and not allow_rematch:
            raise PairingError(say("one entrant left, and it has already had the bye"))
        return [Pairing(ordered[0].id, None)]
    odd = n % 2 == 1
    monotone = all(ordered[i].score >= ordered[i + 1].score for i in range(n - 1)) and all(
        float(2 * p.score).is_integer() for p in ordered
    )
    band = n > exact_up_to and monotone
    pairs = _solve(ordered, odd, band, allow_rematch)
    if pairs is None:
        if odd:
            raise PairingError(say("no pairing of {n} entrants avoids the bye or a rematch; allow rematches or end the Swiss phase", n=n))
        raise PairingError(say("no pairing of {n} entrants avoids a rematch; allow rematches or end the Swiss phase", n=n))
    rank_of = {p.id: p.rank for p in ordered}
    pairs.sort(key=lambda pr: (pr.b is None, rank_of[pr.a]))
    return pairs


REMATCH_PENALTY = 10**12


def _band_edges(group: Sequence[SwissPlayer], allow_rematch: bool) -> list[tuple[int, int, int]]:
    """Edges (i, j, cost) of the band graph over ``group`` (rank order, scores not increasing).

    Why it holds an optimal matching: along the rank order both parts of
    :func:`pair_cost` (a convex function of the score gap, scores monotone,
    and the rank distance) satisfy the Monge inequality, so for positions
    i < j < p < l the pairs (i, l) and (j, p) never cost less than
    (i, j) and (p, l) or than (i, p) and (j, l), and crossing pairs never
    less than side-by-side ones. Take an optimal matching that is, among the
    optimal ones, the least spread out (sum of squared rank distances): each
    such swap is then blocked, which takes a rematch with i or l, so every
    entrant strictly between a pair's two members is "paid for" by a
    distinct former opponent of i or l (two entrants per opponent when
    they are paired to each other), plus at most one entrant holding the
    bye. Hence a pair (i, l) with more than 2 * |met(i) + met(l)| + 1
    entrants between them is never needed; only opponents inside this
    round's field count.
    """
    n = len(group)
    ids = {p.id for p in group}
    deg = [len(p.opponents & ids) for p in group]
    top = max(deg, default=0)
    edges: list[tuple[int, int, int]] = []
    for i, p in enumerate(group):
        reach = min(n, i + 2 * (deg[i] + top) + 3)
        for j in range(i + 1, reach):
            if j - i - 1 > 2 * (deg[i] + deg[j]) + 1:
                continue
            q = group[j]
            rematch = q.id in p.opponents
            if rematch and not allow_rematch:
                continue
            edges.append((i, j, pair_cost(p, q) + (REMATCH_PENALTY if rematch else 0)))
    return edges


def _solve(group: Sequence[SwissPlayer], bye: bool, band: bool, allow_rematch: bool) -> list[Pairing] | None:
    """Minimum-cost perfect matching of ``group`` (in rank order), plus a bye node
    if ``bye``, on the band graph or (``band`` false) the complete graph. None
    when no perfect matching exists. Solved by rustworkx's blossom algorithm
    (maximum weight among maximum cardinality matchings, weight = big - cost)."""
    import rustworkx as rx

    n = len(group)
    total = n + (1 if bye else 0)
    if total % 2:
        return None
    if band:
        edges = _band_edges(group, allow_rematch)
    else:
        edges = []
        for i, p in enumerate(group):
            for j in range(i + 1, n):
                q = group[j]
                rematch = q.id in p.opponents
                if rematch and not allow_rematch:
                    continue
                edges.append((i, j, pair_cost(p, q) + (REMATCH_PENALTY if rematch else 0)))
    if bye:
        edges += [(i, n, _bye_cost(p, n)) for i, p in enumerate(group) if not p.had_bye]
    if not edges:
        return None
    big = max(c for _, _, c in edges) + 1
    graph = rx.PyGraph()
    graph.add_nodes_from(range(total))
    graph.add_edges_from([(i, j, big - c) for i, j, c in edges])
    matching = rx.max_weight_matching(graph, max_cardinality=True, weight_fn=int)
    if 2 * len(matching) != total:
        return None
    pairs: list[Pairing] = []
    for u, v in matching:
        i, j = (u, v) if u < v else (v, u)
        pairs.append(Pairing(group[i].id, None) if j == n else Pairing(group[i].id, group[j].id))
    return pairs


def greedy_swiss_pairings(players: Sequence[SwissPlayer]) -> list[Pairing]:
    """The usual hand method, kept as the benchmark's peer: take the best-ranked
    unpaired entrant and give it the nearest unpaired entrant it has not met.

    It can paint itself into a corner (the last entrants have all met); then
    it pairs the rematch anyway, which the matching never does when avoidable.
    """
    ordered = sorted(players, key=lambda p: p.rank)
    left = [p for p in ordered]
    pairs: list[Pairing] = []
    if len(left) % 2:
        for idx in range(len(left) - 1, -1, -1):
            if not left[idx].had_bye:
                pairs.append(Pairing(left.pop(idx).id, None))
                break
        else:
            pairs.append(Pairing(left.pop().id, None))
    while left:
        p = left.pop(0)
        for idx, q in enumerate(left):
            if q.id not in p.opponents:
                pairs.append(Pairing(p.id, left.pop(idx).id))
                break
        else:
            pairs.append(Pairing(p.id, left.pop(0).id))
    return pairs


def pairing_cost(players: Sequence[SwissPlayer], pairs: Iterable[Pairing]) -> tuple[int, int]:
    """(total cost, rematches) of a round, to compare pairers on the same field."""
    by_id = {p.id: p for p in players}
    total = 0
    rematches = 0
    for pr in pairs:
        if pr.b is None:
            total += _bye_cost(by_id[pr.a], len(by_id))
            continue
        a, b = by_id[pr.a], by_id[pr.b]
        total += pair_cost(a, b)
        rematches += b.id in a.opponents
    return total, rematches


# ------------------------------------------------------------- round robin


def berger_rounds(entrants: Sequence[EntrantId]) -> list[list[Pairing]]:
    """All rounds of a single round robin, in the order of the Berger tables.

    Entrant k (1-based position in ``entrants``) meets j < n in round
    ``(k + j - 2) mod (n - 1) + 1``; the last position meets k in round
    ``(2k - 2) mod (n - 1) + 1``. With an odd field a virtual last entrant
    stands for the bye. The first-named entrant of each pair follows the
    published tables (the last position alternates sides).
    """
    ids: list[EntrantId | None] = list(entrants)
    if len(ids) % 2:
        ids.append(None)
    n = len(ids)
    if n < 2:
        return []
    rounds: list[list[Pairing]] = [[] for _ in range(n - 1)]
    for k in range(1, n):
        for j in range(k + 1, n):
            r = (k + j - 2) % (n - 1)
            # Berger: the lower position plays first in odd sums, second in even ones.
            first, second = (k, j) if (k + j) % 2 == 1 else (j, k)
            rounds[r].append(_rr_pair(ids[first - 1], ids[second - 1]))
        r = (2 * k - 2) % (n - 1)
        pair = (k, n) if r % 2 == 0 else (n, k)
        rounds[r].append(_rr_pair(ids[pair[0] - 1], ids[pair[1] - 1]))
    for rnd in rounds:
        rnd.sort(key=lambda p: p.b is None)
    return rounds


def _rr_pair(a: EntrantId | None, b: EntrantId | None) -> Pairing:
    if a is None:
        assert b is not None
        return Pairing(b, None)
    return Pairing(a, b)


# ---------------------------------------------------------------- knockout


def bracket_positions(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket order for a power-of-two ``size``.

    Seeds 1 and 2 can only meet in the final, 1-4 and 2-3 in the semi-finals,
    and so on (1, 8, 4, 5, 2, 7, 3, 6 for eight).
    """
    if size < 1 or size & (size - 1):
        raise ValueError(f"bracket size must be a power of two, not {size}")
    order = [1]
    while len(order) < size:
        m = 2 * len(order) + 1
        order = [x for s in order for x in (s, m - s)]
    return order


def knockout_first_round(seeded: Sequence[EntrantId]) -> list[Pairing]:
    """First knockout round from entrants in seed order; top seeds get the byes."""
    n = len(seeded)
    if n < 2:
        raise PairingError(say("a knockout needs at least two entrants"))
    size = 1
    while size < n:
        size *= 2
    pos = bracket_positions(size)
    slots: list[EntrantId | None] = [seeded[s - 1] if s <= n else None for s in pos]
    pairs: list[Pairing] = []
    for i in range(0, size, 2):
        a, b = slots[i], slots[i + 1]
        if a is None and b is None:
            continue
        pairs.append(_rr_pair(a, b))
    return pairs


def knockout_next_round(winners: Sequence[EntrantId]) -> list[Pairing]:
    """Next knockout round: winners of matches 1-2, 3-4, ... in bracket order."""
    if len(winners) < 2:
        return []
    if len(winners) % 2:
        raise PairingError(say("{n} winners cannot form a knockout round", n=len(winners)))
    return [Pairing(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]


def series_winner(games: Sequence[tuple[float, float]], best_of: int) -> int | None:
    """0 or 1 once one side has won a majority of a best-of-N series, else None."""
    need = best_of // 2 + 1
    wins = [0, 0]
    for a, b in games:
        if a > b:
            wins[0] += 1
        elif b > a:
            wins[1] += 1
    for side in (0, 1):
        if wins[side] >= need:
            return side
    return None


# ------------------------------------------------------------------ groups


def snake_groups(seeded: Sequence[EntrantId], group_size: int) -> list[list[EntrantId]]:
    """Split entrants (in seed order) into groups by snake seeding (1-8-9, 2-7-10, ...)."""
    if group_size < 2:
        raise PairingError(say("groups need at least two entrants each"))
    count = max(1, -(-len(seeded) // group_size))
    groups: list[list[EntrantId]] = [[] for _ in range(count)]
    for i, e in enumerate(seeded):
        row, col = divmod(i, count)
        groups[col if row % 2 == 0 else count - 1 - col].append(e)
    return groups


def group_stage_rounds(groups: Sequence[Sequence[EntrantId]]) -> list[list[Pairing]]:
    """Round robins of all groups played side by side (round k of every group together)."""
    per_group = [berger_rounds(g) for g in groups]
    depth = max((len(r) for r in per_group), default=0)
    rounds: list[list[Pairing]] = []
    for k in range(depth):
        rnd: list[Pairing] = []
        for gr in per_group:
            if k < len(gr):
                rnd.extend(gr[k])
        rnd.sort(key=lambda p: p.b is None)
        rounds.append(rnd)
    return rounds


def knockout_seeds_from_groups(
    ranked_groups: Sequence[Sequence[EntrantId]], advance: int
) -> list[EntrantId]:
    """Knockout seed order: every group winner, then every runner-up, and so on."""
    seeds: list[EntrantId] = []
    for place in range(advance):
        for g in ranked_groups:
            if place < len(g):
                seeds.append(g[place])
    return seeds


def opponents_map(pairs: Iterable[tuple[EntrantId, EntrantId | None]]) -> Mapping[EntrantId, set[EntrantId]]:
    """Who met whom, from (a, b) pairs of earlier rounds (byes ignored)."""
    met: dict[EntrantId, set[EntrantId]] = {}
    for a, b in pairs:
        if b is None:
            continue
        met.setdefault(a, set()).add(b)
        met.setdefault(b, set()).add(a)
    return met
