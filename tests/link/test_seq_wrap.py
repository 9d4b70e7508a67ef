"""Sequence numbers wrap from 255 to 0: on a clean link that is no gap.

A long fault-free run with the real firmware sends well over 256 frames; the
connection must count no gap, ask for no resync, keep the cells live
(never frozen) and end with the board's true state. Treating 255 -> 0 as a
gap would freeze the table and resync every 256 frames on a real link."""

from __future__ import annotations

from fw_wire import FirmwareWire, Listener, StaticReader, wait

from tablesense.firmware import proto
from tablesense.link.board_conn import BoardConnection, ConnState, LinkOptions, reading_from_proto


class Toggling(StaticReader):
    """A tag that comes and goes on every read while ``on`` is set: one CELL
    event per read (debounce 1)."""

    def __init__(self, uid: bytes) -> None:
        super().__init__(None)
        self.tag = uid
        self.on = True
        self._present = False

    def read_uid(self) -> bytes | None:
        if self.on:
            self._present = not self._present
            self.uid = self.tag if self._present else None
        return self.uid


def test_a_long_clean_run_across_the_wrap_has_no_gap_and_no_resync() -> None:
    readers = [Toggling(bytes([4, k, 2, 3, 4, 5, 6])) for k in range(4)]
    wire = FirmwareWire(readers, steps=8)  # type: ignore[arg-type]
    listener = Listener()
    conn = BoardConnection(
        "wire0", listener, LinkOptions(ping_interval=0.05, resync_interval=600, watchdog=5),
        link_factory=lambda _p: wire,  # type: ignore[arg-type,return-value]
    )
    conn.start()
    try:
        assert wait(lambda: conn.status.state is ConnState.ONLINE, 5.0), conn.status
        first_tx = wire.board.frames_tx
        ignored = conn.stats.events_ignored  # events before the first snapshot are not applied
        # three wraps of the board's sequence number, every frame received
        assert wait(lambda: wire.board.frames_tx > first_tx + 3 * 256, 20.0)
        for r in readers:
            r.on = False
        truth = {ch: reading_from_proto(s) for ch, s in enumerate(wire.board.snapshot())}
        assert wait(lambda: listener.cells == truth, 5.0)
        assert wire.decoder.errors == 0
        assert conn.stats.gaps == 0
        assert conn.stats.resync_reasons == {}
        assert conn.stats.snapshots == 1 and conn.stats.snapshot_requests == 1
        assert conn.stats.events_ignored == ignored
        assert listener.sync == [True]  # never frozen once online
        assert conn.stats.events >= 3 * 256 - 20
        assert listener.event_updates == conn.stats.events
    finally:
        conn.stop()


def test_the_host_numbering_wraps_too() -> None:
    """The host's own seq wraps: the board answers the commands numbered 255
    and 0 like any other (it echoes, never checks)."""
    wire = FirmwareWire([StaticReader(None)])
    for seq in (254, 255, 0, 1):
        wire.send(proto.PING, 5, seq)
        frames = [f for f in wire.receive() if f is not None and f[0] == proto.ACK]
        assert [proto.decode_ack(f[3]) for f in frames] == [(seq, 0)]
