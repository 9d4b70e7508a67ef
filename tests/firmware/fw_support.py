"""Shared fakes for the firmware tests: a settable clock, a loopback
transport that decodes what the board wrote, scripted readers, and a
Board wired to emulated MFRC522 chips."""

from __future__ import annotations

from typing import Any

from tablesense.firmware import proto
from tablesense.firmware.board import Board
from tablesense.firmware.mfrc522 import MFRC522
from tablesense.sim.mfrc522_emu import EmulatedMFRC522, EmulatedSPIBus

Reading = Any  # None | bytes | int


class FakeClock:
    """ticks_* with MicroPython's wrap-around, time moved by hand."""

    PERIOD = 1 << 30

    def __init__(self, start_ms: int = 0) -> None:
        self.us = start_ms * 1000

    def advance_ms(self, ms: float) -> None:
        self.us += int(ms * 1000)

    def ticks_ms(self) -> int:
        return (self.us // 1000) & (self.PERIOD - 1)

    def ticks_us(self) -> int:
        return self.us & (self.PERIOD - 1)

    def ticks_diff(self, a: int, b: int) -> int:
        half = self.PERIOD // 2
        return ((a - b + half) & (self.PERIOD - 1)) - half

    def sleep_us(self, us: int) -> None:
        self.us += us


class Loopback:
    """The board's transport: the test pushes host bytes in, and reads the
    decoded frames the board wrote."""

    def __init__(self) -> None:
        self.inbox = bytearray()
        self.raw = bytearray()
        self.decoder = proto.FrameDecoder()
        self.frames: list[tuple[int, int, int, bytes]] = []
        self.chunk: int | None = None  # deliver at most this many bytes per read()
        self.reads = 0

    def read(self) -> bytes:
        self.reads += 1
        n = len(self.inbox) if self.chunk is None else min(self.chunk, len(self.inbox))
        data = bytes(self.inbox[:n])
        del self.inbox[:n]
        return data

    def write(self, data: bytes) -> None:
        self.raw += data
        self.frames.extend(self.decoder.feed(data))

    def send(self, msg_type: int, seq: int, payload: bytes = b"", board: int = 0) -> None:
        self.inbox += proto.encode_frame(msg_type, board, seq, payload)

    def take(self) -> list[tuple[int, int, int, bytes]]:
        out = self.frames
        self.frames = []
        return out

    def of_type(self, msg_type: int) -> list[tuple[int, int, int, bytes]]:
        return [f for f in self.frames if f[0] == msg_type]


class ScriptedReader:
    """A reader whose read_uid() returns the scripted readings in turn (the
    last one repeats); records calls."""

    def __init__(self, readings: list[Reading] | None = None, version: int = 0x92) -> None:
        self.readings = list(readings or [None])
        self.version = version
        self.inits = 0
        self.reads = 0
        self.fail_with: Exception | None = None

    def set(self, *readings: Reading) -> None:
        self.readings = list(readings)

    def init(self) -> bool:
        self.inits += 1
        return True

    def read_uid(self) -> Reading:
        self.reads += 1
        if self.fail_with is not None:
            raise self.fail_with
        if len(self.readings) > 1:
            return self.readings.pop(0)
        return self.readings[0]

    def self_test(self) -> tuple[int, bool, bool]:
        return (self.version, True, self.version == 0x92)


def base_config(cells: int = 4, leds: int = 0, **extra: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "format": "tablesense.board/1",
        "board": 7,
        "name": "test",
        "cells": cells,
        "leds": leds,
        "cs": {"kind": "gpio", "pins": list(range(10, 10 + cells))},
    }
    cfg.update(extra)
    return cfg


def emulated_readers(n: int, **chip_kwargs: Any) -> tuple[EmulatedSPIBus, list[EmulatedMFRC522], list[MFRC522]]:
    """n emulated chips on one bus, each with the real driver."""
    bus = EmulatedSPIBus()
    chips = []
    drivers = []
    for i in range(n):
        pin, chip = bus.add_reader(10 + i, **chip_kwargs)
        chips.append(chip)
        drivers.append(MFRC522(bus, pin, timeout_us=500))
    return bus, chips, drivers


def make_board(
    readers: list[Any], leds: Any = None, **kwargs: Any
) -> tuple[Board, Loopback, FakeClock]:
    transport = Loopback()
    clock = FakeClock()
    cfg = kwargs.pop("config", None) or base_config(cells=len(readers), leds=getattr(leds, "count", 0))
    board = Board(cfg, readers, leds, transport, clock, b"\x01\x02\x03\x04\x05\x06\x07\x08", **kwargs)
    return board, transport, clock


def run_steps(board: Board, n: int, clock: FakeClock | None = None, ms_per_step: float = 1.0) -> None:
    for _ in range(n):
        board.step()
        if clock is not None:
            clock.advance_ms(ms_per_step)
