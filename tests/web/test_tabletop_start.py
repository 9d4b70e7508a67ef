"""Issue 31: at `demo --sit` the hand or round starts when every seated
person's page is connected, after a short countdown on that page; in Kems
the computer seats then look at the board a person's while before a swap.

The real demo and its real page server; the page is stood in for by a
WebSocket client on the seat's keyed address (what tabletop.js opens)."""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

from test_tabletop import sit_demo, wait
from websockets.sync.client import connect

from tablesense.referee.sit import COUNTDOWN_S


def moves(demo: dict[str, Any]) -> list[Any]:
    return [ev for ev in list(demo["sit"].bus.history) if ev.kind == "move_accepted"]


def live(page: str) -> Any:
    """The seat's live view, as its page opens it."""
    parts = urllib.parse.urlsplit(page)
    return connect(f"ws://{parts.netloc}/tabletop/ws?{parts.query}", open_timeout=5)


def test_kems_waits_for_the_seated_page_then_counts_down() -> None:
    with sit_demo(game="kems", seed=1, speed=5.0, hands=1) as demo:
        sitting = demo["sit"]
        wait(lambda: (sitting.banner() or {}).get("text", "").startswith("waiting for"), 20, "the wait")
        text = sitting.banner()["text"]
        assert text == "waiting for Seat 1 to open the table-top page (the address printed for that seat)"
        time.sleep(3.0)  # at --speed 5 the computers swapped within a second before
        assert not moves(demo), "a computer moved before the person's page was open"
        with live(demo["page"]) as ws:
            connected = time.time()
            first = json.loads(ws.recv(timeout=5))
            assert first["seat"] == 0
            countdown = wait(lambda: "starts in" in (sitting.banner() or {}).get("text", ""), 5, "countdown")
            del countdown
            banner = sitting.banner()
            assert banner is not None and banner["level"] == "info"
            assert banner["text"].startswith("round 1 starts in ") and banner["text"].endswith("seconds")
            got = wait(lambda: moves(demo), 60, "the computers' first move")
            # the countdown, then a computer's look at the board (KEMS_THINK_S / speed)
            assert got[0].ts - connected >= COUNTDOWN_S + 0.5
            assert "starts in" not in ((sitting.banner() or {}).get("text") or "")
