"""The ``search`` dominoes player: legal in every variant and seat count,
only public knowledge, exact endgames. (The ``reasoner`` Kems player's tests
are in test_kems_reasoner.py.) Strength is measured by
``benchmarks/players.py``, not here."""

from __future__ import annotations

import random

import pytest

from tablesense.games.dominoes import (
    Announce,
    DominoHand,
    DominoMatch,
    Draw,
    Play,
)
from tablesense.games.dominoes_players import (
    PLAYERS as DOMINO_PLAYERS,
)
from tablesense.games.dominoes_players import (
    make_player as make_domino_player,
)
from tablesense.games.dominoes_players.inference import infer, tile_mask
from tablesense.games.dominoes_players.search import SearchPlayer, policy_playout, solve

KINDS = [
    ("pairs-pips", None, {}),
    ("pairs-pips", None, {"forced_block": "allowed", "opening": "rotation"}),
    ("pips-two-player", None, {}),
    ("brazilian-points", None, {}),
    ("brazilian-points", 3, {}),
]


def small() -> SearchPlayer:
    return SearchPlayer(worlds=4, budget_ms=None)


@pytest.mark.parametrize("variant, seats, options", KINDS)
def test_search_plays_only_legal_moves_in_every_variant_and_seat_count(
    variant: str, seats: int | None, options: dict
) -> None:
    """Whole matches (several hands, so every opening rule comes up), every
    move checked by the engine's ``play``."""
    rng = random.Random(1)
    player = small()
    for _ in range(2):
        match = DominoMatch(variant, options, seats=seats)
        while not match.is_over and len(match.results) < 4:
            h = match.new_hand(rng)
            while not h.is_over:
                m = player.choose(h, h.to_play, rng)
                assert not isinstance(m, Announce)
                h.play(m)  # raises IllegalPlayError on an illegal move
            match.finish_hand()


def test_search_draws_any_tile_at_a_free_draw_table() -> None:
    rng = random.Random(2)
    player = small()
    for _ in range(30):
        match = DominoMatch("pips-two-player")
        h = match.new_hand(rng, free_draw=True)
        while not h.is_over:
            m = player.choose(h, h.to_play, rng)
            h.play(m)
            if isinstance(m, Draw):
                return
    pytest.fail("no draw came up")


def test_search_uses_only_what_its_seat_may_know() -> None:
    """Re-deal the tiles the seat cannot see (keeping counts): same choice."""
    rng = random.Random(3)
    checked = 0
    for _ in range(40):
        h = DominoMatch("pairs-pips").new_hand(rng)
        for _ in range(rng.randrange(1, 12)):
            if h.is_over:
                break
            h.play(rng.choice(h.legal_moves()))
        if h.is_over or len(h.legal_moves()) < 2:
            continue
        seat = h.to_play
        hidden = [t for s in range(4) if s != seat for t in h.hand_of(s)]
        rng.shuffle(hidden)
        hands, k = [], 0
        for s in range(4):
            if s == seat:
                hands.append(h.hand_of(s))
            else:
                hands.append(hidden[k : k + h.count(s)])
                k += h.count(s)
        other = h.clone(hands, [])
        a = small().choose(h, seat, random.Random(9))
        b = small().choose(other, seat, random.Random(9))
        assert a == b
        checked += 1
    assert checked > 10


def test_policy_playout_ends_the_hand_legally() -> None:
    rng = random.Random(4)
    for variant in ("pairs-pips", "pips-two-player", "brazilian-points"):
        for _ in range(30):
            h = DominoMatch(variant).new_hand(rng)
            if h.is_over:
                continue
            h.play(next(m for m in h.legal_moves() if isinstance(m, Play)))
            if h.is_over:
                continue
            held = [tile_mask(x) for x in h.hands]
            bone = [t.index for t in h.boneyard]
            left, right = h.left_end, h.right_end
            assert left is not None and right is not None
            moves = policy_playout(held, bone, left, right, h.to_play, True, rng)
            for m in moves:
                h.play(m)  # checked
            assert h.is_over


@pytest.mark.parametrize("variant", ["pairs-pips", "brazilian-points"])
def test_the_endgame_solver_agrees_with_a_plain_minimax(variant: str) -> None:
    """The alpha-beta solver (own move generation, engine scoring) against a
    plain minimax over the engine's legal moves, on endgames of 8 tiles."""
    rng = random.Random(5)
    compared = 0
    for _ in range(200):
        h = DominoMatch(variant).new_hand(rng)
        while not h.is_over and sum(h.count(s) for s in range(4)) > 8:
            h.play(rng.choice([m for m in h.legal_moves() if not isinstance(m, Announce)]))
        if h.is_over:
            continue
        held = [tile_mask(x) for x in h.hands]
        assert solve(h, held, 0, True) == _minimax(h, 0)
        compared += 1
        if compared >= 12:
            break
    assert compared >= 12


def _minimax(h: DominoHand, team: int) -> float:
    if h.is_over:
        pts = h.result().points
        return pts[team] - max(p for k, p in enumerate(pts) if k != team)
    values = []
    for m in h.legal_moves():
        h.apply(m)
        values.append(_minimax(h, team))
        h.undo()
    return max(values) if h.team_of(h.to_play) == team else min(values)


def test_players_are_registered_by_name() -> None:
    assert set(DOMINO_PLAYERS) == {"random", "greedy", "montecarlo", "search"}
    assert make_domino_player("search").name == "search"
    with pytest.raises(ValueError, match="unknown dominoes player"):
        make_domino_player("oracle")


def test_search_still_plays_when_the_table_shows_facts_no_deal_explains(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sensing table that misread a tile can report facts that no deal
    explains: the player falls back on the counts instead of failing."""
    rng = random.Random(11)
    h = DominoMatch("pairs-pips").new_hand(rng)
    for _ in range(6):
        h.play(rng.choice(h.legal_moves()))
    while len(h.legal_moves()) < 2:
        h.play(h.legal_moves()[0])
    seat = h.to_play
    belief = infer(h, seat)
    for b in belief.others.values():  # every unseen tile ruled out everywhere
        b.points = [((1 << 28) - 1, 0)]
    with pytest.raises(ValueError, match="no deal"):
        belief.sample(rng)
    masks, _ = belief.relaxed().sample(rng)
    assert [m.bit_count() for m in masks] == [h.count(s) for s in range(4)]
    import tablesense.games.dominoes_players.search as search

    monkeypatch.setattr(search, "infer", lambda hand, s: belief)
    assert h.is_legal(small().choose(h, seat, rng))


def test_the_play_model_finds_worlds_where_a_seat_skipped_a_double_less_likely() -> None:
    """With ``model``, a world in which a seat held a playable double but laid
    a light tile weighs less than one in which it had no double to lay."""
    from tablesense.games.dominoes import DominoHand, DominoOptions, Opening, Pass, Tile
    from tablesense.games.dominoes_players.search import _likelihood, _play_history

    t = Tile.parse
    deal = [[t("6-6"), t("0-1"), t("0-2"), t("0-3"), t("0-4"), t("0-5"), t("0-0")],
            [t("1-6"), t("1-1"), t("1-2"), t("1-3"), t("1-4"), t("1-5"), t("2-2")],
            [t("2-6"), t("2-3"), t("2-4"), t("2-5"), t("3-3"), t("3-4"), t("3-5")],
            [t("3-6"), t("4-4"), t("4-5"), t("4-6"), t("5-5"), t("5-6"), t("0-6")]]  # fmt: skip
    h = DominoHand(DominoOptions.from_dict("pairs-pips"), deal, (), Opening(0, None, reason="t"))
    h.play(Play(0, t("6-6")))
    h.play(Play(1, t("1-6"), "left"))  # ends 1|6
    h.play(Play(2, t("2-6"), "right"))  # ends 1|2
    h.play(Pass(3))
    h.play(Play(0, t("0-1"), "left"))  # ends 0|2
    h.play(Play(1, t("1-2"), "right"))  # ends 0|1: seat 1 laid 1-2, not 2-2
    history = _play_history(h, 0)
    assert [s for s, *_ in history] == [1, 2, 1]
    real = [tile_mask(x) for x in h.hands]
    other = real[:]
    swap = tile_mask([t("2-2")]) | tile_mask([t("3-3")])
    other[1] ^= swap  # seat 1 without 2-2 (seat 2 holds it)
    other[2] ^= swap
    assert _likelihood(history, other, 0.15) > _likelihood(history, real, 0.15)
