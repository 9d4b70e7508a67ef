"""Issue 19: the coach's suggestion for a seat never reaches a public channel.

Whole demo matches are played on the direct table by the computer hands,
the coach on, and the seat to play asks the coach at every turn (Kems: every
seat, in turn). Every event is put through :func:`public_event` (what
``/ws``, ``/events``, ``/api/history``, ``/api/view`` and the display page
send; the channels themselves are checked at the end) and must not carry the
suggestion: neither its words nor the tile it names while that tile is still
hidden in the seat's rack. The cell LEDs (the outputs room's
:class:`CellLeds`, fed the same events) light the coach's colour only on the
asking seat's rack. The private part must still reach the table's own
devices, so the test cannot pass by the coach saying nothing.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest

from tablesense.outputs.cell_leds import CellLeds, LedPalette
from tablesense.outputs.events import EventBus, TableEvent, public_event
from tablesense.referee.demo import DemoConfig, demo_table, demo_variant, run_demo
from tablesense.table.geometry import TableGeometry

TILE_RE = re.compile(r"(?<![\w-])([0-6])-([0-6])(?![\w-])")
COACH = LedPalette().coach

MATCHES = [
    ("dominoes", "pairs-pips", 4, {"target": 15}),
    ("dominoes", "pips-two-player", 2, {"target": 15}),
    ("dominoes", "brazilian-points", 3, {"target": 1}),
    ("kems", "classic", 4, {"target": 1}),
]


class Asker:
    """Asks the coach for the seat to play at every new turn (Kems: every
    seat after every move), watches the LEDs, keeps every event."""

    def __init__(self, geometry: TableGeometry, game: str, seats: int) -> None:
        self.game = game
        self.seats = seats
        self.session: Any = None
        self.events: list[TableEvent] = []
        self.asked: set[Any] = set()
        self.lock = threading.Lock()
        self.racks = {s.index: set(s.rack) for s in geometry.seats}
        self.hint_seat: int | None = None
        self.lit_frames = 0
        self.leds = CellLeds(geometry, self.frame, min_interval=0.0)

    def frame(self, colors: dict[str, Any]) -> None:
        lit = {c for c, rgb in colors.items() if tuple(rgb) == COACH}
        if lit:
            self.lit_frames += 1
            assert self.hint_seat is not None, f"coach LEDs {lit} with no hint asked"
            outside = lit - self.racks[self.hint_seat]
            assert not outside, f"the coach lit {outside}, outside seat {self.hint_seat}'s rack"

    def seen(self, ev: TableEvent) -> None:
        with self.lock:
            self.events.append(ev)
            if ev.kind == "coach" and isinstance(ev.data.get("private"), dict):
                self.hint_seat = ev.data["private"]["seat"]
            self.leds.handle_event(ev)
            if ev.kind != "view" or self.session is None or ev.data.get("phase") != "play":
                return
            # dominoes: the seat to play; Kems has no turns: every seat
            to_play = ev.data.get("to_play")
            asking = [to_play] if self.game == "dominoes" else list(range(self.seats))
            for seat in asking:
                key = (ev.data.get("hand_no"), ev.data.get("moves"), seat)
                if seat is None or key in self.asked:
                    continue
                self.asked.add(key)
                self.session.press(seat, "coach")


def check(asker: Asker, game: str) -> dict[str, int]:
    counts = {"hints": 0, "pieces": 0, "public": 0}
    secret: dict[str, int] = {}  # a suggested tile -> its seat, until it is played
    texts: set[str] = set()
    for ev in asker.events:
        out = public_event(ev)
        if ev.kind == "coach":
            private = ev.data.get("private")
            assert out is not None and out.data == {"seat": ev.data["seat"], "hand_no": ev.data["hand_no"]}
            if isinstance(private, dict) and private.get("kind") == "suggestion":
                counts["hints"] += 1
                if private.get("piece"):
                    # a hint that names a tile ("pass", "draw" are words anyone says)
                    texts.add(str(private["text"]))
                    counts["pieces"] += 1
                    assert set(private["cells"]) <= asker.racks[private["seat"]]
                    if game == "dominoes":
                        secret[private["piece"]] = private["seat"]
            continue
        if out is None:
            continue
        counts["public"] += 1
        assert "private" not in out.data
        if ev.kind in ("move_accepted", "hand_started", "hand_ended"):
            move = out.data.get("move") or {}
            for t in TILE_RE.findall(json.dumps(move)):
                secret.pop("-".join(sorted(t)), None)
            if ev.kind != "move_accepted":
                secret.clear()
        data = dict(out.data)
        data.pop("review", None)  # after the hand, about moves made: see test_coach_table
        data.pop("record", None)
        if ev.kind == "view":
            data.pop("last_line", None)
            data.pop("result", None)
        text = json.dumps(data, ensure_ascii=False)
        for said in texts:
            assert said not in text, f"the coach's words {said!r} in public {ev.kind}: {text}"
        named = {"-".join(sorted(t)) for t in TILE_RE.findall(text)}
        leaked = named & set(secret)
        assert not leaked, f"public {ev.kind} names the suggested {leaked} while still hidden: {text}"
    return counts


@pytest.mark.parametrize(
    ("game", "variant", "seats", "options"), MATCHES, ids=[f"{g}-{v}-{n}" for g, v, n, _ in MATCHES]
)
def test_no_public_channel_carries_the_coachs_suggestion_through_whole_matches(
    game: str, variant: str, seats: int, options: dict[str, Any]
) -> None:
    cfg = DemoConfig(
        game=game,
        variant=variant,
        seats=seats,
        seed=11,
        web=False,
        link="direct",
        options=dict(options),
        fast=True,
        timeout=120,
        coach=True,
    )
    geometry = TableGeometry.load(demo_table(cfg, demo_variant(cfg)))
    asker = Asker(geometry, game, seats)

    def on_session(session: Any) -> None:
        asker.session = session

    def on_bus(bus: EventBus) -> None:
        bus.add_listener(asker.seen)

    result = run_demo(cfg, on_bus=on_bus, on_session=on_session)
    asker.leds.close(blank=False)
    assert result.match_over, f"the match did not finish: {result.errors}"
    counts = check(asker, game)
    assert counts["hints"] >= 10 and counts["pieces"] > 0 and counts["public"] > 20, counts
    assert asker.lit_frames > 0, "the coach never lit a rack cell"
    if game == "dominoes":
        # every finished hand was reviewed, in the record as x-review
        assert all("x-review" in h for h in result.record["hands"])


def test_the_display_channels_send_a_coach_event_without_its_suggestion() -> None:
    """``/ws``, ``/api/history``, ``/api/view`` and ``/events`` carry the
    public form: who asked, never what the coach said."""
    import httpx
    from fastapi.testclient import TestClient

    from tablesense.web.app import create_app
    from tablesense.web.server import serve_display

    hint = {"seat": 1, "kind": "suggestion", "text": "lay 1-6 on the left end", "piece": "1-6",
            "cells": ["seat1-2"], "move": {"seat": 1, "tile": "1-6", "end": "left"}}
    bus = EventBus()
    app = create_app(bus, optional_routers=())
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        bus.publish("coach", seat=1, hand_no=2, private=hint)
        bus.publish("view", hand_no=2, message={"text": "East is playing", "level": "info"})
        first = json.loads(ws.receive_text())
        assert first["kind"] == "coach" and first["data"] == {"seat": 1, "hand_no": 2}
        seen = json.dumps(first) + ws.receive_text()
        seen += json.dumps(client.get("/api/history").json())
        seen += json.dumps(client.get("/api/view").json())
        assert not TILE_RE.search(seen) and "left end" not in seen, seen
    server = serve_display(bus)
    try:
        lines: list[str] = []
        with httpx.stream("GET", server.url + "events", timeout=10) as r:
            bus.publish("coach", seat=1, hand_no=2, private=hint)
            bus.publish("message", text="done", level="info")
            for line in r.iter_lines():
                lines.append(line)
                if '"done"' in line:
                    break
        text = "\n".join(lines)
        assert "event: coach" in text and not TILE_RE.search(text) and "left end" not in text
    finally:
        server.stop()
        bus.close()
