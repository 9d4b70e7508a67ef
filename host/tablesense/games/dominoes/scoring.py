"""Scoring per variant, and who opens the next hand.

``pairs-pips`` and ``pips-two-player`` count pips (:func:`score_pips`, shared
with the fast playout); ``brazilian-points`` scores match points by how the
hand was won (:func:`brazilian_result`). The functions read a finished
:class:`~tablesense.games.dominoes.state.HandState`; they never change it.
"""

from __future__ import annotations

from tablesense.games.common import HandResult, Points, say
from tablesense.games.dominoes.options import DominoOptions, Opening
from tablesense.games.dominoes.state import (
    _BLOCKED,
    _DOMINO,
    _LOCOMOTIVA,
    _SEVEN_DOUBLES,
    HandState,
)
from tablesense.games.dominoes.tiles import DOUBLE_BLANK, DOUBLE_SIX, LEFT, RIGHT, Tile, _mask_pips


def _score_pips(opts: DominoOptions, p0: int, p1: int, state: int, locker: int) -> HandResult:
    """Score a finished pips hand: ``p0``/``p1`` are the pips left to each side,
    ``locker`` the side that made the last play."""
    every = opts.score_all_pips
    if state == _DOMINO:
        if locker == 0:
            return HandResult("domino", 0, (p0 + p1 if every else p1, 0))
        return HandResult("domino", 1, (0, p0 + p1 if every else p0))
    if p0 != p1:
        if p0 < p1:
            return HandResult("blocked", 0, (p0 + p1 if every else p1, 0))
        return HandResult("blocked", 1, (0, p0 + p1 if every else p0))
    # equal pips: ``locker`` is the side that made the last play
    if opts.blocked_tie == "locker-loses":
        won = p0 + p1 if every else p0  # p0 == p1: the locking side's pips
        points = (won, 0) if locker == 1 else (0, won)
        return HandResult("blocked", 1 - locker, points, "tie: the locking side loses")
    if opts.blocked_tie == "nobody":
        return HandResult("blocked", None, (0, 0), "tie: nobody scores")
    return HandResult("blocked", None, (0, 0), "tie: hand replayed")


def pips_result(hand: HandState, seat_pips: list[int], state: int, last_seat: int) -> HandResult:
    """Score a finished pips hand (two sides: pairs of 4 seats, or 2 seats)."""
    if hand.seats == 4:
        p0, p1 = seat_pips[0] + seat_pips[2], seat_pips[1] + seat_pips[3]
        locker = last_seat & 1
    else:
        p0, p1 = seat_pips
        locker = last_seat
    return _score_pips(hand.options, p0, p1, state, locker)


def brazilian_result(
    hand: HandState,
    seat_pips: list[int],
    state: int,
    seat: int,
    t: Tile,
    before_l: int,
    before_r: int,
) -> HandResult:
    """Score a finished hand; ``seat`` laid ``t`` last, on ends ``before_l``/``before_r``."""
    opts = hand.options
    teams = hand.teams
    points: list[Points] = [0.0] * teams
    if state in (_SEVEN_DOUBLES, _LOCOMOTIVA):
        team = hand.team_of(hand._special_seat)
        if state == _LOCOMOTIVA:
            points[team] = 32
            return HandResult("locomotiva", team, tuple(points), "locomotiva")
        before = hand._score_before[team] if hand._score_before else 0
        points[team] = max(opts.target - before, 0)
        return HandResult("seven-doubles", team, tuple(points), "sete buchas")
    announced = hand._announced or {}
    if state == _DOMINO:
        team = hand.team_of(seat)
        both = t.has(before_l) and t.has(before_r) and (t.is_double or before_l != before_r)
        if announced.get(seat) == t:
            if both:
                doubles = sum(
                    1
                    for lp in hand._line[:-1]
                    if lp.tile.is_double and (opts.cegonha_doubles == "anyone" or lp.seat == seat)
                )
                value, label = (16, "cegonha") if doubles >= 3 else (8, "4x4")
            else:
                value, label = 4, "quadriciclo"
        elif t.is_double:
            value, label = (3, "cruzada") if both else (2, "batida de bucha")
        elif both:
            value, label = 2, "lá-e-lô"
        else:
            value, label = opts.simple_domino, "batida"
        points[team] += value
        for s, d in announced.items():
            if not (s == seat and d == t):
                points[hand.team_of(s)] -= 1
        return HandResult("domino", team, tuple(points), label)
    # blocked: the side with fewer pips
    pips = hand._team_pips(seat_pips)
    low = min(pips)
    best = [k for k in range(teams) if pips[k] == low]
    for s in announced:
        points[hand.team_of(s)] -= 1
    if len(best) == 1:
        points[best[0]] += 0.5
        return HandResult("blocked", best[0], tuple(points), "fechada")
    for k in best:
        points[k] += 0.25
    return HandResult("blocked", None, tuple(points), "empate")


def hand_result(hand: HandState) -> HandResult:
    """How a finished hand ended and what each team earned (raises if in play)."""
    if not hand._state:
        raise ValueError("the hand is still in play")
    last = hand._line[-1] if hand._line else None
    seat_pips = [_mask_pips(m) for m in hand._held]
    if hand.options.variant == "brazilian-points":
        if last is None:
            return brazilian_result(hand, seat_pips, hand._state, -1, DOUBLE_BLANK, 0, 0)
        if last.end == LEFT:
            before_l, before_r = last.inner, hand._right
        elif last.end == RIGHT:
            before_l, before_r = hand._left, last.inner
        else:
            before_l = before_r = -1
        return brazilian_result(hand, seat_pips, hand._state, last.seat, last.tile, before_l, before_r)
    return pips_result(hand, seat_pips, hand._state, last.seat if last else -1)


def next_opening_after(hand: HandState, result: HandResult) -> Opening:
    """Who opens the next hand of the match, after this one ended with ``result``."""
    opts = hand.options
    variant = opts.variant
    if variant != "brazilian-points":
        if result.winner is None and opts.blocked_tie == "replay" and hand._state == _BLOCKED:
            # the same hand is dealt again and opens by the same rule, resolved
            # against its own deal (not with this deal's fallback tile)
            return hand.opening_rule
        if opts.opening == "double-six":
            return Opening(
                None,
                DOUBLE_SIX,
                reason=say("every hand opens with 6-6 by its holder"),
                fallback=variant == "pips-two-player",
            )
        step = 1 if opts.rotation == "next" else -1
        seat = (hand.opener + step) % hand.seats
        return Opening(seat, None, reason=say("the opening passes to seat {seat} in rotation", seat=seat))
    if hand._state in (_DOMINO, _LOCOMOTIVA, _SEVEN_DOUBLES):
        seat = hand.winner_seat
        assert seat is not None
        return Opening(seat, None, reason=say("seat {seat} went out, so it opens", seat=seat))
    if result.winner is None:
        return Opening(None, DOUBLE_SIX, reason=say("after a tied count the next hand opens with 6-6"))
    team = result.winner
    members = [s for s in range(hand.seats) if hand.team_of(s) == team]
    locker = hand._line[-1].seat
    if opts.blocked_opener == "after-locker":
        order = sorted(members, key=lambda s: (s - locker - 1) % hand.seats)
    else:
        # ``fewest-pips``, and the seat ``either`` suggests first
        order = sorted(
            members,
            key=lambda s: (hand.pips_in_hand(s), (s - locker - 1) % hand.seats),
        )
    either = opts.blocked_opener == "either"
    return Opening(
        order[0],
        None,
        no_double=True,
        reason=(
            say("after a blocked hand either player of the winning side opens, with a tile "
                "that is not a double")
            if either and len(order) > 1
            else say("after a blocked hand the winning side opens with a tile that is not a double")
        ),
        others=tuple(order[1:]) if either else (),
    )
