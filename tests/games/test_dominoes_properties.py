"""Hypothesis properties of the dominoes engine: random legal games end, pips
are conserved, and the engine and the record replay agree on legality."""

from __future__ import annotations

import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablesense.games.common import IllegalStepError
from tablesense.games.dominoes import (
    ALL_TILES,
    VARIANTS,
    Announce,
    DominoHand,
    DominoMatch,
    DominoMove,
    Draw,
    Pass,
    Play,
    move_to_json,
)
from tablesense.games.record import replay

TOTAL_PIPS = sum(t.pips for t in ALL_TILES)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

games = st.tuples(
    st.sampled_from([(v, None) for v in VARIANTS] + [("brazilian-points", 3)]),
    st.sampled_from(["forbidden", "allowed"]),
    st.integers(0, 2**32 - 1),
)


def random_match(variant: str, seats: int | None, forced: str, seed: int) -> DominoMatch:
    rng = random.Random(seed)
    m = DominoMatch(variant, {"forced_block": forced}, seats)
    for _ in range(rng.randrange(1, 4)):
        if m.is_over:
            break
        h = m.new_hand(rng)
        steps = 0
        while not h.is_over:
            moves = h.legal_moves()
            ann = [x for x in moves if isinstance(x, Announce)]
            plays = [x for x in moves if not isinstance(x, Announce)]
            h.play(rng.choice(ann) if ann and rng.random() < 0.03 else rng.choice(plays))
            steps += 1
            assert steps < 200, "a hand must end"
        m.finish_hand()
    return m


def every_candidate(h: DominoHand) -> list[DominoMove]:
    """Every syntactically possible move in this state."""
    out: list[DominoMove] = []
    for s in range(h.seats):
        out.append(Pass(s))
        for t in ALL_TILES:
            out.append(Draw(s, t))
            out.append(Play(s, t))
            out.append(Play(s, t, "left"))
            out.append(Play(s, t, "right"))
            if t.is_double:
                out.append(Announce(s, t))
    return out


def pips_everywhere(h: DominoHand) -> int:
    return (
        sum(h.pips_in_hand(s) for s in range(h.seats))
        + sum(lp.tile.pips for lp in h.line)
        + sum(t.pips for t in h.boneyard)
    )


@SETTINGS
@given(games)
def test_random_legal_games_end_and_conserve_pips(game) -> None:
    (variant, seats), forced, seed = game
    rng = random.Random(seed)
    h = DominoMatch(variant, {"forced_block": forced}, seats).new_hand(rng)
    for _ in range(200):
        assert pips_everywhere(h) == TOTAL_PIPS
        tiles = [t for s in range(h.seats) for t in h.hand_of(s)]
        tiles += [lp.tile for lp in h.line] + h.boneyard
        assert sorted(tiles) == list(ALL_TILES)
        if h.is_over:
            break
        h.play(rng.choice(h.legal_moves()))
    assert h.is_over
    r = h.result()
    assert len(r.points) == h.teams


@SETTINGS
@given(games)
def test_check_accepts_exactly_the_legal_moves(game) -> None:
    """``is_legal`` (what replay uses) and ``legal_moves`` (what players use)
    agree on every possible move, in random states of random games."""
    (variant, seats), forced, seed = game
    rng = random.Random(seed)
    h = DominoMatch(variant, {"forced_block": forced}, seats).new_hand(rng)
    for _ in range(rng.randrange(0, 30)):
        if h.is_over:
            break
        h.play(rng.choice(h.legal_moves()))
    legal = {m for s in range(h.seats) for m in h.legal_moves(s)}
    for m in every_candidate(h):
        if h.is_legal(m):
            assert h.check(m) in legal, m
        else:
            assert m not in legal, m


@SETTINGS
@given(games)
def test_engine_legal_games_are_accepted_by_replay_with_the_same_results(game) -> None:
    (variant, seats), forced, seed = game
    m = random_match(variant, seats, forced, seed)
    out = replay(m.to_record())
    assert out.hands == tuple(m.results)
    assert out.score == tuple(m.score) and out.winner == m.winner


@SETTINGS
@given(games, st.integers(0, 10**6))
def test_replay_rejects_an_illegal_move_at_its_index(game, pick) -> None:
    """Replace one move of a legal record by a move the engine calls illegal:
    replay must stop exactly there."""
    (variant, seats), forced, seed = game
    m = random_match(variant, seats, forced, seed)
    rec = m.to_record()
    hi = pick % len(m.hands)
    hand = m.hands[hi]
    if not hand.moves:
        return
    mi = (pick // 7) % len(hand.moves)
    probe = hand.clone()
    for _ in range(len(hand.moves) - mi):
        probe.undo()
    rng = random.Random(pick)
    bad = [x for x in every_candidate(probe) if not probe.is_legal(x)]
    wrong = rng.choice(bad)
    broken = copy.deepcopy(rec)
    broken["hands"][hi]["moves"][mi] = move_to_json(wrong)
    try:
        replay(broken)
    except IllegalStepError as exc:
        assert (exc.hand, exc.move) == (hi, mi), exc.message
        assert exc.message
    else:
        raise AssertionError(f"replay accepted {wrong}")
