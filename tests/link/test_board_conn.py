"""BoardConnection's rules, frame by frame, against a scripted fake link:
handshake, events as hints, snapshot as truth, resync on gap / noise /
restart, duplicates, LEDs only for boards with LEDs, watchdog, mismatch."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import pytest

from tablesense.firmware import proto
from tablesense.link.board_conn import (
    BoardConnection,
    BoardIdentity,
    BoardStatus,
    ConnState,
    LinkOptions,
)
from tablesense.link.serial_link import LinkError, Received, split_frames
from tablesense.table.state import EMPTY, UNSCANNED, ReadError, Reading, Tag
from testsupport import wait_until

UID = bytes.fromhex("04a1b2c3d4e5f6")
BOARD = 3
CELLS = 4


class FakeLink:
    """What a board would send, scripted by the test; what the host sent, recorded."""

    def __init__(self, port: str) -> None:
        self.port = port
        self.inbox: queue.Queue[Received] = queue.Queue()
        self.sent: queue.Queue[tuple[int, int, int, bytes]] = queue.Queue()
        self._open = False
        self.fail_open = False

    def open(self) -> None:
        if self.fail_open:
            raise LinkError(f"cannot open {self.port}: no such device (unplugged?)")
        self._open = True

    def close(self) -> None:
        self._open = False

    @property
    def is_open(self) -> bool:
        return self._open

    def send(self, msg_type: int, board: int, seq: int, payload: bytes = b"") -> None:
        self.sent.put((msg_type, board, seq, payload))

    def receive(self) -> list[Received]:
        try:
            first = self.inbox.get(timeout=0.005)
        except queue.Empty:
            return []
        out = [first]
        while True:
            try:
                out.append(self.inbox.get_nowait())
            except queue.Empty:
                return out

    @property
    def rx_errors(self) -> int:
        return 0


class Listener:
    def __init__(self, problem: str | None = None) -> None:
        self.problem = problem
        self.cells: dict[int, Reading] = {}
        self.updates: list[tuple[dict[int, Reading], bool]] = []
        self.statuses: list[BoardStatus] = []
        self.sync: list[bool] = []
        self.lock = threading.Lock()

    def board_identified(self, conn: BoardConnection, identity: BoardIdentity) -> str | None:
        return self.problem

    def board_cells(
        self, board: int, readings: dict[int, Reading], full: bool, received_at: float
    ) -> None:
        with self.lock:
            self.cells.update(readings)
            self.updates.append((dict(readings), full))

    def board_status(self, status: BoardStatus) -> None:
        self.statuses.append(status)

    def board_sync(self, board: int, in_sync: bool) -> None:
        self.sync.append(in_sync)


class Board:
    """The test's side: numbered frames from board 3."""

    def __init__(self, link: FakeLink) -> None:
        self.link = link
        self.seq = 40

    def send(self, msg_type: int, payload: bytes, seq: int | None = None) -> None:
        s = self.seq if seq is None else seq
        self.seq = (s + 1) & 0xFF
        self.link.inbox.put((msg_type, BOARD, s, payload))

    def expect(self, msg_type: int, timeout: float = 10.0) -> tuple[int, int, int, bytes]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                f = self.link.sent.get(timeout=0.05)
            except queue.Empty:
                continue
            if f[0] == msg_type:
                return f
        raise AssertionError(f"the host sent no 0x{msg_type:02x}")

    def identify(self, caps: int = proto.CAP_LEDS, leds: int = 4) -> None:
        hello = self.expect(proto.HELLO)
        self.send(
            proto.IDENTITY,
            proto.encode_identity(hello[2], b"\x01" * 8, "1.0.0", CELLS, leds, caps, b"abcd"),
        )

    def answer_snapshot(self, states: list) -> None:
        req = self.expect(proto.SNAPSHOT_REQ)
        self.send(proto.SNAPSHOT, proto.encode_snapshot(req[2], states))


@pytest.fixture
def setup(request: pytest.FixtureRequest) -> Iterator[tuple[BoardConnection, FakeLink, Listener, Board]]:
    """A connection to a scripted board that answers no PING: the watchdog is
    long (5 s) so that a busy machine pausing the test thread does not end the
    session under a test about something else; the watchdog's own test asks
    for a short one with ``indirect`` parametrization (``{"watchdog": 0.5}``)."""
    links: list[FakeLink] = []

    def factory(port: str) -> FakeLink:
        link = FakeLink(port)
        links.append(link)
        return link

    listener = Listener()
    opts = LinkOptions(
        ping_interval=0.1,
        watchdog=getattr(request, "param", {}).get("watchdog", 5.0),
        snapshot_timeout=0.3,
        resync_interval=60,
        led_min_interval=0.0,
    )
    conn = BoardConnection("fake0", listener, opts, link_factory=factory)  # type: ignore[arg-type]
    conn.start()
    wait_until(lambda: bool(links), timeout=10)
    board = Board(links[0])
    yield conn, links[0], listener, board
    conn.stop()


def online(conn: BoardConnection, board: Board, states: list | None = None) -> None:
    board.identify()
    board.answer_snapshot(states or [None] * CELLS)
    wait_until(lambda: conn.status.state is ConnState.ONLINE)


def test_events_are_hints_and_snapshots_the_truth(setup) -> None:
    conn, link, listener, board = setup
    online(conn, board, [None, UID, proto.ERR_CRC, -1])
    assert listener.cells == {0: EMPTY, 1: Tag(UID), 2: ReadError(proto.ERR_CRC), 3: UNSCANNED}
    board.send(proto.CELL, proto.encode_cell_event(0, UID[:4]))
    wait_until(lambda: listener.cells[0] == Tag(UID[:4]))
    # a gap: the frame numbered 44 never came, so 45's event is not applied
    board.seq += 1
    board.send(proto.CELL, proto.encode_cell_event(3, None))
    req = board.expect(proto.SNAPSHOT_REQ)
    assert listener.cells[3] == UNSCANNED
    assert listener.sync[-1] is False
    board.send(proto.CELL, proto.encode_cell_event(2, None))  # still frozen: ignored
    time.sleep(0.05)
    assert listener.cells[2] == ReadError(proto.ERR_CRC)
    board.send(proto.SNAPSHOT, proto.encode_snapshot(req[2], [None, None, None, UID]))
    wait_until(lambda: listener.cells[3] == Tag(UID))
    assert listener.cells == {0: EMPTY, 1: EMPTY, 2: EMPTY, 3: Tag(UID)}
    assert listener.sync[-1] is True
    assert conn.stats.gaps == 1 and conn.stats.events_ignored == 2


def test_noise_freezes_until_the_next_snapshot(setup) -> None:
    conn, link, listener, board = setup
    online(conn, board)
    link.inbox.put(None)  # a frame lost to a CRC error, right here in the stream
    board.seq += 1
    req = board.expect(proto.SNAPSHOT_REQ)
    board.send(proto.CELL, proto.encode_cell_event(1, UID))
    time.sleep(0.05)
    assert listener.cells[1] == EMPTY
    board.send(proto.SNAPSHOT, proto.encode_snapshot(req[2], [None, UID, None, None]))
    wait_until(lambda: listener.cells[1] == Tag(UID))
    board.send(proto.CELL, proto.encode_cell_event(1, None))  # in sync again: applied
    wait_until(lambda: listener.cells[1] == EMPTY)
    assert conn.stats.rx_errors == 1


def test_a_lost_snapshot_is_asked_again(setup) -> None:
    conn, link, listener, board = setup
    board.identify()
    board.expect(proto.SNAPSHOT_REQ)  # never answered
    board.answer_snapshot([None] * CELLS)  # the retry is
    wait_until(lambda: conn.status.state is ConnState.ONLINE)


def test_duplicate_frame_is_ignored(setup) -> None:
    conn, link, listener, board = setup
    online(conn, board)
    board.send(proto.CELL, proto.encode_cell_event(2, UID), seq=board.seq)
    board.send(proto.CELL, proto.encode_cell_event(2, UID), seq=board.seq - 1)
    board.send(proto.CELL, proto.encode_cell_event(2, None))
    wait_until(lambda: conn.stats.duplicates == 1)
    wait_until(lambda: listener.cells[2] == EMPTY)
    assert conn.stats.gaps == 0


def test_boot_frame_means_handshake_and_snapshot_again(setup) -> None:
    conn, link, listener, board = setup
    online(conn, board)
    board.send(proto.BOOT, bytes([proto.BOOT_WATCHDOG]), seq=0)
    wait_until(lambda: conn.status.state is ConnState.HANDSHAKE)
    online(conn, board, [UID, None, None, None])
    assert listener.cells[0] == Tag(UID)
    assert conn.stats.boots == 1


def test_leds_only_when_online_and_only_changes(setup) -> None:
    conn, link, listener, board = setup
    frame = [(1, 2, 3)] * 4
    assert conn.send_leds(frame) is False  # not online yet: kept for later
    online(conn, board)
    f = board.expect(proto.LEDS)
    assert proto.decode_leds(f[3]) == frame
    board.send(proto.ACK, proto.encode_ack(f[2]))
    wait_until(lambda: conn.protocol.led_confirmed is not None)
    assert conn.send_leds(frame) is False  # unchanged: nothing to send
    assert conn.send_leds([(9, 9, 9)]) is True  # padded to the strip's 4 LEDs
    f = board.expect(proto.LEDS)
    assert proto.decode_leds(f[3]) == [(9, 9, 9)] + [(0, 0, 0)] * 3


def test_unacknowledged_led_frame_is_resent(setup) -> None:
    conn, link, listener, board = setup
    online(conn, board)
    conn.send_leds([(4, 4, 4)] * 4)
    first = board.expect(proto.LEDS)
    again = board.expect(proto.LEDS)  # no ACK: sent again (frames are idempotent)
    assert again[3] == first[3] and again[2] != first[2]


def test_no_led_frames_for_a_board_without_leds(setup) -> None:
    conn, link, listener, board = setup
    board.identify(caps=0, leds=0)
    board.answer_snapshot([None] * CELLS)
    wait_until(lambda: conn.status.state is ConnState.ONLINE)
    assert conn.send_leds([(1, 1, 1)] * 4) is False
    time.sleep(0.1)
    sent = []
    while not link.sent.empty():
        sent.append(link.sent.get()[0])
    assert proto.LEDS not in sent
    assert conn.stats.led_skipped >= 1


@pytest.mark.parametrize("setup", [{"watchdog": 0.5}], indirect=True)
def test_watchdog_ends_a_silent_session_and_reconnects(setup) -> None:
    conn, link, listener, board = setup
    board.identify()
    board.answer_snapshot([None] * CELLS)
    # the session may end before a poll of the state sees it online: read the reported history
    wait_until(lambda: any(s.state is ConnState.ONLINE for s in list(listener.statuses)))
    wait_until(lambda: conn.status.state is ConnState.OFFLINE or conn.stats.sessions >= 2)
    assert any("silent" in s.message for s in list(listener.statuses) if s.state is ConnState.OFFLINE)
    wait_until(lambda: conn.stats.sessions == 2)


def test_mismatch_is_reported_and_retried() -> None:
    links: list[FakeLink] = []
    listener = Listener(
        problem="board 3 on fake0: its config hash is 61626364, table 't' expects 00000000"
    )

    def factory(port: str) -> FakeLink:
        links.append(FakeLink(port))
        return links[-1]

    conn = BoardConnection("fake0", listener, LinkOptions(mismatch_retry=0.1), link_factory=factory)  # type: ignore[arg-type]
    conn.start()
    try:
        wait_until(lambda: bool(links))
        Board(links[0]).identify()
        wait_until(lambda: conn.status.state is ConnState.MISMATCH)
        assert "config hash" in conn.status.message
        wait_until(lambda: len(links) >= 2)  # tried again later (someone may reflash it)
    finally:
        conn.stop()


def test_split_frames_marks_where_noise_was() -> None:
    dec = proto.FrameDecoder()
    good = proto.encode_frame(proto.ACK, 1, 5, b"\x01\x00")
    bad = bytearray(proto.encode_frame(proto.ACK, 1, 6, b"\x02\x00"))
    bad[3] ^= 0x40
    out = split_frames(dec, good + bytes(bad) + good)
    assert [None if f is None else f[2] for f in out] == [5, None, 5]


def test_a_strip_longer_than_one_frame_gets_no_led_frames(setup) -> None:
    """341 LEDs need a 1025-byte payload, past MAX_FRAME: the board would drop
    every such frame, so the host sends none (340 LEDs still fit)."""
    conn, link, listener, board = setup
    board.identify(leds=341)
    board.answer_snapshot([None] * CELLS)
    wait_until(lambda: conn.status.state is ConnState.ONLINE)
    assert conn.send_leds([(1, 1, 1)] * 341) is False
    time.sleep(0.1)
    sent = []
    while not link.sent.empty():
        sent.append(link.sent.get()[0])
    assert proto.LEDS not in sent


def test_a_strip_of_340_leds_fits_one_frame(setup) -> None:
    conn, link, listener, board = setup
    board.identify(leds=340)
    board.answer_snapshot([None] * CELLS)
    wait_until(lambda: conn.status.state is ConnState.ONLINE)
    conn.send_leds([(9, 8, 7)] * 340)
    f = board.expect(proto.LEDS)
    assert len(f[3]) == 1022
    assert proto.FrameDecoder().feed(proto.encode_frame(*f)) == [f]
