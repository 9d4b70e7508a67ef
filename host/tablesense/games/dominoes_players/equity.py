"""What a hand's points are worth to the match: the search player's objective.

A hand's value is what it does to the match, not its points: 12 points are
worth a lot at 0-0 and nothing more than 2 once 2 reach the target; a
blocked half point that lets the other pair reach 4 in ``brazilian-points``
loses the match. :class:`MatchEquity` says how much, :func:`hand_value`
turns it into the value of a finished playout for
:class:`~tablesense.games.dominoes_players.search.SearchPlayer`.
"""

from __future__ import annotations

import dataclasses
import operator
import random
from collections.abc import Callable

from tablesense.games.dominoes import DominoHand
from tablesense.games.dominoes.deal import deal_tiles
from tablesense.games.dominoes.options import DominoOptions
from tablesense.games.dominoes_players.equity_data import STORED

__all__ = ["MatchEquity", "hand_value"]


SEED = 20261201
"""The random hands behind every equity table: the same table every time."""


def sample_counts(
    opts: DominoOptions, seats: int, samples: int
) -> tuple[tuple[int, int, int], ...]:
    """How often each hand score ``(a, b)`` (units: 1/4 in
    ``brazilian-points``, else 1) came out of ``samples`` random hands of
    the variant (:meth:`DominoHand.simulate`, seed :data:`SEED`), counted
    both ways round (the sides are alike): ``(a, b, count)`` in the order
    first seen."""
    unit = 0.25 if opts.variant == "brazilian-points" else 1.0
    rng = random.Random(SEED)
    counts: dict[tuple[int, int], int] = {}
    for _ in range(samples):
        hands, bone = deal_tiles(opts.variant, seats, rng)
        pts = DominoHand(opts, hands, bone).simulate(rng).points
        a, b = round(pts[0] / unit), round(pts[1] / unit)
        counts[(a, b)] = counts.get((a, b), 0) + 1
        counts[(b, a)] = counts.get((b, a), 0) + 1
    return tuple((a, b, c) for (a, b), c in counts.items())


_COUNTS: dict[tuple[DominoOptions, int, int], tuple[tuple[int, int, int], ...]] = {}


def hand_counts(opts: DominoOptions, seats: int, samples: int) -> tuple[tuple[int, int, int], ...]:
    """:func:`sample_counts`, from the stored table for a variant's default
    options (a hand's points do not depend on the match's start score),
    else sampled once per process."""
    base = dataclasses.replace(opts, start_score=None)
    key = (base, seats, samples)
    out = _COUNTS.get(key)
    if out is None:
        stored = STORED.get((opts.variant, seats, samples))
        if stored is not None and base == DominoOptions.from_dict(opts.variant):
            out = stored
        else:
            out = sample_counts(opts, seats, samples)
        _COUNTS[key] = out
    return out


class MatchEquity:
    """The chance that a side wins the match from a score, for two sides.

    From ``samples`` random hands of the variant (a fixed seed: the same
    table every time) it takes the distribution of one hand's points,
    symmetric between the sides, and solves ``V(us, them)`` = the chance
    that ``us`` reaches the target first (strictly ahead, as
    :class:`DominoMatch` ends), hands being independent. Scores are kept in
    units of 1/4 (``brazilian-points``: 0.25 is its smallest step) or 1
    (pips).

    ``brazilian-points`` also carries into the next match (the lambreta for
    a side that made no point, the points above the target):
    :meth:`final` values that at ``next_match`` times its equity change.

    The table is built on a seat's first decision of a match in the
    variant, so it must be cheap (the issue's 400 ms worst decision): the
    distribution for a variant's default options is stored
    (:mod:`~tablesense.games.dominoes_players.equity_data`, the same seeded hands;
    sampling them takes 0.1-0.2 s), and :meth:`_fill` solves the table in a
    few milliseconds.
    """

    def __init__(self, hand: DominoHand, samples: int = 3000, next_match: float = 0.25) -> None:
        opts = hand.options
        self.unit = 0.25 if opts.variant == "brazilian-points" else 1.0
        self.target = round(opts.target / self.unit)
        self.brazilian = opts.variant == "brazilian-points"
        self.start = tuple(self._u(x) for x in (opts.start_score or (0, 0)))
        self.lambreta = self._u(getattr(opts, "lambreta", 0))
        self.next_match = next_match if self.brazilian else 0.0
        counts = {(a, b): c for a, b, c in hand_counts(opts, hand.seats, samples)}
        total = 2 * samples
        null = counts.pop((0, 0), 0) / total
        self._steps = [(c / total / (1 - null), a, b) for (a, b), c in counts.items()]
        self._v: dict[tuple[int, int], float] = {}
        self._grid: list[list[float]] | None = None
        if all(a >= 0 and b >= 0 for _, a, b in self._steps):
            self._grid = self._fill()
        self._fresh = self.win(0, 0)

    def _fill(self) -> list[list[float]]:
        """``V`` for every score below the target, filled from the target
        down (every step adds points, so a state needs only higher ones).
        A hand where one side alone scores at least what it lacks ends the
        match, so only the steps below that are summed, as dot products of
        the step distribution with a row or a column of the table: a few
        milliseconds for pips to 50 (the table is built on a seat's first
        decision of a match in the variant, within the issue's 400 ms)."""
        t_max = self.target
        solo = [0.0] * (t_max + 1)  # solo[a]: one given side alone scores a
        tail = 0.0  # one given side alone scores the target or more
        other: list[tuple[float, int, int]] = []  # both score (a tied count)
        for p, a, b in self._steps:
            if b == 0:
                if a >= t_max:
                    tail += p
                else:
                    solo[a] += p
            elif a and b:
                other.append((p, a, b))
        # tails[k]: one side alone scores k or more (so reaches the target from t_max - k)
        tails = [0.0] * (t_max + 2)
        tails[t_max] = tail
        for k in range(t_max - 1, 0, -1):
            tails[k] = tails[k + 1] + solo[k]
        grid = [[0.0] * t_max for _ in range(t_max)]
        mul = operator.mul
        for u in range(t_max - 1, -1, -1):
            # ``us`` alone scores a and the match goes on: column sums
            acc = [0.0] * t_max
            for a in range(1, t_max - u):
                if solo[a]:
                    q = solo[a]
                    acc = [x + q * y for x, y in zip(acc, grid[u + a], strict=True)]
            row = grid[u]
            won = tails[t_max - u]  # ``us`` alone reaches the target
            for t in range(t_max - 1, -1, -1):
                if t == u:
                    row[t] = 0.5  # the hand's points are symmetric between the sides
                    continue
                # ``them`` alone scores a and the match goes on (at the target: lost)
                v = acc[t] + won + sum(map(mul, solo[1 : t_max - t], row[t + 1 :]))
                for p, a, b in other:
                    x, y = u + a, t + b
                    if x < t_max and y < t_max:
                        v += p * grid[x][y]
                    elif x == y:
                        v += p * 0.5
                    elif x > y:
                        v += p
                row[t] = v
        return grid

    def _u(self, x: float) -> int:
        return round(x / self.unit)

    def over(self, us: int, them: int) -> bool:
        return max(us, them) >= self.target and us != them

    def win(self, us: int, them: int) -> float:
        """The chance that ``us`` wins from this score (units), before a hand."""
        if self.over(us, them):
            return 1.0 if us > them else 0.0
        if us == them:
            return 0.5  # the hand's points are symmetric between the sides
        if self._grid is not None and us >= 0 and them >= 0:
            return self._grid[us][them]
        key = (us, them)
        v = self._v.get(key)
        if v is None:
            v = sum(p * self.win(us + a, them + b) for p, a, b in self._steps)
            self._v[key] = v
        return v

    def final(self, us: int, them: int) -> float:
        """The value of a finished match (units): 1 or 0, and what it carries
        into the next one (``brazilian-points``)."""
        won = 1.0 if us > them else 0.0
        if not self.next_match:
            return won
        carry = []
        for side, (s, start) in enumerate(((us, self.start[0]), (them, self.start[1]))):
            lost = (side == 0) != (us > them)
            if lost and s - start <= 0:
                carry.append(self.lambreta)
            elif s > self.target:
                carry.append(s - self.target)
            else:
                carry.append(0)
        return won + self.next_match * (self.win(carry[0], carry[1]) - self._fresh)


_EQUITY: dict[tuple[object, int, float], MatchEquity] = {}


def _equity(hand: DominoHand, next_match: float) -> MatchEquity:
    """The table for the hand's options, built once per process."""
    key = (hand.options, hand.seats, next_match)
    eq = _EQUITY.get(key)
    if eq is None:
        eq = _EQUITY[key] = MatchEquity(hand, next_match=next_match)
    return eq


def hand_value(
    hand: DominoHand, team: int, objective: str, next_match: float = 0.25
) -> Callable[[tuple], float]:
    """What a finished playout is worth to ``team``: a function of the hand's
    points per team. ``hand``: the side's points minus the best other
    side's; ``match``: the side's chance to win the match after the hand
    (:class:`MatchEquity`; two sides only — with three the hand's points)."""
    if objective == "hand" or hand.teams != 2:

        def points(pts: tuple) -> float:
            mine = pts[team]
            return mine - max(p for k, p in enumerate(pts) if k != team)

        return points
    if objective != "match":
        raise ValueError(f"objective is 'match' or 'hand', not {objective!r}")
    eq = _equity(hand, next_match)
    before = hand.score_before or hand.options.start_score or (0, 0)
    us0 = before[team]
    them0 = before[1 - team]
    u = eq.unit
    cache: dict[tuple, float] = {}

    def match(pts: tuple) -> float:
        v = cache.get(pts)
        if v is None:
            us = round((us0 + pts[team]) / u)
            them = round((them0 + pts[1 - team]) / u)
            v = eq.final(us, them) if eq.over(us, them) else eq.win(us, them)
            cache[pts] = v
        return v

    return match
