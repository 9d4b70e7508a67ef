"""Link tests written to kill mutants that survived the older suite
(benchmarks/mutation.py, docs/mutation-testing.md): the documented timings, the serial
layer over pyserial's loop:// port, error texts, identities and the merger's
bookkeeping."""

from __future__ import annotations

import inspect
import time

import pytest

from tablesense.firmware import proto
from tablesense.link import discovery, serial_link
from tablesense.link.board_conn import BoardIdentity, BoardStatus, ConnState, LinkOptions
from tablesense.link.manager import TableLink
from tablesense.link.serial_link import LinkError, SerialLink, split_frames


def test_documented_timings_are_the_defaults() -> None:
    """docs/link.md states these figures; a changed default would make the
    document wrong (keep-alive 0.1 s, watchdog 3 s, re-request 0.2 s, ranges
    of 8 cells, periodic snapshot 10 s, LED frames 20 ms apart, resent after
    0.25 s, half frames dropped after 50 ms, ports listed every 2 s)."""
    o = LinkOptions()
    assert (o.ping_interval, o.watchdog, o.snapshot_timeout, o.snapshot_chunk) == (0.1, 3.0, 0.2, 8)
    assert (o.resync_interval, o.led_min_interval, o.led_ack_timeout) == (10.0, 0.02, 0.25)
    assert (o.handshake_timeout, o.handshake_tries, o.snapshot_retry_on_error) == (0.3, 10, 0.03)
    assert (o.reconnect_delay, o.reconnect_max_delay, o.mismatch_retry) == (0.1, 1.0, 5.0)
    assert (o.read_timeout, o.expected_fw, o.check_config) == (0.05, None, True)
    link = SerialLink("loop://")
    assert (link.stale_frame, link.baudrate, link.read_timeout) == (0.05, 115200, 0.01)
    rescan = inspect.signature(TableLink.__init__).parameters["rescan_interval"].default
    assert rescan == 2.0


def test_usb_ids_are_the_raspberry_pi_ones() -> None:
    assert discovery.VID_RPI == 0x2E8A
    assert (discovery.PID_MICROPYTHON, discovery.PID_RP2040_BOOT, discovery.PID_RP2350_BOOT) == (
        0x0005, 0x0003, 0x000F)


def _identity(caps: int = proto.CAP_LEDS, leds: int = 10) -> BoardIdentity:
    return BoardIdentity(board=1, uid=b"\xe6\x61\x38\x97", fw_version="1", cells=8, leds=leds,
                         caps=caps, config_hash=b"\0\0\0\0", protocol=1)


def test_identity_leds_and_usb_serial() -> None:
    assert _identity().has_leds is True
    assert _identity(caps=proto.CAP_LEDS | proto.CAP_BOOTLOADER).has_leds is True
    assert _identity(caps=proto.CAP_BOOTLOADER).has_leds is False
    assert _identity(leds=0).has_leds is False
    assert _identity().usb_serial == "E6613897"
    st = BoardStatus("p", 1, ConnState.ONLINE, "")
    assert st.online is True
    assert BoardStatus("p", 1, ConnState.SYNCING, "").online is False


def test_loop_port_carries_frames_and_counts_bytes() -> None:
    link = SerialLink("loop://", read_timeout=0.01, stale_frame=0.05)
    assert link.is_open is False
    with pytest.raises(LinkError, match=r"^loop:// is not open$"):
        link.send(proto.PING, 0, 1)
    with pytest.raises(LinkError, match=r"^loop:// is not open$"):
        link.receive()
    with link:
        assert link.is_open is True
        link.open()  # a second open is a no-op
        frame = proto.encode_frame(proto.CELL, 3, 7, b"\x01\x00")
        link.send(proto.CELL, 3, 7, b"\x01\x00")
        assert link.bytes_tx == len(frame)
        got: list[serial_link.Received] = []
        deadline = time.monotonic() + 2.0
        while not got and time.monotonic() < deadline:
            got = link.receive()
        assert got == [(proto.CELL, 3, 7, b"\x01\x00")]
        assert link.bytes_rx == len(frame)
        assert link.rx_errors == 0
        assert link.decoder.frames == 1
    assert link.is_open is False
    link.close()  # idempotent


def test_a_half_frame_followed_by_silence_is_reported_lost_once() -> None:
    with SerialLink("loop://", read_timeout=0.005, stale_frame=0.2) as link:
        link.write(b"\x05\x01\x02")  # no delimiter
        assert link.receive() == []  # fresh bytes: not stale yet
        time.sleep(0.25)
        assert link.receive() == [None]
        assert link.rx_errors == 1 and link.decoder.framing_errors == 1
        time.sleep(0.25)
        assert link.receive() == []  # nothing left to drop


def test_split_frames_marks_each_loss_in_stream_order() -> None:
    dec = proto.FrameDecoder()
    good = proto.encode_frame(proto.PING, 0, 1)
    bad = bytearray(good)
    bad[2] ^= 0x40
    out = split_frames(dec, good + bytes(bad) + bytes(bad) + good + good[:3])
    assert out == [(proto.PING, 0, 1, b""), None, None, (proto.PING, 0, 1, b"")]
    assert split_frames(dec, good[3:]) == [(proto.PING, 0, 1, b"")]
    assert split_frames(dec, b"") == []


@pytest.mark.parametrize(("text", "reason"), [
    ("could not exclusively lock port", "another program has the port open"),
    ("[Errno 11] Resource temporarily unavailable", "another program has the port open"),
    ("[Errno 2] No such file or directory: '/dev/x'", "no such device (unplugged?)"),
    ("device reports readiness to read but returned no data", "the device disconnected"),
    ("[Errno 5] Input/output error", "the device disconnected"),
    ("something else", "something else"),
])
def test_port_errors_are_said_plainly(text: str, reason: str) -> None:
    assert serial_link._reason(OSError(text)).startswith(reason)


def test_an_empty_error_is_named_by_its_class() -> None:
    assert serial_link._reason(TimeoutError()) == "TimeoutError"


def test_a_missing_port_is_a_link_error() -> None:
    with pytest.raises(LinkError, match=r"^cannot open /nonexistent/ttyX: no such device"):
        SerialLink("/nonexistent/ttyX").open()
    with pytest.raises(LinkError, match=r"^cannot open bogus://x: "):
        SerialLink("bogus://x").open()
    assert discovery.identify("/nonexistent/ttyX", timeout=0.1) is None


def test_connection_counters_start_at_zero() -> None:
    from dataclasses import fields

    from tablesense.link.board_conn import ConnStats

    stats = ConnStats()
    for f in fields(stats):
        value = getattr(stats, f.name)
        assert value == ({} if f.name == "resync_reasons" else 0), f.name


@pytest.fixture
def conn_rig():
    """The scripted board of test_board_conn (one connection, fake link)."""
    from test_board_conn import Board, FakeLink, Listener  # tests/link is on sys.path

    from tablesense.link.board_conn import BoardConnection

    links: list[FakeLink] = []

    def factory(port: str) -> FakeLink:
        link = FakeLink(port)
        links.append(link)
        return link

    listener = Listener()
    opts = LinkOptions(ping_interval=0.1, watchdog=0.5, snapshot_timeout=0.3,
                       resync_interval=60, led_min_interval=0.0)
    conn = BoardConnection("fake0", listener, opts, link_factory=factory)  # type: ignore[arg-type]
    conn.start()
    deadline = time.monotonic() + 5
    while not links and time.monotonic() < deadline:
        time.sleep(0.005)
    yield conn, listener, Board(links[0])
    conn.stop()


def test_snapshots_are_reported_full_and_events_not(conn_rig) -> None:
    from test_board_conn import CELLS, online

    from testsupport import wait_until

    conn, listener, board = conn_rig
    online(conn, board, [None] * CELLS)
    assert listener.updates[-1][1] is True  # the snapshot: the whole board
    assert len(listener.updates[-1][0]) == CELLS
    board.send(proto.CELL, proto.encode_cell_event(1, b"\x01\x02\x03\x04"))
    wait_until(lambda: len(listener.updates) >= 2 and listener.updates[-1][1] is False)
    assert listener.updates[-1][0] == {1: listener.cells[1]}
    # a resync while online (a sequence gap): the snapshot is again the whole board
    board.seq += 1
    board.send(proto.CELL, proto.encode_cell_event(2, None))
    req = board.expect(proto.SNAPSHOT_REQ)
    count = len(listener.updates)
    board.send(proto.SNAPSHOT, proto.encode_snapshot(req[2], [None] * CELLS))
    wait_until(lambda: len(listener.updates) > count)
    assert listener.updates[-1][1] is True
    assert len(listener.updates[-1][0]) == CELLS


def test_host_sequence_numbers_wrap_after_255() -> None:
    """docs/protocol.md: each side numbers its frames with a u8 that wraps
    (255 is a number like any other; the board echoes it as ack_seq)."""
    from tablesense.link.board_conn import BoardConnection

    class Quiet:
        def board_identified(self, conn: object, identity: object) -> None:
            return None

        def board_cells(self, *a: object) -> None: ...

        def board_status(self, status: object) -> None: ...

        def board_sync(self, board: int, in_sync: bool) -> None: ...

    conn = BoardConnection("nowhere", Quiet(), LinkOptions())  # type: ignore[arg-type]
    conn.protocol._tx_seq = 254
    assert [conn.protocol._send(proto.PING) for _ in range(3)] == [254, 255, 0]


@pytest.mark.parametrize("state", [ConnState.ONLINE, ConnState.SYNCING, ConnState.HANDSHAKE,
                                   ConnState.MISMATCH, ConnState.STOPPED])
def test_a_second_port_claiming_a_live_board_id_is_refused(state: ConnState) -> None:
    """docs/link.md: two ports claiming one board id are refused, whatever the
    first one is doing, unless it is offline (then the new port takes over)."""
    from types import SimpleNamespace

    from tablesense.sim.layouts import bench_geometry

    tl = TableLink(bench_geometry(1, 8), [], options=LinkOptions(check_config=False))
    first = SimpleNamespace(port="/dev/first", status=BoardStatus("/dev/first", 1, state, ""))
    second = SimpleNamespace(port="/dev/second")
    ident = BoardIdentity(board=1, uid=b"\x01" * 8, fw_version="1", cells=8, leds=0, caps=0,
                          config_hash=b"\0\0\0\0", protocol=1)
    tl._owner[1] = first  # type: ignore[assignment]
    said = tl.board_identified(second, ident)  # type: ignore[arg-type]
    assert said == "board 1 on /dev/second has the same id as the board on /dev/first: check their configs"
    first.status = BoardStatus("/dev/first", 1, ConnState.OFFLINE, "")
    assert tl.board_identified(second, ident) is None  # type: ignore[arg-type]
    assert tl._owner[1] is second
