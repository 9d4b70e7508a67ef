"""The director over a real database (SQLite and PostgreSQL): entrants, formats,
result ingestion (idempotent, refusing forged / replayed / out-of-turn results),
confirmations, corrections and the append-only audit log."""

from __future__ import annotations

import random
from typing import Any

import pytest
from sqlalchemy import delete, select, update
from sqlalchemy.exc import DBAPIError

from tablesense.tournament.db import AuditEntry, Database, Result, downgrade
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director, DirectorError


def play_record(seed: int, target: int = 30) -> dict[str, Any]:
    """A genuine pairs-pips match record, played by heaviest-tile bots."""
    from tablesense.games.dominoes import DominoMatch

    rng = random.Random(seed)
    m = DominoMatch("pairs-pips", {"target": target})
    while not m.is_over:
        h = m.new_hand(rng=rng)
        while not h.is_over:
            moves = h.legal_moves(h.to_play)
            h.play(max(moves, key=lambda mv: (getattr(getattr(mv, "tile", None), "pips", -1), rng.random())))
        m.finish_hand()
    return m.to_record()


def make_event(db_url: str, n: int = 4, fmt: str = "swiss", **opts: Any) -> tuple[Director, TableKey]:
    d = Director.create_event(Database(db_url), "Club night", format=fmt, options={"target": 30, "lots_seed": "t", **opts})
    for i in range(1, n + 1):
        d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"], [f"b{i}a", f"b{i}b"], seed=i)
    key = TableKey.from_seed(b"table-1")
    d.add_table(1, key.public)
    d.add_table(2, TableKey.from_seed(b"table-2").public)
    return d, key


def result_for(d: Director, match_id: int, key: TableKey, revision: int, seed: int = 1, **override: Any) -> dict[str, Any]:
    from tablesense.games.record import replay

    m = next(x for x in d.matches() if x.id == match_id)
    rec = play_record(seed)
    rr = replay(rec)
    score = [float(x) for x in rr.score]
    body = {
        "kind": "result", "event": d.event_id, "round": m.round_no, "table": m.table_no, "revision": revision,
        "match": m.id, "entrants": [m.entrant_a, m.entrant_b], "score": score, "games": [score],
        "winner": None if rr.winner is None else [m.entrant_a, m.entrant_b][rr.winner], "records": [rec],
    }
    body.update(override)
    return key.sign(body)


def test_registration_rules(db_url: str) -> None:
    d, _ = make_event(db_url)
    with pytest.raises(DirectorError, match="already registered"):
        d.register("Pair 1", ["x", "y"])
    with pytest.raises(DirectorError, match="already belong"):
        d.register("Pair 9", ["x", "y"], ["b1a"])
    with pytest.raises(DirectorError, match="2 player"):
        d.register("Solo", ["only one"])
    e = d.entrants()[0].id
    d.check_in(e)
    with pytest.raises(DirectorError, match="reason"):
        d.withdraw(e, "")
    d.withdraw(e, "ill")
    assert {x.id: x.status for x in d.entrants()}[e] == "withdrawn"
    assert d.verify_audit_chain()


def test_ingestion_is_idempotent_and_refuses_bad_results(db_url: str) -> None:
    d, key = make_event(db_url)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    m2 = next(m for m in d.matches(1) if m.table_no == 2)
    good = result_for(d, m1.id, key, revision=1)
    assert d.ingest(1, good).status == "accepted"
    assert d.ingest(1, good).status == "duplicate"  # a re-send changes nothing
    # same key, other content (re-signed by the table: still a replay of the key)
    other = result_for(d, m1.id, key, revision=1, seed=7)
    a = d.ingest(1, other)
    assert a.status == "refused" and "replayed key" in a.reason
    # forged: signed with another key
    forged = TableKey.from_seed(b"evil").sign({k: v for k, v in good.items() if k != "sig"} | {"revision": 2})
    a = d.ingest(1, forged)
    assert a.status == "refused" and a.reason.startswith("forged")
    # tampered after signing
    tampered = dict(good, revision=3, score=[999, 0])
    assert d.ingest(1, tampered).reason.startswith("forged")
    # out of turn: table 1 reporting table 2's match, and on another table's topic
    ot = result_for(d, m2.id, key, revision=4, table=1)
    assert "out of turn" in d.ingest(1, ot).reason
    assert "topic" in d.ingest(2, good).reason
    # stale revision
    stale = result_for(d, m1.id, key, revision=1, seed=3)
    assert d.ingest(1, stale).status == "refused"
    # score that does not follow from the records
    wrong = result_for(d, m1.id, key, revision=5, score=[1.0, 2.0])
    assert "does not follow" in d.ingest(1, wrong).reason
    # exactly one stored result for the match
    with d.db.session() as s:
        assert len(list(s.scalars(select(Result).where(Result.match_id == m1.id)))) == 1
    refusals = [a for a in d.audit_log() if a["action"] == "refused"]
    assert len(refusals) == 7
    assert d.verify_audit_chain()


def test_illegal_records_are_refused(db_url: str) -> None:
    d, key = make_event(db_url)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    body = {k: v for k, v in result_for(d, m1.id, key, revision=1).items() if k != "sig"}
    rec = body["records"][0]
    rec["hands"][0]["moves"][1], rec["hands"][0]["moves"][2] = rec["hands"][0]["moves"][2], rec["hands"][0]["moves"][1]
    a = d.ingest(1, key.sign(body))
    assert a.status == "refused" and "does not replay" in a.reason


def test_confirmation_needs_both_badges_then_correction_is_audited(db_url: str) -> None:
    d, key = make_event(db_url)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    assert d.ingest(1, result_for(d, m1.id, key, revision=1)).status == "accepted"
    badges = {e.id: e.badges for e in d.entrants()}
    assert m1.entrant_b is not None
    base = {"kind": "confirm", "event": d.event_id, "round": 1, "table": 1, "revision": 1, "match": m1.id}
    half = key.sign(base | {"badges": [badges[m1.entrant_a][0]]})
    assert "has not confirmed" in d.ingest(1, half).reason
    both = key.sign(base | {"badges": [badges[m1.entrant_a][0], badges[m1.entrant_b][1]]})
    assert d.ingest(1, both).status == "accepted"
    assert d.ingest(1, both).status == "duplicate"
    assert not d.round_complete()
    # a late result for a confirmed match is refused: corrections go through the director
    late = result_for(d, m1.id, key, revision=2, seed=9)
    assert "already confirmed" in d.ingest(1, late).reason
    with pytest.raises(DirectorError, match="reason"):
        d.correct(m1.id, (10, 5), m1.entrant_a, "", "td")
    with pytest.raises(DirectorError, match="makes #. Pair . the winner of the match at table"):
        d.correct(m1.id, (10, 5), m1.entrant_b, "winner contradicts the score", "td")
    d.correct(m1.id, (10, 5), m1.entrant_a, "scoring sheet shows 10-5", "td")
    fixed = next(m for m in d.matches(1) if m.id == m1.id)
    assert (fixed.score_a, fixed.score_b, fixed.winner_id) == (10, 5, m1.entrant_a)
    corr = [a for a in d.audit_log() if a["action"] == "correction"]
    assert corr and corr[0]["reason"] == "scoring sheet shows 10-5"
    # the audit log is append-only: the database refuses edits and deletions ...
    with pytest.raises(DBAPIError, match="append-only"), d.db.session() as s:
        s.execute(update(AuditEntry).where(AuditEntry.id == corr[0]["id"]).values(reason="nothing to see"))
    with pytest.raises(DBAPIError, match="append-only"), d.db.session() as s:
        s.execute(delete(AuditEntry).where(AuditEntry.id == corr[0]["id"]))
    assert d.verify_audit_chain()
    # ... and whoever drops that protection to edit a row breaks the hash chain
    downgrade(d.db.engine, "0001")
    with d.db.session() as s:
        s.execute(update(AuditEntry).where(AuditEntry.id == corr[0]["id"]).values(reason="nothing to see"))
    assert not d.verify_audit_chain(full=True)
    assert not Director(d.db, d.event_id).verify_audit_chain()  # a director's first check is a full one


def _finish_round(d: Director, rng: random.Random) -> None:
    for m in d.matches(d.current_round_no()):
        if not m.confirmed:
            sa, sb = rng.choice([(30, 10), (12, 30)])
            d.correct(m.id, (sa, sb), m.entrant_a if sa > sb else m.entrant_b, "entered by hand in the test", "td")


def test_swiss_event_standings_equal_sum_of_matches(db_url: str) -> None:
    d, _ = make_event(db_url, n=9, rounds=4)
    rng = random.Random(5)
    met: set[frozenset[int]] = set()
    for _ in range(4):
        d.pair_next_round()
        for m in d.matches(d.current_round_no()):
            if m.entrant_b is not None:
                assert frozenset((m.entrant_a, m.entrant_b)) not in met
                met.add(frozenset((m.entrant_a, m.entrant_b)))
        _finish_round(d, rng)
    with pytest.raises(DirectorError, match="4 rounds"):
        d.pair_next_round()
    byes = [m.entrant_a for m in d.matches() if m.kind == "pairing-bye"]
    assert len(byes) == len(set(byes)) == 4
    for st in d.standings():
        mine = [m for m in d.matches() if st.entrant in (m.entrant_a, m.entrant_b)]
        assert st.wins == sum(1 for m in mine if m.winner_id == st.entrant)
        assert st.points_for == sum((m.score_a if m.entrant_a == st.entrant else m.score_b) or 0 for m in mine)


def test_withdrawn_and_requested_byes_are_left_out(db_url: str) -> None:
    d, _ = make_event(db_url, n=6, rounds=3)
    ids = [e.id for e in d.entrants()]
    d.request_bye(ids[0], 2)
    d.pair_next_round()
    _finish_round(d, random.Random(1))
    d.withdraw(ids[1], "left early")
    d.pair_next_round()
    r2 = d.matches(2)
    playing = {x for m in r2 if m.kind != "requested-bye" for x in (m.entrant_a, m.entrant_b)}
    assert ids[0] not in playing and ids[1] not in playing
    assert [m.entrant_a for m in r2 if m.kind == "requested-bye"] == [ids[0]]


def test_round_robin_knockout_and_groups(sqlite_url: str, tmp_path: Any) -> None:
    rng = random.Random(2)
    d, _ = make_event(sqlite_url, n=5, fmt="round-robin")
    for _ in range(5):
        d.pair_next_round()
        _finish_round(d, rng)
    with pytest.raises(DirectorError, match="every round"):
        d.pair_next_round()
    pairs = {frozenset((m.entrant_a, m.entrant_b)) for m in d.matches() if m.entrant_b}
    assert len(pairs) == 10

    k, _ = make_event(f"sqlite:///{tmp_path / 'ko.db'}", n=6, fmt="knockout", best_of=3)
    rounds = 0
    while True:
        try:
            k.pair_next_round()
        except DirectorError as exc:
            assert "decided" in str(exc)
            break
        rounds += 1
        assert all(m.best_of == 3 for m in k.matches(rounds) if m.kind == "match")
        _finish_round(k, rng)
    assert rounds == 3  # 6 -> (2 byes) 4 -> 2 -> 1
    final = k.matches(3)
    assert len(final) == 1 and final[0].winner_id is not None

    g, _ = make_event(f"sqlite:///{tmp_path / 'g.db'}", n=8, fmt="groups", group_size=4, advance=2)
    for _ in range(3):
        g.pair_next_round()
        assert all(m.group_no is not None for m in g.matches(g.current_round_no()))
        _finish_round(g, rng)
    g.pair_next_round()  # knockout of the top two of each group
    ko = g.matches(4)
    assert len(ko) == 2
    groups = {m.entrant_a: m.group_no for m in g.matches(1)} | {m.entrant_b: m.group_no for m in g.matches(1)}
    for m in ko:
        assert groups[m.entrant_a] != groups[m.entrant_b]  # winners meet the other group's runner-up
