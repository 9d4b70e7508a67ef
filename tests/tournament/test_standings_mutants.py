"""Standings tests written to kill mutants of tournament/standings.py
(benchmarks/mutation.py, docs/mutation-testing.md)."""

from __future__ import annotations

from tablesense.tournament.standings import MatchOutcome, compute_standings, lots_value


def M(r: int, a: int, b: int, sa: float, sb: float) -> MatchOutcome:
    w = a if sa > sb else (b if sb > sa else None)
    return MatchOutcome(r, a, b, sa, sb, w)


def test_each_loss_counts_once_on_both_sides() -> None:
    st = {s.entrant: s for s in compute_standings([1, 2], [M(1, 1, 2, 0, 1), M(2, 2, 1, 0, 1)])}
    assert (st[1].wins, st[1].losses, st[1].draws, st[1].played) == (1, 1, 0, 2)
    assert (st[2].wins, st[2].losses, st[2].draws, st[2].played) == (1, 1, 0, 2)
    st = {s.entrant: s for s in compute_standings([1, 2], [M(1, 1, 2, 2, 2)])}
    assert (st[1].draws, st[1].losses, st[2].draws, st[2].losses) == (1, 0, 1, 0)


def test_median_buchholz_with_an_even_number_of_opponents() -> None:
    # 1 met 2, 3, 4, 5; their games won: 2 -> 0, 3 -> 1, 4 -> 2, 5 -> 3
    ms = [M(1, 1, 2, 1, 0), M(2, 1, 3, 1, 0), M(3, 1, 4, 1, 0), M(4, 1, 5, 1, 0),
          M(1, 3, 6, 1, 0), M(2, 4, 6, 1, 0), M(3, 4, 7, 1, 0), M(1, 5, 7, 1, 0),
          M(2, 5, 8, 1, 0), M(3, 5, 9, 1, 0)]
    st = {s.entrant: s for s in compute_standings(
        range(1, 10), ms, ["games_won", "buchholz", "buchholz_cut1", "buchholz_median"])}
    assert [st[e].games_won for e in (2, 3, 4, 5)] == [0, 1, 2, 3]
    assert st[1].tiebreaks["buchholz"] == 6
    assert st[1].tiebreaks["buchholz_cut1"] == 6  # the lowest (0) cut
    assert st[1].tiebreaks["buchholz_median"] == 3  # lowest and highest cut: 1 + 2
    # one opponent only: every cut leaves nothing
    st = {s.entrant: s for s in compute_standings([8, 9], [M(1, 8, 9, 1, 0)],
                                                  ["buchholz_cut1", "buchholz_median"])}
    assert st[8].tiebreaks == {"buchholz_cut1": 0.0, "buchholz_median": 0.0}


def test_lots_are_numbers_in_the_unit_interval() -> None:
    values = [lots_value(seed, e) for seed in ("", "x", "club-2026") for e in range(50)]
    assert all(0.0 <= v < 1.0 for v in values)
    assert max(values) > 0.9 and min(values) < 0.1  # spread over the interval
