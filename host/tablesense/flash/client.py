"""A small synchronous protocol client for one board: the handshake and the
maintenance commands the flasher and the diagnostics need.

The table's own link (:mod:`tablesense.link.board_conn`) is a long-running,
threaded connection built for play; deploying and diagnosing want one command
at a time with a deadline, so this client sends a command over
:class:`tablesense.link.serial_link.SerialLink` and waits for the reply whose
``ack_seq`` matches, skipping unsolicited events (CELL, BOOT, LOG) but
recording them. Every wait is bounded; failures raise :class:`BoardError`
with a sentence a person can act on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import TracebackType

from tablesense.firmware import proto
from tablesense.link.serial_link import LinkError, Received, SerialLink
from tablesense.sentence import message_of, say


class BoardError(RuntimeError):
    """The board did not answer as the protocol says (message: what to do)."""


@dataclass(frozen=True)
class Identity:
    """What a board says about itself in IDENTITY (plus the frame's board byte)."""

    board: int
    protocol: int
    uid: bytes
    fw_version: str
    cells: int
    leds: int
    caps: int
    config_hash: bytes

    @property
    def serial(self) -> str:
        """The USB serial number MicroPython reports: the unique id in hex."""
        return self.uid.hex().upper()

    def to_json(self) -> dict:
        return {
            "board": self.board,
            "protocol": self.protocol,
            "uid": self.uid.hex(),
            "fw_version": self.fw_version,
            "cells": self.cells,
            "leds": self.leds,
            "has_leds": bool(self.caps & proto.CAP_LEDS),
            "has_bootloader": bool(self.caps & proto.CAP_BOOTLOADER),
            "config_hash": self.config_hash.hex(),
        }


@dataclass
class ClientStats:
    """What this client saw on the link (for diagnostics)."""

    sent: int = 0
    replies: int = 0
    events: int = 0
    timeouts: int = 0
    rtt_ms: list[float] = field(default_factory=list)
    boots: list[int] = field(default_factory=list)  # reset causes of BOOT frames seen
    logs: list[str] = field(default_factory=list)


class BoardClient:
    """One board's serial port, spoken to with proto frames.

    ``link`` may be given (a fake in tests); otherwise a :class:`SerialLink`
    on ``port`` is opened exclusively. Use as a context manager.
    """

    def __init__(self, port: str, *, link: SerialLink | None = None, timeout: float = 1.0) -> None:
        self.port = port
        self.link = link if link is not None else SerialLink(port, read_timeout=0.01)
        self.timeout = timeout
        self.stats = ClientStats()
        self.board = 0
        self._seq = 0
        self.cell_events: list[tuple[int, object]] = []

    def open(self) -> None:
        try:
            self.link.open()
        except LinkError as exc:
            raise BoardError(say("{error}. Is another program (tablesense play, mpremote) using the port?",
                                 error=message_of(exc))) from None

    def close(self) -> None:
        self.link.close()

    def __enter__(self) -> BoardClient:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- one command, one reply -------------------------------------------

    def _receive(self) -> list[Received]:
        """The frames the link has for us now; a failing port is the cable's fault to the user."""
        try:
            return self.link.receive()
        except LinkError as exc:
            raise BoardError(say("{error}: check the USB cable", error=message_of(exc))) from None

    def request(
        self, msg_type: int, payload: bytes = b"", expect: tuple[int, ...] = (), timeout: float | None = None,
        retries: int = 0,
    ) -> tuple[int, bytes]:
        """Send a command and return (reply type, reply payload) of the frame
        whose ack_seq matches. Resends ``retries`` times on silence."""
        wait = self.timeout if timeout is None else timeout
        for _attempt in range(retries + 1):
            self._seq = (self._seq + 1) & 0xFF
            seq = self._seq
            sent_at = time.perf_counter()
            try:
                self.link.send(msg_type, self.board, seq, payload)
            except LinkError as exc:
                raise BoardError(say("{error}: check the USB cable", error=message_of(exc))) from None
            self.stats.sent += 1
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                for frame in self._receive():
                    if frame is None:
                        continue
                    rtype, board, _rseq, rpayload = frame
                    if rtype in (proto.ACK, proto.NAK, proto.IDENTITY, proto.SNAPSHOT,
                                 proto.SELFTEST_RESULT, proto.STATS, proto.FILES):
                        if not rpayload or rpayload[0] != seq:
                            continue  # a late reply to an earlier command
                        self.stats.replies += 1
                        self.stats.rtt_ms.append((time.perf_counter() - sent_at) * 1000.0)
                        if rtype == proto.NAK:
                            _ack, code, message = proto.decode_nak(rpayload)
                            raise BoardError(say("the board refused the command (code {code}): {reason}", code=code,
                                                 reason=message or say("no reason given")))
                        if expect and rtype not in expect:
                            raise BoardError(f"unexpected reply type 0x{rtype:02x}")
                        self.board = board
                        return rtype, rpayload
                    self._event(rtype, rpayload)
            self.stats.timeouts += 1
        raise BoardError(
            say("no answer from {port} within {seconds} s: the board is not running the tablesense "
                "firmware (flash it with `tablesense flash --port PATH`), or it is busy or unplugged",
                port=self.port, seconds=f"{wait:.1f}")
        )

    def _event(self, rtype: int, payload: bytes) -> None:
        self.stats.events += 1
        try:
            if rtype == proto.BOOT and payload:
                self.stats.boots.append(payload[0])
            elif rtype == proto.LOG:
                self.stats.logs.append(proto.decode_log(payload)[1])
            elif rtype == proto.CELL:
                self.cell_events.append(proto.decode_cell_event(payload))
        except proto.ProtocolError:
            pass

    # --- the commands -----------------------------------------------------

    def hello(self, timeout: float | None = None, retries: int = 2) -> Identity:
        _t, payload = self.request(proto.HELLO, bytes([proto.VERSION]), (proto.IDENTITY,), timeout, retries)
        try:
            d = proto.decode_identity(payload)
        except proto.ProtocolError as exc:
            raise BoardError(say("the board's IDENTITY does not decode ({error}): update its firmware",
                                 error=str(exc))) from None
        return Identity(self.board, d["protocol"], d["uid"], d["fw_version"], d["cells"], d["leds"],
                        d["caps"], d["config_hash"])

    def files(self, timeout: float | None = None) -> dict[str, bytes]:
        """Board file name -> first 8 bytes of its sha256. The board hashes
        every file to answer, so a caller that has seen it answer slowly
        (an emulated board on a busy host) passes the wait it grew for HELLO."""
        _t, payload = self.request(proto.FILES_REQ, expect=(proto.FILES,), timeout=timeout, retries=1)
        try:
            return dict(proto.decode_files(payload)[1])
        except proto.ProtocolError as exc:
            raise BoardError(f"bad FILES reply: {exc}") from None

    def selftest(self, timeout: float = 3.0) -> list[tuple[int, bool, bool]]:
        _t, payload = self.request(proto.SELFTEST, expect=(proto.SELFTEST_RESULT,), timeout=timeout, retries=1)
        try:
            return proto.decode_selftest(payload)[1]
        except proto.ProtocolError as exc:
            raise BoardError(f"bad SELFTEST_RESULT reply: {exc}") from None

    def stats_request(self) -> tuple[dict[str, int], list[int]]:
        _t, payload = self.request(proto.STATS_REQ, expect=(proto.STATS,), retries=1)
        try:
            _ack, stats, errs = proto.decode_stats(payload)
        except proto.ProtocolError as exc:
            raise BoardError(f"bad STATS reply: {exc}") from None
        return {str(k): int(v) for k, v in stats.items()}, list(errs)

    def snapshot(self) -> list[object]:
        _t, payload = self.request(proto.SNAPSHOT_REQ, expect=(proto.SNAPSHOT,), retries=1)
        try:
            return list(proto.decode_snapshot(payload)[1])
        except proto.ProtocolError as exc:
            raise BoardError(f"bad SNAPSHOT reply: {exc}") from None

    def ping(self) -> float:
        """One keep-alive round trip, in milliseconds."""
        start = time.perf_counter()
        self.request(proto.PING, expect=(proto.ACK,))
        return (time.perf_counter() - start) * 1000.0

    def leds(self, colors: list[tuple[int, int, int]]) -> None:
        self.request(proto.LEDS, proto.encode_leds(colors), (proto.ACK,))

    def reboot(self) -> None:
        self.request(proto.REBOOT, expect=(proto.ACK,))

    def bootloader(self) -> None:
        self.request(proto.BOOTLOADER, expect=(proto.ACK,))

    def poll_events(self, seconds: float) -> None:
        """Read for ``seconds``, recording unsolicited events."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for frame in self._receive():
                if frame is not None:
                    self._event(frame[0], frame[3])


def identify(port: str, timeout: float = 0.6) -> Identity | None:
    """HELLO on ``port``: the board's identity, or None when nothing answered."""
    try:
        with BoardClient(port, timeout=timeout) as c:
            return c.hello(retries=1)
    except BoardError:
        return None
