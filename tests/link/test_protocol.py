"""The board protocol without I/O (link/protocol.py): every test hands the
state machine frames and times and reads what it queued, with no thread, no
port and no sleep, so a watchdog of three seconds is tested in microseconds."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tablesense.firmware import proto
from tablesense.link.protocol import (
    BoardIdentity,
    BoardProtocol,
    BoardStatus,
    ConnState,
    LinkOptions,
    Mismatch,
    OutFrame,
    SessionEnd,
)
from tablesense.table.state import EMPTY, Reading, Tag

BOARD = 3
UID = bytes.fromhex("e66038b4a7281a2e")


@dataclass
class Heard:
    """What the listener was told."""

    cells: dict[int, Reading] = field(default_factory=dict)
    snapshots: int = 0
    statuses: list[BoardStatus] = field(default_factory=list)
    sync: list[bool] = field(default_factory=list)
    refuse: str | None = None

    def board_identified(self, conn: object, identity: BoardIdentity) -> str | None:
        return self.refuse

    def board_cells(self, board: int, readings: dict[int, Reading], full: bool, received_at: float) -> None:
        self.cells.update(readings)
        self.snapshots += full

    def board_status(self, status: BoardStatus) -> None:
        self.statuses.append(status)

    def board_sync(self, board: int, in_sync: bool) -> None:
        self.sync.append(in_sync)


class Board:
    """The board's side, by hand: numbered frames from a board of ``cells`` cells."""

    def __init__(self, cells: int = 4, leds: int = 4, caps: int = 0) -> None:
        self.cells = cells
        self.leds = leds
        self.caps = caps  # beyond CAP_LEDS: 0 is a board older than the hot-cells hint
        self.seq = 0

    def frame(self, msg_type: int, payload: bytes = b"") -> tuple[int, int, int, bytes]:
        f = (msg_type, BOARD, self.seq, payload)
        self.seq = (self.seq + 1) & 0xFF
        return f

    def identity(self, hello: OutFrame) -> tuple[int, int, int, bytes]:
        caps = (proto.CAP_LEDS if self.leds else 0) | self.caps
        return self.frame(proto.IDENTITY, proto.encode_identity(hello[2], UID, "1.2.3", self.cells, self.leds, caps,
                                                                 b"\0\0\0\0"))


def sent(p: BoardProtocol, msg_type: int) -> list[OutFrame]:
    return [f for f in p.take_outgoing() if f[0] == msg_type]


def online(cells: int = 4, options: LinkOptions | None = None) -> tuple[BoardProtocol, Board, Heard, float]:
    """A protocol taken from a fresh port to ONLINE at t=0.01, the board
    holding a tag on cell 0 and nothing elsewhere."""
    heard = Heard()
    p = BoardProtocol("wire", heard, options or LinkOptions(snapshot_chunk=0))
    board = Board(cells)
    p.begin(0.0)
    (hello,) = sent(p, proto.HELLO)
    p.receive(board.identity(hello), 0.005, 0.0)
    assert p.state is ConnState.SYNCING
    (req,) = sent(p, proto.SNAPSHOT_REQ)
    states = [UID[:7]] + [None] * (cells - 1)
    p.receive(board.frame(proto.SNAPSHOT, proto.encode_snapshot(req[2], states)), 0.01, 0.0)
    assert p.state is ConnState.ONLINE
    return p, board, heard, 0.01


def test_a_session_goes_from_hello_to_online_with_the_snapshot_first() -> None:
    p, _board, heard, _t = online()
    assert heard.cells == {0: Tag(UID[:7]), 1: EMPTY, 2: EMPTY, 3: EMPTY}
    assert [s.state for s in heard.statuses] == [ConnState.HANDSHAKE, ConnState.SYNCING, ConnState.ONLINE]
    assert heard.sync == [True]  # thawed once, after the cells were in
    assert p.identity is not None and p.identity.board == BOARD


def test_an_unanswered_hello_is_sent_again_and_the_session_ends_after_the_tries() -> None:
    # times in quarters: exact in binary, so the boundaries are the documented ones
    p = BoardProtocol("wire", Heard(), LinkOptions(handshake_timeout=0.25, handshake_tries=3, handshake_max_wait=2.0))
    p.begin(0.0)
    assert len(sent(p, proto.HELLO)) == 1
    p.tick(0.125)
    assert sent(p, proto.HELLO) == []
    p.tick(0.25)
    assert len(sent(p, proto.HELLO)) == 1  # the second, after 0.25 s
    p.tick(0.625)
    assert sent(p, proto.HELLO) == []  # the third waits twice as long
    p.tick(0.75)
    assert len(sent(p, proto.HELLO)) == 1
    p.tick(1.5)
    with pytest.raises(SessionEnd, match="after 3 HELLOs"):
        p.tick(1.75)


def test_a_board_the_table_does_not_expect_is_a_mismatch() -> None:
    heard = Heard(refuse="board 3 is not part of this table")
    p = BoardProtocol("wire", heard, LinkOptions())
    p.begin(0.0)
    (hello,) = sent(p, proto.HELLO)
    with pytest.raises(Mismatch, match="not part of this table"):
        p.receive(Board().identity(hello), 0.01, 0.0)


def test_a_sequence_gap_freezes_the_cells_until_the_next_snapshot() -> None:
    p, board, heard, t = online()
    board.seq += 1  # one frame lost on the cable
    p.receive(board.frame(proto.CELL, proto.encode_cell_event(1, UID[:7])), t + 0.01, 0.0)
    assert heard.sync[-1] is False and p.stats.gaps == 1
    assert heard.cells[1] == EMPTY  # a hint after a gap is not shown
    (req,) = sent(p, proto.SNAPSHOT_REQ)
    p.receive(board.frame(proto.SNAPSHOT, proto.encode_snapshot(req[2], [None, UID[:7], None, None])), t + 0.02, 0.0)
    assert heard.sync[-1] is True
    assert heard.cells == {0: EMPTY, 1: Tag(UID[:7]), 2: EMPTY, 3: EMPTY}


def test_silence_pings_then_the_watchdog_ends_the_session() -> None:
    p, _board, _heard, t = online(options=LinkOptions(snapshot_chunk=0, ping_interval=0.1, watchdog=3.0))
    p.take_outgoing()
    p.tick(t + 0.09)
    assert sent(p, proto.PING) == []
    p.tick(t + 0.1)
    assert len(sent(p, proto.PING)) == 1
    p.tick(t + 2.99)
    with pytest.raises(SessionEnd, match="silent for 3.0 s"):
        p.tick(t + 3.02)


def test_leds_are_coalesced_rate_limited_and_resent_until_acknowledged() -> None:
    opts = LinkOptions(snapshot_chunk=0, led_min_interval=0.02, led_ack_timeout=0.25, ping_interval=10.0)
    p, board, _heard, t = online(options=opts)
    p.take_outgoing()
    assert p.want_leds([(1, 2, 3)], t) is True
    (first,) = sent(p, proto.LEDS)
    assert proto.decode_leds(first[3]) == [(1, 2, 3), (0, 0, 0), (0, 0, 0), (0, 0, 0)]  # padded to the strip
    # two more within the rate limit: deferred, the latest wins
    assert p.want_leds([(4, 4, 4)], t + 0.005) is False
    assert p.want_leds([(5, 5, 5)], t + 0.006) is False
    assert p.take_led_flush() == pytest.approx(0.015)
    assert sent(p, proto.LEDS) == []
    p.flush_leds(t + 0.02)
    (second,) = sent(p, proto.LEDS)
    assert proto.decode_leds(second[3])[0] == (5, 5, 5)
    # not acknowledged: sent again after the ack timeout, by the timers
    p.tick(t + 0.2)
    assert sent(p, proto.LEDS) == []
    p.tick(t + 0.28)
    (again,) = sent(p, proto.LEDS)
    assert again[3] == second[3] and again[2] != second[2]
    p.receive(board.frame(proto.ACK, proto.encode_ack(again[2])), t + 0.29, 0.0)
    assert p.led_confirmed is not None and p.led_confirmed[0] == (5, 5, 5)
    assert p.want_leds([(5, 5, 5)], t + 0.5) is False  # the board shows it already
    assert sent(p, proto.LEDS) == []


def test_nothing_is_queued_once_the_port_is_closed() -> None:
    p, _board, _heard, t = online()
    p.closed()
    assert p.want_leds([(1, 1, 1)], t) is False
    assert p.take_outgoing() == []
    assert p.state is ConnState.OFFLINE


def test_a_lost_range_of_a_resync_is_asked_again_alone() -> None:
    opts = LinkOptions(snapshot_chunk=2, snapshot_timeout=0.2, ping_interval=10.0)
    heard = Heard()
    p = BoardProtocol("wire", heard, opts)
    board = Board(cells=4)
    p.begin(0.0)
    (hello,) = sent(p, proto.HELLO)
    p.receive(board.identity(hello), 0.01, 0.0)
    reqs = sent(p, proto.SNAPSHOT_REQ)
    assert [proto.decode_snapshot_req(r[3]) for r in reqs] == [(0, 2), (2, 2)]
    # the first range answers, the second answer is lost
    p.receive(board.frame(proto.SNAPSHOT_PART, proto.encode_snapshot_part(reqs[0][2], 0, 0, [UID[:7], None])),
              0.02, 0.0)
    assert p.state is ConnState.SYNCING
    p.tick(0.2)
    assert sent(p, proto.SNAPSHOT_REQ) == []
    p.tick(0.22)
    (again,) = sent(p, proto.SNAPSHOT_REQ)
    assert proto.decode_snapshot_req(again[3]) == (2, 2)
    p.receive(board.frame(proto.SNAPSHOT_PART, proto.encode_snapshot_part(again[2], 2, 0, [None, UID[:7]])),
              0.23, 0.0)
    assert p.state is ConnState.ONLINE
    assert heard.cells == {0: Tag(UID[:7]), 1: EMPTY, 2: EMPTY, 3: Tag(UID[:7])}


def _online_with(board: Board, p: BoardProtocol, t: float) -> None:
    p.begin(t)
    (hello,) = sent(p, proto.HELLO)
    p.receive(board.identity(hello), t + 0.001, 0.0)
    (req,) = sent(p, proto.SNAPSHOT_REQ)
    p.receive(board.frame(proto.SNAPSHOT, proto.encode_snapshot(req[2], [None] * board.cells)), t + 0.002, 0.0)
    assert p.state is ConnState.ONLINE


def test_hot_cells_go_to_a_board_that_takes_them_and_again_after_a_new_session() -> None:
    """The referee's hint (HOT): sent once the board is online, not again
    while it holds it, again when it changes and after a new session (a
    restarted board forgets it); an unanswered one is sent again."""
    p2 = BoardProtocol("wire", Heard(), LinkOptions(snapshot_chunk=0, led_ack_timeout=0.5))
    board = Board(caps=proto.CAP_HOT)
    assert p2.want_hot([2, 0, 2], 0.0) is False  # not online yet: kept for later
    p2.begin(0.0)
    (hello,) = sent(p2, proto.HELLO)
    p2.receive(board.identity(hello), 0.001, 0.0)
    (req,) = sent(p2, proto.SNAPSHOT_REQ)
    p2.receive(board.frame(proto.SNAPSHOT, proto.encode_snapshot(req[2], [None] * 4)), 0.002, 0.0)
    (hot,) = sent(p2, proto.HOT)
    assert proto.decode_hot(hot[3]) == [0, 2]
    p2.tick(0.1)
    assert sent(p2, proto.HOT) == []  # on its way
    p2.tick(0.6)
    (again,) = sent(p2, proto.HOT)  # unanswered: sent again
    p2.receive(board.frame(proto.ACK, proto.encode_ack(again[2])), 0.61, 0.0)
    assert p2.want_hot([0, 2], 0.7) is False  # the board holds it
    assert p2.want_hot([1], 0.8) is True
    (changed,) = sent(p2, proto.HOT)
    assert proto.decode_hot(changed[3]) == [1]
    p2.receive(board.frame(proto.ACK, proto.encode_ack(changed[2])), 0.81, 0.0)
    p2.closed()
    _online_with(board, p2, 1.0)
    (after,) = sent(p2, proto.HOT)
    assert proto.decode_hot(after[3]) == [1]


def test_hot_cells_are_not_sent_to_a_board_without_the_capability() -> None:
    p = BoardProtocol("wire", Heard(), LinkOptions(snapshot_chunk=0))
    _online_with(Board(), p, 0.0)
    assert p.want_hot([1, 2], 0.1) is False
    p.tick(0.2)
    assert sent(p, proto.HOT) == []
