"""Issue 21: what the display shows after a draw.

The two-seat game is refereed by the real referee (its events on a real bus,
served by the real display app) until a seat draws from the boneyard. The
page in Chromium then says who drew ("South drew a tile"), and the drawn tile
appears nowhere: not in the page's text, not in its markup, not in what the
page received over the socket.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pagestate import page_state, wait_seq

from tablesense.outputs.events import EventBus
from tablesense.referee.core import MatchSpec, Referee
from tablesense.referee.layout import Sensed
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry
from tablesense.web.server import DisplayServer, serve_display


@pytest.fixture()
def served() -> Iterator[tuple[EventBus, DisplayServer]]:
    bus = EventBus()
    server = serve_display(bus)
    try:
        yield bus, server
    finally:
        server.stop()
        bus.close()


def play_until_a_draw(bus: EventBus) -> tuple[Referee, str]:
    """Referee a pips-two-player hand, tiles laid as players do, until a draw
    is accepted; returns the referee and the drawn tile."""
    geometry = TableGeometry.load("dominoes-2")
    for seed in range(1, 60):
        ref = Referee(
            MatchSpec("dominoes", "pips-two-player", seed=seed),
            geometry,
            TagRegistry.virtual(0),
            emit=bus.publish,
        )
        ref.start(0.0)
        hand = ref.hand
        cells: dict[str, str] = {}
        for seat, tiles in enumerate(hand.hands):
            cells.update(zip(geometry.seats[seat].rack, map(str, tiles), strict=False))
        cells.update(zip(geometry.boneyard, map(str, hand.boneyard), strict=False))
        now = [0.0]

        def show(
            ref: Referee = ref, cells: dict[str, str] = cells, now: list[float] = now
        ) -> None:
            ref.feed(Sensed(dict(cells), [], ()), now[0])
            now[0] += 20.0
            ref.feed(Sensed(dict(cells), [], ()), now[0])

        show()
        rng = random.Random(seed)
        while not hand.is_over:
            move = rng.choice(hand.legal_moves())
            name = type(move).__name__
            tile = str(getattr(move, "tile", ""))
            if name == "Pass":
                ref.press(move.seat, "main", now[0])
                show()
                continue
            where = next(c for c, p in cells.items() if p == tile)
            del cells[where]
            if name == "Draw":
                rack = geometry.seats[move.seat].rack
                cells[next(c for c in rack if c not in cells)] = tile
                show()
                assert ref.state.last_move is not None and "draw" in ref.state.last_move
                return ref, tile
            rules: Any = ref.rules
            target = rules.target_cell(rules.end_of(move)) if hand.line else rules.line.center
            cells[target] = tile
            show()
    raise AssertionError("no draw in 60 hands")


def test_after_a_draw_the_page_says_who_drew_and_never_which_tile(
    browser: Any, served: tuple[EventBus, DisplayServer], artifacts: Path
) -> None:
    bus, server = served
    received: list[str] = []
    drawn: tuple[Referee, str] | None = None  # played once, with the first page open
    for width, height in ((1280, 800), (390, 844)):
        ctx = browser.new_context(viewport={"width": width, "height": height})
        page = ctx.new_page()
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(str(f))))
        page.goto(server.url)
        page.wait_for_function("document.body.dataset.conn === 'live'", timeout=5000)
        if drawn is None:
            drawn = play_until_a_draw(bus)
        ref, tile = drawn
        who = ref.rules.seat_label(ref.state.last_move["seat"]) if ref.state.last_move else ""
        latest = bus.latest("view")
        assert latest is not None
        state = wait_seq(page, latest.seq)
        assert state["lastMove"].endswith(f"{who} drew a tile"), state["lastMove"]
        html = page.content()
        on_line = {str(lp.tile) for lp in ref.hand.line}
        assert tile not in on_line
        assert tile not in html and tile[::-1] not in html
        assert tile not in page_state(page)["lastMove"]
        page.screenshot(path=str(artifacts / f"after-draw-{width}.png"))
        ctx.close()
    # nor anything the page was sent over its socket
    assert drawn is not None
    tile = drawn[1]
    assert received and not any(tile in frame or tile[::-1] in frame for frame in received)
    view = bus.latest("view")
    assert view is not None and view.data["last_move"]["draw"] is True
    assert tile not in json.dumps(view.data)
