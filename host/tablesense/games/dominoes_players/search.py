"""The ``search`` dominoes player: inference, sampled worlds, policy playouts.

For one decision it

1. infers what the table showed about the hidden hands
   (:func:`~tablesense.games.dominoes_players.inference.infer`: passes, draws, the
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
too) and variant-aware through the engine's result. With two sides a
playout's points are valued by what they do to the match
(:mod:`~tablesense.games.dominoes_players.equity`); once the boneyard is empty and
few tiles are left a world is solved exactly instead of played out
(:mod:`~tablesense.games.dominoes_players.endgame`). ``budget_ms`` bounds the
wall time of a decision (the table sets it; ``None`` plays exactly
``worlds`` worlds, which makes a match reproducible for a seed — what the
league in ``benchmarks/players.py`` uses). It never announces a double.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tablesense.games.dominoes import (
    ALL_TILES,
    DominoHand,
    DominoMove,
    Draw,
    Play,
)
from tablesense.games.dominoes.state import _BLOCKED, _DOMINO
from tablesense.games.dominoes_players.endgame import (
    _DOUBLE,
    _DRAWS,
    _PASSES,
    _PIPS,
    _PLAYS,
    _Scorer,
    solve,
    solve_fast,
)
from tablesense.games.dominoes_players.equity import hand_value
from tablesense.games.dominoes_players.inference import HAS, infer, mask_tiles, tile_mask
from tablesense.games.dominoes_players.player import legal_choices

__all__ = ["SearchPlayer", "policy_playout", "solve", "solve_fast"]


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
    weight: float = 1.0,
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
    _policy_run(held, bone, left, right, seat, forbid_block, rng, epsilon, partner, out, weight)
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
    weight: float = 1.0,
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
                v = (
                    weight * _PIPS[i]
                    + (8 if _DOUBLE[i] else 0)
                    + 2 * (rest & has[new]).bit_count()
                    + rand()
                )
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


@dataclass
class SearchPlayer:
    """Inference, sampled worlds and policy playouts (see the module docstring).

    ``worlds``: the most worlds a decision samples; ``playouts``: policy
    playouts per move and world; ``budget_ms``: stop sampling once a
    decision has taken this long (``None``: always ``worlds``, reproducible);
    ``epsilon``: the share of random plays in a playout.
    """

    worlds: int = 240
    """Each doubling has paid against ``montecarlo`` (200 matches a seed,
    seeds 2026 and 2027, docs/players.md): 60 to 120 worlds took
    ``brazilian-points`` from 52 % to 57.5 %, 120 to 240 from 57.5 % to
    60.0 % (with ``exact=14``); sampling a world was made cheap enough for
    this machine to play all 240 within the budget in most decisions."""
    playouts: int = 1
    budget_ms: float | None = 200.0
    """200 ms: on this machine the budget stops one decision in ten or fewer
    before its 240 worlds (2 of 50 and 6 of 53 in two runs of the
    league's measurement; 80 ms stopped one in four, some after 32 worlds);
    decisions take about 45-55 ms median (docs/players.md)."""
    epsilon: float = 0.1
    pips_weight: float = 1.0
    """Playout policy: the weight of a tile's pips against the other terms.
    In ``brazilian-points`` only a blocked hand counts pips, but a quarter
    there measured no better (49.5 % of 200 matches against ``montecarlo``,
    seed 2026, against 52.0 % with 1; docs/players.md)."""
    partner: float = 0.0
    """Playout policy: weight of leaving the partner a play and the next
    opponent none (four seats)."""
    exact: int = 16
    """Solve a world exactly (:func:`solve`) once the boneyard is empty and at
    most this many tiles are left in the hands of four seats (scaled by the
    seats: 8 with two, 12 with three — two seats holding 8 tiles each make a
    far deeper tree than four holding 4). 16 rather than 14: a perfect
    endgame from two plays earlier is worth more than the policy playouts it
    replaces (docs/players.md)."""
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
    played: int = field(default=0, init=False, compare=False)
    """How many worlds the last decision played (fewer than ``worlds`` when
    the budget stopped it): what a benchmark reads to see how often the
    budget binds."""

    def choose(self, hand: DominoHand, seat: int, rng: random.Random) -> DominoMove:
        moves = legal_choices(hand, seat)
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
            moves = legal_choices(hand, seat)
        start = time.perf_counter()
        belief = infer(hand, seat)
        team = hand.team_of(seat)
        value = hand_value(hand, team, self.objective, self.next_match)
        scorer = None if hand.announced else _Scorer(hand, value)
        forbid = getattr(hand.options, "forced_block", "forbidden") == "forbidden"
        weight = self.pips_weight
        totals = [0.0] * len(moves)
        runs = 0.0
        history = _play_history(hand, seat) if self.model else []
        limit = self.exact * hand.seats // 4
        total = sum(hand.count(s) for s in range(hand.seats))
        # solved exactly once at most ``limit`` tiles are left after this move
        exact_now = hand.boneyard_count == 0 and total - 1 <= limit
        worlds = self.worlds
        if exact_now and self.exact_worlds is not None:
            worlds = min(worlds, self.exact_worlds)
        played = 0
        for _ in range(worlds):
            played += 1
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
                        world, team, masks, bone, m, forbid, sub, value, scorer, False, weight
                    )
                world.undo()
            runs += w * self.playouts
            if self.budget_ms is not None and (time.perf_counter() - start) * 1000 > self.budget_ms:
                break
        self.played = played
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
        weight: float = 1.0,
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
                    self.partner, None, weight,
                )
                return scorer(*end, held)
            events = policy_playout(
                held, list(rest), left, right, world.to_play, forbid, rng, self.epsilon,
                self.partner, weight,
            )
            sim = world.clone()
            for e in events:
                sim.apply(e)
            res = sim.result()
        return value(res.points)
