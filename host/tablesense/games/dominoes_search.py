"""The ``search`` dominoes player: inference, sampled worlds, policy playouts.

For one decision it

1. infers what the table showed about the hidden hands
   (:func:`~tablesense.games.dominoes_inference.infer`: passes, draws, the
   opening rule, announced doubles, counts);
2. deals the unseen tiles into worlds that fit all of it (never one the
   table has ruled out), as many as its budget allows;
3. in every world, plays each legal move, then the rest of the hand with a
   *policy* rather than at random: every seat lays doubles early, heavy tiles
   before light ones and keeps numbers it can follow (a few percent of moves
   at random), so the playout resembles the table's play and the estimate of
   a move is not drowned in noise; the same random numbers serve every move
   of a world (common random numbers), so moves are compared on equal luck;
4. scores each playout with the engine's own :meth:`DominoHand.result` — the
   variant's rules, so in ``brazilian-points`` a move that can go out with a
   double, on both ends, or with the announced double is valued at what it
   is worth (cruzada 3, lá-e-lô 2, ...), and a blocked hand at its half point;
5. keeps the move with the best mean of its side's points minus the best
   other side's — the partner's points are the side's, so a move that blocks
   the partner costs what the partner then loses.

It is partner-aware through the scoring (playouts play the partner's tiles
too) and variant-aware through the engine's result. ``budget_ms`` bounds the
wall time of a decision (the table sets it; ``None`` plays exactly
``worlds`` worlds, which makes a match reproducible for a seed — what the
league in ``benchmarks/players.py`` uses). It never announces a double.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from tablesense.games.dominoes import (
    ALL_TILES,
    Announce,
    DominoHand,
    DominoMove,
    Draw,
    Pass,
    Play,
)
from tablesense.games.dominoes.scoring import _BLOCKED, _DOMINO, brazilian_result, pips_result
from tablesense.games.dominoes_inference import HAS, infer, mask_tiles, tile_mask

__all__ = ["SearchPlayer", "policy_playout"]

_SEATS = 4
_PIPS: tuple[int, ...] = tuple(t.pips for t in ALL_TILES)
_DOUBLE: tuple[bool, ...] = tuple(t.is_double for t in ALL_TILES)
_PLAYS: tuple[Play, ...] = tuple(
    Play(s, t, e) for s in range(_SEATS) for t in ALL_TILES for e in ("left", "right")
)
_DRAWS: tuple[Draw, ...] = tuple(Draw(s, t) for s in range(_SEATS) for t in ALL_TILES)
_PASSES: tuple[Pass, ...] = tuple(Pass(s) for s in range(_SEATS))


def _choices(hand: DominoHand, seat: int) -> list[DominoMove]:
    if hand.is_over:
        raise ValueError("the hand is over: there is nothing to choose")
    if seat != hand.to_play:
        raise ValueError(f"it is seat {hand.to_play}'s turn, not seat {seat}'s")
    moves: list[DominoMove] = [m for m in hand.legal_moves(seat) if not isinstance(m, Announce)]
    assert moves, "a seat to play always has a play, a draw or a pass"
    return moves


def policy_playout(
    held: list[int],
    bone: list[int],
    left: int,
    right: int,
    seat: int,
    forbid_block: bool,
    rng: random.Random,
    epsilon: float = 0.1,
    partner: float = 0.0,
) -> list[DominoMove]:
    """Play a hand to its end from an open line with the playout policy.

    ``held``: a tile mask per seat (changed in place); ``bone``: tile indexes
    still to draw, next first; ``seat``: who plays next. Returns the moves, for
    the engine to apply and score. The policy: with probability ``epsilon`` a
    random play, otherwise the play with the best ``pips + 8 (a double) +
    2 x (own tiles left that follow the new end)`` (and, with four seats,
    ``partner`` x (the partner can follow an end, the next opponent cannot,
    half a point per partner tile on the new end)); plays that block the
    game are skipped while another play exists when ``forbid_block`` (the
    engine's ``forced_block: forbidden``). The hand is blocked when no tile
    off the line (in a hand or in the boneyard) fits either end (the record
    format of 2026-12-01); a draw never blocks.
    """
    out: list[DominoMove] = []
    _policy_run(held, bone, left, right, seat, forbid_block, rng, epsilon, partner, out)
    return out


def _policy_run(
    held: list[int],
    bone: list[int],
    left: int,
    right: int,
    seat: int,
    forbid_block: bool,
    rng: random.Random,
    epsilon: float,
    partner: float,
    out: list[DominoMove] | None,
) -> tuple[int, int, int, int, int]:
    """:func:`policy_playout`'s loop; the moves go to ``out`` when given.
    Returns how the hand ended, for :class:`_Scorer`: (state, the last
    seat to play, its tile, the ends before that play)."""
    n = len(held)
    nb = len(bone)
    d = 0
    off = 0  # every tile off the line: in a hand or still in the boneyard
    for h in held:
        off |= h
    for i in bone:
        off |= 1 << i
    rand = rng.random
    has = HAS
    while True:
        h = held[seat]
        a = h & has[left]
        b = h & has[right]
        if not (a | b):
            if d < nb:
                i = bone[d]
                d += 1
                held[seat] = h | 1 << i
                if out is not None:
                    out.append(_DRAWS[seat * 28 + i])
                continue
            if out is not None:
                out.append(_PASSES[seat])
            seat = seat + 1 if seat + 1 < n else 0
            continue
        cands: list[tuple[int, int, int, int]] = []  # (tile, end code, new left, new right)
        m = a
        while m:
            low = m & -m
            m ^= low
            i = low.bit_length() - 1
            cands.append((i, 0, _PIPS[i] - left, right))
        m = b
        while m:
            low = m & -m
            m ^= low
            i = low.bit_length() - 1
            cands.append((i, 1, left, _PIPS[i] - right))
        if forbid_block and len(cands) > 1:
            keep = []
            for c in cands:
                bit = 1 << c[0]
                if h == bit or (off ^ bit) & (has[c[2]] | has[c[3]]):
                    keep.append(c)
            if keep:
                cands = keep
        if len(cands) == 1:
            c = cands[0]
        elif rand() < epsilon:
            c = cands[int(rand() * len(cands))]
        else:
            best = -1e9
            c = cands[0]
            if partner and n == 4:
                mate = held[seat ^ 2]
                nxt = held[seat + 1 if seat < 3 else 0]
            else:
                mate = nxt = 0
            for cc in cands:
                i = cc[0]
                rest = h & ~(1 << i)
                new = cc[2] if cc[1] == 0 else cc[3]
                v = _PIPS[i] + (8 if _DOUBLE[i] else 0) + 2 * (rest & has[new]).bit_count() + rand()
                if mate | nxt:
                    ends = has[cc[2]] | has[cc[3]]
                    v += partner * (
                        bool(mate & ends) - bool(nxt & ends) + 0.5 * (mate & has[new]).bit_count()
                    )
                if v > best:
                    best, c = v, cc
        bl, br = left, right
        i, e, left, right = c
        bit = 1 << i
        h &= ~bit
        held[seat] = h
        off &= ~bit
        if out is not None:
            out.append(_PLAYS[(seat * 28 + i) * 2 + e])
        if not h:
            return _DOMINO, seat, i, bl, br
        if not off & (has[left] | has[right]):
            return _BLOCKED, seat, i, bl, br
        seat = seat + 1 if seat + 1 < n else 0


def solve(
    world: DominoHand,
    held: list[int],
    team: int,
    forbid_block: bool,
    alpha: float = float("-inf"),
    beta: float = float("inf"),
    value: Callable[[tuple], float] | None = None,
) -> float:
    """The exact value of ``world`` (every hand known, boneyard empty) for
    ``team``: ``value`` of the hand's points (default: its points minus the
    best other side's), with the side to move
    maximising when it is ``team``'s and every other side minimising (the
    paranoid reading for three teams). Alpha-beta over the engine's own
    ``apply``/``undo``, scored by the engine's ``result`` at the leaves;
    ``held`` (a tile mask per seat) follows the moves."""
    if world.is_over:
        pts = world.result().points
        if value is not None:
            return value(pts)
        return pts[team] - max(p for k, p in enumerate(pts) if k != team)
    seat = world.to_play
    h = held[seat]
    left = world.left_end
    right = world.right_end
    assert left is not None and right is not None
    a = h & HAS[left]
    b = h & HAS[right]
    if not (a | b):
        world.apply(_PASSES[seat])
        v = solve(world, held, team, forbid_block, alpha, beta, value)
        world.undo()
        return v
    allm = 0
    for x in held:
        allm |= x
    cands: list[tuple[int, int, int, int]] = []
    for mask, e in ((a, 0), (b, 1)):
        while mask:
            low = mask & -mask
            mask ^= low
            i = low.bit_length() - 1
            cands.append(
                (i, e, _PIPS[i] - left, right) if e == 0 else (i, e, left, _PIPS[i] - right)
            )
    if forbid_block and len(cands) > 1:
        keep = [c for c in cands if h == 1 << c[0] or (allm ^ 1 << c[0]) & (HAS[c[2]] | HAS[c[3]])]
        if keep:
            cands = keep
    cands.sort(key=lambda c: -_PIPS[c[0]] - (8 if _DOUBLE[c[0]] else 0))
    maximize = world.team_of(seat) == team
    best = float("-inf") if maximize else float("inf")
    for i, e, _, _ in cands:
        bit = 1 << i
        held[seat] = h & ~bit
        world.apply(_PLAYS[(seat * 28 + i) * 2 + e])
        v = solve(world, held, team, forbid_block, alpha, beta, value)
        world.undo()
        held[seat] = h
        if maximize:
            if v > best:
                best = v
            if best > alpha:
                alpha = best
        else:
            if v < best:
                best = v
            if best < beta:
                beta = best
        if alpha >= beta:
            break
    return best


_CHUNK_PIPS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(_PIPS[7 * c + k] for k in range(7) if r >> k & 1) for r in range(128))
    for c in range(4)
)


def _mask_pips(m: int) -> int:
    c0, c1, c2, c3 = _CHUNK_PIPS
    return c0[m & 127] + c1[m >> 7 & 127] + c2[m >> 14 & 127] + c3[m >> 21]


class _Scorer:
    """The value of a hand that ended in a playout or a solve, from the tile
    masks: the engine's own scoring functions (:func:`pips_result`,
    :func:`brazilian_result`) read ``world`` for the variant and its options
    only — without an announced double — so nothing is applied or cloned.
    Results are cached by what decides them."""

    def __init__(self, world: DominoHand, value: Callable[[tuple], float]) -> None:
        self.world = world
        self.value = value
        self.brazilian = world.options.variant == "brazilian-points"
        self.teams = [world.team_of(s) for s in range(world.seats)]
        self.cache: dict[tuple, float] = {}

    def __call__(self, state: int, seat: int, i: int, bl: int, br: int, held: list[int]) -> float:
        pips = [_mask_pips(h) for h in held]
        if self.brazilian:
            key: tuple = (state, seat, i, bl, br, *pips)
        else:
            key = (state, self.teams[seat], *pips)
        v = self.cache.get(key)
        if v is None:
            if self.brazilian:
                res = brazilian_result(self.world, pips, state, seat, ALL_TILES[i], bl, br)
            else:
                res = pips_result(self.world, pips, state, seat)
            v = self.cache[key] = self.value(res.points)
        return v


def solve_fast(
    world: DominoHand,
    held: list[int],
    team: int,
    forbid_block: bool,
    value: Callable[[tuple], float],
) -> float:
    """What :func:`solve` computes, on tile masks instead of the engine's
    ``apply``/``undo`` (several times faster, so more of the hand is solved
    exactly): the moves are the engine's (a pass when nothing fits; with
    ``forbid_block`` no blocking play while another exists; the hand ends
    when a seat goes out or nothing off the line fits either end), and a
    finished hand is scored by the engine's own scoring functions
    (:func:`pips_result`, :func:`brazilian_result`) on ``world`` — so the
    variant's special wins count. Not for hands with an announced double
    (the scoring then reads the line): :func:`solve` handles those.
    ``tests/games/test_dominoes_search.py`` checks both solvers agree."""
    left = world.left_end
    right = world.right_end
    assert left is not None and right is not None
    n = world.seats
    teams = [world.team_of(s) for s in range(n)]
    has = HAS
    leaf = _Scorer(world, value)

    def rec(left: int, right: int, seat: int, alpha: float, beta: float) -> float:
        while True:
            h = held[seat]
            fit = h & (has[left] | has[right])
            if fit:
                break
            seat = seat + 1 if seat + 1 < n else 0
        allm = 0
        for x in held:
            allm |= x
        cands: list[tuple[int, int, int, int]] = []  # (order key, tile, new left, new right)
        m = fit
        while m:
            low = m & -m
            m ^= low
            i = low.bit_length() - 1
            lead = _PIPS[i] + (8 if _DOUBLE[i] else 0) + (50 if h == low else 0)
            if has[left] & low:
                cands.append((lead, i, _PIPS[i] - left, right))
            if has[right] & low and (left != right):
                cands.append((lead, i, left, _PIPS[i] - right))
        if forbid_block and len(cands) > 1:
            keep = [
                c for c in cands if h == 1 << c[1] or (allm ^ 1 << c[1]) & (has[c[2]] | has[c[3]])
            ]
            if keep:
                cands = keep
        cands.sort(reverse=True)
        maximize = teams[seat] == team
        best = float("-inf") if maximize else float("inf")
        nxt = seat + 1 if seat + 1 < n else 0
        for _, i, nl, nr in cands:
            bit = 1 << i
            held[seat] = h ^ bit
            if h == bit:
                v = leaf(_DOMINO, seat, i, left, right, held)
            elif not (allm ^ bit) & (has[nl] | has[nr]):
                v = leaf(_BLOCKED, seat, i, left, right, held)
            else:
                v = rec(nl, nr, nxt, alpha, beta)
            held[seat] = h
            if maximize:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            elif v < best:
                best = v
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        return best

    if world.is_over:
        return value(world.result().points)
    return rec(left, right, world.to_play, float("-inf"), float("inf"))


def _play_history(hand: DominoHand, seat: int) -> list[tuple[int, int, int, int, int]]:
    """The other seats' plays with a choice to explain: (seat, tile index,
    ends mask at the time, tiles it played later (mask)), oldest first.
    Empty when the hand has a boneyard (a draw hides what a seat held)."""
    if hand.boneyard_count or any(isinstance(m, Draw) for m in hand.moves):
        return []
    line = hand.line
    out: list[tuple[int, int, int, int, int]] = []
    left = right = -1
    for k, lp in enumerate(line):
        i = tile_mask((lp.tile,)).bit_length() - 1
        if lp.end is not None and lp.seat != seat:
            later = 0
            for other in line[k + 1 :]:
                if other.seat == lp.seat:
                    later |= tile_mask((other.tile,))
            out.append((lp.seat, i, left, right, later))
        if lp.end is None:
            left, right = lp.outer, lp.inner
        elif lp.end == "left":
            left = lp.outer
        else:
            right = lp.outer
    return out


def _likelihood(
    history: list[tuple[int, int, int, int, int]], masks: list[int], beta: float
) -> float:
    """How likely the plays of ``history`` are in the world ``masks`` under a
    softmax of ``pips + 8 x double``."""
    like = 1.0
    for s, i, left, right, later in history:
        held = masks[s] | later | 1 << i
        fit = held & (HAS[left] | HAS[right])
        total = 0.0
        mine = 0.0
        while fit:
            low = fit & -fit
            fit ^= low
            j = low.bit_length() - 1
            v = math.exp(beta * (_PIPS[j] + (8 if _DOUBLE[j] else 0)))
            total += v
            if j == i:
                mine = v
        like *= mine / total if total else 1.0
    return like


# --------------------------------------------------------------------------- the match


class MatchEquity:
    """The chance that a side wins the match from a score, for two sides.

    A hand's value is what it does to the match, not its points: 12 points
    are worth a lot at 0-0 and nothing more than 2 once 2 reach the target;
    a blocked half point that lets the other pair reach 4 in
    ``brazilian-points`` loses the match. This table says how much: from
    ``samples`` random hands of the variant (a fixed seed: the same table
    every time) it takes the distribution of one hand's points, symmetric
    between the sides, and solves ``V(us, them)`` = the chance that ``us``
    reaches the target first (strictly ahead, as :class:`DominoMatch`
    ends), hands being independent. Scores are kept in units of 1/4
    (``brazilian-points``: 0.25 is its smallest step) or 1 (pips).

    ``brazilian-points`` also carries into the next match (the lambreta for
    a side that made no point, the points above the target):
    :meth:`final` values that at ``next_match`` times its equity change.
    """

    def __init__(self, hand: DominoHand, samples: int = 3000, next_match: float = 0.25) -> None:
        opts = hand.options
        self.unit = 0.25 if opts.variant == "brazilian-points" else 1.0
        self.target = round(opts.target / self.unit)
        self.brazilian = opts.variant == "brazilian-points"
        self.start = tuple(self._u(x) for x in (opts.start_score or (0, 0)))
        self.lambreta = self._u(getattr(opts, "lambreta", 0))
        self.next_match = next_match if self.brazilian else 0.0
        rng = random.Random(20261201)
        counts: dict[tuple[int, int], int] = {}
        from tablesense.games.dominoes.deal import deal_tiles

        for _ in range(samples):
            hands, bone = deal_tiles(opts.variant, hand.seats, rng)
            pts = DominoHand(opts, hands, bone).simulate(rng).points
            a, b = self._u(pts[0]), self._u(pts[1])
            counts[(a, b)] = counts.get((a, b), 0) + 1
            counts[(b, a)] = counts.get((b, a), 0) + 1
        total = 2 * samples
        null = counts.pop((0, 0), 0) / total
        self._steps = [(c / total / (1 - null), a, b) for (a, b), c in counts.items()]
        self._v: dict[tuple[int, int], float] = {}
        self._fresh = self.win(0, 0)

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
    """The table for the hand's options, built once per process (about 0.1 s)."""
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


@dataclass
class SearchPlayer:
    """Inference, sampled worlds and policy playouts (see the module docstring).

    ``worlds``: the most worlds a decision samples; ``playouts``: policy
    playouts per move and world; ``budget_ms``: stop sampling once a
    decision has taken this long (``None``: always ``worlds``, reproducible);
    ``epsilon``: the share of random plays in a playout.
    """

    worlds: int = 60
    playouts: int = 1
    budget_ms: float | None = 80.0
    epsilon: float = 0.1
    partner: float = 0.0
    """Playout policy: weight of leaving the partner a play and the next
    opponent none (four seats)."""
    exact: int = 14
    """Solve a world exactly (:func:`solve`) once the boneyard is empty and at
    most this many tiles are left in the hands of four seats (scaled by the
    seats: 7 with two, 10 with three — two seats holding 7 tiles each make a
    far deeper tree than four holding 3 or 4)."""
    exact_worlds: int | None = None
    """At most this many worlds once they are solved exactly (an exact world
    costs far more than a playout and varies far less); ``None``: ``worlds``."""
    model: float = 0.0
    """Weight each world by how likely the other seats' past plays are in
    it, if they lay doubles and heavy tiles first (a softmax of ``pips +
    8 x double`` with this inverse temperature); 0: every world that fits
    weighs the same. Only for hands without a boneyard."""
    objective: str = "match"
    """``match``: every playout is worth the side's chance to win the match
    after the hand (:class:`MatchEquity`, from the score before the hand);
    ``hand``: the side's points minus the best other side's (what the coach
    shows)."""
    next_match: float = 0.25
    """``brazilian-points``, objective ``match``: the weight of what a
    finished match carries into the next (the lambreta, the points above
    the target) against winning this one."""
    name: str = "search"

    def choose(self, hand: DominoHand, seat: int, rng: random.Random) -> DominoMove:
        moves = _choices(hand, seat)
        if len(moves) == 1:
            return moves[0]
        if all(isinstance(m, Draw) for m in moves):
            # free draw at a sensing table: any face-down tile, all alike to us
            return moves[rng.randrange(len(moves))]
        return self.evaluate(hand, seat, rng, moves)[0]

    def evaluate(
        self,
        hand: DominoHand,
        seat: int,
        rng: random.Random,
        moves: list[DominoMove] | None = None,
    ) -> tuple[DominoMove, list[tuple[DominoMove, float]]]:
        """The chosen move and every candidate's mean value (side's points
        minus the best other side's, per hand) — what a coach would show."""
        if moves is None:
            moves = _choices(hand, seat)
        start = time.perf_counter()
        belief = infer(hand, seat)
        team = hand.team_of(seat)
        value = hand_value(hand, team, self.objective, self.next_match)
        scorer = None if hand.announced else _Scorer(hand, value)
        forbid = getattr(hand.options, "forced_block", "forbidden") == "forbidden"
        totals = [0.0] * len(moves)
        runs = 0.0
        history = _play_history(hand, seat) if self.model else []
        limit = self.exact * hand.seats // 4
        total = sum(hand.count(s) for s in range(hand.seats))
        exact_now = hand.boneyard_count == 0 and total <= limit
        worlds = self.worlds
        if exact_now and self.exact_worlds is not None:
            worlds = min(worlds, self.exact_worlds)
        for _ in range(worlds):
            try:
                masks, bone = belief.sample(rng)
            except ValueError:
                # facts no deal explains (a misread tile at a sensing table):
                # keep playing on the counts alone
                belief = belief.relaxed()
                masks, bone = belief.sample(rng)
            world = hand.clone([mask_tiles(m) for m in masks], [ALL_TILES[i] for i in bone])
            seed = rng.getrandbits(32)
            w = _likelihood(history, masks, self.model) if history else 1.0
            for k, m in enumerate(moves):
                world.apply(m)
                exact_k = world.boneyard_count == 0 and total - isinstance(m, Play) <= limit
                sub = random.Random(seed)
                if exact_now:
                    totals[k] += (
                        w
                        * self.playouts
                        * self._rollout(world, team, masks, bone, m, forbid, sub, value, scorer, True)
                    )
                    world.undo()
                    continue
                for _ in range(self.playouts):
                    totals[k] += w * self._rollout(
                        world, team, masks, bone, m, forbid, sub, value, scorer, exact_k
                    )
                world.undo()
            runs += w * self.playouts
            if self.budget_ms is not None and (time.perf_counter() - start) * 1000 > self.budget_ms:
                break
        means = [t / runs if runs > 0 else 0.0 for t in totals]
        best = max(means)
        top = [m for m, v in zip(moves, means, strict=True) if v == best]
        return top[rng.randrange(len(top))], list(zip(moves, means, strict=True))

    def _rollout(
        self,
        world: DominoHand,
        team: int,
        masks: list[int],
        bone: list[int],
        move: DominoMove,
        forbid: bool,
        rng: random.Random,
        value: Callable[[tuple], float],
        scorer: _Scorer | None,
        exact: bool,
    ) -> float:
        if world.is_over:
            res = world.result()
        elif exact:
            held = masks[:]
            if isinstance(move, Play):
                held[move.seat] &= ~tile_mask((move.tile,))
            if world.announced:
                return solve(world, held, team, forbid, value=value)
            return solve_fast(world, held, team, forbid, value)
        else:
            held = masks[:]
            left = world.left_end
            right = world.right_end
            assert left is not None and right is not None
            rest = bone
            if isinstance(move, Play):
                held[move.seat] &= ~tile_mask((move.tile,))
            elif isinstance(move, Draw):
                held[move.seat] |= tile_mask((move.tile,))
                rest = bone[1:]
            if scorer is not None:
                end = _policy_run(
                    held, rest, left, right, world.to_play, forbid, rng, self.epsilon,
                    self.partner, None,
                )
                return scorer(*end, held)
            events = policy_playout(
                held, list(rest), left, right, world.to_play, forbid, rng, self.epsilon,
                self.partner,
            )
            sim = world.clone()
            for e in events:
                sim.apply(e)
            res = sim.result()
        return value(res.points)
