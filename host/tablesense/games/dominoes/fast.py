"""The fast playout: deal a fresh hand and play it out at random.

:func:`simulate_deal` answers the Monte Carlo question "what does a random
hand give?" without building a :class:`DominoHand` for ``pairs-pips``; it must
stay move-for-move equal to the public engine (``tests/games/test_dominoes_fast.py``
replays its traces through :class:`DominoHand`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from operator import itemgetter
from typing import NamedTuple, TypeAlias

from tablesense.games.common import HandResult
from tablesense.games.dominoes.deal import deal_tiles
from tablesense.games.dominoes.hand import DominoHand
from tablesense.games.dominoes.options import _SEATS, DominoOptions
from tablesense.games.dominoes.scoring import _score_pips
from tablesense.games.dominoes.state import _BLOCKED, _DOMINO
from tablesense.games.dominoes.tiles import (
    _KTH7,
    _PASSES,
    _PLAYS,
    ALL_TILES,
    DominoMove,
    Play,
    Tile,
)

# A lean view for :func:`simulate_deal`: a seat's tiles as one 49-bit integer
# whose bit ``7 * v + o`` is set when it holds the tile ``v-o`` (a plain tile
# sets two bits, a double one), so ``h >> 7 * v & 127`` is the row of plays on
# an end showing ``v``, and the tiles of a deal are disjoint bit patterns that
# add up.
_PAIR_AT: tuple[int, ...] = tuple(
    1 << 7 * x + o | 1 << 7 * o + x for x in range(7) for o in range(7)
)
"""``_PAIR_AT[7 * x + o]``: the pattern of the tile ``x-o``."""
_PAIR: tuple[int, ...] = tuple(_PAIR_AT[7 * t.low + t.high] for t in ALL_TILES)
_PAIR_INDEX: dict[int, int] = {p: i for i, p in enumerate(_PAIR)}
_PAIR_ALL = sum(_PAIR)
_PAIR_66 = _PAIR[27]
_Play3: TypeAlias = tuple[int, int, int]


class _FastTables(NamedTuple):
    picks: tuple[tuple[tuple[int, tuple[_Play3, ...]], ...], ...]
    """``picks[a][b]``: (count, plays) for the rows ``a`` (left end) and ``b``
    (right end) of the seat to play; a play is (1 for the left end else 0, the
    new end ``o``, ``7 * o``)."""
    pairs: tuple[tuple[tuple[int, int], ...], ...]
    """For pools of 28, 26, ..., 16 tiles: ``k < n (n - 1)`` as the two
    positions ``(k // (n - 1), k % (n - 1))`` to remove one after the other."""
    halves: tuple[Callable[[Sequence[int]], tuple[int, ...]], ...]
    """The C(14, 7) = 3432 ways to take 7 of 14 tiles."""
    dpips: tuple[tuple[int, ...], ...]
    """Twice the pips of rows 0-1, 2-3, 4-5 (14-bit chunks) and row 6."""


_FAST: _FastTables | None = None


def _fast_tables() -> _FastTables:
    """Built on the first :func:`simulate_deal` (about 4 MB, 50 ms), so that
    importing the engine stays cheap for the referee and the web display."""
    global _FAST
    if _FAST is None:
        lefts = [tuple((1, o, 7 * o) for o in _KTH7[a]) for a in range(128)]
        rights = [tuple((0, o, 7 * o) for o in _KTH7[b]) for b in range(128)]
        picks = tuple(tuple((len(la) + len(rb), la + rb) for rb in rights) for la in lefts)
        shared = {(i, j): (i, j) for i in range(28) for j in range(27)}
        pairs = tuple(
            tuple(shared[k // (n - 1), k % (n - 1)] for k in range(n * (n - 1)))
            for n in range(28, 15, -2)
        )
        halves = tuple(itemgetter(*c) for c in combinations(range(14), 7))
        rows = [
            tuple(
                sum(2 * (v + o) if o == v else v + o for o in range(7) if r >> o & 1)
                for r in range(128)
            )
            for v in range(7)
        ]
        dpips = (
            *(tuple(x + y for y in rows[v + 1] for x in rows[v]) for v in (0, 2, 4)),
            rows[6],
        )
        _FAST = _FastTables(picks, pairs, halves, dpips)
    return _FAST


def _fast_move(seat: int, t: int, side: int) -> Play:
    """The interned :class:`Play` of ``seat`` laying the tile of pattern ``t``
    on the left end (``side`` 1) or the right one (0), for traces."""
    return _PLAYS[((seat & 3) * 28 + _PAIR_INDEX[t]) * 3 + 2 - side]


def _fast_unblock(
    h: int,
    allm: int,
    sl: int,
    sr: int,
    side: int,
    o: int,
    t: int,
    plays: tuple[_Play3, ...],
    g: Callable[[int], int],
) -> tuple[int, int, int, int] | None:
    """The play (tile, left shift, right shift, side) that replaces a blocking
    one when ``forced_block`` is ``forbidden``: uniform over the seat's plays
    that do not block (or go out), None when every play blocks. ``h``,
    ``allm`` are the state before the blocking play, ``sl``/``sr`` after it."""
    tile = ALL_TILES[_PAIR_INDEX[t]]
    if side:
        sl = 7 * (tile.low + tile.high - o)
    else:
        sr = 7 * (tile.low + tile.high - o)
    keep: list[tuple[int, int, int, int]] = []
    for s2, o2, o72 in plays:
        if s2:
            t2, l2, r2 = _PAIR_AT[sl + o2], o72, sr
        else:
            t2, l2, r2 = _PAIR_AT[sr + o2], sl, o72
        rest = allm ^ t2
        if h == t2 or rest >> l2 & 127 or rest >> r2 & 127:
            keep.append((t2, l2, r2, s2))
    if not keep:
        return None
    return keep[g(32) * len(keep) >> 32]


@dataclass(slots=True)
class PlayoutTrace:
    """What :func:`simulate_deal` dealt and played, to check it against
    :class:`DominoHand` or to look at it."""

    deal: list[list[Tile]] = field(default_factory=list)
    boneyard: list[Tile] = field(default_factory=list)
    """``pips-two-player``: the tiles left to draw, next first."""
    moves: list[DominoMove] = field(default_factory=list)


def simulate_deal(
    options: DominoOptions, rng: random.Random, trace: PlayoutTrace | None = None
) -> HandResult:
    """Deal a fresh first hand of a match and play uniformly random legal moves
    to its end; its result, as :meth:`DominoHand.result` scores it.

    The Monte Carlo question "what does a random hand give?" and
    ``benchmarks/engine.py`` ask it. For ``pairs-pips`` it never builds a
    :class:`DominoHand`: the deal goes straight into 49-bit seat patterns and
    the playout loop is unrolled over the four seats. The moves are the ones
    :meth:`DominoHand.legal_moves` offers (``forced_block`` included), each
    chosen uniformly. Random numbers are ``rng.getrandbits(k)`` scaled to
    ``n`` choices (``x * n >> k``): the deal uses ``k = 32`` (``n`` up to
    3432, relative bias below 1e-6), a play ``k = 26``, which keeps the
    product in one machine digit (``n <= 14``: bias below ``14 / 2**26``,
    2e-7); both are far below anything a playout can measure. With
    ``trace``, the deal and the moves are written to it (tests replay them
    through :class:`DominoHand`). Other variants take the general path
    (:meth:`DominoHand.simulate`).
    """
    variant = options.variant
    if variant != "pairs-pips":
        hands, bone = deal_tiles(variant, _SEATS[variant][0], rng)
        hand = DominoHand(options, hands, bone)
        if trace is None:
            return hand.simulate(rng)
        trace.deal = [list(h) for h in hand.deal]
        trace.boneyard = list(bone)
        hand.playout(rng)
        trace.moves = hand.moves
        return hand.result()
    picks, pairs, halves, (d01, d23, d45, d6) = _FAST or _fast_tables()
    p = list(_PAIR)
    g = rng.getrandbits
    pop = p.pop
    # A uniform deal: seats 0 and 1 take 7 tiles each, removed one by one at
    # uniform positions (two per draw, through the position pairs); seat 2
    # takes a uniform 7 of the 14 left, seat 3 the rest.
    t28, t26, t24, t22, t20, t18, t16 = pairs
    a, b = t28[g(32) * 756 >> 32]
    c, d = t26[g(32) * 650 >> 32]
    e, f = t24[g(32) * 552 >> 32]
    i, j = t22[g(32) * 462 >> 32]
    k, m = t20[g(32) * 380 >> 32]
    q, r = t18[g(32) * 306 >> 32]
    u, w = t16[g(32) * 240 >> 32]
    h0 = pop(a) + pop(b) + pop(c) + pop(d) + pop(e) + pop(f) + pop(i)
    h1 = pop(j) + pop(k) + pop(m) + pop(q) + pop(r) + pop(u) + pop(w)
    h2 = sum(halves[g(32) * 3432 >> 32](p))
    h3 = _PAIR_ALL - h0 - h1 - h2
    moves: list[DominoMove] = []
    rec = trace is not None
    if trace is not None:
        trace.deal = [[t for t in ALL_TILES if h & _PAIR[t.index]] for h in (h0, h1, h2, h3)]
        trace.moves = moves
    # The holder of 6-6 opens with it; slot k is then seat (op + 1 + k) % 4.
    if h0 >> 48:
        op, h0, h1, h2, h3 = 0, h1, h2, h3, h0
    elif h1 >> 48:
        op, h0, h1, h2, h3 = 1, h2, h3, h0, h1
    elif h2 >> 48:
        op, h0, h1, h2, h3 = 2, h3, h0, h1, h2
    else:
        op = 3
    h3 ^= _PAIR_66
    if rec:
        moves.append(_PLAYS[(op * 28 + 27) * 3])
    allm = _PAIR_ALL ^ _PAIR_66
    sl = sr = 42  # 7 * the number on each end
    pair_at = _PAIR_AT
    forbid = options.forced_block == "forbidden"
    t = side = last = 0
    state = _BLOCKED
    while True:
        n, c = picks[h0 >> sl & 127][h0 >> sr & 127]
        if n:
            side, o, o7 = c[g(26) * n >> 26] if n > 1 else c[0]
            if side:
                t = pair_at[sl + o]
                sl = o7
            else:
                t = pair_at[sr + o]
                sr = o7
            h0 ^= t
            allm ^= t
            if not h0:
                last, state = 0, _DOMINO
                break
            if not (allm >> sl & 127 or allm >> sr & 127):
                last, state = 0, _BLOCKED
                if not forbid or n == 1:
                    break
                pick = _fast_unblock(h0 ^ t, allm ^ t, sl, sr, side, o, t, c, g)
                if pick is None:
                    break
                h0 ^= t
                allm ^= t
                t, sl, sr, side = pick
                h0 ^= t
                allm ^= t
                if not h0:
                    state = _DOMINO
                    break
            if rec:
                moves.append(_fast_move(op + 1, t, side))
        elif rec:
            moves.append(_PASSES[(op + 1) & 3])
        n, c = picks[h1 >> sl & 127][h1 >> sr & 127]
        if n:
            side, o, o7 = c[g(26) * n >> 26] if n > 1 else c[0]
            if side:
                t = pair_at[sl + o]
                sl = o7
            else:
                t = pair_at[sr + o]
                sr = o7
            h1 ^= t
            allm ^= t
            if not h1:
                last, state = 1, _DOMINO
                break
            if not (allm >> sl & 127 or allm >> sr & 127):
                last, state = 1, _BLOCKED
                if not forbid or n == 1:
                    break
                pick = _fast_unblock(h1 ^ t, allm ^ t, sl, sr, side, o, t, c, g)
                if pick is None:
                    break
                h1 ^= t
                allm ^= t
                t, sl, sr, side = pick
                h1 ^= t
                allm ^= t
                if not h1:
                    state = _DOMINO
                    break
            if rec:
                moves.append(_fast_move(op + 2, t, side))
        elif rec:
            moves.append(_PASSES[(op + 2) & 3])
        n, c = picks[h2 >> sl & 127][h2 >> sr & 127]
        if n:
            side, o, o7 = c[g(26) * n >> 26] if n > 1 else c[0]
            if side:
                t = pair_at[sl + o]
                sl = o7
            else:
                t = pair_at[sr + o]
                sr = o7
            h2 ^= t
            allm ^= t
            if not h2:
                last, state = 2, _DOMINO
                break
            if not (allm >> sl & 127 or allm >> sr & 127):
                last, state = 2, _BLOCKED
                if not forbid or n == 1:
                    break
                pick = _fast_unblock(h2 ^ t, allm ^ t, sl, sr, side, o, t, c, g)
                if pick is None:
                    break
                h2 ^= t
                allm ^= t
                t, sl, sr, side = pick
                h2 ^= t
                allm ^= t
                if not h2:
                    state = _DOMINO
                    break
            if rec:
                moves.append(_fast_move(op + 3, t, side))
        elif rec:
            moves.append(_PASSES[(op + 3) & 3])
        n, c = picks[h3 >> sl & 127][h3 >> sr & 127]
        if n:
            side, o, o7 = c[g(26) * n >> 26] if n > 1 else c[0]
            if side:
                t = pair_at[sl + o]
                sl = o7
            else:
                t = pair_at[sr + o]
                sr = o7
            h3 ^= t
            allm ^= t
            if not h3:
                last, state = 3, _DOMINO
                break
            if not (allm >> sl & 127 or allm >> sr & 127):
                last, state = 3, _BLOCKED
                if not forbid or n == 1:
                    break
                pick = _fast_unblock(h3 ^ t, allm ^ t, sl, sr, side, o, t, c, g)
                if pick is None:
                    break
                h3 ^= t
                allm ^= t
                t, sl, sr, side = pick
                h3 ^= t
                allm ^= t
                if not h3:
                    state = _DOMINO
                    break
            if rec:
                moves.append(_fast_move(op + 4, t, side))
        elif rec:
            moves.append(_PASSES[(op + 4) & 3])

    if rec:
        moves.append(_fast_move(op + 1 + last, t, side))
    m = h0 | h2
    pa = (d01[m & 16383] + d23[m >> 14 & 16383] + d45[m >> 28 & 16383] + d6[m >> 42]) >> 1
    m = h1 | h3
    pb = (d01[m & 16383] + d23[m >> 14 & 16383] + d45[m >> 28 & 16383] + d6[m >> 42]) >> 1
    if op & 1:  # slot 0 is seat op + 1, of side 0
        return _score_pips(options, pa, pb, state, last & 1)
    return _score_pips(options, pb, pa, state, (last & 1) ^ 1)
