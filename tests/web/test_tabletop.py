"""The table-top page in Chromium: a person sits at seat 0 of `demo --sit`
and plays by drag and drop against the computer; every move goes through the
virtual boards' firmware, the link, the referee and back to the LEDs.

Contract used (docs/user-guide.md, web/static/tabletop.js): pieces carry
``data-piece`` (record id or ``hidden``), cells ``data-cell``, racks
``data-rack``, seat buttons ``data-button="SEAT:KIND"``; a cell's LED colour
is ``data-light`` (from the LED frame its board received), a seat's turn LED
``[data-turn-led=N][data-lit]``.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tablesense.referee.demo import DemoConfig, run_demo
from tablesense.sim.scenario import Scenario
from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.geometry import TableGeometry


@contextmanager
def sit_demo(**kw: Any) -> Iterator[dict[str, Any]]:
    """`demo --sit 1` (South, seat index 0) in a thread; yields its table top, display and page URLs."""
    cfg = DemoConfig(port=0, **{"sit": (0,), **kw})
    got: dict[str, Any] = {}
    ready = threading.Event()
    stop = threading.Event()

    def on_ready(url: str | None) -> None:
        got["display"] = url
        ready.set()

    def run() -> None:
        try:
            got["result"] = run_demo(
                cfg,
                stop=stop,
                on_ready=on_ready,
                on_tabletop=lambda s: got.__setitem__("sit", s),
            )
        except BaseException as exc:  # noqa: BLE001 - surfaced by the test
            got["error"] = exc
            ready.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert ready.wait(60), "the demo did not start"
    if "error" in got:
        raise got["error"]
    # the address `demo --sit 1` prints for seat index 0 (with the seat's key)
    got["page"] = next(w for w in got["sit"].lines()[0].split() if w.startswith("http"))
    assert "seat=0&key=" in got["page"]
    try:
        yield got
    finally:
        stop.set()
        t.join(30)


def view(demo: dict[str, Any]) -> dict[str, Any]:
    """The public display view (what everybody at the table sees)."""
    with urllib.request.urlopen(demo["display"] + "api/view", timeout=5) as r:
        return json.loads(r.read())["view"] or {}


def wait(cond: Callable[[], Any], timeout: float, what: str, step: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def drag(page: Any, src: str, dst: str) -> None:
    """Press on ``src``, move to ``dst`` in steps, release (pointer events)."""
    a = page.locator(src).bounding_box()
    b = page.locator(dst).bounding_box()
    assert a is not None and b is not None, (src, dst)
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=6)
    page.mouse.up()


def rack(page: Any, seat: int = 0) -> dict[str, str]:
    """Cell -> piece of a rack as the page shows it."""
    return page.evaluate(
        """(seat) => Object.fromEntries([...document.querySelectorAll(
             `[data-rack="${seat}"] [data-cell]`)].filter(c => c.querySelector('[data-piece]'))
             .map(c => [c.dataset.cell, c.querySelector('[data-piece]').dataset.piece]))""",
        seat,
    )


def my_turn(demo: dict[str, Any], page: Any) -> dict[str, Any] | None:
    v = view(demo)
    lit = page.locator('[data-turn-led="0"][data-lit="true"]').count() == 1
    if v.get("to_play") == 0 and lit and not v.get("correction") and v.get("phase") == "play":
        return v
    return None


def moved(demo: dict[str, Any], moves: Any) -> bool:
    if "result" in demo:
        return True
    try:
        v = view(demo)
    except OSError:
        return True  # the demo stopped after its last hand
    return v.get("moves") != moves or bool(v.get("result"))


def free(page: Any, cells: list[str]) -> str | None:
    """The first of ``cells`` the page shows empty."""
    for c in cells:
        if page.locator(f'[data-cell="{c}"] [data-piece]').count() == 0:
            return c
    return None


def choose(v: dict[str, Any], hand: dict[str, str], geometry: TableGeometry, page: Any) -> tuple[str, str, str] | None:
    """(rack cell, tile, target cell) of a legal play, or None (pass)."""
    assert geometry.line is not None
    ends = v.get("ends") or {}
    line = v.get("line") or {}
    if not line.get("center"):
        doubles = sorted((p for p in hand.values() if p[0] == p[2]), reverse=True)
        if doubles:
            cell = next(c for c, p in hand.items() if p == doubles[0])
            return cell, doubles[0], geometry.line.center
        cell, tile = next(iter(hand.items()))
        return cell, tile, geometry.line.center
    for cell, tile in sorted(hand.items()):
        a, b = int(tile[0]), int(tile[2])
        for end in ("left", "right"):
            if ends.get(end) in (a, b):
                # the next cell of the arm by the referee's line: the page may
                # not yet draw the computer's last tile
                arm = geometry.line.arm(end)
                laid = len(line.get(end) or [])
                if laid < len(arm):
                    return cell, tile, arm[laid]
    return None


@pytest.fixture(scope="module")
def dominoes(browser: Any) -> Iterator[dict[str, Any]]:
    with sit_demo(game="dominoes", seed=1, speed=5.0, hands=1) as demo:
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        page = ctx.new_page()
        frames: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
        page.goto(demo["page"])
        page.wait_for_selector('#table[data-ready="true"]')
        demo["page_obj"], demo["frames"] = page, frames
        demo["geometry"] = TableGeometry.load("dominoes-4")
        try:
            yield demo
        finally:
            ctx.close()


def test_seated_page_holds_no_other_seats_pieces(dominoes: dict[str, Any], artifacts: Path) -> None:
    page, top, geo = dominoes["page_obj"], dominoes["sit"].top, dominoes["geometry"]
    wait(lambda: len(top.piece_map()) == 28, 30, "the deal")
    wait(lambda: len(rack(page)) == 7 or my_turn(dominoes, page), 10, "my rack on the page")
    truth = top.piece_map()
    mine = {p for c, p in truth.items() if geo.cells[c].seat == 0}
    html = page.content()
    shown = set(page.eval_on_selector_all("[data-piece]", "ns => ns.map(n => n.dataset.piece)"))
    frames = list(dominoes["frames"])
    # the pieces seat 0 has never been allowed to see, by the table's log
    # taken after the page and its messages: never on the line, never on
    # its own rack (a computer seat may play meanwhile: its tile is public
    # from then on, and a message may carry it)
    allowed = {
        str(top.registry.piece(st.uid))
        for st in list(top.log)
        if st.action == "place" and (geo.cells[st.cell].zone == "line" or geo.cells[st.cell].seat == 0)
    }
    secret = set(top.pieces) - allowed
    assert len(secret) >= 18, secret
    assert shown - {"hidden"} <= allowed
    assert mine <= shown
    for p in secret:
        assert f'"{p}"' not in html and f">{p}<" not in html, p
        assert all(f'"{p}"' not in f for f in frames), f"{p} in a live message"
    assert page.locator('[data-rack="1"] [data-piece="hidden"]').count() >= 6
    assert page.locator('[data-button="0:pass"]').is_enabled()
    assert page.locator('[data-button="1:pass"]').is_disabled()
    page.screenshot(path=str(artifacts / "tabletop-seated.png"))


def test_wrong_placement_shows_red_banner_and_led_and_putting_it_back_clears(
    dominoes: dict[str, Any],
) -> None:
    page, geo = dominoes["page_obj"], dominoes["geometry"]
    assert geo.line is not None
    wait(lambda: my_turn(dominoes, page), 45, "seat 0's turn")
    hand = rack(page)
    cell, tile = sorted(hand.items())[0]
    wrong = geo.line.left[6]  # far out on an arm: never the next cell this early
    drag(page, f'[data-cell="{cell}"] [data-piece]', f'[data-cell="{wrong}"]')
    page.wait_for_selector(f'[data-cell="{wrong}"] [data-piece="{tile}"]', timeout=5000)
    page.wait_for_selector('#message[data-level="error"]', timeout=10000)
    page.wait_for_selector(f'[data-cell="{wrong}"][data-light="red"]', timeout=10000)
    drag(page, f'[data-cell="{wrong}"] [data-piece]', f'[data-cell="{cell}"]')
    page.wait_for_selector(f'[data-cell="{cell}"] [data-piece="{tile}"]', timeout=5000)
    page.wait_for_function(
        """() => document.querySelector('#message').dataset.level !== 'error'
                 && !document.querySelector('[data-light="red"]')""",
        timeout=10000,
    )


def test_pass_with_a_playable_tile_is_refused_without_revealing_it(dominoes: dict[str, Any], artifacts: Path) -> None:
    page, geo = dominoes["page_obj"], dominoes["geometry"]
    v = wait(lambda: my_turn(dominoes, page), 45, "seat 0's turn")
    hand = rack(page)
    move = choose(v, hand, geo, page)
    if move is None:
        pytest.skip("seat 0 has no playable tile at this turn of seed 1")
    page.locator('[data-button="0:pass"]').click()
    try:
        page.wait_for_selector('#message[data-level="error"]', timeout=10000)
    except PlaywrightTimeout:
        # (failed once beside two CPU hogs: the refusal is a notice shown
        # for 5 s; say whether the page drew something else, or the pass
        # was never refused)
        page.screenshot(path=str(artifacts / "tabletop-pass-no-refusal.png"))
        shown = page.evaluate(
            "() => { const m = document.querySelector('#message');"
            " return m && {level: m.dataset.level, text: m.innerText, hidden: m.hidden}; }"
        )
        raise AssertionError(f"no refusal on the page 10 s after the pass: the page {shown}; "
                             f"the referee {view(dominoes)}") from None
    text = page.locator("#message").inner_text()
    public = json.dumps(view(dominoes))
    for tile in hand.values():
        assert tile not in text, f"the banner names {tile}"
        assert f'"{tile}"' not in public, f"the public view names {tile}"
    assert view(dominoes)["to_play"] == 0  # refused: still seat 0's turn


def play_hand(
    demo: dict[str, Any],
    play: Callable[[str, str, str, int], None],
    pass_turn: Callable[[], None],
    artifacts: Path,
    seconds: float = 150,
) -> tuple[int, int]:
    """Seat 0 plays the demo's one hand to its end on its page: on each of
    its turns ``play(rack cell, tile, target cell, plays so far)`` lays a
    legal tile, or ``pass_turn()`` passes; returns (plays, passes)."""
    page, geo = demo["page_obj"], demo["geometry"]
    plays = passes = 0
    v: dict[str, Any] = {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if "result" in demo:  # the demo ran its one hand and stopped
            return plays, passes
        try:
            v = view(demo)
        except OSError:
            continue
        if v.get("result") or (v.get("hand_no") or 1) > 1 or v.get("match_over"):
            return plays, passes
        if v.get("correction") and v["correction"].get("reason") in ("cross_read", "duplicate_tag"):
            # a piece moved between two boards can be read on both cells for a
            # moment (the new cell's read arrives first): the referee clears it
            # once the old cell's empty report arrives
            time.sleep(0.05)
            continue
        if v.get("correction") and not _persists(demo, v["correction"]):
            # a computer seat's tile read off its new cell for a moment on a busy
            # machine (taken back, then seen again): the referee cleared it itself
            continue
        if v.get("correction"):
            # only seat 0's move can be refused here: the computer's hands play legally
            page.screenshot(path=str(artifacts / "tabletop-hand-refused.png"))
            raise AssertionError(f"seat 0's move was refused: {v['correction']} (plays {plays}, passes {passes})")
        # decide on the view that says it is seat 0's turn: one read a moment
        # earlier may predate the computer's last move (its ends and line)
        mine = my_turn(demo, page)
        if not mine:
            time.sleep(0.15)
            continue
        moves = mine.get("moves")
        move = choose(mine, rack(page), geo, page)
        if move is None:
            pass_turn()
            passes += 1
        else:
            play(*move, plays)
            plays += 1
        wait(lambda m=moves: moved(demo, m), 20, "the referee to accept seat 0's move")
    page.screenshot(path=str(artifacts / "tabletop-hand-stalled.png"))
    raise AssertionError(f"the hand did not end (plays {plays}, passes {passes}; last view {v})")


def _persists(demo: dict[str, Any], correction: dict[str, Any], seconds: float = 5.0) -> bool:
    """The correction is still open after ``seconds`` (a refused move stays
    refused until a hand fixes it; a misread clears at the next reading)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if view(demo).get("correction") != correction:
                return False
        except OSError:
            pass
        time.sleep(0.1)
    return True


def test_person_plays_a_whole_hand_by_drag_and_drop(dominoes: dict[str, Any], artifacts: Path) -> None:
    page, geo = dominoes["page_obj"], dominoes["geometry"]

    def lay(cell: str, tile: str, target: str, plays: int) -> None:
        if plays == 1:  # a tile lifted over the map's next cell: the ends it matches glow (docs/tabletop.png)
            src = page.locator(f'[data-cell="{cell}"] [data-piece]').bounding_box()
            dst = page.locator(f'[data-cell="{target}"]').bounding_box()
            assert src is not None and dst is not None
            page.mouse.move(src["x"] + src["width"] / 2, src["y"] + src["height"] / 2)
            page.mouse.down()
            page.mouse.move(dst["x"] + dst["width"] / 2, dst["y"] + dst["height"] / 2, steps=6)
            page.wait_for_selector(f'[data-cell="{target}"].legal', timeout=3000)
            page.screenshot(path=str(artifacts / "tabletop-desktop-lifted.png"))
            page.mouse.up()
        else:
            drag(page, f'[data-cell="{cell}"] [data-piece]', f'[data-cell="{target}"]')
        page.wait_for_selector(f'[data-cell="{target}"] [data-piece="{tile}"]', timeout=5000)

    plays, passes = play_hand(dominoes, lay, lambda: page.locator('[data-button="0:pass"]').click(), artifacts)
    assert plays >= 1
    page.screenshot(path=str(artifacts / "tabletop-hand-over.png"))
    result = wait(lambda: dominoes.get("result"), 30, "the demo to end its hand")
    assert result.hands_played == 1
    assert sum(1 for m in result.record["hands"][0]["moves"] if m.get("seat") == 0) >= plays
    # the session, saved as a scenario, replays on a fresh table to the same world
    top = dominoes["sit"].top
    script = Scenario.from_dict(top.scenario(), geo)
    want = top.world.tags()
    fresh = VirtualTable(geo, seed=2, scan_interval=0.001)
    fresh.start()
    try:
        assert script.run(fresh, speed=10000.0)
        assert fresh.tags() == want
    finally:
        fresh.stop()
