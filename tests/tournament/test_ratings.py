"""Ratings: openskill per family, from confirmed results only, replayable, corrections propagate."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tablesense.tournament import ratings as rt
from tablesense.tournament.db import Database
from tablesense.tournament.players import (
    add_player,
    by_badge,
    entrant_players,
    register_players,
    search,
)
from tablesense.tournament.service import Director, DirectorError


def _club(db: Database, n: int) -> list[int]:
    return [add_player(db, f"Player {i:02d}", badge=f"b{i}", club="Test club") for i in range(1, n + 1)]


def _evening(db: Database, k: int, players: list[int], rng: random.Random, *, pairs: bool = False,
             rounds: int = 2, first_round: str = "drawn") -> Director:
    """One evening of a Swiss whose results are entered by the director (the stronger id wins 70%)."""
    variant = "pairs-pips" if pairs else "pips-two-player"
    d = Director.create_event(db, f"Night {k}", variant=variant, options={"rounds": rounds, "lots_seed": f"t{k}",
                                                                           "first_round": first_round})
    here = list(players)
    rng.shuffle(here)
    size = 2 if pairs else 1
    for i in range(0, len(here) - len(here) % size, size):
        register_players(d, here[i:i + size])
    for r in range(1, rounds + 1):
        d.pair_next_round()
        for m in d.matches(r):
            if m.kind == "match" and m.entrant_b is not None:
                a_wins = rng.random() < (0.7 if m.entrant_a < m.entrant_b else 0.3)
                d.correct(m.id, (100.0, 50.0) if a_wins else (50.0, 100.0), m.entrant_a if a_wins else m.entrant_b,
                          "entered by hand", "test")
    return d


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database(f"sqlite:///{tmp_path / 'club.db'}")


def test_players_search_badge_and_one_entrant_per_event(db: Database) -> None:
    ana = add_player(db, "Ana Souza", badge="04AA")
    add_player(db, "Bia Lima")
    add_player(db, "Anabela")
    assert [p.name for p in search(db, "an")] == ["Ana Souza", "Anabela"]
    assert [p.name for p in search(db, "sou")] == ["Ana Souza"]  # a later word of the name
    assert [p.name for p in search(db, "04aa")] == ["Ana Souza"]
    assert search(db, "%") == []  # LIKE wildcards are literal
    found = by_badge(db, "04AA")
    assert found is not None and found.id == ana
    with pytest.raises(DirectorError, match="badge 04aa already belongs"):
        add_player(db, "Other", badge="04AA")
    d = Director.create_event(db, "Night", variant="pips-two-player")
    e = register_players(d, [ana])
    assert d.entrants()[0].id == e and d.entrants()[0].badges == ["04aa"]  # the badge check-in finds her
    with pytest.raises(DirectorError, match="already entered"):
        register_players(d, [ana])


def test_only_confirmed_matches_are_rated(db: Database) -> None:
    a, b = _club(db, 2)
    d = Director.create_event(db, "Night", variant="pips-two-player", options={"rounds": 1})
    register_players(d, [a])
    register_players(d, [b])
    d.pair_next_round()
    m = d.matches(1)[0]
    rt.update(db)
    assert rt.current(db, "dominoes-individual") == {}  # pending: nothing rated
    d.correct(m.id, (100.0, 20.0), m.entrant_a, "by hand", "test")
    rt.update(db)
    now = rt.current(db, "dominoes-individual")
    winner = d.entrants()[0].id == m.entrant_a and a or b
    loser = b if winner == a else a
    assert now[winner].mu > rt.MU0 > now[loser].mu
    assert now[winner].sigma < rt.SIGMA0 and now[winner].games == 1
    assert now[winner].provisional  # one match: still provisional
    assert rt.current(db, "dominoes-pairs") == {} and rt.current(db, "kems") == {}  # families apart


def test_ratings_are_reproducible_from_results(db: Database, tmp_path: Path) -> None:
    club = _club(db, 12)
    rng = random.Random(5)
    for k in range(1, 4):
        _evening(db, k, club, rng)
        rt.update(db)
    kept = rt.stored_changes(db, "dominoes-individual")
    assert len({row[0] for row in kept}) == 3 * 2 * 6  # every match of 3 evenings, 2 rounds, 6 tables
    rt.recompute(db)
    assert rt.stored_changes(db, "dominoes-individual") == kept
    # and the pure replay of the collected results gives the same final ratings
    with db.session() as s:
        matches = rt.collect(s, "dominoes-individual")
    assert rt.replay(matches) == rt.current(db, "dominoes-individual")
    assert rt.update(db)[1] == rt.UpdateReport("dominoes-individual", len(matches), 0)  # idempotent


def test_correction_in_evening_three_propagates_like_a_recomputation(db: Database) -> None:
    club = _club(db, 12)
    rng = random.Random(11)
    nights = []
    for k in range(1, 6):
        nights.append(_evening(db, k, club, rng))
        rt.update(db)
    before = rt.stored_changes(db, "dominoes-individual")
    third = nights[2]
    m = next(x for x in third.matches(1) if x.kind == "match")
    flipped = m.entrant_b if m.winner_id == m.entrant_a else m.entrant_a
    score = (50.0, 100.0) if flipped == m.entrant_b else (100.0, 50.0)
    third.correct(m.id, score, flipped, "wrong winner entered", "test")
    rep = {r.family: r for r in rt.update(db)}["dominoes-individual"]
    with db.session() as s:
        order = [x.match_id for x in rt.collect(s, "dominoes-individual")]
    assert rep.kept == order.index(m.id)  # replayed from the corrected match, not from the start
    incremental = rt.stored_changes(db, "dominoes-individual")
    assert incremental != before
    # rows before the corrected match are untouched; the later ones all moved
    first = order.index(m.id)
    assert [r for r in incremental if r[0] < first] == [r for r in before if r[0] < first]
    later_players = {r[1] for r in incremental if r[0] > first}
    assert any(r not in before for r in incremental if r[0] > first and r[1] in later_players)
    rt.recompute(db)
    assert rt.stored_changes(db, "dominoes-individual") == incremental


def test_pairs_entrant_strength_and_first_round_by_rating(db: Database) -> None:
    club = _club(db, 8)
    skills = {club[0]: rt.Skill(35.0, 3.0, 10), club[1]: rt.Skill(15.0, 3.0, 10)}
    assert rt.team_strength(skills, [club[0], club[1]]) == 50.0
    assert rt.team_strength(skills, [club[2], club[3]]) == 2 * rt.MU0  # two new players
    rng = random.Random(2)
    for k in range(1, 4):
        _evening(db, k, club, rng, rounds=3)
    rt.update(db)
    now = rt.current(db, "dominoes-individual")
    d = Director.create_event(db, "Seeded night", variant="pips-two-player", options={"rounds": 2, "first_round": "rating"})
    ents = {register_players(d, [p]): p for p in club}
    d.pair_next_round()
    by_strength = sorted(ents, key=lambda e: -now[ents[e]].mu)
    pairs = [{m.entrant_a, m.entrant_b} for m in d.matches(1)]
    assert pairs == [set(by_strength[i:i + 2]) for i in range(0, 8, 2)]  # neighbours in rating meet


def test_provisional_rule() -> None:
    assert rt.Skill().provisional
    assert rt.Skill(30.0, 4.0, rt.PROVISIONAL_GAMES - 1).provisional
    assert rt.Skill(30.0, rt.PROVISIONAL_SIGMA + 0.1, 50).provisional
    assert not rt.Skill(30.0, 4.0, rt.PROVISIONAL_GAMES).provisional


def test_places_and_kway_ranks() -> None:
    assert rt.places([3.0, 4.0, 0.0]) == (1, 0, 2)
    assert rt.places([2.0, 2.0, 1.0, 5.0]) == (1, 1, 3, 0)
    skills: dict[int, rt.Skill] = {}
    rt.rate(skills, rt.RatedMatch(1, 1, 1, 1, ((1,), (2,), (3,)), (1, 0, 2)))
    assert skills[2].mu > skills[1].mu > skills[3].mu


@pytest.mark.parametrize(("game", "variant", "seats", "family"), [
    ("dominoes", "brazilian-points", 3, "dominoes-individual"),
    ("kems", "classic", 6, "kems"),
])
def test_tables_of_three_are_rated_by_place(db_url: str, game: str, variant: str, seats: int, family: str) -> None:
    """Three players at a brazilian-points table, three Kems teams: one Plackett-Luce update by place
    (on SQLite and PostgreSQL: the migration's tables on both)."""
    from tablesense.tournament import kway

    db = Database(db_url)
    size = 2 if game == "kems" else 1
    club = _club(db, 6 * size)
    d = Director.create_event(db, "Table of three", game=game, variant=variant, options={"seats": seats, "rounds": 1})
    ents = [register_players(d, club[i:i + size]) for i in range(0, len(club), size)]
    d.pair_next_round()
    tables = [m for m in d.matches(1) if m.kind == "match"]
    assert len(tables) == 2 and all(len(m.entrants or []) == 3 for m in tables)
    for m in tables:
        kway.correct_table(d, m.id, "1-4-0", "entered by hand", "test")
    rt.update(db)
    now = rt.current(db, family)
    assert len(now) == len(club)
    with db.session() as s:
        link = entrant_players(s, ents)
    for m in tables:
        seat = [link[int(e)][0] for e in m.entrants or []]
        first, second, third = seat[1], seat[0], seat[2]  # scores 1-4-0 in seat order
        assert now[first].mu > rt.MU0 > now[third].mu and now[first].mu > now[second].mu > now[third].mu
    rt.recompute(db)
    assert rt.current(db, family) == now
    db.close()


def test_first_round_option_is_checked(db: Database) -> None:
    with pytest.raises(DirectorError, match="first_round is drawn, seeded or rating"):
        Director.create_event(db, "Night", options={"first_round": "elo"})
