"""An in-process cable between a BoardConnection and the real firmware.

:class:`FirmwareWire` is a :class:`~tablesense.link.serial_link.FrameLink`
whose far end is a ``firmware/board.py`` Board stepped inside ``receive()``;
the board's bytes pass ``damage`` (frame by frame) before the host's decoder
sees them. No threads and no pseudo-terminals: fast, and exactly the
firmware's own frames, numbering and answers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from tablesense.firmware import board as fw_board
from tablesense.firmware import proto
from tablesense.link.board_conn import BoardConnection, BoardIdentity, BoardStatus
from tablesense.link.serial_link import Received, split_frames
from tablesense.table.state import Reading


class StaticReader:
    """A reader whose tag the test sets (None: empty); ``script`` (a list)
    overrides it read by read while it lasts."""

    def __init__(self, uid: bytes | None = None) -> None:
        self.uid = uid
        self.script: list[bytes | None] = []

    def init(self) -> bool:
        return True

    def read_uid(self) -> bytes | None:
        if self.script:
            return self.script.pop(0)
        return self.uid

    def self_test(self) -> tuple[int, bool, bool]:
        return (0x92, True, True)


class _Transport:
    def __init__(self) -> None:
        self.inbox = bytearray()
        self.out = bytearray()

    def read(self) -> bytes:
        data = bytes(self.inbox)
        self.inbox.clear()
        return data

    def write(self, data: bytes) -> None:
        self.out += data


Damage = Callable[[bytes], bytes]


class FirmwareWire:
    """A FrameLink to a firmware Board; ``steps`` board steps per receive()."""

    def __init__(
        self,
        readers: list[StaticReader],
        board_id: int = 5,
        damage: Damage | None = None,
        steps: int = 4,
        debounce: dict[str, int] | None = None,
    ) -> None:
        self.port = "wire0"
        self.readers = readers
        self.transport = _Transport()
        cfg = {
            "board": board_id,
            "cells": len(readers),
            "debounce": debounce or {"tag": 1, "empty": 1, "error": 1, "unstable": 50},
        }
        self.board = fw_board.Board(cfg, readers, None, self.transport, fw_board.HostClock(), b"\x42" * 8)
        self.damage = damage
        self.steps = steps
        self.decoder = proto.FrameDecoder()
        self.lock = threading.Lock()
        self._open = False
        self.frames_damaged = 0

    def open(self) -> None:
        self._open = True

    def close(self) -> None:
        self._open = False

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def rx_errors(self) -> int:
        return self.decoder.errors

    def send(self, msg_type: int, board: int, seq: int, payload: bytes = b"") -> None:
        with self.lock:
            self.transport.inbox += proto.encode_frame(msg_type, board, seq, payload)

    def receive(self) -> list[Received]:
        with self.lock:
            for _ in range(self.steps):
                self.board.step()
            data = bytes(self.transport.out)
            self.transport.out.clear()
        if self.damage is not None and data:
            frames = data.split(b"\x00")
            tail = frames.pop()  # after the last delimiter (normally empty)
            out = bytearray()
            for f in frames:
                g = self.damage(f)
                if g != f:
                    self.frames_damaged += 1
                out += g + b"\x00"
            data = bytes(out) + tail
        time.sleep(0.001)
        return split_frames(self.decoder, data)


class Listener:
    """What the connection reported: the board's cells and its sync states."""

    def __init__(self) -> None:
        self.cells: dict[int, Reading] = {}
        self.full_updates = 0
        self.event_updates = 0
        self.sync: list[bool] = []
        self.statuses: list[BoardStatus] = []
        self.lock = threading.Lock()

    def board_identified(self, conn: BoardConnection, identity: BoardIdentity) -> str | None:
        return None

    def board_cells(self, board: int, readings: dict[int, Reading], full: bool, received_at: float) -> None:
        with self.lock:
            self.cells.update(readings)
            if full:
                self.full_updates += 1
            else:
                self.event_updates += 1

    def board_status(self, status: BoardStatus) -> None:
        self.statuses.append(status)

    def board_sync(self, board: int, in_sync: bool) -> None:
        self.sync.append(in_sync)


def wait(cond: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
