"""Pairing tests written to kill mutants of tournament/pairing.py
(benchmarks/mutation.py, docs/mutation-testing.md): exact costs, the published Berger
table for six, bracket order, series, snake groups and their messages."""

from __future__ import annotations

import random

import pytest

from tablesense.tournament import pairing as pg
from tablesense.tournament.pairing import Pairing, PairingError, SwissPlayer


def pairs(rounds: list[list[Pairing]]) -> list[set[tuple[int, int | None]]]:
    return [{(p.a, p.b) for p in r} for r in rounds]


def test_first_round_orders() -> None:
    assert pg.swiss_first_round([1, 2, 3, 4, 5], seeded=False, rng=None) == [
        Pairing(1, 2), Pairing(3, 4), Pairing(5, None)]
    assert pg.swiss_first_round([1, 2, 3, 4, 5], seeded=True, rng=random.Random(1)) == [
        Pairing(1, 3), Pairing(2, 4), Pairing(5, None)]
    assert pg.swiss_first_round([1, 2, 3, 4], seeded=True, rng=None) == [Pairing(1, 3), Pairing(2, 4)]
    drawn = pg.swiss_first_round(list(range(1, 21)), seeded=False, rng=random.Random(7))
    assert sorted(x for p in drawn for x in (p.a, p.b)) == list(range(1, 21))  # type: ignore[type-var]
    assert drawn != pg.swiss_first_round(list(range(1, 21)), seeded=False, rng=None)
    assert Pairing(1, None).is_bye and not Pairing(1, 2).is_bye


def test_costs_are_exact() -> None:
    a = SwissPlayer(1, 2.0, 0)
    b = SwissPlayer(2, 1.0, 3)
    c = SwissPlayer(3, 1.5, 1)
    assert pg.pair_cost(a, b) == 4 * 10_000 + 3
    assert pg.pair_cost(b, a) == 4 * 10_000 + 3
    assert pg.pair_cost(a, c) == 1 * 10_000 + 1
    assert pg.pair_cost(a, a) == 0
    assert pg._bye_cost(b, 4) == 2 * 10_000 * 4 + 1
    assert pg._bye_cost(SwissPlayer(9, 0.0, 3), 4) == 1
    met = SwissPlayer(1, 2.0, 0, frozenset({2}))
    assert pg.pairing_cost([met, b, c], [Pairing(1, 2), Pairing(3, None)]) == (
        4 * 10_000 + 3 + 3 * 10_000 * 4 + 2, 1)
    assert pg.pairing_cost([a, b], [Pairing(1, 2)]) == (40_003, 0)
    assert pg.REMATCH_PENALTY == 10**12


def test_berger_table_for_six_is_the_published_one() -> None:
    assert [[(p.a, p.b) for p in r] for r in pg.berger_rounds([1, 2, 3, 4, 5, 6])] == [
        [(1, 6), (2, 5), (3, 4)],
        [(1, 2), (5, 3), (6, 4)],
        [(3, 1), (2, 6), (4, 5)],
        [(1, 4), (2, 3), (6, 5)],
        [(5, 1), (4, 2), (3, 6)],
    ]
    assert pg.berger_rounds([]) == []
    assert pg.berger_rounds([7]) == [[Pairing(7, None)]]
    assert pg.berger_rounds([7, 8]) == [[Pairing(7, 8)]]
    assert [[(p.a, p.b) for p in r] for r in pg.berger_rounds([1, 2, 3])] == [
        [(2, 3), (1, None)], [(1, 2), (3, None)], [(3, 1), (2, None)]]


def test_bracket_positions_and_first_round() -> None:
    assert pg.bracket_positions(1) == [1]
    assert pg.bracket_positions(2) == [1, 2]
    assert pg.bracket_positions(4) == [1, 4, 2, 3]
    assert pg.bracket_positions(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    for bad in (0, -2, 3, 6, 12):
        with pytest.raises(ValueError, match=f"^bracket size must be a power of two, not {bad}$"):
            pg.bracket_positions(bad)
    assert pg.knockout_first_round([11, 12]) == [Pairing(11, 12)]
    assert pg.knockout_first_round([1, 2, 3, 4, 5]) == [
        Pairing(1, None), Pairing(4, 5), Pairing(2, None), Pairing(3, None)]
    assert pg.knockout_first_round([1, 2, 3, 4]) == [Pairing(1, 4), Pairing(2, 3)]
    assert len(pg.knockout_first_round(list(range(1, 10)))) == 8  # size 16, 7 byes
    with pytest.raises(PairingError, match="^a knockout needs at least two entrants$"):
        pg.knockout_first_round([1])


def test_next_knockout_round() -> None:
    assert pg.knockout_next_round([]) == []
    assert pg.knockout_next_round([5]) == []
    assert pg.knockout_next_round([5, 6]) == [Pairing(5, 6)]
    assert pg.knockout_next_round([1, 2, 3, 4]) == [Pairing(1, 2), Pairing(3, 4)]
    with pytest.raises(PairingError, match="^3 winners cannot form a knockout round$"):
        pg.knockout_next_round([1, 2, 3])


def test_series_winner() -> None:
    assert pg.series_winner([(1, 0)], 1) == 0
    assert pg.series_winner([(0, 1)], 1) == 1
    assert pg.series_winner([(1, 1)], 1) is None  # a draw wins nothing
    assert pg.series_winner([(1, 0)], 3) is None
    assert pg.series_winner([(1, 0), (2, 1)], 3) == 0
    assert pg.series_winner([(0, 1), (1, 1), (0, 1)], 3) == 1
    assert pg.series_winner([(1, 0), (0, 1)], 3) is None
    assert pg.series_winner([(1, 0)] * 2, 4) is None  # best of four needs three
    assert pg.series_winner([(1, 0)] * 3, 4) == 0
    assert pg.series_winner([(0, 5)] * 3, 5) == 1
    assert pg.series_winner([], 3) is None
    assert pg.series_winner([(1, 0)] * 3, 3) == 0  # a game past the decision keeps the winner
    assert pg.series_winner([(0, 1)] * 4, 5) == 1


def test_snake_groups_and_group_rounds() -> None:
    assert pg.snake_groups(list(range(1, 10)), 3) == [[1, 6, 7], [2, 5, 8], [3, 4, 9]]
    assert pg.snake_groups([1, 2, 3, 4, 5], 2) == [[1], [2, 5], [3, 4]]
    assert pg.snake_groups([1, 2], 2) == [[1, 2]]
    assert pg.snake_groups([], 2) == [[]]
    with pytest.raises(PairingError, match="^groups need at least two entrants each$"):
        pg.snake_groups([1, 2, 3], 1)
    assert pg.snake_groups([1, 2, 3], 2) == [[1], [2, 3]]
    assert [[(p.a, p.b) for p in r] for r in pg.group_stage_rounds([[1, 2, 3], [4, 5]])] == [
        [(2, 3), (4, 5), (1, None)], [(1, 2), (3, None)], [(3, 1), (2, None)]]
    assert pg.group_stage_rounds([]) == []


def test_seeds_from_groups_and_who_met_whom() -> None:
    assert pg.knockout_seeds_from_groups([[1, 2, 3], [4, 5]], 2) == [1, 4, 2, 5]
    assert pg.knockout_seeds_from_groups([[1, 2, 3], [4, 5]], 3) == [1, 4, 2, 5, 3]
    assert pg.knockout_seeds_from_groups([[1, 2, 3], [4, 5]], 0) == []
    assert pg.opponents_map([(1, 2), (3, None), (2, 3), (1, 2)]) == {1: {2}, 2: {1, 3}, 3: {2}}
    assert pg.opponents_map([]) == {}


def test_greedy_peer_gives_the_bye_to_the_lowest_without_one() -> None:
    ps = [SwissPlayer(i, 0.0, i) for i in range(4)] + [SwissPlayer(4, 0.0, 4, had_bye=True)]
    got = pg.greedy_swiss_pairings(ps)
    assert got[0] == Pairing(3, None)
    assert got[1:] == [Pairing(0, 1), Pairing(2, 4)]
    everyone = [SwissPlayer(i, 0.0, i, had_bye=True) for i in range(3)]
    assert pg.greedy_swiss_pairings(everyone)[0] == Pairing(2, None)
    met = [SwissPlayer(0, 1.0, 0, frozenset({1})), SwissPlayer(1, 1.0, 1, frozenset({0})),
           SwissPlayer(2, 0.0, 2)]
    assert pg.greedy_swiss_pairings(met[:2]) == [Pairing(0, 1)]  # cornered: the rematch anyway
    assert pg.greedy_swiss_pairings(met + [SwissPlayer(3, 0.0, 3)]) == [Pairing(0, 2), Pairing(1, 3)]


def _field(rng: random.Random, n: int) -> list[SwissPlayer]:
    """A Swiss field after a few rounds: scores not increasing with rank, some
    entrants with many former opponents and some with none."""
    scores = sorted((rng.randint(0, 8) / 2 for _ in range(n)), reverse=True)
    met: dict[int, set[int]] = {i: set() for i in range(n)}
    for _ in range(rng.randint(0, 2 * n)):
        a, b = rng.sample(range(n), 2)
        if rng.random() < 0.7:
            met[a].add(b)
            met[b].add(a)
    return [SwissPlayer(i, scores[i], i, frozenset(met[i]), rng.random() < 0.2) for i in range(n)]


def test_band_graph_finds_the_same_optimum_as_the_complete_graph() -> None:
    """The band graph (fields above exact_up_to) must keep an optimal
    matching, also for an entrant with no former opponent next to entrants
    with many: forced here on small fields with exact_up_to=0."""
    rng = random.Random(21)
    checked = 0
    for _ in range(400):
        ps = _field(rng, rng.randint(4, 14))
        try:
            full = pg.swiss_pairings(ps, exact_up_to=1000)
        except PairingError:
            continue
        band = pg.swiss_pairings(ps, exact_up_to=0)
        assert pg.pairing_cost(ps, band) == pg.pairing_cost(ps, full)
        checked += 1
    assert checked > 100
