"""The search player's tile tables, playout scorer and endgame solvers.

Once the boneyard is empty and few tiles are left, :class:`SearchPlayer
<tablesense.games.dominoes_players.search.SearchPlayer>` solves each sampled world
exactly instead of playing it out: :func:`solve_fast` (alpha-beta on tile
masks, scored by the engine's own scoring functions through
:class:`_Scorer`) and :func:`solve` (the same on the engine's
``apply``/``undo``, for hands with an announced double and as the reference
the tests compare against). The tables (pips, doubles, one move object per
seat and tile) serve the playout too.
"""

from __future__ import annotations

from collections.abc import Callable

from tablesense.games.dominoes import ALL_TILES, DominoHand, Draw, Pass, Play
from tablesense.games.dominoes.scoring import brazilian_result, pips_result
from tablesense.games.dominoes.state import _BLOCKED, _DOMINO
from tablesense.games.dominoes_players.inference import HAS

__all__ = ["solve", "solve_fast"]

_SEATS = 4
_PIPS: tuple[int, ...] = tuple(t.pips for t in ALL_TILES)
_DOUBLE: tuple[bool, ...] = tuple(t.is_double for t in ALL_TILES)
_PLAYS: tuple[Play, ...] = tuple(
    Play(s, t, e) for s in range(_SEATS) for t in ALL_TILES for e in ("left", "right")
)
_DRAWS: tuple[Draw, ...] = tuple(Draw(s, t) for s in range(_SEATS) for t in ALL_TILES)
_PASSES: tuple[Pass, ...] = tuple(Pass(s) for s in range(_SEATS))


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
