"""Issue 19 in the browser: the coach on the seat's own table-top page.

``demo --sit 1`` (the coach is on with --sit): on the person's turn the
page's "Suggest a move" shows a hint on that page only; the public table-top
view, the display and its ``/api/view`` never carry it; the hint's tile is
lit (teal) on the seat's own rack, and the line cell it goes to; holding the page's Pass button a second
asks the coach through the seat header's long press and does not pass. The
display page shows a review of the last hand. Screenshots at 1280x800 and
390x844 go to test-artifacts/web/.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from test_tabletop import my_turn, sit_demo, view, wait

from tablesense.outputs.events import EventBus, TableEvent


def state(base: str, **query: str) -> dict[str, Any]:
    url = base + "/tabletop/api/state?" + urllib.parse.urlencode(query)
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def test_the_coach_answers_on_the_seats_own_page_only(browser: Any, artifacts: Path) -> None:
    with sit_demo(game="dominoes", seed=1, speed=5.0, hands=1) as demo:
        sitting = demo["sit"]
        coach_events: list[Any] = []
        sitting.bus.add_listener(lambda ev: coach_events.append(ev) if ev.kind == "coach" else None)
        key = urllib.parse.parse_qs(urllib.parse.urlparse(demo["page"]).query)["key"][0]
        base = demo["page"].split("/tabletop")[0]
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        page = ctx.new_page()
        page.goto(demo["page"])
        page.wait_for_selector('#table[data-ready="true"]')
        page.wait_for_selector("#coach:not([hidden])")
        assert "hold your button" in page.locator("#coach-hint").inner_text()
        v = wait(lambda: my_turn(demo, page), 90, "seat 0's turn")
        page.click("#coach-ask")
        page.wait_for_selector('#coach[data-hint="true"]', timeout=15000)
        advice = page.locator("#coach-hint .advice").inner_text()
        assert advice
        mine = state(base, seat="0", key=key)
        hint = mine["coach"]["hint"]
        assert mine["coach"]["on"] and hint["text"] == advice
        # nobody else reads it: the public table top, the display's view
        public = state(base)
        assert "coach" not in public and advice not in json.dumps(public)
        shown = json.dumps(view(demo))
        assert advice not in shown and view(demo)["moves"] == v["moves"]
        ev = coach_events[-1]
        piece = ev.data["private"]["piece"]
        if piece is not None:
            faces = {c["piece"] for c in public["cells"].values()} | {a["piece"] for a in public["air"]}
            assert piece not in faces  # still face down for everybody else
            cell = ev.data["private"]["cells"][0]
            assert cell in sitting.top.geometry.seats[0].rack
            page.wait_for_selector(f'[data-cell="{cell}"][data-light="teal"]', timeout=10000)
            # the tile's rack cell and where it goes on the line (issue 31), no other
            target = ev.data["private"]["target"]
            assert len(target) == 1 and target[0] in sitting.top.geometry.line.cells
            page.wait_for_selector(f'[data-cell="{target[0]}"][data-light="teal"]', timeout=10000)
            lit = page.eval_on_selector_all('[data-light="teal"]', "ns => ns.map(n => n.dataset.cell)")
            assert sorted(lit) == sorted([cell, target[0]])
            # and the readable line shows that end as the coach's (teal) target
            end = ev.data["private"]["end"]
            page.wait_for_selector(f'#line .drop-target.state-coach[data-target="{end}"]', timeout=10000)
        page.screenshot(path=str(artifacts / "tabletop-coach-1280.png"), full_page=True)
        phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        p2 = phone.new_page()
        p2.goto(demo["page"])
        p2.wait_for_selector('#coach[data-hint="true"]', timeout=15000)
        p2.screenshot(path=str(artifacts / "tabletop-coach-390.png"), full_page=True)
        phone.close()
        # a long press of the page's Pass button asks the coach, and does not pass
        before = len(coach_events)
        box = page.locator('#my-buttons [data-button="0:pass"]').bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        time.sleep(1.3)
        page.mouse.up()
        wait(lambda: len(coach_events) > before, 15, "the coach's answer to a long press")
        assert coach_events[-1].data["private"]["seat"] == 0
        assert view(demo)["moves"] == v["moves"]  # no pass
        # after a hand, the seat's page reads the review with its own tiles named
        # (the event as the referee sends it: tests/referee/test_coach_table.py)
        own = "South chose to lay 3-3 on the left end; to lay 2-3 on the left end was worth about 4.3 points more"
        sitting.hints.follow(TableEvent("hand_ended", {
            "hand_no": 1, "review": {"hand_no": 1, "lines": ["(public)"]},
            "private": {"reviews": [{"seat": 0, "hand_no": 1, "lines": [own]},
                                    {"seat": 2, "hand_no": 1, "lines": ["North's reading"]}]},
        }, 1, 0.0))
        page.wait_for_selector("#coach-review:not([hidden]) li")
        assert page.locator("#coach-review").inner_text().count("4.3 points more") == 1
        assert "North's reading" not in page.content()
        page.screenshot(path=str(artifacts / "tabletop-coach-review-1280.png"), full_page=True)
        assert "coach" not in state(base) and "4.3" not in json.dumps(state(base))
        ctx.close()


def test_the_display_shows_the_review_of_the_last_hand(browser: Any, artifacts: Path) -> None:
    from tablesense.web.server import serve_display

    bus = EventBus()
    server = serve_display(bus)
    try:
        review = {
            "hand_no": 2,
            "lines": [
                "South chose to lay 3-3 on the left end; to lay 2-3 on the left end was worth about 4.3 points more",
                "West chose to lay 1-6 on the left end; to lay a tile not shown on the right end was worth about 2.7 points more",
            ],
        }
        seats = [{"index": i, "name": n, "team": i % 2, "count": 0, "is_turn": False, "kind": "bot"}
                 for i, n in enumerate(["South", "East", "North", "West"])]
        bus.publish(
            "view", game="dominoes", variant="pairs-pips", seats=seats, scores=[12, 30], target=50,
            hand_no=3, phase="play", result={"hand_no": 2, "winner": 1, "points": [0, 18], "how": "went out"},
            line={"center": None, "left": [], "right": []}, review=review, moves=0,
        )
        for size, name in (((1280, 800), "display-review-1280.png"), ((390, 844), "display-review-390.png")):
            ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
            page = ctx.new_page()
            page.goto(server.url)
            page.wait_for_selector("#review:not([hidden]) li")
            text = page.locator("#review").inner_text()
            assert "hand 2: the moves that cost the most" in text and "a tile not shown" in text
            assert page.locator("#review li").count() == 2
            page.screenshot(path=str(artifacts / name), full_page=True)
            ctx.close()
    finally:
        server.stop()
        bus.close()
