"""Confirmation modes (badges / buttons / director), the console's confirm
actions, "pair next round" only when possible, and the final winner."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.tournament.console import confirm_match, confirm_reported, final_result, pair_status
from tablesense.tournament.db import Match
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Ack, Director, DirectorError

from .test_director import make_event, result_for

KEYS = {1: TableKey.from_seed(b"table-1"), 2: TableKey.from_seed(b"table-2")}


def _report_all(d: Director, rnd: int, rev0: int = 1) -> None:
    for i, m in enumerate(d.matches(rnd)):
        if m.table_no is None:
            continue
        ack = d.ingest(m.table_no, result_for(d, m.id, KEYS[m.table_no], rev0 + i, seed=rnd * 10 + i))
        assert ack.status == "accepted", ack.reason


def test_unknown_confirmation_mode_is_refused(sqlite_url: str) -> None:
    with pytest.raises(DirectorError, match="unknown confirmation mode 'nods'; choose from badges, buttons, director"):
        make_event(sqlite_url, confirm="nods")


def test_director_mode_event_runs_to_its_winner_without_badges(sqlite_url: str) -> None:
    """A whole event end to end, on one backend (its steps' storage is tested on both)."""
    d, _ = make_event(sqlite_url, n=4, confirm="director", rounds=2)
    assert pair_status(d).can
    assert d.pair_next_round() == 1
    st = pair_status(d)
    assert not st.can and st.reason == "round 1 is not finished: 2 still playing (tables 1, 2)"
    _report_all(d, 1)
    st = pair_status(d)
    assert not st.can and st.reason == "round 1 is not finished: 2 reported but not confirmed (tables 1, 2)"
    # a table cannot confirm in director mode
    m = d.matches(1)[0]
    assert m.table_no is not None
    ack = d.ingest(m.table_no, KEYS[m.table_no].sign({"kind": "confirm", "event": d.event_id, "round": 1, "table": m.table_no,
                                                     "revision": 1, "match": m.id, "badges": ["b1a", "b2a", "b3a", "b4a"]}))
    assert ack.status == "refused" and "confirmed by the director" in ack.reason
    one = confirm_match(d, m.id, "director-web")
    assert one.confirmed
    with pytest.raises(DirectorError, match="already confirmed"):
        confirm_match(d, m.id)
    rest = confirm_reported(d)
    assert [x.id for x in rest] == [d.matches(1)[1].id]
    assert pair_status(d).can and final_result(d) is None
    d.pair_next_round()
    with pytest.raises(DirectorError, match="has no result to confirm yet"):
        confirm_match(d, d.matches(2)[0].id)
    _report_all(d, 2, rev0=1)
    confirm_reported(d)
    st = pair_status(d)
    assert st.over and not st.can and st.reason == "the event is over: all 2 Swiss rounds are played"
    fin = final_result(d)
    assert fin is not None and fin["round"] == 2
    top = d.standings()[0]
    assert fin["winners"][0]["entrant"] == top.entrant
    actions = [(a["actor"], a["action"], a["detail"].get("by")) for a in d.audit_log() if a["action"] == "result-confirmed"]
    assert actions[0] == ("director-web", "result-confirmed", "director") and len(actions) == 4


def test_buttons_mode_accepts_both_sides_and_a_refusal_calls_the_director(db_url: str) -> None:
    d, _ = make_event(db_url, n=4, confirm="buttons", rounds=1)
    d.pair_next_round()
    _report_all(d, 1)
    m1, m2 = d.matches(1)
    assert m1.table_no is not None and m2.table_no is not None

    revision = {m1.id: 1, m2.id: 2}

    def confirm(m: Match, **kw: object) -> Ack:
        assert m.table_no is not None
        body = {"kind": "confirm", "event": d.event_id, "round": 1, "table": m.table_no,
                "revision": revision[m.id], "match": m.id, **kw}
        return d.ingest(m.table_no, KEYS[m.table_no].sign(body))

    half = confirm(m1, accepted=[0])
    assert half.status == "refused" and "did not press a seat button" in half.reason
    assert confirm(m1, accepted=[0, 1]).status == "accepted"
    assert confirm(m2, accepted=[0], refused=[1]).status == "accepted"
    after = {m.id: m for m in d.matches(1)}
    assert after[m1.id].confirmed and after[m2.id].status == "disputed" and not after[m2.id].confirmed
    assert pair_status(d).reason.endswith(f"1 disputed (table {m2.table_no})")
    assert confirm_reported(d) == []  # a disputed result is looked at on its own
    confirm_match(d, m2.id)
    assert final_result(d) is not None
    log = [a for a in d.audit_log() if a["action"] == "result-disputed"]
    assert log and log[0]["detail"]["refused"] == [1]


def test_cli_confirm_one_or_all(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    d, _ = make_event(url, n=4, confirm="director", rounds=1)
    d.pair_next_round()
    _report_all(d, 1)
    ms = d.matches(1)
    r = CliRunner().invoke(app, ["tournament", "confirm", str(ms[0].table_no), "--db", url])
    assert r.exit_code == 0, r.output
    assert f"confirmed round 1, table {ms[0].table_no}: #" in r.output and "Pair" in r.output
    r = CliRunner().invoke(app, ["tournament", "confirm", "--db", url])
    assert r.exit_code == 2 and "--all" in r.output
    r = CliRunner().invoke(app, ["tournament", "confirm", "--all", "--db", url])
    assert r.exit_code == 0 and f"confirmed round 1, table {ms[1].table_no}" in r.output
    assert "the event is over" in r.output
    r = CliRunner().invoke(app, ["tournament", "confirm", str(ms[0].table_no), "--db", url])
    assert r.exit_code == 1 and f"table {ms[0].table_no} in round 1 is already confirmed" in r.output


@pytest.mark.parametrize("mode", ["buttons", "director"])
def test_club_night_runs_to_final_standings_with_no_correction(sqlite_url: str, tmp_path: Path, mode: str) -> None:
    """The issue's "Done when": a club night with --confirm buttons (or the
    director confirming from the console) reaches its winner, nothing typed."""
    from tablesense.tournament.db import Database
    from tablesense.tournament.mosquitto import mosquitto_binary
    from tablesense.tournament.simulate import simulate
    from testsupport import need

    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    report = simulate(entrants=5, rounds=2, tables=2, seed=4, db_url=sqlite_url, broker="spawn", target=15,
                      workdir=tmp_path / "sim", confirm=mode)
    assert report.rounds == 2 and report.refused == 0
    d = Director(Database(sqlite_url), report.event_id)
    assert all(m.confirmed for m in d.matches())
    log = d.audit_log()
    assert not [a for a in log if a["action"] == "correction"]
    confirmed_by = {a["actor"].split("-")[0] for a in log if a["action"] == "result-confirmed"}
    assert confirmed_by == ({"table"} if mode == "buttons" else {"director"})
    fin = final_result(d)
    assert fin is not None and fin["winners"]


def test_checkin_at_the_table_sends_a_wrong_pair_to_its_table(db_url: str) -> None:
    d, _ = make_event(db_url, n=4, rounds=1)
    d.pair_next_round()
    m1, m2 = sorted(d.matches(1), key=lambda m: m.table_no or 0)
    assert m1.table_no == 1 and m2.table_no == 2
    names = {e.id: e for e in d.entrants()}

    def checkin(m: Match, table: int, **kw: object) -> Ack:
        body = {"kind": "checkin", "event": d.event_id, "round": 1, "table": table, "match": m.id, **kw}
        return d.ingest(table, KEYS[table].sign(body))

    stranger = names[m2.entrant_a]
    wrong = checkin(m1, 1, badges=[stranger.badges[0]])
    assert wrong.status == "refused" and wrong.reason == f"{stranger.name} plays at table 2, not at table 1"
    odd = checkin(m1, 1, badges=["deadbeef"])
    assert odd.status == "refused" and "badge deadbeef is not registered" in odd.reason
    ok = checkin(m1, 1, badges=[names[m1.entrant_a].badges[1]], accepted=[1])  # one badge, one seat button
    assert ok.status == "accepted"
    status = {e.id: e.status for e in d.entrants()}
    assert m1.entrant_b is not None and status[m1.entrant_a] == status[m1.entrant_b] == "checked_in"
    assert status[m2.entrant_a] == "registered"


def test_console_reannounces_the_round(sqlite_url: str) -> None:
    import re

    from fastapi.testclient import TestClient

    from tablesense.tournament.web import create_app, hash_password

    d, _ = make_event(sqlite_url, n=4, rounds=1)
    calls: list[int] = []
    c = TestClient(create_app(d, password_hash=hash_password("club-night-password"), secret_key="k",
                              on_round_paired=lambda: calls.append(d.current_round_no())))
    r = c.post("/login", data={"password": "club-night-password"}, follow_redirects=True)
    m = re.search(r'name="csrf" value="([^"]+)"', r.text)
    assert m
    assert "Re-announce" not in r.text  # nothing paired yet
    c.post("/director/pair", data={"csrf": m.group(1)}, follow_redirects=True)
    r = c.post("/director/announce", data={"csrf": m.group(1)}, follow_redirects=True)
    assert "round 1 announced again to every table" in r.text and "Re-announce round 1" in r.text
    assert calls == [1, 1]
    assert [a["action"] for a in d.audit_log()][-1] == "round-announced"
    assert c.post("/director/announce", data={"csrf": "forged"}).status_code == 403


def test_round_status_lists_each_table_under_its_own_state(sqlite_url: str) -> None:
    """Issue 30: "2 still playing; 2 reported but not confirmed (tables 1, 2, 3, 4)"
    listed every open table after the last state; each state names its own tables."""
    d, _ = make_event(sqlite_url, n=8, confirm="director", rounds=2)
    for t in (3, 4):
        KEYS.setdefault(t, TableKey.from_seed(f"table-{t}".encode()))
        d.add_table(t, KEYS[t].public)
    d.pair_next_round()
    ms = sorted(d.matches(1), key=lambda m: m.table_no or 0)
    assert [m.table_no for m in ms] == [1, 2, 3, 4]
    for i, m in enumerate(ms[2:]):  # tables 3 and 4 report; 1 and 2 play on
        assert m.table_no is not None
        assert d.ingest(m.table_no, result_for(d, m.id, KEYS[m.table_no], 1, seed=i)).status == "accepted"
    assert pair_status(d).reason == ("round 1 is not finished: 2 still playing (tables 1, 2); "
                                     "2 reported but not confirmed (tables 3, 4)")
    confirm_match(d, ms[3].id)
    assert pair_status(d).reason == ("round 1 is not finished: 2 still playing (tables 1, 2); "
                                     "1 reported but not confirmed (table 3)")
