"""Pairing formats: Swiss, round robin (Berger tables), knockout and groups.

Pure functions over entrant ids: no database, no clock. The director feeds them
the standings and the history of who met whom, and stores what they return.

Swiss is a minimum-cost perfect matching (dominoes and Kems have no colours,
so unlike chess there is nothing to balance but scores): the cost of pairing
two entrants grows with the square of their score difference, a rematch is
forbidden, and the pairing bye (odd field) is a virtual entrant that prefers
the lowest-ranked entrant who has not had one. The matching is computed on a
sparse graph (each entrant linked to its nearest eligible neighbours in rank
order) that is widened until a perfect matching exists, so a 1,000-entrant
round stays well under two seconds; see docs/tournament.md.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

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
    entrants: Sequence[EntrantId], *, seeded: bool, rng: random.Random
) -> list[Pairing]:
    """Round one: drawn (shuffled, then 1-2, 3-4, ...) or seeded (top half v bottom half).

    With an odd field the last entrant of the drawn order (the lowest seed when
    seeded) gets the bye.
    """
    order = list(entrants)
    if not seeded:
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
    neighbours: int = 6,
    exact_up_to: int = 80,
    window: int = 64,
    allow_rematch: bool = False,
) -> list[Pairing]:
    """Pair one Swiss round (not the first) by minimum-cost perfect matching.

    Fields of up to ``exact_up_to`` entrants are matched on the complete graph
    (the exact optimum). Larger fields are matched on a sparse candidate
    graph (each entrant linked to its ``neighbours`` nearest eligible
    entrants below it in rank order, widened until a perfect matching
    exists), solved in overlapping windows of ``window`` consecutive ranks:
    a first pass matches each window exactly, a second pass re-solves
    windows shifted by half a window together with the partners of their
    members, keeping any cheaper pairing. Since the cost grows with the
    square of the score gap, an optimal pairing only links entrants close in
    rank, which is why this finds the global optimum in practice (the tests
    and the benchmark compare it with the one-shot matching). Raises
    :class:`PairingError` when no pairing avoids a rematch (and
    ``allow_rematch`` is false) or when every entrant has had the bye.
    """
    ordered = sorted(players, key=lambda p: p.rank)
    n = len(ordered)
    if n == 0:
        return []
    if n == 1:
        if ordered[0].had_bye and not allow_rematch:
            raise PairingError("one entrant left, and it has already had the bye")
        return [Pairing(ordered[0].id, None)]
    odd = n % 2 == 1
    if n <= exact_up_to:
        pairs = _solve(ordered, odd, None, allow_rematch)
    elif window <= 0 or n <= 2 * window:
        pairs = _solve_widening(ordered, odd, neighbours, allow_rematch)
    else:
        pairs = _windowed(ordered, odd, neighbours, window, allow_rematch)
    if pairs is None:
        what = "the bye or " if odd else ""
        raise PairingError(
            f"no pairing of {n} entrants avoids {what}a rematch; allow rematches or end the Swiss phase"
        )
    rank_of = {p.id: p.rank for p in ordered}
    pairs.sort(key=lambda pr: (pr.b is None, rank_of[pr.a]))
    return pairs


def _solve(
    group: Sequence[SwissPlayer], bye: bool, k: int | None, allow_rematch: bool
) -> list[Pairing] | None:
    """Minimum-cost perfect matching of ``group`` (in rank order), plus a bye node
    if ``bye``; ``k`` None means the complete graph. None when no perfect matching."""
    import networkx as nx

    n = len(group)
    total = n + (1 if bye else 0)
    if total % 2:
        return None
    full = k is None or k >= n
    edges: list[tuple[int, int, int]] = []
    for i, p in enumerate(group):
        found = 0
        for j in range(i + 1, n):
            q = group[j]
            rematch = q.id in p.opponents
            if rematch and not allow_rematch:
                continue
            edges.append((i, j, pair_cost(p, q) + (10**12 if rematch else 0)))
            found += 1
            if not full and k is not None and found >= k:
                break
    if bye:
        found = 0
        for i in range(n - 1, -1, -1):
            if group[i].had_bye:
                continue
            edges.append((i, n, _bye_cost(group[i], n)))
            found += 1
            if not full and k is not None and found >= k:
                break
    if not edges:
        return None
    big = max(c for _, _, c in edges) + 1
    graph = nx.Graph()
    graph.add_nodes_from(range(total))
    graph.add_weighted_edges_from((i, j, big - c) for i, j, c in edges)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) != total:
        return None
    pairs: list[Pairing] = []
    for u, v in matching:
        i, j = (u, v) if u < v else (v, u)
        pairs.append(Pairing(group[i].id, None) if j == n else Pairing(group[i].id, group[j].id))
    return pairs


def _solve_widening(
    group: Sequence[SwissPlayer], bye: bool, k: int, allow_rematch: bool
) -> list[Pairing] | None:
    k = max(1, k)
    while True:
        res = _solve(group, bye, k, allow_rematch)
        if res is not None or k >= len(group):
            return res
        k *= 2


def _cost(pairs: Sequence[Pairing], by_id: Mapping[EntrantId, SwissPlayer], n: int) -> int:
    total = 0
    for p in pairs:
        if p.b is None:
            total += _bye_cost(by_id[p.a], n)
        else:
            a, b = by_id[p.a], by_id[p.b]
            total += pair_cost(a, b) + (10**12 if b.id in a.opponents else 0)
    return total


def _windowed(
    ordered: Sequence[SwissPlayer], odd: bool, k: int, window: int, allow_rematch: bool
) -> list[Pairing] | None:
    n = len(ordered)
    by_id = {p.id: p for p in ordered}
    pairs: list[Pairing] = []
    i = 0
    while i < n:
        j = min(n, i + window)
        if n - j < window // 2:
            j = n
        while True:
            bye = odd and j == n
            if (j - i + (1 if bye else 0)) % 2:
                j += 1
                continue
            res = _solve_widening(ordered[i:j], bye, k, allow_rematch)
            if res is not None:
                break
            if j == n:
                # No pairing inside the tail windows: one matching over everyone left.
                return _solve_widening(ordered, odd, k, allow_rematch) if i > 0 else None
            j = min(n, j + window)
        pairs.extend(res)
        i = j
    # Second pass: windows straddling the first pass's borders, closed under the pairing.
    partner: dict[EntrantId, Pairing] = {}
    for p in pairs:
        partner[p.a] = p
        if p.b is not None:
            partner[p.b] = p
    rank_pos = {p.id: i for i, p in enumerate(ordered)}
    for start in range(window // 2, n, window):
        members = {p.id for p in ordered[start : start + window]}
        block = {partner[e] for e in members}
        ids = sorted({x for p in block for x in (p.a, p.b) if x is not None}, key=rank_pos.__getitem__)
        bye = any(p.b is None for p in block)
        group = [by_id[e] for e in ids]
        res = _solve_widening(group, bye, k, allow_rematch)
        if res is not None and _cost(res, by_id, n) < _cost(list(block), by_id, n):
            for p in block:
                pairs.remove(p)
            pairs.extend(res)
            for p in res:
                partner[p.a] = p
                if p.b is not None:
                    partner[p.b] = p
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
        raise PairingError("a knockout needs at least two entrants")
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
        raise PairingError(f"{len(winners)} winners cannot form a knockout round")
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
        raise PairingError("groups need at least two entrants each")
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
