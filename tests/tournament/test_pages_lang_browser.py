"""The director's pages in Debian's Chromium, in every language: what the
scripts draw (the live console's table cards, the projector's slides, the
replay's steps) is translated too — the pseudo-locale run reads the rendered
text, not the HTML — and in Brazilian Portuguese and Malay no page spills
sideways at 1280x800 or 390x844 (long Portuguese words wrap), nor the projector
at 1920x1080. Screenshots go to test-artifacts/web/lang-*.png."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tablesense.tournament.db import Database
from tablesense.tournament.players import add_player, register_players
from tablesense.tournament.seasons import create_season
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from tablesense.tournament.web import create_app, hash_password
from testsupport import REPO

from .test_club_evening import Server
from .test_director import result_for
from .test_pages_lang_all import untranslated

ARTIFACTS = REPO / "test-artifacts" / "web"
PASSWORD = "pw-for-the-browser-language-test"
PLAYERS = ["Maria Aparecida", "João Evangelista", "Nurul Izzati", "Muhammad Hafiz",
           "Francisco Assis", "Conceição Ribeiro", "Siti Nurhaliza", "Wong Kah Wai"]
EVENT = "Campeonato Interclubes de Dominó"

#: What a page's visible text is once the switcher, names people typed (``translate="no"``) and code are gone.
VISIBLE = """() => {
  const body = document.body.cloneNode(true);
  body.querySelectorAll('nav.langs, [translate="no"], code, script, style, [hidden]').forEach((n) => n.remove());
  return body.innerText;
}"""


#: NO_RELOAD: the evening goes on, so /standings and /pairings would reload themselves every
#: 5 s, a timer these tests do not control: under load a full-page screenshot slower than
#: that is cut by each reload (the [ms] case took 70 s) and a reload interrupts the next goto.
#: The reload itself: test_club_evening.py::test_public_pages_refresh_until_the_winner_is_known.


def _evening(db_url: str) -> dict[str, Any]:
    """Four pairs of club players at two tables: one result reported (waiting for the
    director), one table still playing; a season; a match with a record to replay."""
    db = Database(db_url)
    ps = [add_player(db, n, badge=f"b{i}") for i, n in enumerate(PLAYERS)]
    d = Director.create_event(db, EVENT, options={"target": 30, "lots_seed": "t", "rounds": 3, "confirm": "director"})
    for i in range(0, 8, 2):
        register_players(d, ps[i:i + 2])
    keys = {t: TableKey.from_seed(f"table-{t}".encode()) for t in (1, 2)}
    for t, k in keys.items():
        d.add_table(t, k.public)
    d.pair_next_round()
    m = next(x for x in d.matches(1) if x.table_no == 1)
    assert d.ingest(1, result_for(d, m.id, keys[1], revision=1)).status == "accepted"
    season = create_season(db, "Temporada de verão", events=[d.event_id])
    names = PLAYERS + [EVENT, "Temporada de verão"] + [e.name for e in d.entrants()]
    return {"director": d, "player": ps[0], "match": m.id, "season": season, "names": names}


def _login(page: Any, url: str) -> None:
    page.goto(url + "/login")
    page.fill("input[name=password]", PASSWORD)
    page.click("form button")
    page.wait_for_url("**/director")


def _fits(page: Any, what: str) -> None:
    """Nothing spills sideways: the page is no wider than the window."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{what}: {width} px wide in a {page.viewport_size['width']} px window"


def test_pseudo_locale_what_the_scripts_draw_is_translated(browser: Any, sqlite_url: str) -> None:
    ev = _evening(sqlite_url)
    srv = Server(create_app(ev["director"], password_hash=hash_password(PASSWORD), secret_key="k", lang="qps",
                            refresh_s=0))  # see NO_RELOAD
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    seen: dict[str, str] = {}
    try:
        _login(page, srv.url)
        page.wait_for_selector("#live[data-on=true]", timeout=10_000)  # the console drew its cards from the live feed
        assert page.locator("#tables .tcard").count() == 2
        seen["/director (live)"] = page.evaluate(VISIBLE)
        page.goto(srv.url + f"/replay/{ev['match']}")
        page.click("#next")
        seen["/replay (a move)"] = page.evaluate(VISIBLE)
        page.keyboard.press("End")
        seen["/replay (the end)"] = page.evaluate(VISIBLE)
        for k in range(4):  # pairings, standings, ratings...: each slide the projector builds
            page.goto(srv.url + f"/show?slide={k}")
            seen[f"/show slide {k}"] = page.evaluate(VISIBLE)
        page.goto(srv.url + "/live")
        seen["/live"] = page.evaluate(VISIBLE)
    finally:
        page.close()
        srv.stop()
    bad = {where: u for where, text in seen.items() if (u := untranslated(text, ev["names"]))}
    assert not bad, bad
    assert "⟦" in seen["/replay (a move)"] and "⟦" in seen["/show slide 0"]


SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.mark.parametrize("lang", ["pt-BR", "ms"])
def test_pages_in_portuguese_and_malay_fit_their_screens(browser: Any, sqlite_url: str, lang: str) -> None:
    ev = _evening(sqlite_url)
    ev["director"].set_language(lang)  # the event's language: no ?lang= needed
    srv = Server(create_app(ev["director"], password_hash=hash_password(PASSWORD), secret_key="k", lang="en",
                            refresh_s=0))  # see NO_RELOAD
    pages = {"standings": "/standings", "pairings": "/pairings", "crosstable": "/crosstable", "live": "/live",
             "player": f"/players/{ev['player']}", "season": f"/seasons/{ev['season']}",
             "replay": f"/replay/{ev['match']}", "director": "/director", "audit": "/audit"}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        for size, (w, h) in SIZES.items():
            page = browser.new_page(viewport={"width": w, "height": h})
            try:
                _login(page, srv.url)
                for name, path in pages.items():
                    page.goto(srv.url + path)
                    assert page.get_attribute("html", "lang") == lang, path
                    if name == "director":
                        page.wait_for_selector("#live[data-on=true]", timeout=10_000)
                    if name == "replay":
                        page.click("#next")
                    _fits(page, f"{lang} {path} at {w}x{h}")
                    page.screenshot(path=str(ARTIFACTS / f"lang-{lang}-{name}-{size}.png"), full_page=True)
            finally:
                page.close()
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        try:
            for k in range(3):
                page.goto(srv.url + f"/show?slide={k}")
                _fits(page, f"{lang} projector slide {k}")
                tall = page.evaluate("document.documentElement.scrollHeight")
                assert tall <= 1080, f"{lang} projector slide {k} is {tall} px tall"  # a projector never scrolls
                page.screenshot(path=str(ARTIFACTS / f"lang-{lang}-projector-{k}.png"))
            heading = page.inner_text("#rnd")
            assert re.fullmatch({"pt-BR": r"Etapa 1", "ms": r"Pusingan 1"}[lang], heading), heading
        finally:
            page.close()
    finally:
        srv.stop()

