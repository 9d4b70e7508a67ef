"""Standings and every tie-break, on hand-computed examples."""

from __future__ import annotations

import pytest

from tablesense.tournament.standings import (
    MatchOutcome,
    TiebreakError,
    compute_standings,
    lots_value,
)


def M(r: int, a: int, b: int | None, sa: float, sb: float, kind: str = "match") -> MatchOutcome:
    w = a if sa > sb else (b if sb > sa else None)
    if b is None and kind == "pairing-bye":
        w = a
    return MatchOutcome(r, a, b, sa, sb, w, kind)


def test_games_won_point_difference_points_for() -> None:
    ms = [M(1, 1, 2, 150, 100), M(1, 3, 4, 150, 140), M(2, 1, 3, 100, 150), M(2, 2, 4, 150, 10)]
    st = compute_standings([1, 2, 3, 4], ms, ["games_won", "point_difference", "points_for"])
    # 1: W,L  250-250 diff 0; 2: L,W 250-200 diff +50; 3: W,W; 4: L,L
    assert [s.entrant for s in st] == [3, 2, 1, 4]
    assert [s.rank for s in st] == [1, 2, 3, 4]
    three = st[0]
    assert (three.wins, three.points_for, three.points_against) == (2, 300, 240)


def test_head_to_head_is_recursive_among_the_tied() -> None:
    # 1, 2, 3 beat each other in a cycle; 6 beat 5; 5 beat 4. Five entrants tie on one win.
    # Among the five: 1, 2, 3 and 6 have one win each, 5 none (its win was over 4) -> 5 fifth.
    # Among 1, 2, 3, 6 alone: 6 has none -> fourth. 1, 2, 3 still tie (a cycle) -> they share rank 1.
    ms = [M(1, 1, 2, 1, 0), M(2, 2, 3, 1, 0), M(3, 3, 1, 1, 0), M(1, 5, 6, 0, 1), M(2, 5, 4, 1, 0)]
    st = compute_standings([1, 2, 3, 4, 5, 6], ms, ["games_won", "head_to_head"])
    assert [s.entrant for s in st] == [1, 2, 3, 6, 5, 4]
    assert [s.rank for s in st] == [1, 1, 1, 4, 5, 6]


def test_head_to_head_splits_then_recurses_on_subgroup() -> None:
    # Four tied on wins. Mini-table: A beats B, C, D? no: A=2, B=2, C=1, D=1 among themselves;
    # then A v B (A won) breaks A/B, and C v D (D won) breaks C/D.
    A, B, C, D = 1, 2, 3, 4
    ms = [M(1, A, B, 1, 0), M(1, C, D, 0, 1), M(2, A, C, 0, 1), M(2, B, D, 1, 0), M(3, A, D, 1, 0), M(3, B, C, 1, 0)]
    st = compute_standings([A, B, C, D], ms, ["games_won", "head_to_head"])
    # wins: A 2 (B, D), B 2 (D, C), C 1 (A), D 1 (C)
    assert [s.entrant for s in st] == [A, B, D, C]
    assert [s.rank for s in st] == [1, 2, 3, 4]


def test_buchholz_cuts_and_sonneborn_berger() -> None:
    ms = [M(1, 1, 2, 1, 0), M(1, 3, 4, 1, 0), M(2, 1, 3, 0, 1), M(2, 2, 4, 1, 1), M(3, 1, 4, 1, 0), M(3, 2, 3, 0, 1)]
    st = {s.entrant: s for s in compute_standings([1, 2, 3, 4], ms, ["games_won", "buchholz", "buchholz_cut1", "buchholz_median", "sonneborn_berger"])}
    won = {1: 2.0, 2: 0.5, 3: 3.0, 4: 0.5}
    assert {e: s.games_won for e, s in st.items()} == won
    # 1 met 2, 3, 4
    assert st[1].tiebreaks["buchholz"] == 0.5 + 3 + 0.5
    assert st[1].tiebreaks["buchholz_cut1"] == 3 + 0.5
    assert st[1].tiebreaks["buchholz_median"] == 0.5
    # 1 beat 2 and 4: SB = 0.5 + 0.5; 2 drew 4 and lost: SB = 0.5 * 0.5
    assert st[1].tiebreaks["sonneborn_berger"] == 1.0
    assert st[2].tiebreaks["sonneborn_berger"] == 0.25


def test_byes_and_requested_byes() -> None:
    ms = [M(1, 1, None, 0, 0, "pairing-bye"), M(1, 2, None, 0, 0, "requested-bye"), M(2, 1, 2, 10, 20)]
    st = {s.entrant: s for s in compute_standings([1, 2], ms)}
    assert (st[1].wins, st[1].played) == (1, 2)
    assert (st[2].wins, st[2].played) == (1, 1)


def test_lots_are_fixed_by_seed_and_differ_between_seeds() -> None:
    a = compute_standings([1, 2, 3, 4], [], ["lots"], lots_seed="x")
    b = compute_standings([1, 2, 3, 4], [], ["lots"], lots_seed="x")
    assert [s.entrant for s in a] == [s.entrant for s in b]
    assert {lots_value("x", 1), lots_value("y", 1)} != {lots_value("x", 1)}
    assert [s.rank for s in a] == [1, 2, 3, 4]


def test_bad_tiebreak_names_are_refused() -> None:
    with pytest.raises(TiebreakError, match="unknown tie-break 'elo'"):
        compute_standings([1], [], ["elo"])
    with pytest.raises(TiebreakError, match="twice"):
        compute_standings([1], [], ["lots", "lots"])


def test_default_tiebreak_order_is_the_documented_one() -> None:
    """Issue 21: every other test passes an explicit order, so swapping two defaults
    went unseen. Each adjacent pair of defaults is told apart here, with no order given."""
    from tablesense.tournament.service import default_options
    from tablesense.tournament.standings import DEFAULT_TIEBREAKS

    assert DEFAULT_TIEBREAKS == ("games_won", "point_difference", "points_for", "head_to_head", "lots")
    assert default_options("dominoes", "pairs-pips")["tiebreaks"] == list(DEFAULT_TIEBREAKS)
    # games_won before point_difference: 1 beat 2 narrowly, 2 crushed 3; 1 has two wins
    ms = [M(1, 1, 2, 101, 100), M(2, 2, 3, 200, 0), M(2, 1, 3, 101, 100)]
    assert [s.entrant for s in compute_standings([1, 2, 3], ms)][:2] == [1, 2]
    # point_difference before points_for: A (+40, 190 for) ahead of B (0, 250 for), all one win each
    a, b, c, d = 1, 2, 3, 4
    ms = [M(1, a, c, 100, 50), M(1, b, d, 100, 90), M(2, c, b, 160, 150), M(2, d, a, 100, 90)]
    st = compute_standings([a, b, c, d], ms)
    assert [s.entrant for s in st] == [a, b, d, c]
    assert [s.entrant for s in compute_standings([a, b, c, d], ms, ["games_won", "points_for", "point_difference"])][0] == b
    # points_for before head_to_head: E and F level on wins and difference, E more points, F beat E
    e, f, g, h = 5, 6, 7, 8
    ms = [M(1, f, e, 100, 90), M(1, g, h, 0, 0), M(2, e, g, 200, 190), M(2, f, h, 90, 100)]
    order = [s.entrant for s in compute_standings([e, f, g, h], ms)]
    assert order.index(e) < order.index(f)
    swapped = compute_standings([e, f, g, h], ms, ["games_won", "point_difference", "head_to_head", "points_for"])
    assert [s.entrant for s in swapped].index(f) < [s.entrant for s in swapped].index(e)
    # head_to_head before lots: 1 and 2 level on wins, difference and points; 1 beat 2, whatever the lots say
    ms = [M(1, 1, 2, 100, 90), M(1, 3, 4, 0, 0), M(2, 3, 1, 100, 90), M(2, 2, 4, 100, 90)]
    for seed in ("a", "b", "c", "d", "e", "f"):
        order = [s.entrant for s in compute_standings([1, 2, 3, 4], ms, lots_seed=seed)]
        assert order.index(1) < order.index(2)
