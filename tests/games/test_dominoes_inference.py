"""Inference of hidden dominoes: it never rules out the real hands, and it
uses every public fact (passes, draws, the opening rule, announcements)."""

from __future__ import annotations

import random

import pytest

from tablesense.games.dominoes import (
    ALL_TILES,
    Announce,
    DominoHand,
    DominoMatch,
    DominoOptions,
    Draw,
    Opening,
    Pass,
    Play,
    Tile,
)
from tablesense.games.dominoes_players import GreedyPlayer, RandomPlayer
from tablesense.games.dominoes_players.inference import HAS, Belief, infer, mask_tiles, tile_mask

T = Tile.parse
KINDS = [("pairs-pips", None), ("pips-two-player", None), ("brazilian-points", None),
         ("brazilian-points", 3)]  # fmt: skip


def truth(h: DominoHand) -> tuple[list[int], int]:
    return [tile_mask(x) for x in h.hands], tile_mask(h.boneyard)


def replayed_hands(variant: str, seats: int | None, seed: int, matches: int):
    """Every position of whole matches of random and greedy play (with some
    announced doubles in brazilian-points), one hand at a time."""
    rng = random.Random(seed)
    players = [RandomPlayer(), GreedyPlayer()]
    for _ in range(matches):
        match = DominoMatch(variant, seats=seats)
        while not match.is_over and len(match.results) < 6:
            h = match.new_hand(rng)
            if variant == "brazilian-points" and not h.is_over:
                for s in range(h.seats):
                    ann = [m for m in h.legal_moves(s) if isinstance(m, Announce)]
                    if ann and rng.random() < 0.3:
                        h.play(rng.choice(ann))
            while not h.is_over:
                yield h
                h.play(rng.choice(players).choose(h, h.to_play, rng))
            match.finish_hand()


@pytest.mark.parametrize("variant, seats", KINDS)
def test_inference_never_rules_out_the_true_hidden_hands(variant: str, seats: int | None) -> None:
    """Property over thousands of replayed hands (about 700 per kind): at every
    position, for a random viewer, the real hands fit what it inferred, and
    the worlds it samples fit too."""
    rng = random.Random(7)
    hands = positions = constrained = 0
    last = None
    for h in replayed_hands(variant, seats, 11, 150):
        if h is not last:
            hands += 1
            last = h
        viewer = rng.randrange(h.seats)
        belief = infer(h, viewer)
        real, bone = truth(h)
        assert belief.fits(real, bone), (variant, viewer, h.moves)
        positions += 1
        constrained += any(b.points or b.known for b in belief.others.values())
        if positions % 7 == 0:
            masks, order = belief.sample(rng)
            assert belief.fits(masks, sum(1 << i for i in order))
    assert hands >= 600 and constrained > positions // 10


def test_a_pass_rules_out_both_ends() -> None:
    opts = DominoOptions.from_dict("pairs-pips")
    deal = [[T("6-6"), T("0-1"), T("0-2"), T("0-3"), T("0-4"), T("0-5"), T("0-0")],
            [T("1-1"), T("1-2"), T("1-3"), T("1-4"), T("1-5"), T("0-6"), T("1-6")],
            [T("2-2"), T("2-3"), T("2-4"), T("2-5"), T("2-6"), T("3-3"), T("3-4")],
            [T("3-5"), T("3-6"), T("4-4"), T("4-5"), T("4-6"), T("5-5"), T("5-6")]]  # fmt: skip
    h = DominoHand(opts, deal)
    h.play(Play(0, T("6-6")))
    h.play(Play(1, T("0-6"), "left"))  # ends 0|6
    h.play(Play(2, T("2-6"), "right"))  # ends 0|2
    h.play(Pass(3))  # seat 3 holds no 0 and no 2
    belief = infer(h, 0)
    barred = belief.others[3].forbidden()
    assert barred == HAS[0] | HAS[2]
    assert belief.fits(*truth(h))
    # a world giving seat 3 a tile with a 2 does not fit
    real, bone = truth(h)
    swapped = real[:]
    a, b = tile_mask([T("2-2")]), tile_mask([T("3-5")])
    swapped[2] = swapped[2] ^ a ^ b
    swapped[3] = swapped[3] ^ a ^ b
    assert not belief.fits(swapped, bone)


def _two_player(deal0: str, deal1: str, first: str) -> DominoHand:
    opts = DominoOptions.from_dict("pips-two-player")
    hands = [[T(x) for x in deal0.split()], [T(x) for x in deal1.split()]]
    head = [T(x) for x in first.split()]
    used = {t for h in hands for t in h} | set(head)
    bone = head + [t for t in ALL_TILES if t not in used]
    return DominoHand(opts, hands, bone, Opening(0, None, reason="test"))


def test_draws_rule_out_the_ends_except_for_later_draws() -> None:
    h = _two_player(
        "6-6 5-6 4-6 3-6 2-6 1-6 0-0",
        "1-1 1-2 1-3 1-4 2-2 2-3 3-3",
        "0-6 5-5 2-4 0-1 0-2",
    )
    h.play(Play(0, T("6-6")))  # ends 6|6: seat 1 has no 6
    h.play(Draw(1, T("0-6")))
    h.play(Play(1, T("0-6"), "left"))  # ends 0|6: it played the tile it drew
    b1 = infer(h, 0).others[1]
    # everything seat 1 holds avoids 6, and no hidden draw can excuse it
    assert b1.points == [(HAS[6], 0)] and b1.forbidden() == HAS[6]
    h.play(Play(0, T("5-6"), "right"))  # ends 0|5
    h.play(Draw(1, T("5-5")))  # seat 1 has no 0 and no 5; draws 5-5
    h.play(Play(1, T("5-5"), "right"))  # ends 0|5
    h.play(Play(0, T("0-0"), "left"))  # ends 0|5
    h.play(Draw(1, T("2-4")))  # no 0, no 5: draws 2-4, which does not fit
    h.play(Draw(1, T("0-1")))  # then 0-1, which does
    h.play(Play(1, T("0-1"), "left"))  # ends 1|5
    b1 = infer(h, 0).others[1]
    assert b1.fits(tile_mask(h.hand_of(1)))
    # the hidden draw (2-4) came after the first point: one tile may show a
    # 6, none a 0 or a 5
    assert b1.forbidden() == HAS[0] | HAS[5]
    one_six = tile_mask(h.hand_of(1)) & ~tile_mask([T("1-1")]) | tile_mask([T("4-6")])
    two_sixes = one_six & ~tile_mask([T("1-2")]) | tile_mask([T("3-6")])
    assert b1.fits(one_six) and not b1.fits(two_sixes)
    h.play(Play(0, T("1-6"), "left"))  # ends 6|5
    h.play(Draw(1, T("0-2")))  # hidden: seat 1 may now hold a 0 (this tile)
    b1 = infer(h, 0).others[1]
    assert b1.fits(tile_mask(h.hand_of(1)))
    assert b1.forbidden() == 0
    # ... but only one tile with a 0 or a 5
    two_zeros = tile_mask(h.hand_of(1)) & ~tile_mask([T("1-1"), T("1-2")]) | tile_mask(
        [T("0-3"), T("0-4")]
    )
    assert not b1.fits(two_zeros)


def test_the_fallback_opening_rules_out_higher_doubles() -> None:
    rng = random.Random(3)
    for _ in range(200):
        h = DominoMatch("pips-two-player").new_hand(rng)
        if h.opening.tile != T("6-6"):
            break
    else:
        pytest.fail("6-6 was always dealt")
    t0 = h.opening.tile
    assert t0 is not None
    viewer = 1 - h.to_play
    belief = infer(h, viewer)
    barred = belief.others[h.to_play].forbidden()
    assert tile_mask([T("6-6")]) & barred
    higher = [t for t in ALL_TILES if t.is_double and t.pips > t0.pips]
    assert all(tile_mask([t]) & barred for t in higher)
    assert belief.fits(*truth(h))


def test_an_announced_double_is_known_to_be_held() -> None:
    rng = random.Random(4)
    while True:
        h = DominoMatch("brazilian-points").new_hand(rng)
        ann = [m for m in h.legal_moves(1) if isinstance(m, Announce)]
        if ann and not h.is_over:
            break
    h.play(ann[0])
    belief = infer(h, 0)
    assert belief.others[1].known == tile_mask([ann[0].tile])
    for _ in range(20):
        masks, _ = belief.sample(rng)
        assert masks[1] & tile_mask([ann[0].tile])


def test_samples_spread_over_the_possible_worlds() -> None:
    h = DominoMatch("pairs-pips").new_hand(random.Random(5))
    h.play(h.legal_moves()[0])
    belief: Belief = infer(h, 1)
    rng = random.Random(6)
    worlds = {tuple(belief.sample(rng)[0]) for _ in range(50)}
    assert len(worlds) == 50
    assert all(len(mask_tiles(w[1])) == 7 for w in worlds)
