"""A slow board (an emulated RP2040 runs slower than real time while its CPU
is busy) must not be declared offline, and a board that stops answering must
still be, within the bound: the link measures each board's round trips and
scales its watchdog and re-send waits from them (docs/link.md, "Keep-alive")."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import pytest
from test_board_conn import BOARD, CELLS, FakeLink, Listener  # tests/link is on sys.path

from tablesense.firmware import proto
from tablesense.link.board_conn import BoardConnection, ConnState, LinkOptions


class SlowBoard:
    """Answers every HELLO, SNAPSHOT_REQ and PING after ``delay`` seconds, in
    order, as a board whose CPU is busy; ``mute()`` makes it stop answering."""

    def __init__(self, link: FakeLink, delay: float) -> None:
        self.link = link
        self.delay = delay
        self.seq = 10
        self.muted = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def mute(self) -> None:
        self.muted.set()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)

    def _answer(self, msg_type: int, seq: int) -> tuple[int, bytes] | None:
        if msg_type == proto.HELLO:
            return proto.IDENTITY, proto.encode_identity(
                seq, b"\x01" * 8, "1.0.0", CELLS, 4, proto.CAP_LEDS, b"abcd"
            )
        if msg_type == proto.SNAPSHOT_REQ:
            return proto.SNAPSHOT, proto.encode_snapshot(seq, [None] * CELLS)
        if msg_type in (proto.PING, proto.LEDS):
            return proto.ACK, proto.encode_ack(seq)
        return None

    def _run(self) -> None:
        pending: list[tuple[float, int, bytes]] = []
        while not self._stop.is_set():
            try:
                msg_type, _board, seq, _payload = self.link.sent.get(timeout=0.005)
                answer = self._answer(msg_type, seq)
                if answer is not None and not self.muted.is_set():
                    pending.append((time.monotonic() + self.delay, *answer))
            except queue.Empty:
                pass
            now = time.monotonic()
            while pending and pending[0][0] <= now and not self.muted.is_set():
                _due, t, payload = pending.pop(0)
                self.link.inbox.put((t, BOARD, self.seq, payload))
                self.seq = (self.seq + 1) & 0xFF


def _options(**kw: float) -> LinkOptions:
    # the documented defaults scaled down so that the test runs in ~2 s
    base: dict[str, float] = dict(
        ping_interval=0.05, watchdog=0.5, rtt_factor=4.0, watchdog_max=2.0, resync_interval=60
    )
    base.update(kw)
    return LinkOptions(**base)  # type: ignore[arg-type]


@pytest.fixture
def connect() -> Iterator:
    made: list[tuple[BoardConnection, SlowBoard]] = []

    def make(delay: float, options: LinkOptions) -> tuple[BoardConnection, SlowBoard]:
        links: list[FakeLink] = []

        def factory(port: str) -> FakeLink:
            links.append(FakeLink(port))
            return links[-1]

        conn = BoardConnection("slow0", Listener(), options, link_factory=factory)  # type: ignore[arg-type]
        conn.start()
        deadline = time.monotonic() + 2
        while not links and time.monotonic() < deadline:
            time.sleep(0.005)
        board = SlowBoard(links[0], delay)
        made.append((conn, board))
        return conn, board

    yield make
    for conn, board in made:
        board.stop()
        conn.stop()


def _wait_online(conn: BoardConnection, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while conn.status.state is not ConnState.ONLINE:
        assert time.monotonic() < deadline, f"not online: {conn.status.message}"
        time.sleep(0.01)


def _offline_within(conn: BoardConnection, seconds: float) -> float:
    start = time.monotonic()
    while conn.status.state is ConnState.ONLINE:
        assert time.monotonic() - start < seconds, "the board was not declared offline"
        time.sleep(0.01)
    return time.monotonic() - start


def test_a_board_whose_answers_arrive_late_stays_online(connect) -> None:
    # answers 0.4 s late: longer than the HELLO wait (0.3 s), the snapshot
    # wait (0.2 s), and with a PING at most once per round trip the board is
    # silent ~0.8 s at a time, longer than the 0.5 s configured watchdog
    conn, _board = connect(0.4, _options())
    _wait_online(conn)
    assert conn.round_trip >= 0.35
    assert conn.watchdog == pytest.approx(4.0 * conn.round_trip, rel=0.2)
    sessions = conn.stats.sessions
    time.sleep(2.0)
    assert conn.status.state is ConnState.ONLINE, conn.status.message
    assert conn.stats.sessions == sessions
    assert conn.stats.pings >= 2  # it was kept alive, and not flooded:
    assert conn.stats.pings <= 8  # one PING per round trip, not one per 0.05 s


def test_without_scaling_the_same_board_would_be_declared_offline(connect) -> None:
    # the control: the test above fails on a link with fixed time-outs
    conn, _board = connect(0.4, _options(rtt_factor=0.0))
    _wait_online(conn)
    _offline_within(conn, 2.0)
    assert "silent for 0.5 s" in conn.status.message


def test_a_slow_board_that_stops_answering_is_declared_offline_within_the_scaled_bound(connect) -> None:
    conn, board = connect(0.4, _options())
    _wait_online(conn)
    bound = conn.watchdog
    assert bound <= 2.0  # never more than watchdog_max
    board.mute()
    took = _offline_within(conn, bound + 1.0)
    assert took <= bound + 0.5
    assert "silent" in conn.status.message


def test_a_fast_board_keeps_the_documented_watchdog(connect) -> None:
    conn, board = connect(0.0, _options())
    _wait_online(conn)
    time.sleep(0.3)  # some PING round trips measured
    assert conn.round_trip < 0.1
    assert conn.watchdog == 0.5  # not weakened by the scaling
    board.mute()
    took = _offline_within(conn, 1.5)
    assert took <= 0.5 + 0.3


def test_the_scaled_watchdog_never_exceeds_watchdog_max(connect) -> None:
    conn, _board = connect(0.9, _options(watchdog_max=1.5, handshake_max_wait=2.0))
    _wait_online(conn, timeout=6.0)
    assert conn.round_trip >= 0.85
    assert conn.watchdog == 1.5


def test_documented_defaults_of_the_scaling() -> None:
    o = LinkOptions()
    # a real board answers in milliseconds: its watchdog stays 3 s until its
    # round trips pass 0.3 s; a slow one is declared offline within 30 s at most
    assert (o.watchdog, o.rtt_factor, o.watchdog_max, o.rtt_window) == (3.0, 10.0, 30.0, 30.0)
    assert o.handshake_max_wait == 2.0
