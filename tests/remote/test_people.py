"""People at a remote match's virtual table, in one process: a person's seat
moves its own tiles and presses its pass button through the same table side
the page drives (tests/remote/test_remote_page.py plays it in Chromium); the
table's hands never move a person's tile laid astray; the turn lights, the
banner and the seat buttons the page shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_match_sides import PIECES, DictTable

from tablesense.remote.authority import Authority, Seating
from tablesense.remote.journal import RemoteJournalError, TableJournal
from tablesense.remote.judge import WRONG
from tablesense.remote.match import HostSide, Message, TableSide
from tablesense.remote.people import Refusals, SeatButtons, banner, page_banner, turn_lights
from tablesense.remote.view import TableView, frame_for
from tablesense.table.geometry import TableGeometry

EAST, WEST = 1, 3


class Person:
    """East as a person: lays a fitting tile from the rack on its arm's next
    cell, else presses pass. ``astray`` first lays one tile on a wrong cell."""

    def __init__(self, side: TableSide, world: DictTable, astray: bool) -> None:
        self.side, self.world, self.astray = side, world, astray
        self.made: list[dict[str, Any]] = []
        self.stray: tuple[str, str] | None = None
        self.wrong_lit = False
        self.left_alone = 0

    def act(self) -> None:
        legal = [m for m in self.side.current_legal() if m.get("seat") == EAST]
        if self.stray is not None:  # the tile laid astray: the hands left it there, it lights; back to the rack
            to, home = self.stray
            assert self.world.pieces.get(to) is not None, "the hands moved a person's tile"
            self.left_alone += 1
            if self.left_alone < 5:
                return
            self.wrong_lit = self.wrong_lit or self.side._lit is not None and self.side._lit.get(to) == WRONG
            self.world.move(to, home)
            self.stray = None
            return
        if not legal or self.side.judge.judge(self.world.pieces, legal).kind != "steady":
            return
        plays = [m for m in legal if "tile" in m]
        if not plays:
            move = next(m for m in legal if m.get("pass") or m.get("draw"))
            self.side.press(EAST)
            self.made.append(move)
            return
        move = plays[0]
        rack = self.side.geometry.seats[EAST].rack
        tile = sorted(str(move["tile"]).split("-"))
        at = next(c for c in rack if c in self.world.pieces and sorted(self.world.pieces[c].split("-")) == tile)
        if self.astray:
            self.astray = False
            free = next(c for c in self.side.geometry.line.cells  # type: ignore[union-attr]
                        if c not in self.world.pieces and c != self.side.judge.target(move.get("end")))
            self.world.move(at, free)
            self.stray = (free, at)
            return
        to = self.side.judge.target(move.get("end"))
        assert to is not None
        self.world.move(at, to)
        self.made.append(move)


def play(seed: int, astray: bool = False) -> tuple[HostSide, dict[str, TableSide], Person]:
    g = TableGeometry.load("dominoes-4-remote")
    seating = {"ns": frozenset({0, 2}), "ew": frozenset({EAST, WEST})}
    host = HostSide(Authority("dominoes", "pairs-pips", Seating(seating), options={"target": 20}, seed=seed))
    worlds = {t: DictTable(g, seed + k) for k, t in enumerate(seating)}
    sides = {
        "ns": TableSide(g, seating["ns"], PIECES, bots=seating["ns"], hands=worlds["ns"]),
        "ew": TableSide(g, seating["ew"], PIECES, bots=frozenset({WEST}), people=frozenset({EAST}), hands=worlds["ew"]),
    }
    person = Person(sides["ew"], worlds["ew"], astray)
    inbox: list[tuple[str, Message]] = host.start()
    for _ in range(40_000):
        for table, msg in inbox:
            sides[table].receive(msg)
        inbox = []
        person.act()
        for table, side in sides.items():
            for msg in side.step(worlds[table].pieces):
                inbox += host.handle(table, msg)
        if host.authority.match.is_over and all(s.view.record is not None for s in sides.values()):
            break
    return host, sides, person


@pytest.mark.parametrize("seed", [5, 8])
def test_a_person_seat_plays_its_own_tiles_and_passes_by_its_button(seed: int) -> None:
    host, sides, person = play(seed)
    assert host.authority.match.is_over
    record = host.authority.record()
    assert sides["ew"].view.record == sides["ns"].view.record == record
    east = [m for h in record["hands"] for m in h["moves"] if m.get("seat") == EAST]
    assert east == person.made  # every move of East is the person's, none the computer's
    assert any("tile" in m for m in east)


def test_passes_come_from_the_button() -> None:
    """Some seed makes East pass: each of those is a press of its button."""
    for seed in range(5, 30):
        host, _, person = play(seed)
        passes = [m for h in host.authority.record()["hands"] for m in h["moves"]
                  if m.get("seat") == EAST and m.get("pass")]
        if passes:
            assert passes == [m for m in person.made if m.get("pass")]
            return
    pytest.fail("no seed from 5 to 29 made East pass")


def test_the_hands_leave_a_persons_stray_tile_where_it_lies_and_it_lights() -> None:
    host, sides, person = play(5, astray=True)
    assert person.left_alone >= 5 and person.wrong_lit
    assert sides["ew"].view.record == host.authority.record()


def test_turn_lights_show_the_seat_to_play_and_never_invite_before_the_legal_moves() -> None:
    view = TableView(frozenset({EAST, WEST}))
    assert turn_lights(view, 4, []) == [False] * 4  # nothing dealt
    view.apply({"kind": "deal", "no": 0, "game": "dominoes", "hand": 1, "hands": {"1": ["6-6"], "3": ["0-0"]},
                "counts": [7, 7, 7, 7], "boneyard": 0, "to_play": 1, "openers": [1]})
    assert turn_lights(view, 4, []) == [False] * 4  # East to open, but its legal moves are not here yet
    assert turn_lights(view, 4, [{"seat": EAST, "tile": "6-6"}]) == [False, True, False, False]
    view.to_play, view.openers, view.line = 2, [], [("6-6", None)]
    assert turn_lights(view, 4, []) == [False, False, True, False]  # the other table's North
    view.paused = ["table-1"]
    assert turn_lights(view, 4, []) == [False] * 4


def test_the_banner_says_the_state_of_the_match() -> None:
    view = TableView(frozenset({EAST, WEST}))
    assert str(banner(view, dealt=False, placing=False, refused=None)) == "waiting for the other table"
    view.hand = 2
    assert "dealing" in str(banner(view, dealt=False, placing=False, refused=None))
    assert banner(view, dealt=True, placing=False, refused=None) is None  # the page says whose turn
    assert "being placed" in str(banner(view, dealt=True, placing=True, refused=None))
    assert "not accepted: no" in str(banner(view, dealt=True, placing=False, refused="no"))
    view.paused = ["table-1"]
    assert "table-1 is away" in str(banner(view, dealt=True, placing=False, refused=None))
    view.paused, view.records, view.score = [], [{}, {}], [21, 9]
    assert str(banner(view, dealt=True, placing=False, refused=None)) == "hand 2 scored: 21 – 9"
    view.record = {}
    assert str(banner(view, dealt=True, placing=False, refused=None)) == "match over: 21 – 9"


def test_a_refusal_shows_for_a_while_in_red() -> None:
    now = [0.0]
    g = TableGeometry.load("dominoes-4-remote")
    side = TableSide(g, frozenset({EAST, WEST}), PIECES, people=frozenset({EAST}))
    side.view.hand = 1
    side.judge.dealt_hand = 1
    shown = page_banner(side, Refusals(clock=lambda: now[0]), str)
    assert shown() is None
    side.receive({"type": "reject", "reason": "6-6 does not fit"})
    assert shown() == {"text": "not accepted: 6-6 does not fit", "level": "error"}
    now[0] = 7.0
    assert shown() is None


def test_seat_buttons_pass_for_people_only_and_light_the_turn() -> None:
    g = TableGeometry.load("dominoes-4-remote")
    pressed: list[int] = []
    lit = [False, True, False, False]
    buttons = SeatButtons(g, frozenset({EAST}), pressed.append, lambda: lit)
    east, west = g.seats[EAST], g.seats[WEST]
    assert east.button_pin is not None and west.button_pin is not None and east.call_button_pin is not None
    buttons.press(east.button_pin)
    assert pressed == [EAST]
    with pytest.raises(ValueError, match="a computer plays that seat"):
        buttons.press(west.button_pin)
    with pytest.raises(ValueError, match="pass button is its only button"):
        buttons.press(east.call_button_pin)
    assert buttons.level(east.turn_led_pin or -1) and not buttons.level(west.turn_led_pin or -1)


def test_the_joining_tables_journal_keeps_its_frames_and_starts_again_after_them(tmp_path: Path) -> None:
    """The frames a table applied, fsynced, in order; a table started again
    takes its view from them and writes only the frames after; a line cut by
    a crash is dropped (the host sends that frame again); a gap is refused."""
    host, sides, _ = play(5)
    frames = [frame_for(f, frozenset({EAST, WEST})) for f in host.authority.facts]
    journal, got = TableJournal.open_or_create(tmp_path, "ABCDEF", "table-1")
    assert got == []
    side = TableSide(TableGeometry.load("dominoes-4-remote"), frozenset({EAST, WEST}), PIECES)
    side.on_frame = journal.add_frame
    for f in frames[:10]:
        side.receive({"type": "frame", "frame": f})
    journal.close()
    path = TableJournal.path_of(tmp_path, "ABCDEF")
    with path.open("a") as cut:
        cut.write('{"frame": {"no": 10, "ki')  # the power went while it was written
    journal, got = TableJournal.open_or_create(tmp_path, "ABCDEF", "table-1")
    assert got == frames[:10]
    again = TableSide(TableGeometry.load("dominoes-4-remote"), frozenset({EAST, WEST}), PIECES)
    for f in got:
        again.receive({"type": "frame", "frame": f})
    again.on_frame = journal.add_frame
    for f in frames:  # the host sends every frame to a table that joined again
        again.receive({"type": "frame", "frame": f})
    journal.close()
    assert again.view.record == host.authority.record() == sides["ew"].view.record
    _, got = TableJournal.open_or_create(tmp_path, "ABCDEF", "table-1")
    assert got == frames  # each frame once, in order (the cut line gone)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # frame 0 lost
    with pytest.raises(RemoteJournalError, match="not numbered"):
        TableJournal.open_or_create(tmp_path, "ABCDEF", "table-1")


def test_a_physical_tables_seat_button_passes_and_its_turn_leds_follow_the_match() -> None:
    """At a physical table (``play --remote ... --port``) the seat devices are
    the table's GPIO (here its simulation): a person's seat button is their
    pass, a computer seat's button does nothing, the turn LEDs light the seat
    whose legal moves the table holds, then the other table's seat to play."""
    import threading
    import time

    from tablesense.outputs.clock import ThreadScheduler
    from tablesense.outputs.gpio import SimBackend, TableGPIO
    from tablesense.remote.cli import seat_devices

    g = TableGeometry.load("dominoes-4-remote")
    backend = SimBackend(ThreadScheduler())
    gpio = TableGPIO.from_geometry(g, backend)
    side = TableSide(g, frozenset({EAST, WEST}), PIECES, bots=frozenset({WEST}), people=frozenset({EAST}))
    side.receive({"type": "frame", "frame": {"kind": "deal", "no": 0, "game": "dominoes", "hand": 1,
                                             "hands": {"1": ["6-6"], "3": ["0-0"]}, "counts": [7, 7, 7, 7],
                                             "boneyard": 0, "to_play": 1, "openers": [1]}})
    side.receive({"type": "legal", "after": 0, "moves": [{"seat": EAST, "pass": True}]})
    stop = threading.Event()
    thread = seat_devices(gpio, side, stop, every=0.02)
    try:
        def led(seat: int) -> bool:
            pin = g.seats[seat].turn_led_pin
            assert pin is not None
            return backend.level(pin)

        def until(check: Any) -> bool:
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and not check():
                time.sleep(0.01)
            return bool(check())

        assert until(lambda: led(EAST)) and not led(WEST) and not led(0)
        for seat in (WEST, EAST):
            pin = g.seats[seat].button_pin
            assert pin is not None
            backend.press(pin)
            time.sleep(0.15)  # longer than the debounce
            backend.release_button(pin)
        assert until(lambda: list(side._pressed) == [EAST])  # West's button is not a person's
        # (the press becomes East's claim when the table is steady: test_passes_come_from_the_button)
        side.receive({"type": "frame", "frame": {"kind": "move", "no": 1, "hand": 1, "to_play": 2,
                                                 "move": {"seat": EAST, "tile": "6-6"}}})
        assert until(lambda: led(2) and not led(EAST))  # the other table's North to play
    finally:
        stop.set()
        thread.join(2)
        gpio.close()
