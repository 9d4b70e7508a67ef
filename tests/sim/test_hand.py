"""The table top's hands (sim/hand.py): lift and lay on the virtual table's
readers, who sees what, shuffle-and-deal, and a session saved as a scenario
file and replayed through the real firmware and link."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablesense.link.manager import TableLink
from tablesense.sim.hand import COMPUTER, HandError, TableTop, game_pieces
from tablesense.sim.scenario import Scenario
from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


class Header:
    """A seat header stand-in: records presses, lights seat 1's turn LED."""

    def __init__(self, lit: set[int]) -> None:
        self.lit = lit
        self.events: list[tuple[str, int]] = []
        self.released = threading.Event()

    def level(self, pin: int) -> bool:
        return pin in self.lit

    def press(self, pin: int) -> None:
        self.events.append(("down", pin))

    def release_button(self, pin: int) -> None:
        self.events.append(("up", pin))
        self.released.set()


@pytest.fixture(scope="module")
def geometry() -> TableGeometry:
    return TableGeometry.load("dominoes-2")


@pytest.fixture()
def table(geometry: TableGeometry) -> Iterator[VirtualTable]:
    vt = VirtualTable(geometry, seed=3, scan_interval=0.001)
    vt.start()
    try:
        yield vt
    finally:
        vt.stop()


def test_deal_fills_racks_and_boneyard_and_seats_see_only_their_own(
    table: VirtualTable, geometry: TableGeometry
) -> None:
    reg = TagRegistry.virtual(3)
    top = TableTop(table, geometry, reg, seed=3)
    top.deal(seed=5)
    pieces = top.piece_map()
    assert len(pieces) == 28  # 2 x 7 on the racks + 14 in the boneyard
    assert set(pieces.values()) == set(game_pieces(geometry))
    assert top.stock() == []
    view = top.view(0)
    own = {c for c in geometry.seats[0].rack}
    for cell, info in view["cells"].items():
        if cell in own:
            assert info["piece"] == pieces.get(cell)
        elif cell in pieces:
            assert info["piece"] == "hidden", cell
    text = json.dumps(view)
    for cell in geometry.seats[1].rack[:7] + geometry.boneyard:
        assert f'"{pieces[cell]}"' not in text
    with pytest.raises(HandError, match="open hands are off"):
        top.view(0, open_view=True)


def test_lift_and_lay_are_two_world_changes_and_a_held_piece_is_on_no_reader(
    table: VirtualTable, geometry: TableGeometry
) -> None:
    reg = TagRegistry.virtual(3)
    top = TableTop(table, geometry, reg, seed=3)
    top.deal(seed=5)
    cell = geometry.seats[0].rack[0]
    piece = top.piece_at(cell)
    assert piece is not None
    with pytest.raises(HandError, match="rack"):
        top.lift("seat:0", geometry.seats[1].rack[0])
    got = top.lift("seat:0", cell)
    assert got == piece
    assert cell not in table.tags()  # in the air: on no reader
    assert piece not in top.piece_map().values()
    assert top.held("seat:0") == [piece]
    # others see a hidden piece in seat 0's hand, seat 0 sees its face
    assert top.view(1)["air"] == [{"hand": "seat:0", "piece": "hidden", "mine": False}]
    assert top.view(0)["air"] == [{"hand": "seat:0", "piece": piece, "mine": True}]
    with pytest.raises(HandError, match="already holds"):
        top.lay("seat:0", piece, geometry.seats[0].rack[1])
    with pytest.raises(HandError, match="not holding"):
        top.lay("seat:1", piece, "center")
    top.lay("seat:0", piece, "center")
    assert table.tags()["center"] == reg.uid_of(piece)
    assert top.view(1)["cells"]["center"]["piece"] == piece  # the line is public
    # the computer's hand takes a piece from wherever it lies
    other = top.piece_at(geometry.seats[1].rack[0])
    assert other is not None
    top.place("left-1", reg.uid_of(other))
    assert top.piece_at("left-1") == other and top.touched[other] == COMPUTER
    assert geometry.seats[1].rack[0] not in table.tags()
    # where the computer deals, the stock is not a person's to draw from
    top.dealer = COMPUTER
    with pytest.raises(HandError, match="computer deals"):
        top.lift("seat:0", from_stock=True)


def test_laying_pieces_one_by_one_from_the_stock(table: VirtualTable, geometry: TableGeometry) -> None:
    reg = TagRegistry.virtual(3)
    top = TableTop(table, geometry, reg, seed=3)
    assert len(top.stock()) == 28 and table.tags() == {}
    for cell in geometry.seats[0].rack[:7]:
        piece = top.lift("seat:0", from_stock=True)
        assert top.view(1)["air"] == [{"hand": "seat:0", "piece": "hidden", "mine": False}]
        top.lay("seat:0", piece, cell)
    assert len(top.stock()) == 21 and len(table.tags()) == 7
    back = top.lift("seat:0", geometry.seats[0].rack[0])
    top.lay("seat:0", back, None)  # back on the stock, off the table
    assert len(top.stock()) == 22 and back in top.stock()


def test_buttons_press_and_release_the_seat_header_and_turn_leds_read_it(
    table: VirtualTable, geometry: TableGeometry
) -> None:
    seat1 = geometry.seats[1]
    assert seat1.turn_led_pin is not None and seat1.button_pin is not None
    header = Header({seat1.turn_led_pin})
    top = TableTop(table, geometry, TagRegistry.virtual(3), header=header)
    assert top.turn_leds() == [False, True]
    top.press(1, "pass")
    assert header.released.wait(2.0)
    assert header.events == [("down", seat1.button_pin), ("up", seat1.button_pin)]
    with pytest.raises(HandError, match="no 'shout' button"):
        top.press(1, "shout")
    # the referee's name of the pass button (suggestion events say "main"): the same pin
    header.released.clear()
    top.press(1, "main")
    assert header.released.wait(2.0)
    assert header.events[-2:] == [("down", seat1.button_pin), ("up", seat1.button_pin)]


def test_session_saved_as_a_scenario_replays_through_firmware_and_link(
    tmp_path: Path, table: VirtualTable, geometry: TableGeometry
) -> None:
    reg = TagRegistry.virtual(3)
    top = TableTop(table, geometry, reg, seed=3)
    top.deal(seed=9)
    a = geometry.seats[0].rack[2]
    piece = top.lift("seat:0", a)
    top.lay("seat:0", piece, "center")
    b = geometry.boneyard[0]
    drawn = top.lift("seat:1", b)
    top.lay("seat:1", drawn, geometry.seats[1].rack[7])
    want = table.tags()
    path = tmp_path / "session.json"
    path.write_text(json.dumps(top.scenario()))
    script = Scenario.load(path, geometry)
    assert sum(1 for s in script.steps if s.action == "place") == 30

    fresh = VirtualTable(geometry, seed=4, scan_interval=0.001)
    paths = fresh.start()
    link = TableLink(geometry, ports=list(paths.values()))
    try:
        link.start()
        assert link.wait_online(20.0)
        assert script.run(fresh, speed=1000.0)
        assert fresh.tags() == want
        seen = link.wait_until(lambda st: st.complete and st.tags() == want, 10.0)
        assert seen is not None, "the link never reported the replayed table"
        assert seen.tags()["center"] == reg.uid_of(piece)
    finally:
        link.stop()
        fresh.stop()


@pytest.mark.parametrize(("layout", "cards"), [("kems-4", 32), ("kems-6", 32), ("kems-8", 52)])
def test_the_deck_on_the_table_is_the_record_formats_default(layout: str, cards: int) -> None:
    """Six seats play with 32 cards (game-record spec of 2026-12-01), eight with 52."""
    geometry = TableGeometry.load(layout)
    assert len(game_pieces(geometry, "card")) == cards == len(game_pieces(geometry))


def test_a_cell_past_an_arms_end_is_refused_with_where_the_track_goes_on(
    table: VirtualTable, geometry: TableGeometry
) -> None:
    """Issue 30: a script laid ``left-14`` where the left arm (13 cells) goes on at the
    far end of the right arm; the refusal says where."""
    assert geometry.line is not None and len(geometry.line.left) == 13
    top = TableTop(table, geometry, TagRegistry.virtual(3), seed=3)
    piece = top.lift("open", from_stock=True)
    with pytest.raises(HandError, match="no cell 'left-14' on this table: the left arm has 13 cells and goes on at "
                                        + geometry.line.right[-1]):
        top.lay("open", piece, "left-14")
    with pytest.raises(HandError, match=r"^there is no cell 'nowhere' on this table$"):
        top.lay("open", piece, "nowhere")
    top.lay("open", piece, None)

