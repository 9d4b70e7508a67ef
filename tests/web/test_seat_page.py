"""Issue 31: the seat page of ``play --coach`` (web/seat_page.py) for Kems and
in another language, on a real display server in this process.

The coach's Kems advice (from the real ``KemsCoach``) reaches only the
asking seat's page: the cards to give and take drawn as the table draws
them, the board card to take outlined; another seat's page and the shared
display show nothing of it; asking from the page is a long press of that
seat's button; wrong keys are refused. In the pseudo-locale every word of
the seat page is translated (a bare English word is one nobody marked)."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablesense.games.registry import find_game
from tablesense.outputs.events import EventBus
from tablesense.web.preview import kems_view
from tablesense.web.seat_page import SeatPages
from tablesense.web.server import DisplayServer, serve_display
from testsupport import wait_until

KEMS = find_game("kems").page_facts()


def kems_round() -> tuple[Any, Any]:
    from tablesense.games.kems import KemsMatch

    rng = random.Random(5)
    match = KemsMatch()
    rnd = match.new_hand(rng=rng)
    while rnd.is_misdeal:
        match.finish_hand()
        rnd = match.new_hand(rng=rng)
    return match, rnd


@pytest.fixture
def table(request: pytest.FixtureRequest) -> Iterator[tuple[EventBus, SeatPages, DisplayServer, list[int]]]:
    lang = getattr(request, "param", "en")
    bus = EventBus()
    asked: list[int] = []
    pages = SeatPages(bus, {0: "Ana", 2: "Caio"}, asked.append)
    server = serve_display(bus, lang=lang, routers=[pages.router()], optional_routers=())
    try:
        yield bus, pages, server, asked
    finally:
        server.stop()
        pages.close()
        bus.close()


def post(url: str, data: dict[str, Any]) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=json.dumps(data).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return int(r.status), json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), json.loads(exc.read())


def test_a_kems_hint_reaches_only_its_seats_page(
    browser: Any, artifacts: Path, table: tuple[EventBus, SeatPages, DisplayServer, list[int]]
) -> None:
    from tablesense.games.coach import KemsCoach

    bus, pages, server, asked = table
    match, rnd = kems_round()
    bus.publish("view", **kems_view(match, rnd, facts=KEMS, hand_no=1))
    base = server.url
    mine = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    mine.goto(pages.url(base, 0))
    theirs = browser.new_page(viewport={"width": 1280, "height": 800})
    theirs.goto(pages.url(base, 2))
    shared = browser.new_page(viewport={"width": 1280, "height": 800})
    shared.goto(base)
    for page in (mine, theirs, shared):
        page.wait_for_function("() => document.body.dataset.conn === 'live' && "
                               "document.querySelectorAll('#board .card').length > 0")
    # asking from the page is seat 0's long press (play turns it into press(0, "coach"))
    mine.click("#coach-ask")
    wait_until(lambda: asked == [0], 10, what="the page's Suggest a move to reach play")
    status, _ = post(base + "seat/api/coach", {"seat": 0, "key": pages.keys.seats[2]})
    assert status == 403  # another seat's key
    status, _ = post(base + "seat/api/coach", {"seat": 1, "key": "x"})
    assert status == 400  # a computer seat has no page

    # the referee's answer, as coaching.py publishes it
    advice = None
    for seed in range(50):
        advice = KemsCoach().suggest(rnd, 0, random.Random(seed))
        if advice.give is not None:
            break
    assert advice is not None and advice.give is not None and advice.take is not None
    from tablesense.games.registry import find_game
    from tablesense.referee.words import pretty_sentence

    text = str(pretty_sentence(advice.text, find_game("kems")))  # as coaching.py words it: cards as people write them
    assert text.startswith("take ") and ", then give " in text  # the order the table teaches
    bus.publish("coach", seat=0, hand_no=1, private={
        "seat": 0, "kind": "suggestion", "text": text, "move": None, "piece": str(advice.give),
        "take": str(advice.take), "cells": [], "options": []})
    mine.wait_for_selector("#coach[data-hint='true']")
    drawn = mine.eval_on_selector_all("#coach .coach-piece .card", "ns => ns.map(n => n.dataset.card)")
    assert drawn == [str(advice.take), str(advice.give)]
    assert mine.eval_on_selector_all("#board .card.coach", "ns => ns.map(n => n.dataset.card)") == [str(advice.take)]
    assert "card on your rack to give" in mine.inner_text("#coach-hint")
    mine.screenshot(path=str(artifacts / "seat-page-kems-phone.png"), full_page=True)
    # nobody else: the other seat's page, the shared display
    assert theirs.query_selector("#coach[data-hint='true']") is None
    assert theirs.query_selector("#board .card.coach") is None
    assert shared.query_selector("#coach") is None and shared.query_selector("#board .card.coach") is None
    assert mine.inner_text("#coach-hint .advice") == text
    assert text not in shared.inner_text("body")
    # a move makes the hint stale
    bus.publish("move_accepted", seat=3)
    mine.wait_for_selector("#coach[data-hint='false']")
    assert mine.query_selector("#board .card.coach") is None
    for page in (mine, theirs, shared):
        page.close()


def test_a_wrong_key_gets_the_shared_display_and_a_sentence(
    browser: Any, table: tuple[EventBus, SeatPages, DisplayServer, list[int]]
) -> None:
    _bus, pages, server, _asked = table
    page = browser.new_page()
    answer = page.goto(server.url + f"seat?seat=0&key={pages.keys.seats[2]}")
    assert answer is not None and answer.status == 403
    assert "wrong or missing key for Ana's seat page" in page.inner_text("#refused")
    assert page.query_selector("#coach") is None
    page.close()


@pytest.mark.parametrize("table", ["qps"], indirect=True)
def test_every_word_of_the_seat_page_is_translated(
    browser: Any, table: tuple[EventBus, SeatPages, DisplayServer, list[int]]
) -> None:
    bus, pages, server, _asked = table
    match, rnd = kems_round()
    bus.publish("view", **kems_view(match, rnd, facts=KEMS, hand_no=1))
    page = browser.new_page()
    page.goto(pages.url(server.url, 0))
    page.wait_for_selector("#coach:not([hidden])")
    for selector in ("#coach-ask", "#coach-hint", "#whoami"):
        text = page.inner_text(selector)
        assert "⟦" in text, (selector, text)
    assert "⟦" in page.title()
    page.close()
