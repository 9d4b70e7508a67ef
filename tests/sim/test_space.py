"""Space in the emulator (sim/space.py): the firmware's own driver reads a
neighbour's tag when the layout is packed too tight, never on a shipped
layout, and `hw check` refuses the tight layout before it is built."""

from __future__ import annotations

from typing import Any

import pytest

from tablesense.firmware import mfrc522 as drv
from tablesense.hw.check import check_spacing
from tablesense.sim.mfrc522_emu import EmulatedCard, EmulatedMFRC522, EmulatedSPIBus
from tablesense.sim.space import Space
from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.geometry import TableGeometry, shipped_tables

UID_A = bytes.fromhex("04a1b2c3d4e5f6")
UID_B = bytes.fromhex("04112233445566")


def table(pitch: float, split: bool = False, **build: Any) -> TableGeometry:
    """Kems slots in a row at ``pitch`` mm plus a one-cell rack far away; with
    ``split``, slots 3 and 4 and the rack on a second board."""
    cells = {f"slot-{k + 1}": (100.0 + pitch * k, 100.0) for k in range(4)} | {"r1": (600.0, 600.0)}
    board_of = {cid: 2 if split and cid in ("slot-3", "slot-4", "r1") else 1 for cid in cells}
    channel = {cid: sum(1 for c in list(cells)[:i] if board_of[c] == board_of[cid]) for i, cid in enumerate(cells)}
    boards = [{"id": b, "name": f"b{b}", "channels": 5, "leds": 5, "x": 300.0 * b, "y": 300.0}
              for b in sorted(set(board_of.values()))]
    return TableGeometry.from_dict(
        {
            "name": f"row-{pitch:g}",
            "games": ["kems"],
            "kems_slots": ["slot-1", "slot-2", "slot-3", "slot-4"],
            "boards": boards,
            "seats": [{"index": 0, "rack": ["r1"]}],
            "build": build,
            "cells": {
                cid: {"board": board_of[cid], "channel": channel[cid], "led": channel[cid], "x": x, "y": y,
                      "zone": "rack" if cid == "r1" else "kems_slot"}
                for cid, (x, y) in cells.items()
            },
        }
    )


class Bench:
    """One emulated reader per cell, each driven by the firmware's driver."""

    def __init__(self, geometry: TableGeometry) -> None:
        self.chips: dict[str, EmulatedMFRC522] = {}
        self.readers: dict[str, drv.MFRC522] = {}
        for cid in geometry.cells:
            bus = EmulatedSPIBus()
            pin, chip = bus.add_reader(cid)
            self.chips[cid] = chip
            self.readers[cid] = drv.MFRC522(bus, pin, timeout_us=500)
        self.space = Space(geometry, self.chips)
        for r in self.readers.values():
            assert r.init()

    def read(self, cell: str) -> object:
        return self.readers[cell].read_uid()


@pytest.mark.parametrize("path", shipped_tables(), ids=lambda p: p.stem)
def test_no_reader_of_a_shipped_layout_reaches_a_neighbours_tag(path: Any) -> None:
    g = TableGeometry.load(path)
    chips = {cid: EmulatedMFRC522() for cid in g.cells}
    assert Space(g, chips).cross_reads() == []


def test_shipped_rack_neighbours_read_only_their_own_tags() -> None:
    """The closest cells of dominoes-4 (a rack at 50 mm) with every field on."""
    g = TableGeometry.load("dominoes-4")
    bench = Bench(g)
    bench.chips["seat0-2"].place(EmulatedCard(UID_A))
    assert bench.read("seat0-2") == UID_A
    assert bench.read("seat0-1") is None and bench.read("seat0-3") is None


def test_a_layout_packed_too_tight_cross_reads_and_hw_check_refuses_it_first() -> None:
    tight = table(15.0)
    findings = check_spacing(tight)
    assert any(f.where == "row-15 cells slot-1 and slot-2" for f in findings)
    bench = Bench(tight)
    assert ("slot-1", "slot-2") in bench.space.cross_reads()
    bench.chips["slot-2"].place(EmulatedCard(UID_A))
    assert bench.read("slot-1") == UID_A, "the neighbour's tag answers slot-1's reader"
    assert bench.read("slot-2") == UID_A
    assert bench.read("r1") is None
    # the same cells at the reference pitch: hw check passes, nothing crosses
    spaced = table(50.0)
    assert check_spacing(spaced) == []
    ok = Bench(spaced)
    ok.chips["slot-2"].place(EmulatedCard(UID_A))
    assert ok.read("slot-1") is None and ok.read("slot-2") == UID_A


def test_between_the_minimum_and_the_reach_hw_check_is_stricter_than_the_emulator() -> None:
    """A tag at the cell centre does not cross at 40 mm, but a tile 5 mm off
    could: hw check refuses what the emulator still reads cleanly."""
    g = table(40.0)
    assert Space(g, {cid: EmulatedMFRC522() for cid in g.cells}).cross_reads() == []
    assert check_spacing(g), "40 mm is under the 45 mm minimum of 40 mm antennas"


def test_a_neighbours_reader_needs_its_own_field_on() -> None:
    bench = Bench(table(15.0))
    bench.chips["slot-2"].place(EmulatedCard(UID_A))
    bench.readers["slot-1"].antenna_off()
    assert bench.read("slot-1") is None
    bench.readers["slot-1"].antenna_on()
    assert bench.read("slot-1") == UID_A


def test_stacked_tags_collide_on_their_own_reader_and_reach_no_neighbour() -> None:
    bench = Bench(table(15.0))
    chip = bench.chips["slot-2"]
    chip.place(EmulatedCard(UID_A))
    chip.add(EmulatedCard(UID_B))
    own = bench.read("slot-2")
    assert isinstance(own, int) and own != 0, f"a stack reads as an error, not {own!r}"
    assert bench.read("slot-1") is None


def test_the_virtual_table_puts_its_readers_in_one_space() -> None:
    vt = VirtualTable(table(15.0), stable_links=False)
    assert ("slot-1", "slot-2") in vt.space.cross_reads()
    assert vt.boards[1].chips[0].space is vt.space
    assert VirtualTable(TableGeometry.load("kems-4"), stable_links=False).space.cross_reads() == []


def test_a_change_wakes_exactly_the_boards_whose_fields_reach_the_cell() -> None:
    """A quiet virtual board steps slowly; laying a tag wakes the boards that
    could read a difference: the cell's own, and on a layout packed too tight
    a neighbour board whose reader the tag answers, never a board out of reach."""
    tight = VirtualTable(table(15.0, split=True), stable_links=False)
    assert tight.space.heard_at["slot-2"] == ["slot-2", "slot-1", "slot-3"]
    assert tight.space.heard_at["r1"] == ["r1"]
    woken: list[int] = []
    for bid, vb in tight.boards.items():
        vb.world_changed = lambda bid=bid: woken.append(bid)  # type: ignore[method-assign]
    tight.place("slot-2", UID_A)  # board 1's cell, reached by board 2's slot-3 reader
    assert woken == [1, 2]
    woken.clear()
    tight.place("r1", UID_B)  # far from everything: board 2 alone
    assert woken == [2]
    woken.clear()
    tight.remove("slot-2")
    assert woken == [1, 2]
    tight.stack("slot-4", UID_A)  # a tag stacked on a cell the world holds nothing on
    woken.clear()
    tight.clear()  # r1 lifted (board 2), then slot-4's stacked tag (board 2 again)
    assert woken == [2, 2]
    shipped = VirtualTable(TableGeometry.load("dominoes-4"), stable_links=False)
    assert all(heard == [cell] for cell, heard in shipped.space.heard_at.items())


def test_through_the_link_a_tight_table_shows_one_tag_on_two_cells_and_the_referee_names_both() -> None:
    """The virtual board (the real firmware, all fields on) over the link:
    the merged TableState carries the neighbour's UID on both cells, and the
    referee's sensing calls it a cross_read naming both."""
    from tablesense.link.manager import TableLink
    from tablesense.referee.sensing import sense
    from tablesense.table.state import Tag
    from tablesense.table.tags import TagRegistry

    g = table(15.0)
    with VirtualTable(g, seed=0) as vt:
        link = TableLink(g, ports=list(vt.stable_paths().values()) or list(vt.device_paths().values()))
        link.start()
        try:
            assert link.wait_online(20.0)
            vt.place("slot-3", UID_A)
            state = link.wait_until(
                lambda st: st.get("slot-3") == Tag(UID_A) and st.get("slot-2") == Tag(UID_A), 20.0
            )
            assert state is not None, f"no cross-read seen: {link.state()!r}"
            assert state.get("r1") != Tag(UID_A)
            problems = [p for p in sense(state, TagRegistry.virtual(0)).problems if p.kind == "cross_read"]
            assert problems and set(problems[0].cells) >= {"slot-2", "slot-3"}
        finally:
            link.stop()


@pytest.mark.parametrize("build", [{}, {"tag_mm": 25.0, "read_range_mm": 35.0},
                                   {"antenna_mm": 30.0, "tag_mm": 30.0, "tag_height_mm": 8.0, "read_range_mm": 50.0}],
                         ids=["10mm-tag", "25mm-tag", "small-loop-far-range"])
def test_the_reach_is_the_last_answering_point_of_the_whole_scan(build: dict[str, float]) -> None:
    """The reach is found scanning inwards from a bound past which no tag can
    answer; it must be what scanning every 0.5 mm from the centre outwards
    gives, and the bound must be silent in every direction."""
    import math
    import random

    from tablesense.table import antenna

    model = antenna.FieldModel(**build)
    far = antenna._silent_beyond_mm(model)
    limit = 3.0 * model.antenna_mm + model.tag_mm + model.read_range_mm
    assert far < limit  # the bound does skip part of the scan
    for degrees in (0, 20, 45):
        angle = math.radians(degrees)
        steps = [k * 0.5 for k in range(int(limit / 0.5) + 1)]
        outward = [d for d in steps if model.answers(d * math.cos(angle), d * math.sin(angle))]
        assert model.reach_mm(angle) == (outward[-1] if outward else 0.0)
    rng = random.Random(7)
    for _ in range(100):
        angle, d = rng.uniform(0.0, 2 * math.pi), far + rng.uniform(0.0, 50.0)
        assert model.coupling(d * math.cos(angle), d * math.sin(angle)) < 1.0


class OneBus:
    """One emulated reader per cell, all on one SPI bus (one board's, where
    two readers can be on the air at once), each with the firmware's driver."""

    def __init__(self, geometry: TableGeometry, cells: list[str] | None = None) -> None:
        self.bus = EmulatedSPIBus()
        self.chips: dict[str, EmulatedMFRC522] = {}
        self.readers: dict[str, drv.MFRC522] = {}
        for k, cid in enumerate(cells or list(geometry.cells)):
            pin, chip = self.bus.add_reader(10 + k)
            chip.frame_log = []
            self.chips[cid] = chip
            self.readers[cid] = drv.MFRC522(self.bus, pin)
        self.space = Space(geometry, self.chips)
        for r in self.readers.values():
            assert r.init()

    def lay(self, cell: str, uid: bytes) -> None:
        self.chips[cell].place(EmulatedCard(uid))

    def pair(self, a: str, b: str) -> tuple[object, object]:
        ra = self.readers[a].read_pair(self.readers[b])
        return ra, self.readers[b].pair_reading

    def frames(self) -> dict[str, list[tuple[bytes, int]]]:
        return {cid: list(chip.frame_log or []) for cid, chip in self.chips.items()}


def test_overlapped_exchanges_of_readers_reaching_a_common_cell_garble() -> None:
    """Packed too tight, slot-1's and slot-3's fields both reach slot-2: the
    two readers on the air at once garble each other's answers (a CRC
    error, never an empty cell); read one after the other they read their
    own tags."""
    tight = OneBus(table(15.0))
    assert "slot-3" in tight.space.interferes["slot-1"]
    tight.lay("slot-1", UID_A)
    tight.lay("slot-3", UID_B)
    assert tight.readers["slot-1"].read_uid() == UID_A
    assert tight.readers["slot-3"].read_uid() == UID_B
    assert tight.readers["slot-1"].known() and tight.readers["slot-3"].known()
    ra, rb = tight.pair("slot-1", "slot-3")
    assert ra == drv.ERR_CRC and rb == drv.ERR_CRC, (ra, rb)
    assert tight.chips["slot-1"].garbled > 0 and tight.chips["slot-3"].garbled > 0
    # the garbled reads left both tags readable: the next reads, one at a time
    assert tight.readers["slot-1"].read_uid() == UID_A
    assert tight.readers["slot-3"].read_uid() == UID_B


def _pair_against_sequential(geometry: TableGeometry, a: str, b: str) -> None:
    """Cells a and b overlapped read exactly as read one after the other:
    the same readings, the same frames on each reader's air, nothing garbled."""
    both = OneBus(geometry, [a, b])
    alone = OneBus(geometry, [a, b])
    assert b not in both.space.interferes.get(a, [])
    for bench in (both, alone):
        bench.lay(a, UID_A)
        bench.lay(b, UID_B)
    for _ in range(20):
        got = both.pair(a, b) if both.readers[a].known() and both.readers[b].known() else (
            both.readers[a].read_uid(), both.readers[b].read_uid())
        want = (alone.readers[a].read_uid(), alone.readers[b].read_uid())
        assert got == want == (UID_A, UID_B)
    assert both.frames() == alone.frames()
    assert both.readers[a].known_reads == alone.readers[a].known_reads > 10
    assert both.chips[a].garbled == both.chips[b].garbled == 0


def test_distant_readers_of_a_tight_layout_overlap_as_if_read_one_at_a_time() -> None:
    """slot-1 and slot-4 of the tight row: their fields reach no common cell."""
    _pair_against_sequential(table(15.0), "slot-1", "slot-4")


@pytest.mark.parametrize("path", shipped_tables(), ids=lambda p: p.stem)
def test_at_a_shipped_layouts_pitch_overlapped_readers_read_as_one_at_a_time(path: Any) -> None:
    """No two readers of a shipped layout reach a common cell; the first
    board's channels 0 and cells // 2 (the pair rfid.overlap makes) read
    overlapped exactly as one after the other."""
    g = TableGeometry.load(path)
    space = Space(g, {cid: EmulatedMFRC522() for cid in g.cells})
    assert space.interferes == {}
    board = min(c.board for c in g.cells.values())
    of_board = sorted((c for c in g.cells.values() if c.board == board), key=lambda c: c.channel)
    first = of_board[0]
    partner = next(c for c in of_board if c.channel >= first.channel + len(of_board) // 2)
    _pair_against_sequential(g, first.id, partner.id)
