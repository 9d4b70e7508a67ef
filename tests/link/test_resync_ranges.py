"""Resync in ranges: a board larger than ``snapshot_chunk`` cells is read
back in short SNAPSHOT_PART frames, so a cable that damages long frames does
not keep the table frozen; a CELL event lost between two parts makes the
earlier parts be asked again; a board with older firmware (whole SNAPSHOT
only) still syncs."""

from __future__ import annotations

import queue
import random
import time
from collections.abc import Iterator

import pytest
from fw_wire import FirmwareWire, Listener, StaticReader, wait

from tablesense.firmware import proto
from tablesense.link.board_conn import BoardConnection, ConnState, LinkOptions
from tablesense.link.serial_link import LinkError, Received
from tablesense.table.state import EMPTY, Tag

UID = bytes.fromhex("04a1b2c3d4e5f6")


def _uid(k: int) -> bytes:
    return bytes([0x04, 0x10 + k, 0xB2, 0xC3, 0xD4, 0xE5, k])


def _breaks_long_frames(rnd: random.Random, longest: int = 150, short_loss: float = 0.1):
    """A cable whose noise hits every frame longer than ``longest`` bytes, and
    a tenth of the shorter ones."""

    def damage(block: bytes) -> bytes:
        if len(block) > longest or (block and rnd.random() < short_loss):
            b = bytearray(block)
            pos = len(b) // 2
            b[pos] = (b[pos] % 255) + 1 if b[pos] != 0xFF else 0x01
            return bytes(b)
        return block

    return damage


def test_a_cable_that_breaks_every_long_frame_still_resyncs_in_ranges() -> None:
    readers = [StaticReader(_uid(k)) for k in range(32)]
    wire = FirmwareWire(readers, damage=_breaks_long_frames(random.Random(7)))
    listener = Listener()
    conn = BoardConnection(
        "wire0", listener, LinkOptions(ping_interval=0.05, snapshot_timeout=0.1),
        link_factory=lambda _p: wire,  # type: ignore[arg-type,return-value]
    )
    # the whole board in one SNAPSHOT would be far longer than the cable lets through
    whole = proto.encode_frame(proto.SNAPSHOT, 5, 0, proto.encode_snapshot(0, [_uid(k) for k in range(32)]))
    assert len(whole) > 250
    conn.start()
    try:
        # ONLINE comes with the first range; the rest of the snapshot follows
        truth = {k: Tag(_uid(k)) for k in range(32)}
        assert wait(lambda: conn.status.state is ConnState.ONLINE, 8.0), conn.status
        assert wait(lambda: listener.cells == truth, 8.0), listener.cells
        assert conn.stats.snapshot_parts >= 4
        # a cell changes; then noise: the resync comes through again
        readers[9].uid = None
        assert wait(lambda: listener.cells.get(9) == EMPTY, 5.0)
        resyncs = conn.stats.snapshots
        assert wait(lambda: conn.stats.snapshots > resyncs + 2, 8.0)  # noise keeps asking for the truth
        assert wait(lambda: conn.status.state is ConnState.ONLINE and listener.sync[-1] is True, 5.0)
        assert listener.cells == {k: (EMPTY if k == 9 else Tag(_uid(k))) for k in range(32)}
        assert wire.frames_damaged > 0
    finally:
        conn.stop()


# --- scripted board ------------------------------------------------------------------

CELLS = 20
BOARD = 6


class ScriptLink:
    def __init__(self, port: str) -> None:
        self.port = port
        self.inbox: queue.Queue[Received] = queue.Queue()
        self.sent: queue.Queue[tuple[int, int, int, bytes]] = queue.Queue()
        self._open = False

    def open(self) -> None:
        self._open = True

    def close(self) -> None:
        self._open = False

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def rx_errors(self) -> int:
        return 0

    def send(self, msg_type: int, board: int, seq: int, payload: bytes = b"") -> None:
        if not self._open:
            raise LinkError("closed")
        self.sent.put((msg_type, board, seq, payload))

    def receive(self) -> list[Received]:
        try:
            out = [self.inbox.get(timeout=0.005)]
        except queue.Empty:
            return []
        while not self.inbox.empty():
            out.append(self.inbox.get_nowait())
        return out


class Script:
    def __init__(self, link: ScriptLink) -> None:
        self.link = link
        self.seq = 100

    def send(self, msg_type: int, payload: bytes) -> None:
        self.link.inbox.put((msg_type, BOARD, self.seq, payload))
        self.seq = (self.seq + 1) & 0xFF

    def expect(self, msg_type: int, timeout: float = 2.0) -> tuple[int, int, int, bytes]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                f = self.link.sent.get(timeout=0.05)
            except queue.Empty:
                continue
            if f[0] == msg_type:
                return f
        raise AssertionError(f"the host sent no 0x{msg_type:02x}")

    def ranges_asked(self, n: int) -> list[tuple[int, tuple[int, int] | None]]:
        return [(f[2], proto.decode_snapshot_req(f[3])) for f in (self.expect(proto.SNAPSHOT_REQ) for _ in range(n))]


@pytest.fixture
def scripted() -> Iterator[tuple[BoardConnection, Script, Listener]]:
    links: list[ScriptLink] = []

    def factory(port: str) -> ScriptLink:
        links.append(ScriptLink(port))
        return links[-1]

    listener = Listener()
    conn = BoardConnection(
        "script0", listener,
        LinkOptions(ping_interval=5, watchdog=10, snapshot_timeout=5, resync_interval=60),
        link_factory=factory,  # type: ignore[arg-type]
    )
    conn.start()
    assert wait(lambda: bool(links))
    script = Script(links[0])
    hello = script.expect(proto.HELLO)
    script.send(proto.IDENTITY, proto.encode_identity(hello[2], b"\x07" * 8, "1.0.0", CELLS, 0, 0, b"abcd"))
    yield conn, script, listener
    conn.stop()


def test_parts_taken_before_a_lost_cell_event_are_asked_again(scripted) -> None:
    conn, script, listener = scripted
    asked = script.ranges_asked(3)
    assert [r for _s, r in asked] == [(0, 8), (8, 8), (16, 4)]
    script.send(proto.SNAPSHOT_PART, proto.encode_snapshot_part(asked[0][0], 0, 10, [None] * 8))
    # the board confirms a tag on cell 2 and sends its CELL event: noise eats it
    script.seq += 1
    script.send(proto.SNAPSHOT_PART, proto.encode_snapshot_part(asked[1][0], 8, 11, [None] * 8))
    script.send(proto.SNAPSHOT_PART, proto.encode_snapshot_part(asked[2][0], 16, 11, [None] * 4))
    # cells 0..7 came before the lost event: they may be stale and are asked again
    deadline = time.monotonic() + 2
    again = None
    f = script.expect(proto.SNAPSHOT_REQ)
    again = proto.decode_snapshot_req(f[3])
    while again != (0, 8):
        assert time.monotonic() < deadline, "cells 0..7 were not asked again"
        f = script.expect(proto.SNAPSHOT_REQ)
        again = proto.decode_snapshot_req(f[3])
    assert conn.status.state is ConnState.SYNCING  # not shown before the truth is in
    script.send(proto.SNAPSHOT_PART, proto.encode_snapshot_part(f[2], 0, 11, [None, None, UID] + [None] * 5))
    assert wait(lambda: conn.status.state is ConnState.ONLINE)
    assert listener.cells[2] == Tag(UID)
    assert all(listener.cells[k] == EMPTY for k in range(CELLS) if k != 2)
    assert conn.stats.stale_parts == 8


def test_cell_events_between_parts_update_the_parts_already_taken(scripted) -> None:
    conn, script, listener = scripted
    asked = script.ranges_asked(3)
    script.send(proto.SNAPSHOT_PART, proto.encode_snapshot_part(asked[0][0], 0, 3, [None] * 8))
    script.send(proto.CELL, proto.encode_cell_event(4, UID))  # after its part: newer
    script.send(proto.CELL, proto.encode_cell_event(12, UID))  # before its part: the part is newer
    script.send(proto.SNAPSHOT_PART, proto.encode_snapshot_part(asked[1][0], 8, 5, [None] * 8))
    script.send(proto.SNAPSHOT_PART, proto.encode_snapshot_part(asked[2][0], 16, 5, [None] * 4))
    assert wait(lambda: conn.status.state is ConnState.ONLINE)
    assert listener.cells[4] == Tag(UID) and listener.cells[12] == EMPTY
    assert conn.stats.stale_parts == 0


def test_a_board_with_older_firmware_gets_whole_snapshots(scripted) -> None:
    conn, script, listener = scripted
    asked = script.ranges_asked(3)
    # older firmware ignores the range and answers the whole board each time
    script.send(proto.SNAPSHOT, proto.encode_snapshot(asked[0][0], [UID] + [None] * (CELLS - 1)))
    assert wait(lambda: conn.status.state is ConnState.ONLINE)
    assert listener.cells[0] == Tag(UID)
    for s, _r in asked[1:]:
        script.send(proto.SNAPSHOT, proto.encode_snapshot(s, [UID] + [None] * (CELLS - 1)))
    script.seq += 1  # a gap: resync, now with the whole-board request
    script.send(proto.CELL, proto.encode_cell_event(1, UID))
    f = script.expect(proto.SNAPSHOT_REQ)
    assert proto.decode_snapshot_req(f[3]) is None
    script.send(proto.SNAPSHOT, proto.encode_snapshot(f[2], [UID, UID] + [None] * (CELLS - 2)))
    assert wait(lambda: listener.cells.get(1) == Tag(UID))
    assert conn.status.state is ConnState.ONLINE


def test_virtual_table_with_noise_resyncs_in_ranges_to_the_true_state(rig) -> None:
    """The whole path (virtual boards on ptys running the firmware, byte
    corruption) with boards of 24 cells: ranged resyncs, the world's state."""
    from tablesense.sim.faults import FaultPlan
    from tablesense.sim.layouts import bench_geometry

    r = rig(geometry=bench_geometry(2, 24), faults=FaultPlan(seed=11, corrupt=0.02))
    r.wait(lambda s: s.complete, timeout=10)
    for cell, uid in (("b1-3", UID), ("b2-17", _uid(1)), ("b1-20", _uid(2))):
        r.table.place(cell, uid)
        r.wait_world(timeout=10)
    r.table.move("b1-3", "b2-9")
    r.wait_world(timeout=10)
    conns = [c for c in (r.link.connection(1), r.link.connection(2)) if c is not None]
    assert sum(c.stats.snapshot_parts for c in conns) >= 6  # at least the first round of each board
    assert sum(c.stats.rx_errors + c.stats.gaps for c in conns) > 0
    held = {UID, _uid(1), _uid(2)}
    for _t, st in r.rec.states:
        assert set(st.tags().values()) <= held
