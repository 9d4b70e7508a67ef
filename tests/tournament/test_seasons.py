"""Seasons: placement points or match points, best N of M evenings, live as evenings end, exports."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tablesense.tournament.club_sim import simulate_club, spearman
from tablesense.tournament.db import Database
from tablesense.tournament.players import add_player, register_players
from tablesense.tournament.seasons import add_event, create_season, season_table
from tablesense.tournament.service import Director, DirectorError


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(f"sqlite:///{tmp_path / 'club.db'}")


def _night(db: Database, k: int, players: list[int], winners: list[int], *, finish: bool = True) -> Director:
    """Four players, one round: ``winners`` (player ids) win their match; the rest lose."""
    d = Director.create_event(db, f"Night {k}", variant="pips-two-player",
                              options={"rounds": 1, "first_round": "seeded", "lots_seed": f"n{k}"})
    ent = {p: register_players(d, [p], seed=i) for i, p in enumerate(players)}
    d.pair_next_round()
    if finish:
        for m in d.matches(1):
            a_wins = any(ent[w] == m.entrant_a for w in winners)
            pts = [100.0, 40.0 + 10 * k] if a_wins else [40.0 + 10 * k, 100.0]
            d.correct(m.id, (pts[0], pts[1]), m.entrant_a if a_wins else m.entrant_b, "by hand", "test")
    return d


def test_placement_points_best_n_and_live_as_evenings_end(db: Database) -> None:
    ana, bia, cai, dan = (add_player(db, n) for n in ("Ana", "Bia", "Cai", "Dan"))
    sid = create_season(db, "Spring", best=2)
    nights = [
        _night(db, 1, [ana, bia, cai, dan], [ana, bia]),
        _night(db, 2, [ana, bia, cai, dan], [ana, dan]),
        _night(db, 3, [ana, bia, cai, dan], [cai, dan], finish=False),
    ]
    for d in nights:
        add_event(db, sid, d.event_id)
    t = season_table(db, sid)
    assert [e["over"] for e in t.events] == [True, True, False]  # evening 3 not over: not counted yet
    # The places of each evening follow the standings' tie-breaks; the points are the place's.
    places = {}
    for d in nights[:2]:
        link = {e.id: e.members[0] for e in d.entrants()}
        places[d.event_id] = {link[st.entrant]: st.rank for st in d.standings()}
    pts = (25, 18, 15, 12)
    by = {r.name: r for r in t.rows}
    for name in ("Ana", "Bia", "Cai", "Dan"):
        got = [by[name].evenings[d.event_id] for d in nights[:2]]
        assert got == [float(pts[places[d.event_id][name] - 1]) for d in nights[:2]]
    assert t.rows[0].name == "Ana" and t.rows[0].wins >= 1
    # evening 3 ends: its points arrive, and only each player's best two of three count
    for m in nights[2].matches(1):
        nights[2].correct(m.id, (100.0, 0.0), m.entrant_a, "by hand", "test")
    t = season_table(db, sid)
    assert all(e["over"] for e in t.events)
    for r in t.rows:
        assert len(r.evenings) == 3 and len(r.counted) == 2
        assert r.total == sum(sorted(r.evenings.values(), reverse=True)[:2])
    assert [r.total for r in t.rows] == sorted((r.total for r in t.rows), reverse=True)
    rows = list(csv.reader(io.StringIO(t.to_csv())))
    assert rows[0][:5] == ["rank", "player", "total", "played", "wins"] and len(rows) == 5
    assert any(c.startswith("(") for row in rows[1:] for c in row[5:])  # the dropped evening shown in brackets
    js = t.to_json()
    assert js["season"]["best"] == 2 and len(js["table"][0]["evenings"]) == 3


def test_match_points_scoring(db: Database) -> None:
    ana, bia, cai, dan = (add_player(db, n) for n in ("Ana", "Bia", "Cai", "Dan"))
    sid = create_season(db, "Summer", scoring="match-points")
    add_event(db, sid, _night(db, 1, [ana, bia, cai, dan], [ana, bia]).event_id)  # seeded: Ana-Cai, Bia-Dan
    t = season_table(db, sid)
    assert {r.name: r.total for r in t.rows} == {"Ana": 1.0, "Bia": 1.0, "Cai": 0.0, "Dan": 0.0}


def test_season_options_are_checked(db: Database) -> None:
    with pytest.raises(DirectorError, match="unknown season scoring"):
        create_season(db, "X", scoring="elo")
    with pytest.raises(DirectorError, match="best N"):
        create_season(db, "X", best=0)
    with pytest.raises(DirectorError, match="no event 99"):
        create_season(db, "X", events=[99])


def test_pairs_result_counts_for_both_players(db: Database) -> None:
    ps = [add_player(db, f"P{i}") for i in range(4)]
    d = Director.create_event(db, "Pairs night", variant="pairs-pips", options={"rounds": 1})
    e1 = register_players(d, ps[:2])
    register_players(d, ps[2:])
    d.pair_next_round()
    m = d.matches(1)[0]
    d.correct(m.id, (100.0, 30.0) if m.entrant_a == e1 else (30.0, 100.0), e1, "by hand", "test")
    sid = create_season(db, "Pairs", events=[d.event_id])
    t = season_table(db, sid)
    assert {r.name: r.total for r in t.rows} == {"P0": 25.0, "P1": 25.0, "P2": 18.0, "P3": 18.0}


def test_simulated_season_gives_a_stable_table(tmp_path: Path) -> None:
    """A small club (16 players, 5 evenings; the 40 x 10 figure is in docs/tournament.md)."""
    rep = simulate_club(f"sqlite:///{tmp_path / 'c.db'}", players=16, evenings=5, rounds=3, seed=4)
    assert rep.table_stability > 0.8  # the order barely moves after the last evening
    assert rep.skill_correlation > 0.3  # ratings find the hidden skills
    assert rep.first_round_matches == 4 * 4


def test_spearman() -> None:
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
