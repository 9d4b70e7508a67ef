"""Random playouts of a hand: the computer players' simulations.

Both functions make the moves :meth:`DominoHand.legal_moves` offers, chosen
uniformly, in tight loops over the tile masks (``benchmarks/engine.py``
measures them). They live apart from the hand's rules so that the rules read
plainly; they reach into the hand's state on purpose.
"""

from __future__ import annotations

import random

from tablesense.games.common import HandResult
from tablesense.games.dominoes.scoring import brazilian_result, hand_result, pips_result
from tablesense.games.dominoes.state import _BLOCKED, _DOMINO, _IN_PLAY, HandState
from tablesense.games.dominoes.tiles import (
    _BITS7,
    _DOUBLED_PIPS,
    _DRAWS,
    _HAS,
    _KTH7,
    _LINE_PLAYS,
    _NEXT_SEAT,
    _PASSES,
    _PLAYS,
    _POP7,
    _ROW_OF,
    _SUM,
    ALL_TILES,
    LEFT,
    RIGHT,
    Play,
    _line_play,
    _play,
    _tile_index,
)


def playout(hand: HandState, rng: random.Random) -> None:
    """Play uniformly random legal moves until the hand is over.

    The same moves :meth:`legal_moves` offers (announcements aside), applied
    as :meth:`apply` would, in one tight loop over the tile masks: the
    computer players' simulations and ``benchmarks/engine.py`` use it.
    """
    if hand._state:
        return
    rand = rng.random
    if hand._left < 0:
        if hand.opening.tile is not None:
            hand.apply(_play(hand.to_play, hand.opening.tile.index, 0))
        else:
            plays = [m for m in hand.legal_moves(hand.to_play) if type(m) is Play]
            hand.apply(plays[int(rand() * len(plays))])
        if hand._state:
            return
    held, bone, moves, line = hand._held, hand._bone, hand._moves, hand._line
    n, nb, drawn = hand.seats, len(hand._bone), hand._drawn
    has, sum_, lps, plays_all = _HAS, _SUM, _LINE_PLAYS, _PLAYS
    forbid = hand._forbid_forced
    left, right, s = hand._left, hand._right, hand.to_play
    # every tile off the line, in a hand or still in the boneyard: a draw
    # moves a tile between the two and leaves this mask as it is
    allm = hand._rest()
    state = _IN_PLAY
    while True:
        h = held[s]
        hl, hr = has[left], has[right]
        a, b = h & hl, h & hr
        if not (a | b):
            if drawn < nb:
                t = bone[drawn]
                drawn += 1
                held[s] = h | 1 << t.index
                moves.append(_DRAWS[s * 28 + t.index])
                continue
            moves.append(_PASSES[s])
            s = s + 1 if s + 1 < n else 0
            continue
        na = a.bit_count()
        k = int(rand() * (na + b.bit_count()))
        if k < na:
            mask, e = a, 1
        else:
            mask, e = b, 2
            k -= na
        while k:
            mask &= mask - 1
            k -= 1
        bit = mask & -mask
        i = bit.bit_length() - 1
        if e == 1:
            nl, nr = sum_[i] - left, right
        else:
            nl, nr = left, sum_[i] - right
        if forbid and h != bit and not (allm ^ bit) & (has[nl] | has[nr]):
            # this play blocks the game: legal only if every play does
            keep = []
            for ee, mm in ((1, a), (2, b)):
                while mm:
                    bb = mm & -mm
                    mm ^= bb
                    ii = bb.bit_length() - 1
                    ll, rr = (sum_[ii] - left, right) if ee == 1 else (left, sum_[ii] - right)
                    if (allm ^ bb) & (has[ll] | has[rr]):
                        keep.append((bb, ii, ee, ll, rr))
            if keep:
                bit, i, e, nl, nr = keep[int(rand() * len(keep))]
        h ^= bit
        held[s] = h
        allm ^= bit
        if e == 1:
            line.append(
                lps[((i * 3 + 1) * 4 + s) * 7 + nl] or _line_play(ALL_TILES[i], LEFT, s, nl)
            )
        else:
            line.append(
                lps[((i * 3 + 2) * 4 + s) * 7 + nr] or _line_play(ALL_TILES[i], RIGHT, s, nr)
            )
        moves.append(plays_all[(s * 28 + i) * 3 + e])
        left, right = nl, nr
        s = s + 1 if s + 1 < n else 0
        if not h:
            state = _DOMINO
            break
        if not allm & (has[left] | has[right]):
            state = _BLOCKED
            break
    hand._left, hand._right, hand._drawn = left, right, drawn
    hand._state = state
    hand.to_play = s


def simulate(hand: HandState, rng: random.Random) -> HandResult:
    """The result of one uniformly random playout from here, leaving this
    hand untouched: what :meth:`playout` then :meth:`result` give on a
    clone (the same random draws, the same moves), without recording the
    line. The computer players' simulations and ``benchmarks/engine.py``
    use it.

    It works on a per-number view of the hands: ``rows[s][v]`` has bit
    ``o`` set when seat ``s`` holds the tile ``v-o``, so the plays on an
    end showing ``v`` are the bits of one small integer, and ``cnt[v]``
    says whether anybody can still play on ``v``.
    """
    if hand._state or hand._announced:
        other = hand.clone()
        playout(other, rng)
        return hand_result(other)
    rand = rng.random
    n = hand.seats
    held = hand._held
    r0, r1, r2, r3, r4, r5, r6 = _ROW_OF
    h0, h1, h2, h3, h4, h5, h6 = _HAS
    # rows[s][v] for v in 0..6, and rows[s][7] = how many tiles s holds
    rows = [
        [r0[m & h0], r1[m & h1], r2[m & h2], r3[m & h3], r4[m & h4], r5[m & h5], r6[m & h6]]
        + [m.bit_count()]
        for m in held
    ]
    # cnt[v]: the tiles showing v off the line (in hands or in the boneyard);
    # a draw moves a tile from the boneyard to a hand and leaves it as it is
    allm = hand._rest()
    cnt = [(allm & h).bit_count() for h in _HAS]
    bone = hand._bone
    nb, drawn = len(bone), hand._drawn
    forbid = hand._forbid_forced
    pop, kth, bits = _POP7, _KTH7, _BITS7
    nxt = _NEXT_SEAT[n]
    left, right, s = hand._left, hand._right, hand.to_play
    if left < 0:
        if hand.opening.tile is not None:
            t = hand.opening.tile
        else:
            plays = [m for m in hand.legal_moves(s) if type(m) is Play]
            t = plays[int(rand() * len(plays))].tile
        lo, hi = t.low, t.high
        row = rows[s]
        row[lo] ^= bits[hi]
        cnt[lo] -= 1
        if lo != hi:
            row[hi] ^= bits[lo]
            cnt[hi] -= 1
        row[7] -= 1
        left, right = lo, hi
        last_seat = s
        s = nxt[s]
    else:
        last_seat = hand._line[-1].seat
    x = o = nl = nr = -1
    state = _BLOCKED
    while True:
        row = rows[s]
        a = row[left]
        b = row[right]
        if a or b:
            pa = pop[a]
            k = int(rand() * (pa + pop[b]))
            if k < pa:
                x = left
                o = nl = kth[a][k]
                nr = right
            else:
                x = right
                o = nr = kth[b][k - pa]
                nl = left
            row[x] ^= bits[o]
            cnt[x] -= 1
            if x != o:
                row[o] ^= bits[x]
                cnt[o] -= 1
            c = row[7] - 1
            row[7] = c
            last_seat = s
            if not c:
                state = _DOMINO
                break
            if not (cnt[nl] or cnt[nr]):
                if not forbid:
                    break
                # a block: legal only if every play blocks (take it back, look)
                row[x] ^= bits[o]
                cnt[x] += 1
                if x != o:
                    row[o] ^= bits[x]
                    cnt[o] += 1
                keep = []
                for on_left, xx, mm in ((True, left, a), (False, right, b)):
                    for oo in kth[mm]:
                        ll, rr = (oo, right) if on_left else (left, oo)
                        after_l = cnt[ll] - (ll == xx) - (ll == oo and oo != xx)
                        after_r = cnt[rr] - (rr == xx) - (rr == oo and oo != xx)
                        if after_l or after_r:
                            keep.append((xx, oo, ll, rr))
                if keep:
                    x, o, nl, nr = keep[int(rand() * len(keep))]
                row[x] ^= bits[o]
                cnt[x] -= 1
                if x != o:
                    row[o] ^= bits[x]
                    cnt[o] -= 1
                if not keep:
                    break
            left = nl
            right = nr
            s = nxt[s]
        elif drawn < nb:
            t = bone[drawn]
            drawn += 1
            lo, hi = t.low, t.high
            row[lo] |= bits[hi]
            if lo != hi:
                row[hi] |= bits[lo]
            row[7] += 1
        else:
            s = nxt[s]
    d0, d1, d2, d3, d4, d5, d6 = _DOUBLED_PIPS
    pips = [
        (d0[r[0]] + d1[r[1]] + d2[r[2]] + d3[r[3]] + d4[r[4]] + d5[r[5]] + d6[r[6]]) >> 1
        for r in rows
    ]
    if hand.options.variant == "brazilian-points":
        # the loop ends only right after a play: (x, o) is the last tile
        lo, hi = (x, o) if x <= o else (o, x)
        return brazilian_result(
            hand, pips, state, last_seat, ALL_TILES[_tile_index(lo, hi)], left, right
        )
    return pips_result(hand, pips, state, last_seat)
