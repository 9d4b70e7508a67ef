"""Pairing tests written to kill mutants of tournament/pairing.py
(benchmarks/mutation.py, docs/testing.md): exact costs, the published Berger
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
