"""Computer players: legal choices, only public knowledge, and strength."""

from __future__ import annotations

import random

import pytest

from tablesense.games.dominoes import (
    VARIANTS,
    Announce,
    DominoHand,
    DominoMatch,
    Draw,
    Pass,
    Play,
)
from tablesense.games.dominoes_players import (
    GreedyPlayer,
    MonteCarloPlayer,
    RandomPlayer,
    SearchPlayer,
    guess_world,
    head_to_head,
    missing_numbers,
    play_match,
)

PLAYERS = [
    RandomPlayer(),
    GreedyPlayer(),
    MonteCarloPlayer(worlds=6),
    SearchPlayer(worlds=4, budget_ms=None),
]
KINDS = [(v, None) for v in VARIANTS] + [("brazilian-points", 3)]


def states(variant: str, seats: int | None, seed: int, n: int):
    rng = random.Random(seed)
    for _ in range(n):
        h = DominoMatch(variant, seats=seats).new_hand(rng)
        for _ in range(rng.randrange(0, 25)):
            if h.is_over:
                break
            h.play(rng.choice([m for m in h.legal_moves() if not isinstance(m, Announce)]))
        if not h.is_over:
            yield h


@pytest.mark.parametrize("player", PLAYERS, ids=lambda p: p.name)
@pytest.mark.parametrize("variant, seats", KINDS)
def test_players_choose_legal_moves(player, variant: str, seats: int | None) -> None:
    rng = random.Random(1)
    for h in states(variant, seats, 2, 25):
        m = player.choose(h, h.to_play, rng)
        assert h.is_legal(m) and not isinstance(m, Announce)
    with pytest.raises(ValueError, match="turn"):
        h = next(states(variant, seats, 3, 5))
        player.choose(h, (h.to_play + 1) % h.seats, rng)


def hide_differently(h: DominoHand, seat: int, rng: random.Random) -> DominoHand:
    """The same table as ``seat`` sees it, with the other seats' tiles (and
    the boneyard) dealt differently."""
    hands, bone = guess_world(h, seat, rng, tries=0)
    return h.clone(hands, bone)


@pytest.mark.parametrize("player", PLAYERS, ids=lambda p: p.name)
@pytest.mark.parametrize("variant, seats", KINDS)
def test_players_use_only_what_their_seat_may_know(player, variant, seats) -> None:
    rng = random.Random(4)
    changed = 0
    for h in states(variant, seats, 5, 20):
        seat = h.to_play
        other = hide_differently(h, seat, rng)
        if other.hands == h.hands:
            continue
        changed += 1
        assert other.hand_of(seat) == h.hand_of(seat) and other.line == h.line
        assert [other.count(s) for s in range(h.seats)] == [h.count(s) for s in range(h.seats)]
        a = player.choose(h, seat, random.Random(9))
        b = player.choose(other, seat, random.Random(9))
        # a draw names the tile the boneyard gives, which is not the player's choice
        assert (type(a), a.seat) == (type(b), b.seat)
        if not isinstance(a, Draw):
            assert a == b
    assert changed


def test_guessed_worlds_respect_counts_and_passes() -> None:
    rng = random.Random(6)
    checked = 0
    for h in states("pairs-pips", None, 7, 60):
        missing = missing_numbers(h)
        seat = h.to_play
        for _ in range(5):
            hands, bone = guess_world(h, seat, rng)
            assert hands[seat] == h.hand_of(seat) and bone == []
            assert [len(x) for x in hands] == [h.count(s) for s in range(4)]
            seen = {t for x in hands for t in x} | {lp.tile for lp in h.line}
            assert len(seen) == 28
            for s in range(4):
                if s != seat:
                    assert not any(t.low in missing[s] or t.high in missing[s] for t in hands[s])
        checked += any(missing)
    assert checked


def test_missing_numbers_come_from_passes() -> None:
    for h in states("pairs-pips", None, 9, 40):
        for m in h.moves:
            if isinstance(m, Pass):
                assert missing_numbers(h)[m.seat]
                return
    pytest.fail("no pass seen")


def test_greedy_lays_a_double_if_it_can_else_its_heaviest_tile() -> None:
    rng = random.Random(10)
    seen = set()
    for h in states("pairs-pips", None, 11, 60):
        m = GreedyPlayer().choose(h, h.to_play, rng)
        plays = [x for x in h.legal_moves() if isinstance(x, Play)]
        if not plays:
            continue
        assert isinstance(m, Play)
        doubles = [x for x in plays if x.tile.is_double]
        pool = doubles or plays
        assert m.tile.is_double == bool(doubles)
        assert m.tile.pips == max(x.tile.pips for x in pool)
        seen.add(bool(doubles))
    assert seen == {True, False}


def test_play_match_reaches_a_winner() -> None:
    rng = random.Random(12)
    m = play_match(DominoMatch("pips-two-player"), [GreedyPlayer(), RandomPlayer()], rng)
    assert m.is_over and m.winner in (0, 1)


def test_monte_carlo_outscores_random_and_greedy_outscores_random() -> None:
    """Strength, in points per hand (fixed seeds, so the test is deterministic)."""
    mc = head_to_head("pairs-pips", MonteCarloPlayer(worlds=8), RandomPlayer(), 12, seed=1)
    assert mc["points_per_hand_a"] > mc["points_per_hand_b"]
    gr = head_to_head("pairs-pips", GreedyPlayer(), RandomPlayer(), 40, seed=2)
    assert gr["points_per_hand_a"] > gr["points_per_hand_b"]
