"""The search player's machinery (``dominoes_search``, ``dominoes_endgame``,
``dominoes_equity``): the mask solver against the engine's, the scorer
against the engine's result, the match equity, and the score before a
hand. (Legality in every variant and seat count, public knowledge only:
``test_search_players.py``.)"""

from __future__ import annotations

import random

import pytest

from tablesense.games.dominoes import Announce, DominoHand, DominoMatch, Play
from tablesense.games.dominoes.options import DominoOptions
from tablesense.games.dominoes_players.endgame import _Scorer, solve, solve_fast
from tablesense.games.dominoes_players.equity import (
    MatchEquity,
    hand_counts,
    hand_value,
    sample_counts,
)
from tablesense.games.dominoes_players.equity_data import STORED
from tablesense.games.dominoes_players.inference import tile_mask
from tablesense.games.dominoes_players.search import SearchPlayer, _policy_run, policy_playout

KINDS = [
    ("pairs-pips", None, {}),
    ("pairs-pips", None, {"forced_block": "allowed"}),
    ("pips-two-player", None, {}),
    ("brazilian-points", None, {}),
    ("brazilian-points", 3, {}),
]


def _endgames(variant: str, seats: int | None, options: dict, tiles: int, n: int, seed: int):
    """Hands played at random until the boneyard is empty and at most
    ``tiles`` (scaled to the seats) are left in the hands."""
    rng = random.Random(seed)
    found = 0
    for _ in range(50 * n):
        h = DominoMatch(variant, options, seats=seats).new_hand(rng)
        limit = tiles * h.seats // 4
        while not h.is_over and (h.boneyard_count or sum(h.count(s) for s in range(h.seats)) > limit):
            h.play(rng.choice([m for m in h.legal_moves() if not isinstance(m, Announce)]))
        if h.is_over or not h.line:
            continue
        yield h
        found += 1
        if found >= n:
            return
    pytest.fail(f"only {found} endgames of {variant} came up")


@pytest.mark.parametrize("variant, seats, options", KINDS)
@pytest.mark.parametrize("objective", ["hand", "match"])
def test_the_mask_solver_agrees_with_the_engine_solver(
    variant: str, seats: int | None, options: dict, objective: str
) -> None:
    """``solve_fast`` (own moves on masks, the scoring functions) gives the
    value ``solve`` (the engine's apply/undo and result) gives, for either
    objective, on endgames of up to 12 tiles (four seats)."""
    for h in _endgames(variant, seats, options, 12, 10, 7):
        team = h.team_of(h.to_play)
        value = hand_value(h, team, objective)
        held = [tile_mask(x) for x in h.hands]
        expected = solve(h.clone(), held[:], team, h.options.forced_block == "forbidden", value=value)
        assert solve_fast(h, held, team, h.options.forced_block == "forbidden", value) == pytest.approx(
            expected
        )


@pytest.mark.parametrize("variant, seats, options", KINDS)
def test_the_scorer_values_a_policy_playout_as_the_engine_does(
    variant: str, seats: int | None, options: dict
) -> None:
    """The playout's end (state, last seat, tile, ends before it), scored on
    masks, equals the engine's result once the same moves are applied."""
    rng = random.Random(8)
    checked = 0
    for _ in range(60):
        h = DominoMatch(variant, options, seats=seats).new_hand(rng)
        if h.is_over:
            continue
        h.play(next(m for m in h.legal_moves() if isinstance(m, Play)))
        if h.is_over:
            continue
        left, right = h.left_end, h.right_end
        assert left is not None and right is not None
        value = hand_value(h, 0, "hand")
        held = [tile_mask(x) for x in h.hands]
        bone = [t.index for t in h.boneyard]
        seed = rng.getrandbits(32)
        moves = policy_playout(held[:], bone, left, right, h.to_play, True, random.Random(seed))
        end = _policy_run(
            held, bone, left, right, h.to_play, True, random.Random(seed), 0.1, 0.0, None
        )
        sim = h.clone()
        for m in moves:
            sim.play(m)
        assert _Scorer(h, value)(*end, held) == value(sim.result().points)
        checked += 1
    assert checked >= 40


def _hand_at(variant: str, score: tuple[float, float]) -> DominoHand:
    match = DominoMatch(variant)
    match.score = list(score)
    return match.new_hand(random.Random(1))


@pytest.mark.parametrize("variant", ["pairs-pips", "pips-two-player", "brazilian-points"])
def test_match_equity_is_a_fair_monotone_chance(variant: str) -> None:
    eq = MatchEquity(_hand_at(variant, (0, 0)))
    t = eq.target
    assert eq.win(0, 0) == 0.5
    for a, b in [(0, t // 2), (t // 4, t - 1), (1, 2)]:
        assert eq.win(a, b) + eq.win(b, a) == pytest.approx(1.0)
        assert eq.win(a, b) < 0.5 < eq.win(b, a)
    assert eq.win(t - 1, 0) > eq.win(t // 2, 0) > eq.win(1, 0) > 0.5


@pytest.mark.parametrize("variant", ["pairs-pips", "brazilian-points"])
def test_the_filled_equity_table_is_the_plain_recursion(variant: str) -> None:
    """The table filled from the target down (fast enough for a first
    decision) holds what the recursion over every step computes."""
    eq = MatchEquity(_hand_at(variant, (0, 0)))
    assert eq._grid is not None
    t = eq.target
    states = [(a, b) for a in range(0, t, max(1, t // 12)) for b in range(0, t, max(1, t // 9))]
    filled = [eq.win(a, b) for a, b in states]
    eq._grid = None
    eq._v.clear()
    assert [eq.win(a, b) for a, b in states] == pytest.approx(filled, abs=1e-12)


def test_the_stored_hand_scores_are_what_sampling_gives() -> None:
    """The stored distributions (a first decision does not sample them) are
    the seeded sample of today's engine, and options that are not a
    variant's defaults are sampled, not looked up."""
    for (variant, seats, samples), counts in STORED.items():
        assert sample_counts(DominoOptions.from_dict(variant), seats, samples) == counts
    other = DominoOptions.from_dict("pairs-pips", {"score_all_pips": True})
    assert hand_counts(other, 4, 200) == sample_counts(other, 4, 200)


def test_near_the_target_any_domino_wins_the_match_and_a_small_one_is_enough() -> None:
    """At 3.5 - 0 in ``brazilian-points`` a plain domino (1 point) is worth
    what a cruzada (3) is: the match; by points the cruzada looks 3 times
    better — what the match objective is for."""
    h = _hand_at("brazilian-points", (3.5, 0))
    match = hand_value(h, 0, "match", next_match=0.0)
    points = hand_value(h, 0, "hand")
    assert match((1.0, 0.0)) == match((3.0, 0.0)) == 1.0
    assert points((3.0, 0.0)) == 3 * points((1.0, 0.0))
    # the other side one hand from the target: a blocked half point for it
    # costs more than a lost plain domino would at 0 - 0
    h = _hand_at("brazilian-points", (0, 3.5))
    assert hand_value(h, 0, "match")((0.0, 0.5)) < hand_value(
        _hand_at("brazilian-points", (0, 0)), 0, "match"
    )((0.0, 1.0))


def test_losing_without_a_point_costs_the_lambreta() -> None:
    """``brazilian-points``: a side that loses without making a point starts
    the next match with the lambreta (-1), so losing 0 - 4 is worth less
    than losing 1 - 4; without ``next_match`` both are plain losses."""
    eq = MatchEquity(_hand_at("brazilian-points", (0, 0)), next_match=0.25)
    assert eq.final(0, 16) < eq.final(4, 16) == 0.0
    assert eq.final(20, 4) > eq.final(16, 4) == 1.0  # the bonus above the target
    assert eq.final(16, 0) > eq.final(16, 4)  # the other side carries the lambreta
    plain = MatchEquity(_hand_at("brazilian-points", (0, 0)), next_match=0.0)
    assert plain.final(0, 16) == plain.final(4, 16) == 0.0


def test_the_score_before_a_hand_is_public_on_the_hand() -> None:
    rng = random.Random(3)
    match = DominoMatch("brazilian-points")
    seen = []
    while not match.is_over:
        h = match.new_hand(rng)
        seen.append(h.score_before)
        assert h.score_before == tuple(match.score)
        while not h.is_over:
            h.play(rng.choice([m for m in h.legal_moves() if not isinstance(m, Announce)]))
        match.finish_hand()
    assert len(seen) >= 2 and seen[0] == (0, 0)
    alone = DominoHand(match.options, *_deal(rng))
    assert alone.score_before is None


def _deal(rng: random.Random):
    from tablesense.games.dominoes.deal import deal_tiles

    return deal_tiles("brazilian-points", 4, rng)


def test_a_decision_is_reproducible_for_a_seed() -> None:
    """With no time budget a match is the same for the same seed (the
    league's reproducibility rests on it)."""

    def moves(seed: int) -> list:
        rng = random.Random(seed)
        player = SearchPlayer(worlds=8, budget_ms=None)
        match = DominoMatch("pairs-pips")
        h = match.new_hand(rng)
        while not h.is_over:
            h.play(player.choose(h, h.to_play, rng))
        return h.moves

    assert moves(5) == moves(5)


def test_the_objective_is_checked() -> None:
    h = _hand_at("pairs-pips", (0, 0))
    with pytest.raises(ValueError, match="objective"):
        hand_value(h, 0, "glory")
