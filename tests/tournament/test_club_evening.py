"""A whole club evening in Debian's Chromium (Playwright): the director registers
and checks in from the console, pairs, results arrive from headless tables over
Mosquitto and show up live (SSE, no reload), one is confirmed, one corrected,
the next round is paired, and the final standings name the winner. Screenshots
at 1280x800, 390x844 and 1920x1080 (projector) go to test-artifacts/web/;
pairings and standings print to PDF."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tablesense.tournament.bridge import DirectorBridge, wait_until
from tablesense.tournament.db import Database
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from tablesense.tournament.table_client import HeadlessTable
from tablesense.tournament.web import create_app, hash_password
from testsupport import REPO, free_port

from .conftest import Broker

ARTIFACTS = REPO / "test-artifacts" / "web"
PASSWORD = "club-night-password"
SIZES = {"desktop": (1280, 800), "phone": (390, 844), "projector": (1920, 1080)}


class Server:
    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._t = threading.Thread(target=self._srv.run, daemon=True)
        self._t.start()
        assert wait_until(lambda: self._srv.started, 10)

    def stop(self) -> None:
        self._srv.should_exit = True
        self._t.join(timeout=10)


def _shoot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"club-{name}.png"), full_page=True)


def _fits(page: Any) -> None:
    """Nothing spills sideways: the page is no wider than the window."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


def test_club_evening_in_the_browser(browser: Any, broker: Broker, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'club.db'}"
    d = Director.create_event(Database(url), "Tuesday club", variant="pips-two-player",
                              options={"target": 15, "rounds": 2, "confirm": "director", "lots_seed": "x"})
    keys = {t: TableKey.from_seed(f"club-{t}".encode()) for t in (1, 2)}
    for t, k in keys.items():
        d.add_table(t, k.public)
    bridge = DirectorBridge(d, _bu(broker, "director"))
    bridge.start()
    assert bridge.wait_connected(30)
    app = create_app(d, password_hash=hash_password(PASSWORD), secret_key="s", on_round_paired=bridge.announce_round)
    server = Server(app)
    tables = [HeadlessTable(t, keys[t], tmp_path / f"t{t}.journal", _bu(broker, f"table-{t}"), seed=t,
                            resend_interval=0.3, heartbeat_interval=0.5).start() for t in (1, 2)]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(server.url + "/director")
        page.fill("input[name=password]", PASSWORD)
        page.click("button")
        page.wait_for_url("**/director")
        # register four players and check three in from the console; the fourth by the table is not needed
        for name in ("Ana", "Bia", "Caio", "Duda"):
            page.click("summary:has-text('Entrants')")
            page.fill("form[action='/director/register'] input[name=name]", name)
            page.click("form[action='/director/register'] button")
            expect(page.locator(".flash")).to_contain_text(f"{name} registered")
        page.click("summary:has-text('Entrants')")
        page.click("form[action='/director/checkin'] button >> nth=0")
        expect(page.locator(".flash")).to_contain_text("checked in")
        # pair round 1: offered, and the tables get it
        assert page.is_enabled("#pair")
        page.click("#pair")
        expect(page.locator(".flash")).to_contain_text("round 1 paired")
        assert not page.is_enabled("#pair")
        assert "round 1 is not finished" in page.inner_text("#pair-why")
        # results arrive from the headless tables and appear live (no reload)
        page.evaluate("window.__stay = 1")
        page.wait_for_function("document.getElementById('n-reported').textContent === '2'", timeout=60_000)
        assert page.evaluate("window.__stay") == 1, "the console reloaded instead of updating live"
        assert page.locator(".tcard[data-state=reported]").count() == 2
        _shoot(page, "console-reported-desktop")
        # confirm one from its table card, correct the other (with a reason)
        page.click(".tcard[data-table='1'] button")
        expect(page.locator(".flash")).to_contain_text("confirmed")
        m2 = next(m for m in d.matches(1) if m.table_no == 2)
        page.click("summary:has-text('Correct a result')")
        page.select_option("form[action='/director/correct'] select[name=match]", str(m2.id))
        page.fill("input[name=score_a]", "15")
        page.fill("input[name=score_b]", "3")
        page.select_option("form[action='/director/correct'] select[name=winner]", str(m2.entrant_a))
        page.fill("input[name=reason]", "the table's display froze on the last hand")
        page.click("form[action='/director/correct'] button")
        expect(page.locator(".flash")).to_contain_text("corrected")
        # round 2, confirmed all at once, then the winner
        page.wait_for_function("!document.getElementById('pair').disabled", timeout=10_000)
        page.click("#pair")
        # the console of round 2 first: the old page's counter could still say 2
        expect(page.locator(".flash")).to_contain_text("round 2 paired")
        page.wait_for_function("document.getElementById('n-reported').textContent === '2'", timeout=60_000)
        page.click("#confirm-all")
        expect(page.locator(".flash")).to_contain_text("2 results confirmed")
        assert "the event is over" in page.inner_text("#pair-why") and not page.is_enabled("#pair")
        top = d.standings()[0]
        names = {e.id: e.name for e in d.entrants()}
        assert names[top.entrant] in page.inner_text(".winner")
        _shoot(page, "console-final-desktop")
        _fits(page)
        # the public pages at every size, and the projector
        for size, (w, h) in SIZES.items():
            page.set_viewport_size({"width": w, "height": h})
            for path in ("/standings", "/pairings", "/crosstable"):
                page.goto(server.url + path)
                assert "Winner" in page.inner_text(".winner")
                # the winner is known: the page no longer reloads itself (under load a reload
                # fired while the next goto was on its way and interrupted it)
                assert page.locator("meta[http-equiv=refresh]").count() == 0, path
                if path != "/crosstable" or size != "phone":
                    _fits(page)
                _shoot(page, f"{path.strip('/')}-{size}")
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.goto(server.url + "/show?slide=2")
        head = page.inner_text(".slide:not([hidden]) h2")
        assert head.startswith("Final standings")
        assert page.evaluate("parseFloat(getComputedStyle(document.querySelector('.slide:not([hidden]) table')).fontSize)") >= 30
        _shoot(page, "projector-standings")
        # printed pairings and standings (Chromium's PDF) carry no navigation
        for path in ("/pairings", "/standings"):
            page.goto(server.url + path)
            page.emulate_media(media="print")
            assert page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
            assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
            _shoot(page, f"{path.strip('/')}-print")
            pdf = page.pdf(format="A4")
            assert pdf.startswith(b"%PDF") and len(pdf) > 5_000
            (ARTIFACTS / f"club-{path.strip('/')}.pdf").write_bytes(pdf)
            page.emulate_media(media="screen")
        # the audit log is its own page, paged, newest first
        page.goto(server.url + "/audit")
        assert "intact" in page.inner_text("body") and "correction" in page.inner_text("table")
        audit = d.audit_log()
        assert f"page 1 of {-(-len(audit) // 50)}" in page.inner_text(".pager")
    finally:
        page.close()
        for t in tables:
            t.close()
        server.stop()
        bridge.stop()


def _bu(broker: Broker, user: str) -> Any:
    from tablesense.tournament.bridge import BrokerURL

    return BrokerURL.parse(broker.url(user))


def test_standings_read_in_human_terms(sqlite_url: str) -> None:
    """Unique human headers in the event's tie-break order; lots as a place, never a float."""
    from fastapi.testclient import TestClient

    from .test_director import make_event, result_for

    d, key = make_event(sqlite_url, n=4, tiebreaks=["games_won", "buchholz", "points_for", "lots"])
    d.pair_next_round()
    m = next(x for x in d.matches(1) if x.table_no == 1)
    d.ingest(1, result_for(d, m.id, key, revision=1))
    c = TestClient(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k"))
    html = c.get("/standings").text
    heads = [h for h in ("Games won", "Buchholz", "Points for", "Lots drawn") if h in html]
    assert heads == ["Games won", "Buchholz", "Points for", "Lots drawn"]
    assert html.index("Games won") < html.index("Buchholz") < html.index("Points for") < html.index("Lots drawn")
    assert "games_won" not in html and "points_for" not in html
    import re

    assert not re.search(r"0\.\d{6,}", html), "a lot drawn shows as a float"
    csv_text = c.get("/standings.csv").text
    header = csv_text.splitlines()[0].split(",")
    assert len(header) == len(set(header)), header
    assert "Lots drawn" in header and "games_won" not in header
    assert not re.search(r"0\.\d{6,}", csv_text)
    club = c.get("/api/club").json()
    assert [col["label"] for col in club["columns"] if col["key"].startswith("tb:")] == ["Games won", "Buchholz", "Points for", "Lots drawn"]
    assert sorted(int(r["tb:lots"]) for r in club["standings"]) == [1, 2, 3, 4]
    t0 = time.monotonic()
    assert c.get("/director/live", follow_redirects=False).status_code == 303  # the live console needs a login
    assert time.monotonic() - t0 < 5


def test_public_pages_refresh_until_the_winner_is_known(sqlite_url: str) -> None:
    """/standings and /pairings reload themselves while results can still
    change; once the winner is known nothing is left to refresh for (and a
    reload would only interrupt whoever reads or prints the final page)."""
    from fastapi.testclient import TestClient

    from tablesense.tournament.console import confirm_reported

    from .test_director import make_event, result_for

    d, key = make_event(sqlite_url, n=2, rounds=1, confirm="director")
    c = TestClient(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k", refresh_s=5))
    refresh = '<meta http-equiv="refresh" content="5">'
    d.pair_next_round()
    m = d.matches(1)[0]
    assert d.ingest(m.table_no or 1, result_for(d, m.id, key, revision=1)).status == "accepted"
    for path in ("/standings", "/pairings"):
        html = c.get(path).text
        assert refresh in html and 'class="winner"' not in html, path  # reported, not yet confirmed
    confirm_reported(d)
    for path in ("/standings", "/pairings"):
        # spectators' pages read the data version at most twice a second (page_cache.py)
        assert wait_until(lambda p=path: 'class="winner"' in c.get(p).text, 5), path
        assert refresh not in c.get(path).text, path
