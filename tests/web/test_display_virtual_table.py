"""The display page in headless Chromium during matches played through the
virtual table: real firmware on emulated readers behind ptys, the link, the
referee and its session with computer seats, and the display app, all in this
process. The test is the players' hands: it carries out each computer seat's
suggestion on the virtual table, once makes a bad move and fixes it, and after
every accepted move checks that the page shows what the referee published
(line of play, turn, counts, scores, message), and in the end the engine's own
state. Screenshots go to test-artifacts/web/."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pagestate import arms, wait_seq

from tablesense.outputs.cell_leds import CellLeds
from tablesense.outputs.events import EventBus, Subscription, TableEvent
from testsupport import REPO

pytestmark = pytest.mark.timeout(180)

DEADLINE = 40.0


def _tile_key(text: str) -> str:
    a, b = (int(x) for x in str(text).split("-"))
    return f"{min(a, b)}-{max(a, b)}"


def _num(x: Any) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass
class Table:
    """Everything of one in-process table; ``close()`` stops it all."""

    bus: EventBus
    referee: Any
    session: Any
    vtable: Any
    link: Any
    registry: Any
    server: Any
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(10)
        self.session.detach()
        self.server.stop()
        self.link.stop()
        self.vtable.stop()
        self.bus.close()


def start_table(game: str, variant: str, layout: str, seed: int, bots: dict[int, Any]) -> Table:
    from tablesense.link.manager import TableLink
    from tablesense.referee.core import MatchSpec, Referee, Timing
    from tablesense.referee.session import Session
    from tablesense.sim.virtual_table import VirtualTable
    from tablesense.table.geometry import TableGeometry
    from tablesense.table.tags import TagRegistry
    from tablesense.web.server import serve_display

    geometry = TableGeometry.load(REPO / "hardware" / "tables" / f"{layout}.toml")
    registry = TagRegistry.virtual(seed)
    n = len(geometry.seats)
    spec = MatchSpec(
        game=game,
        variant=variant,
        seat_names=["Ana", "Bruno", "Carla", "Davi"][:n],
        seat_kinds=["bot"] * n,
        seed=seed,
        table=geometry.name,
    )
    bus = EventBus(history_size=20000)
    referee = Referee(
        spec,
        geometry,
        registry,
        emit=bus.publish,
        store=None,
        timing=Timing().scaled(0.25),
        deal="engine",
    )
    vtable = VirtualTable(geometry, seed=seed)
    paths = vtable.start()
    link = TableLink(geometry, ports=list(vtable.stable_paths().values()) or list(paths.values()))
    link.start()
    server = serve_display(bus)
    table = Table(bus, referee, None, vtable, link, registry, server)
    try:
        assert link.wait_online(20.0), "the virtual boards did not come online"
        table.session = Session(referee, link, bus, bots=bots, seed=seed)
        return table
    except BaseException:
        table.session = type("NoSession", (), {"detach": lambda self: None})()
        table.close()
        raise


def run_session(table: Table, until: Any) -> None:
    table.referee.start(time.monotonic())
    table.session.attach()
    table.thread = threading.Thread(
        target=table.session.run, args=(table.stop,), kwargs={"until": until}, daemon=True
    )
    table.thread.start()


class Hands:
    """The players' hands: what a person does when the table lights a move."""

    def __init__(self, table: Table) -> None:
        self.t = table
        self.cells: dict[str, str] = {}  # cell -> piece, as laid by these hands

    def place(self, piece: str, cell: str) -> None:
        self.t.vtable.place(cell, self.t.registry.uid_of(piece))
        self.cells[cell] = piece

    def lift(self, cell: str) -> str | None:
        piece = self.cells.pop(cell, None)
        if piece is not None:
            self.t.vtable.remove(cell)
        return piece

    def move(self, from_cell: str, to_cell: str) -> None:
        piece = self.lift(from_cell)
        assert piece is not None, f"no piece on {from_cell}"
        self.place(piece, to_cell)

    def setup(self, cells: dict[str, str]) -> None:
        for cell in sorted(self.cells):
            if cells.get(cell) != self.cells[cell]:
                self.lift(cell)
        for cell, piece in cells.items():
            if self.cells.get(cell) != piece:
                self.place(piece, cell)


def next_event(
    sub: Subscription, kinds: set[str], deadline: float, seen: set[str] | None = None
) -> TableEvent:
    """The next event of one of ``kinds``; the kinds of every event read
    (also the skipped ones) are added to ``seen``."""
    while True:
        ev = sub.get(timeout=max(0.01, deadline - time.monotonic()))
        if ev is not None and seen is not None:
            seen.add(ev.kind)
        if ev is None:
            recent = "\n".join(
                f"  {e.seq} {e.kind} {str({k: v for k, v in e.data.items() if k not in ('record', 'seats')})[:300]}"
                for e in sub._bus.history[-12:]
            )
            raise AssertionError(f"no {sorted(kinds)} event in time; the last events:\n{recent}")
        if ev.kind in kinds:
            return ev


def view_at(bus: EventBus, seq: int) -> dict[str, Any]:
    for ev in reversed(bus.history):
        if ev.kind == "view" and ev.seq <= seq:
            return ev.data
    raise AssertionError(f"no view at or before {seq}")


def check_page_against_view(state: dict[str, Any], view: dict[str, Any]) -> None:
    """The page shows exactly what the referee's view says."""
    assert state["error"] == ""
    if view["game"] == "dominoes":
        line = view["line"]
        expected = {
            "center": [_tile_key(line["center"]["tile"])] if line.get("center") else [],
            "left": [_tile_key(t["tile"]) for t in line["left"]],
            "right": [_tile_key(t["tile"]) for t in line["right"]],
        }
        assert arms(state) == expected
        shown = {(t["arm"], t["index"]): t for t in state["line"]}
        for end in ("left", "right"):
            for i, t in enumerate(line[end]):
                assert int(shown[(end, i)]["outer"]) == t["outer"]
    else:
        assert state["board"] == [str(c) for c in view["board"]]
    counts = [None if s["count"] == "" else int(s["count"]) for s in state["seats"]]
    assert counts == [s["count"] for s in view["seats"]]
    assert [s["seat"] for s in state["seats"] if s["turn"]] == [
        s["index"] for s in view["seats"] if s["is_turn"]
    ]
    assert state["scores"] == [_num(x) for x in view["scores"]]
    msg = view.get("message")
    if msg:
        assert state["message"]["hidden"] is False
        assert state["message"]["text"] == msg["text"] and state["message"]["level"] == msg["level"]
    else:
        assert state["message"]["hidden"] is True
    if view.get("hand_no"):
        assert state["hand"].endswith(str(view["hand_no"]))


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    ctx.close()
    assert errors == [], f"the page reported errors: {errors}"


def open_display(page: Any, table: Table) -> None:
    page.goto(table.server.url)
    page.wait_for_function("document.body.dataset.conn === 'live'", timeout=10000)


def check_after(page: Any, table: Table, view_ev: TableEvent) -> dict[str, Any]:
    state = wait_seq(page, view_ev.seq, timeout_ms=10000)
    check_page_against_view(state, view_at(table.bus, state["seq"]))
    return state


def wrong_line_cell(table: Table, to_cell: str) -> str | None:
    line = table.referee.geometry.line
    for arm in (line.left, line.right):
        if to_cell in arm:
            i = arm.index(to_cell)
            return arm[i + 2] if i + 2 < len(arm) else None
    return None


def test_dominoes_hand_through_the_virtual_table(page: Any, artifacts: Path) -> None:
    from tablesense.games.dominoes_players import RandomPlayer

    seed = 11
    table = start_table(
        "dominoes", "pairs-pips", "dominoes-4", seed, {i: RandomPlayer() for i in range(4)}
    )
    hands = Hands(table)
    sub = table.bus.subscribe(replay=False, maxsize=100000)
    # the cell LED output follows the same stream (frames to a recording sink)
    frames: list[dict[str, Any]] = []
    leds = CellLeds(table.referee.geometry, frames.append, min_interval=0.0)
    leds.attach(table.bus)
    # the last-move layer as each accepted move left it (the publisher's thread,
    # right after the LEDs handled it): later moves may change it before the test looks
    last_move_at: dict[int, frozenset[str]] = {}

    def keep_last_move(ev: TableEvent) -> None:
        if ev.kind == "move_accepted":
            last_move_at[ev.seq] = leds.layer("last_move")

    table.bus.add_listener(keep_last_move, replay=True)
    try:
        run_session(table, lambda s: len(s.referee.finished_hands()) >= 1)
        open_display(page, table)
        deadline = time.monotonic() + DEADLINE
        moves = 0
        bad_done = False
        seen: set[str] = set()
        most_tiles: tuple[int, list[str]] = (0, [])
        last_play: tuple[str, str] | None = None
        while "hand_ended" not in seen:
            ev = next_event(sub, {"suggestion", "move_accepted", "hand_ended"}, deadline, seen)
            if ev.kind == "hand_ended":
                break
            if ev.kind == "move_accepted":
                moves += 1
                view_ev = next_event(sub, {"view"}, deadline, seen)
                state = check_after(page, table, view_ev)
                if len(state["line"]) > most_tiles[0]:
                    most_tiles = (len(state["line"]), [t["tile"] for t in state["line"]])
                if moves == 1:
                    page.screenshot(path=str(artifacts / "vt-dominoes-first-move.png"))
                if last_play and ev.data["move"].get("tile") and "hand_ended" not in seen:
                    # the LEDs show where the tile went (until the hand ends)
                    assert last_play[1] in last_move_at[ev.seq]
                    assert last_move_at[ev.seq] <= frozenset(last_play)
                assert state["lastMove"], "the last move is shown"
                continue
            d = ev.data
            kind = d.get("kind")
            if kind == "setup":
                hands.setup(d["cells"])
            elif kind in ("play", "draw"):
                bad = wrong_line_cell(table, d["to_cell"]) if kind == "play" else None
                if not bad_done and moves >= 3 and bad is not None and bad not in hands.cells:
                    # A bad move: the tile goes two cells past the free one.
                    before = view_at(table.bus, table.bus.seq)
                    hands.move(d["from_cell"], bad)
                    rej = next_event(sub, {"move_rejected"}, deadline)
                    assert bad in rej.data.get("cells", [])
                    view_ev = next_event(sub, {"view"}, deadline)
                    while (view_ev.data.get("message") or {}).get("level") != "error":
                        view_ev = next_event(sub, {"view"}, deadline)
                    state = check_after(page, table, view_ev)
                    assert state["message"]["level"] == "error" and state["message"]["text"]
                    assert bad in leds.layer("error")
                    assert arms(state)["left"] == [
                        _tile_key(t["tile"]) for t in before["line"]["left"]
                    ]
                    assert arms(state)["right"] == [
                        _tile_key(t["tile"]) for t in before["line"]["right"]
                    ]
                    page.screenshot(path=str(artifacts / "vt-dominoes-bad-move.png"))
                    # Fix it: the tile back on its rack; the message clears.
                    hands.move(bad, d["from_cell"])
                    next_event(sub, {"correction_cleared"}, deadline)
                    view_ev = next_event(sub, {"view"}, deadline)
                    while view_ev.data.get("message"):
                        view_ev = next_event(sub, {"view"}, deadline)
                    state = check_after(page, table, view_ev)
                    assert state["message"]["hidden"] is True
                    assert leds.layer("error") == frozenset()
                    page.screenshot(path=str(artifacts / "vt-dominoes-fixed.png"))
                    bad_done = True
                hands.move(d["from_cell"], d["to_cell"])
                last_play = (d["from_cell"], d["to_cell"])
            elif kind == "pass":
                table.session.press(d["seat"], "main")
        assert bad_done, "the bad move was made and fixed"
        assert moves >= 7
        # The line the page drew agrees with the engine's finished hand, and
        # when the hand ends the page shows the whole final line (the winning
        # tile too) from the view's ``last_line`` while the next line is empty.
        done = table.referee.finished_hands()[0]
        plays = [str(m.tile) for m in done.moves if type(m).__name__ == "Play"]
        assert set(most_tiles[1]) <= set(plays)
        ended = next(e for e in reversed(table.bus.history) if e.kind == "hand_ended")
        end_view = next(e for e in table.bus.history if e.kind == "view" and e.seq > ended.seq)
        last_line = end_view.data["last_line"]
        assert last_line is not None and last_line["hand_no"] == 1
        assert sorted(
            _tile_key(t["tile"])
            for t in [last_line["center"], *last_line["left"], *last_line["right"]]
        ) == sorted(_tile_key(t) for t in plays)
        # The page shows the hand's result and the match score.
        state = check_after(page, table, end_view)
        shown = state["previousLine"] or [t["tile"] for t in state["line"]]
        assert sorted(_tile_key(t) for t in shown) == sorted(_tile_key(t) for t in plays), (
            "the final line, winning tile included, is on the page"
        )
        assert state["scores"] == [_num(x) for x in table.referee.match.score]
        assert state["result"].startswith("Hand 1:")
        page.screenshot(path=str(artifacts / "vt-dominoes-hand-end.png"))
        assert frames and leds.frames_sent == len(frames)
    finally:
        leds.close()
        sub.close()
        table.close()


def test_kems_round_through_the_virtual_table(page: Any, artifacts: Path) -> None:
    from tablesense.games.kems_players import make_player

    seed = 4
    table = start_table(
        "kems", "classic", "kems-4", seed, {i: make_player("greedy") for i in range(4)}
    )
    hands = Hands(table)
    sub = table.bus.subscribe(replay=False, maxsize=100000)
    geometry = table.referee.geometry
    try:
        run_session(table, lambda s: len(s.referee.finished_hands()) >= 1)
        open_display(page, table)
        deadline = time.monotonic() + DEADLINE
        moves = 0
        bad_done = False
        groups: dict[str, list[dict[str, Any]]] = {}
        seen: set[str] = set()
        while moves < 14 and "hand_ended" not in seen:
            ev = next_event(sub, {"suggestion", "move_accepted", "hand_ended"}, deadline, seen)
            if ev.kind == "hand_ended":
                break
            if ev.kind == "move_accepted":
                moves += 1
                view_ev = next_event(sub, {"view"}, deadline, seen)
                state = check_after(page, table, view_ev)
                assert not any(s["turn"] for s in state["seats"])
                continue
            d = ev.data
            kind = d.get("kind")
            if kind == "setup":
                hands.setup(d["cells"])
            elif kind == "swap":
                group = groups.setdefault(d["group"], [])
                group.append(d)
                if len(group) < d["size"]:
                    continue
                del groups[d["group"]]
                if not bad_done and moves >= 2:
                    # A bad move: a board card taken into a hand that already
                    # holds four (its fifth cell), then put back.
                    seat = geometry.seats[0]
                    spare = next(c for c in seat.rack if c not in hands.cells)
                    slot = geometry.kems_slots[0]
                    hands.move(slot, spare)
                    next_event(sub, {"move_rejected"}, deadline)
                    view_ev = next_event(sub, {"view"}, deadline)
                    while (view_ev.data.get("message") or {}).get("level") != "error":
                        view_ev = next_event(sub, {"view"}, deadline)
                    state = check_after(page, table, view_ev)
                    assert state["message"]["text"]
                    page.screenshot(path=str(artifacts / "vt-kems-bad-move.png"))
                    hands.move(spare, slot)
                    next_event(sub, {"correction_cleared"}, deadline)
                    view_ev = next_event(sub, {"view"}, deadline)
                    while view_ev.data.get("message"):
                        view_ev = next_event(sub, {"view"}, deadline)
                    state = check_after(page, table, view_ev)
                    assert state["message"]["hidden"] is True
                    bad_done = True
                for sw in sorted(group, key=lambda s: s["index"]):
                    hands.lift(sw["from_cell"])
                for sw in sorted(group, key=lambda s: s["index"]):
                    hands.lift(sw["take_cell"])
                    hands.place(sw["piece"], sw["to_cell"])
                    hands.place(sw["take"], sw["from_cell"])
                    time.sleep(0.15)  # let this swap be seen before the next one
            elif kind == "refresh":
                for cell in d["slots"]:
                    hands.lift(cell)
                for cell, card in zip(d["slots"], d["cards"], strict=True):
                    hands.place(card, cell)
            elif kind == "call":
                if d["call"] == "contre":
                    table.session.press(d["seat"], "call")
                    time.sleep(0.05)
                    table.session.press(d["target"], "main")
                else:
                    table.session.press(d["seat"], "main")
        assert bad_done and moves >= 3
        page.screenshot(path=str(artifacts / "vt-kems.png"))
        # the engine's own state agrees with the page
        latest = table.bus.latest("view")
        assert latest is not None
        state = wait_seq(page, latest.seq)
        rnd = table.referee.hand
        if rnd is not None and not table.referee.finished_hands():
            assert state["board"] == [str(c) for c in rnd.board]
    finally:
        sub.close()
        table.close()
