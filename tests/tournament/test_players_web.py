"""The club's memory in Chromium: players, a player's page (chart), seasons, ratings on the
standings and the projector, and the director entering club players by search as you type.

Screenshots at 1280x800 and 390x844 go to test-artifacts/web/memory-*.png."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tablesense.tournament.club_sim import simulate_club
from tablesense.tournament.db import Database
from tablesense.tournament.players import add_player
from tablesense.tournament.service import Director
from tablesense.tournament.web import create_app, hash_password
from testsupport import REPO

from .test_club_evening import Server

ARTIFACTS = REPO / "test-artifacts" / "web"
PASSWORD = "club-night-password"
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('club') / 'club.db'}"
    simulate_club(url, players=12, evenings=3, rounds=3, seed=3)
    return url


def _shoot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"memory-{name}.png"), full_page=True)


def _fits(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


def test_pages_and_exports_without_a_browser(club: str) -> None:
    d = Director(Database(club), 3)
    c = TestClient(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k"))
    assert c.get("/players/999").status_code == 404 and c.get("/seasons/9").status_code == 404
    rows = list(csv.reader(io.StringIO(c.get("/seasons/1.csv").text)))
    assert rows[0][5:] == ["Club night 1", "Club night 2", "Club night 3"] and len(rows) == 13
    js = c.get("/seasons/1.json").json()
    assert [e["over"] for e in js["events"]] == [True, True, True] and js["table"][0]["rank"] == 1
    found = c.get("/api/players?q=player 0").json()
    assert len(found) == 9 and "badge" not in found[0]  # badges only for the director
    ev = c.get("/api/evening-ratings").json()
    assert ev["family"] == "dominoes-pairs" and len(ev["rows"]) == 12
    assert any(r["delta"] != 0 for r in ev["rows"])  # the evening moved ratings
    page = c.get("/players/1").text
    assert "<svg" in page and "polyline" in page and "<script" not in page.split("<main")[1]  # the chart is inline SVG


@pytest.mark.parametrize("size", SIZES)
def test_memory_pages_in_chromium(browser: Any, club: str, size: str) -> None:
    db = Database(club)
    app = create_app(Director(db, 3), password_hash=hash_password(PASSWORD), secret_key="k")
    srv = Server(app)
    w, h = SIZES[size]
    page = browser.new_page(viewport={"width": w, "height": h})
    try:
        page.goto(srv.url + "/players")
        assert page.locator("#players tbody tr").count() == 12
        assert page.locator("#players .badge.prov").count() == 12  # 9 pairs matches each: all still provisional
        _fits(page)
        _shoot(page, f"players-{size}")
        page.fill("#q", "player 1")
        page.wait_for_url(re.compile(r"q=player"), timeout=5000)
        assert page.locator("#players tbody tr").count() == 3  # Player 10, 11, 12
        page.goto(srv.url + "/players/1")
        assert page.locator("svg.rating-chart polyline.mu").count() == 1
        assert page.locator("svg.rating-chart line.evening").count() == 3
        assert page.locator("#evenings tbody tr").count() == 3 and page.locator("#matches tbody tr").count() == 9
        for row in page.locator("#matches tbody tr").all():  # the player's own score first: "59 – 39 lost" read wrong
            mine, *others = [float(x) for x in row.locator("td").nth(2).inner_text().split(" – ")]
            badge = row.locator("td .badge").get_attribute("class") or ""
            assert mine > max(others) if "confirmed" in badge else mine < max(others) if "disputed" in badge else True
        _fits(page)
        _shoot(page, f"player-{size}")
        page.goto(srv.url + "/seasons/1")
        assert page.locator("#season tbody tr").count() == 12
        assert page.locator("#season tbody tr.leader td.rank").first.inner_text() == "1"
        _fits(page)
        _shoot(page, f"season-{size}")
        page.emulate_media(media="print")
        _shoot(page, f"season-print-{size}")
        page.emulate_media(media="screen")
        page.goto(srv.url + "/standings")
        assert page.locator("#evening-ratings tbody tr").count() == 12
        assert page.locator("#evening-ratings td.delta.up").count() >= 1
        assert page.locator("#evening-ratings td.delta.down").count() >= 1
        _fits(page)
        _shoot(page, f"standings-ratings-{size}")
        if size == "desktop":
            page.goto(srv.url + "/show?slide=0")
            n = page.locator("section.slide").count()
            page.goto(srv.url + f"/show?slide={n - 1}")
            slide = page.locator("section.slide.ratings").last
            assert slide.is_visible() and "Ratings this evening" in slide.inner_text()
            _shoot(page, "projector-ratings")
    finally:
        page.close()
        srv.stop()


def test_director_enters_club_players_by_search(browser: Any, tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'club.db'}")
    for n, b in (("Ana Souza", "04a1"), ("Bia Lima", "04b2"), ("Caio Reis", "04c3"), ("Anabela Dias", "04d4")):
        add_player(db, n, badge=b, club="Clube")
    d = Director.create_event(db, "Thursday night", variant="pairs-pips")
    srv = Server(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k", login_delay_s=0.0))
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(srv.url + "/login")
        page.fill("input[name=password]", PASSWORD)
        page.click("button")
        page.click("#club-players summary")
        page.fill("#player-search", "an")
        page.wait_for_selector("#found li")
        assert page.locator("#found li").all_inner_texts()[:2] == ["Ana Souza · 04a1", "Anabela Dias · 04d4"]
        page.locator("#found li").first.click()
        page.fill("#player-search", "04b2")  # by badge
        page.wait_for_selector("#found li:has-text('Bia Lima')")
        page.keyboard.press("Enter")
        assert page.locator("#picked li").count() == 2
        _shoot(page, "director-enter-players")
        page.click("#enter-btn")
        page.wait_for_selector(".flash")
        assert "registered from the club's players" in page.locator(".flash").inner_text()
        e = d.entrants()[0]
        assert e.name == "Ana Souza & Bia Lima" and e.badges == ["04a1", "04b2"]
        assert any(a["action"] == "registered" and a["actor"] == "director" for a in d.audit_log())
    finally:
        page.close()
        srv.stop()


def test_replay_viewer_steps_through_a_hand(browser: Any, tmp_path: Path) -> None:
    from tablesense.tournament.security import TableKey

    from .test_director import result_for

    db = Database(f"sqlite:///{tmp_path / 'club.db'}")
    ps = [add_player(db, f"P{i}") for i in range(4)]
    d = Director.create_event(db, "Replay night", options={"target": 30, "lots_seed": "t", "rounds": 1})
    from tablesense.tournament.players import register_players

    register_players(d, ps[:2])
    register_players(d, ps[2:])
    key = TableKey.from_seed(b"table-1")
    d.add_table(1, key.public)
    d.pair_next_round()
    m = d.matches(1)[0]
    assert d.ingest(1, result_for(d, m.id, key, revision=1)).status == "accepted"
    c = TestClient(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k"))
    assert f'href="/replay/{m.id}"' in c.get(f"/players/{ps[0]}").text
    assert c.get(f"/replay/{m.id}?game=2").status_code == 404  # one record only
    srv = Server(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k"))
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(srv.url + f"/replay/{m.id}")
        # it opens on the first move (not an empty table), named by the player who made it
        first = page.inner_text("#move")
        assert "plays" in first and "Seat" not in first and first.split(" plays ")[0] in {"P0", "P1", "P2", "P3"}, first
        assert page.locator("#line svg").count() == 1  # the display's renderer drew the opening tile
        page.click("#prev")
        assert page.inner_text("#move") == "the deal" and page.is_disabled("#prev")
        page.click("#next")
        page.keyboard.press("End")
        assert page.is_disabled("#next") and "after" in page.inner_text("#score")
        _fits(page)
        _shoot(page, "replay-desktop")
    finally:
        page.close()
        srv.stop()
