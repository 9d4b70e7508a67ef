"""A scripted board on a pseudo-terminal: speaks the protocol, no firmware.

The virtual table runs the real firmware; this is the other tool: a tiny
board whose cell states are set directly by the caller and which can stream
CELL events as fast as the host reads them. The link benchmark uses it to
measure how many events per second the host sustains, independent of how
fast emulated readers can scan.

It answers HELLO (IDENTITY with the config hash the geometry expects),
SNAPSHOT_REQ, PING and LEDS, numbers its frames like the firmware, and
writes events with blocking writes, so a host that falls behind slows it
down instead of losing bytes.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import tty

from tablesense.firmware import proto
from tablesense.table.geometry import TableGeometry

CellState = None | bytes | int


class ScriptedBoard:
    """One protocol-speaking board of ``geometry`` on its own pty."""

    def __init__(self, geometry: TableGeometry, board_id: int, uid: bytes | None = None) -> None:
        spec = geometry.board(board_id)
        self.board_id = board_id
        self.cells: list[CellState] = [None] * spec.channels
        self.leds = spec.leds
        self.config_hash = geometry.config_hash(board_id)
        self.uid = uid or bytes([0xB0, board_id]) + b"\x00" * 6
        self.led_frames = 0
        self._seq = 0
        self._lock = threading.Lock()
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        self._decoder = proto.FrameDecoder()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, name=f"scripted-board {board_id}", daemon=True
        )

    def start(self) -> str:
        self._thread.start()
        return self.path

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        for fd in (self._slave, self._master):
            with contextlib.suppress(OSError):
                os.close(fd)

    def set_cell(self, channel: int, state: CellState) -> None:
        """Change a cell and send its CELL event (blocks while the host is behind)."""
        with self._lock:
            self.cells[channel] = state
            self._send(proto.CELL, proto.encode_cell_event(channel, state))

    def _send(self, msg_type: int, payload: bytes) -> None:
        frame = proto.encode_frame(msg_type, self.board_id, self._seq, payload)
        self._seq = (self._seq + 1) & 0xFF
        view = memoryview(frame)
        while view:
            try:
                n = os.write(self._master, view)
            except OSError:
                return
            view = view[n:]

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self._master], [], [], 0.05)
                if not ready:
                    continue
                data = os.read(self._master, 4096)
            except OSError:
                return
            for msg_type, _board, seq, _payload in self._decoder.feed(data):
                with self._lock:
                    if msg_type == proto.HELLO:
                        caps = proto.CAP_LEDS if self.leds else 0
                        ident = proto.encode_identity(
                            seq,
                            self.uid,
                            "scripted",
                            len(self.cells),
                            self.leds,
                            caps,
                            self.config_hash,
                        )
                        self._send(proto.IDENTITY, ident)
                    elif msg_type == proto.SNAPSHOT_REQ:
                        self._send(proto.SNAPSHOT, proto.encode_snapshot(seq, self.cells))
                    elif msg_type == proto.LEDS:
                        self.led_frames += 1
                        self._send(proto.ACK, proto.encode_ack(seq))
                    elif msg_type == proto.PING:
                        self._send(proto.ACK, proto.encode_ack(seq))
                    else:
                        self._send(
                            proto.NAK,
                            proto.encode_nak(seq, proto.NAK_UNKNOWN_TYPE, "scripted board"),
                        )
