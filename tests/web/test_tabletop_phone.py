"""Issue 31: the table top for fingers. A person on a 390 x 844 phone plays
a whole pairs-pips hand by touch, dropping every tile only on the readable
line (never on the small map): a lifted tile makes the ends it fits glow
green at once (and their next cells on the map), a double's place is drawn
crosswise, a drop near an end goes to that arm's next cell, a drop on
nothing is answered at once, and the piece under the finger never hides
the place it is aimed at."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_tabletop import play_hand, rack, sit_demo, view, wait

from tablesense.table.geometry import TableGeometry
from testsupport import wait_until


def centre(box: dict[str, float]) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def box_of(page: Any, selector: str) -> dict[str, float]:
    """Where ``selector`` is on the screen. A live update may redraw the
    element between finding and measuring it (no box for a moment): measure
    again until it has one."""
    box: dict[str, float] = wait_until(lambda: page.locator(selector).first.bounding_box(), 5,
                                       what=f"a box for {selector}")
    return box


class Finger:
    """Touch events through the DevTools protocol (Chromium makes pointer
    events of type "touch" of them), with a look at the page mid-drag."""

    def __init__(self, cdp: Any) -> None:
        self.cdp = cdp

    def touch(self, kind: str, x: float | None = None, y: float | None = None) -> None:
        points = [] if x is None or y is None else [{"x": x, "y": y}]
        self.cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    def slide(self, start: tuple[float, float], to: tuple[float, float], steps: int = 8) -> None:
        (x0, y0), (x1, y1) = start, to
        for i in range(1, steps + 1):
            self.touch("touchMove", x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)


@pytest.fixture(scope="module")
def phone(browser: Any) -> Iterator[dict[str, Any]]:
    with sit_demo(game="dominoes", seed=1, speed=5.0, hands=1) as demo:
        ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
        page = ctx.new_page()
        page.goto(demo["page"])
        page.wait_for_selector('#table[data-ready="true"]')
        demo.update(page_obj=page, finger=Finger(ctx.new_cdp_session(page)), geometry=TableGeometry.load("dominoes-4"))
        try:
            yield demo
        finally:
            ctx.close()


def side_of(geo: TableGeometry, cell: str) -> str:
    assert geo.line is not None
    if cell == geo.line.center:
        return "center"
    return "left" if cell in geo.line.arm("left") else "right"


def drop_on_the_line(demo: dict[str, Any], cell: str, tile: str, target: str, artifacts: Path, shot: bool) -> None:
    """Lift ``tile`` from its rack ``cell`` by touch and drop it near the
    readable line's end for ``target``; checks what the page shows mid-drag."""
    page, finger, geo = demo["page_obj"], demo["finger"], demo["geometry"]
    side = side_of(geo, target)
    start = centre(box_of(page, f'[data-cell="{cell}"] [data-piece]'))
    finger.touch("touchStart", *start)
    finger.touch("touchMove", start[0], start[1] - 4)
    # as soon as the tile is lifted: its ends glow green, and their next cells
    # on the map (drawn by the page itself, no round trip; the bound allows for
    # a renderer starved by a loaded machine, as when two CPU hogs run beside)
    try:
        page.wait_for_selector(f'#line [data-target="{side}"].state-legal', timeout=10_000)
        page.wait_for_selector(f'[data-cell="{target}"].legal', timeout=10_000)
    except PlaywrightTimeout:
        page.screenshot(path=str(artifacts / "tabletop-phone-no-green-end.png"))
        seen = page.evaluate(
            """(cell) => {
                const line = document.querySelector('#line');
                const piece = document.querySelector(`[data-cell="${cell}"] [data-piece]`);
                return {line: line && line.dataset.key, lifted: line && line.dataset.lifted,
                        piece: piece && piece.getAttribute('class'),
                        ghost: document.querySelectorAll('.ghost').length};
            }""",
            cell,
        )
        raise AssertionError(f"lifting {tile} from {cell} lit no green {side} end for {target}: "
                             f"the page {seen}; the referee {view(demo)}") from None
    aim = box_of(page, f'#line [data-target="{side}"]')
    if tile[0] == tile[2]:  # a double's place is drawn crosswise
        assert aim["height"] > aim["width"], aim
    else:
        assert aim["width"] > aim["height"], aim
    x, y = centre(aim)
    y += min(6.0, aim["height"] / 3)  # near the end, not on its exact middle
    finger.slide(start, (x, y))
    # the piece rides above the finger, clear of its target (once the last move is drawn)
    wait(lambda: not overlap(box_of(page, ".ghost"), aim), 2, f"the dragged tile clear of its target {aim}")
    assert page.locator(f'#line [data-target="{side}"].over').count() == 1
    if shot:
        page.screenshot(path=str(artifacts / "tabletop-phone-lifted.png"))
    finger.touch("touchEnd")
    page.wait_for_selector(f'[data-cell="{target}"] [data-piece="{tile}"]', timeout=5000)


def test_a_drop_on_nothing_is_answered_at_once(phone: dict[str, Any]) -> None:
    """At once: the page answers from what it knows, asking the server nothing
    after the lift (no lay to be refused). Not a wall-clock bound: under load
    the lift's own round trip alone took longer than one second."""
    page, finger = phone["page_obj"], phone["finger"]
    wait(lambda: len(rack(page)) == 7, 30, "the deal")
    cell, tile = sorted(rack(page).items())[0]
    asked: list[str] = []

    def note(request: Any) -> None:
        if "/tabletop/api/" in request.url:
            asked.append(request.url.rsplit("/", 1)[-1])

    start = centre(box_of(page, f'[data-cell="{cell}"] [data-piece]'))
    page.on("request", note)
    try:
        finger.touch("touchStart", *start)
        header = centre(box_of(page, "#top"))
        finger.slide(start, header)
        finger.touch("touchEnd")
        page.wait_for_selector("#oops:not([hidden])", timeout=15_000)
    finally:
        page.remove_listener("request", note)
    assert asked == ["lift"], asked
    assert page.locator("#oops").inner_text() == "Drop it on a green end of the line"
    # it stays in the hand, on no reader: back onto its rack cell
    page.wait_for_selector(f'#my-hand [data-piece="{tile}"]', timeout=15_000)
    held = centre(box_of(page, f'#my-hand [data-piece="{tile}"]'))
    finger.touch("touchStart", *held)
    finger.slide(held, centre(box_of(page, f'[data-cell="{cell}"]')))
    finger.touch("touchEnd")
    page.wait_for_selector(f'[data-cell="{cell}"] [data-piece="{tile}"]', timeout=15_000)


def test_phone_plays_a_whole_hand_dropping_only_on_the_readable_line(phone: dict[str, Any], artifacts: Path) -> None:
    page = phone["page_obj"]
    plays, passes = play_hand(
        phone,
        lambda cell, tile, target, n: drop_on_the_line(phone, cell, tile, target, artifacts, shot=n == 1),
        lambda: page.locator('[data-button="0:pass"]').tap(),
        artifacts,
        seconds=180,
    )
    assert plays >= 2
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width}px wide on a 390px phone"
    # every seat of the strip in view (none cut off), the glows' legend at hand
    for seat in range(4):
        box = box_of(page, f'.tt-seat[data-seat="{seat}"]')
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["y"] + box["height"] <= 844, (seat, box)
    assert page.locator("#legend summary").is_visible()
    page.screenshot(path=str(artifacts / "tabletop-phone-hand-over.png"))
    result = wait(lambda: phone.get("result"), 30, "the demo to end its hand")
    assert sum(1 for m in result.record["hands"][0]["moves"] if m.get("seat") == 0) >= plays
