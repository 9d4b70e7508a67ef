"""The replay viewer with a Kems match: the stored record stepped through event by event in
Chromium (board and hands drawn by the table display's own card function), and a match whose
result was entered by hand saying it has no record.

Screenshots at 1280x800 and 390x844 go to test-artifacts/web/memory-replay-kems-*.png."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tablesense.games.kems import KemsMatch
from tablesense.games.kems_players import make_player, play_round
from tablesense.tournament.db import Database
from tablesense.tournament.kway import match_entrants
from tablesense.tournament.players import add_player, register_players
from tablesense.tournament.record_view import kems_steps
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from tablesense.tournament.web import create_app, hash_password

from .test_club_evening import Server
from .test_players_web import PASSWORD, SIZES, _fits, _shoot


def kems_record(seed: int, target: int = 2, seats: int = 4) -> dict[str, Any]:
    """A genuine Kems match record played by the greedy bots (rounds that stall are dealt again)."""
    rng = random.Random(seed)
    m = KemsMatch({"target": target}, seats=seats)
    players = [make_player("greedy") for _ in range(seats)]
    while not m.is_over:
        if play_round(m.new_hand(rng), players, rng):
            m.finish_hand()
        else:
            m.abandon_hand()
    return m.to_record()


def _signed(d: Director, match_id: int, key: TableKey, rec: dict[str, Any]) -> dict[str, Any]:
    from tablesense.games.record import replay

    m = next(x for x in d.matches() if x.id == match_id)
    rr = replay(rec)
    score = [float(x) for x in rr.score]
    sides = match_entrants(m)
    return key.sign({"kind": "result", "event": d.event_id, "round": m.round_no, "table": m.table_no, "revision": 1,
                     "match": m.id, "entrants": sides, "score": score, "games": [score],
                     "winner": None if rr.winner is None else sides[rr.winner], "records": [rec]})


def test_kems_steps_follow_the_engine() -> None:
    rec = kems_record(5)
    view = kems_steps(rec)
    assert view["game"] == "kems" and len(view["hands"]) == len(rec["hands"])
    for rnd, r in zip(view["hands"], rec["hands"], strict=True):
        assert len(rnd["steps"]) == len(r["events"]) + 1
        assert rnd["steps"][0]["board"] == r["board"] and rnd["steps"][0]["hands"] == r["deal"]
        assert rnd["steps"][-1]["kind"] == "call"
        for before, after, ev in zip(rnd["steps"], rnd["steps"][1:], r["events"], strict=False):
            if "swap" in ev and ev["swap"]["give"] != ev["swap"]["take"]:
                slot = before["board"].index(ev["swap"]["take"])
                assert after["board"][slot] == ev["swap"]["give"] and after["changed"]["board"] == [slot]
                assert ev["swap"]["take"] in after["hands"][ev["seat"]]
                assert ev["swap"]["give"] not in after["hands"][ev["seat"]]
    assert view["hands"][-1]["score_after"] != [0.0, 0.0]


def test_kems_replay_in_chromium_and_a_hand_entered_result(browser: Any, tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'club.db'}")
    ps = [add_player(db, f"K{i}") for i in range(8)]
    d = Director.create_event(db, "Kems night", game="kems", variant="classic",
                              options={"target": 2, "lots_seed": "k", "rounds": 1})
    for i in range(0, 8, 2):
        register_players(d, ps[i:i + 2])
    keys = {n: TableKey.from_seed(f"table-{n}".encode()) for n in (1, 2)}
    for n, key in keys.items():
        d.add_table(n, key.public)
    d.pair_next_round()
    played, by_hand = sorted(d.matches(1), key=lambda m: m.table_no or 0)
    rec = kems_record(5)
    table = played.table_no or 1
    assert d.ingest(table, _signed(d, played.id, keys[table], rec)).status == "accepted"
    d.correct(by_hand.id, (2.0, 0.0), by_hand.entrant_a, "scoresheet from the table", "director")

    c = TestClient(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k"))
    pages = "".join(c.get(f"/players/{p}").text for p in ps)  # both matches are linked from their players' pages
    assert f'href="/replay/{played.id}"' in pages and f'href="/replay/{by_hand.id}"' in pages
    assert c.get(f"/replay/{played.id}?game=2").status_code == 404  # one record only
    # the round to look at: the first with a swap that changes the board
    r = next(i for i, h in enumerate(rec["hands"]) if any("swap" in e and e["swap"]["give"] != e["swap"]["take"]
                                                          for e in h["events"]))
    first_swap = next(j for j, e in enumerate(rec["hands"][r]["events"]) if "swap" in e)
    srv = Server(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k"))
    try:
        for size, (w, h) in SIZES.items():
            page = browser.new_page(viewport={"width": w, "height": h})
            try:
                page.goto(srv.url + f"/replay/{played.id}")
                page.select_option("#hand", str(r))
                assert page.inner_text("#move") == "the deal" and page.is_disabled("#prev")
                assert page.locator("#kems-board .card").count() == 4  # drawn by TableDisplay.cardNode
                assert page.locator("#kems-seats .seat").count() == 4
                assert page.locator("#kems-seats .seat .card").count() == 16
                board0 = page.get_attribute("#kems-board", "data-cards")
                for _ in range(first_swap + 1):
                    page.click("#next")
                ev = rec["hands"][r]["events"][first_swap]
                assert "gives" in page.inner_text("#move") and page.get_attribute("#move", "data-kind") == "swap"
                board1 = page.get_attribute("#kems-board", "data-cards") or ""
                assert board1 != board0 and ev["swap"]["give"] in board1.split()
                assert ev["swap"]["take"] in (page.get_attribute(f'#kems-seats .seat[data-seat="{ev["seat"]}"]',
                                                                 "data-cards") or "").split()
                assert page.locator("#kems-board .card.changed").count() == 1
                assert page.locator(f'#kems-board .card[data-card="{ev["swap"]["give"]}"]').count() == 1
                _shoot(page, f"replay-kems-swap-{size}")
                page.keyboard.press("End")
                assert page.is_disabled("#next") and "calls" in page.inner_text("#move")
                assert page.get_attribute("#move", "data-kind") == "call" and "after" in page.inner_text("#score")
                _fits(page)
                _shoot(page, f"replay-kems-{size}")
                page.goto(srv.url + f"/replay/{by_hand.id}")
                assert "no stored record" in page.inner_text("#no-record")
                assert "entered by hand" in page.inner_text("#no-record")
                assert page.locator("#kems-board, #line, #next").count() == 0  # no empty viewer
                _fits(page)
                _shoot(page, f"replay-none-{size}")
            finally:
                page.close()
    finally:
        srv.stop()


def test_a_six_seat_kems_replay_names_the_players_and_no_hands_overlap(browser: Any, tmp_path: Path) -> None:
    """Three teams at a table, at 1280 px: every seat's four cards inside its own box (they overlapped)."""
    db = Database(f"sqlite:///{tmp_path / 'club.db'}")
    d = Director.create_event(db, "Kems six", game="kems", variant="classic",
                              options={"target": 2, "lots_seed": "k", "rounds": 1, "seats": 6})
    for team in ("Ana Bia", "Cy Di", "Eva Flo"):
        d.register(team, team.split())
    key = TableKey.from_seed(b"table-1")
    d.add_table(1, key.public)
    d.pair_next_round()
    m = d.matches(1)[0]
    rec = kems_record(7, seats=6)
    assert d.ingest(1, _signed(d, m.id, key, rec)).status == "accepted"
    srv = Server(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k"))
    try:
        for size, (w, h) in SIZES.items():
            page = browser.new_page(viewport={"width": w, "height": h})
            try:
                page.goto(srv.url + f"/replay/{m.id}")
                assert page.locator("#kems-seats .seat").count() == 6
                labels = page.locator("#kems-seats .seat > span").all_inner_texts()
                teams = [next(e.members for e in d.entrants() if e.id == t) for t in match_entrants(m)]
                # partners face each other: team t holds seats t and t + 3
                assert [x.split(" · ")[0] for x in labels] == [teams[s % 3][s // 3] for s in range(6)], labels
                for seat in page.locator("#kems-seats .seat").all():
                    box = seat.bounding_box()
                    assert box is not None
                    for card in seat.locator(".card").all():
                        c = card.bounding_box()
                        assert c is not None and box["x"] <= c["x"] and c["x"] + c["width"] <= box["x"] + box["width"] + 0.5, \
                            (size, box, c)
                page.keyboard.press("End")
                assert "Seat" not in page.inner_text("#move")
                _fits(page)
                _shoot(page, f"replay-kems-six-{size}")
            finally:
                page.close()
    finally:
        srv.stop()
