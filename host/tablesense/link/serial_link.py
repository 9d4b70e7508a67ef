"""Frames over a serial port: the lowest layer of the host's link to a board.

:class:`SerialLink` opens a pyserial URL (``/dev/ttyACM0``, a udev name such
as ``/dev/tablesense/board-1``, a virtual board's ``/dev/pts/N``, or any
``serial_for_url`` URL) *exclusively*, writes frames built by the shared codec
(:mod:`tablesense.firmware.proto`) and splits received bytes into frames. It
never interprets them: :mod:`tablesense.link.board_conn` does.

Every failure of the port (it vanished, an I/O error, someone else holds it)
is raised as :class:`LinkError`, so the layer above has one thing to catch.
Reads are bounded by the timeout given at open time. A frame left half
received for ``stale_frame`` seconds is dropped and reported as lost at once
(its delimiter was lost), so the layer above resyncs without waiting for the
next frame.
"""

from __future__ import annotations

import contextlib
import termios
import threading
import time
from typing import Protocol

import serial

from tablesense.firmware import proto
from tablesense.table.words import say

#: A decoded frame: (msg_type, board, seq, payload).
Frame = tuple[int, int, int, bytes]

#: What :meth:`SerialLink.receive` yields, in stream order: a frame, or None
#: where a frame was lost to a bad CRC / COBS block / version / size.
Received = Frame | None


class LinkError(OSError):
    """The serial port failed: could not be opened, vanished, or an I/O error."""


class FrameLink(Protocol):
    """What a board connection needs from its transport (a fake in tests)."""

    port: str

    def open(self) -> None: ...

    def close(self) -> None: ...

    @property
    def is_open(self) -> bool: ...

    def send(self, msg_type: int, board: int, seq: int, payload: bytes = b"") -> None: ...

    def receive(self) -> list[Received]: ...

    @property
    def rx_errors(self) -> int: ...


class SerialLink:
    """One board's serial port, opened exclusively, carrying proto frames.

    ``read_timeout`` bounds :meth:`receive`: it returns the frames completed by
    whatever arrived within that time (often none).
    """

    def __init__(
        self,
        port: str,
        *,
        baudrate: int = 115200,
        read_timeout: float = 0.01,
        stale_frame: float = 0.05,
    ) -> None:
        self.port = port
        self.stale_frame = stale_frame
        self._last_rx = 0.0
        self.baudrate = baudrate
        self.read_timeout = read_timeout
        self._ser: serial.Serial | None = None
        self._decoder = proto.FrameDecoder()
        self._write_lock = threading.Lock()
        self.bytes_rx = 0
        self.bytes_tx = 0

    # --- lifecycle ---------------------------------------------------------

    def open(self) -> None:
        """Open the port exclusively (a second opener fails: one owner per board)."""
        if self._ser is not None:
            return
        try:
            ser = serial.serial_for_url(
                self.port,
                baudrate=self.baudrate,
                timeout=self.read_timeout,
                write_timeout=0.2,  # a board that stops reading must not block the caller for long
                exclusive=True,
            )
        except serial.SerialException as exc:
            raise LinkError(say("cannot open {port}: {reason}", port=self.port, reason=_reason(exc))) from None
        except (OSError, ValueError, termios.error) as exc:
            # termios.error: the port vanished while pyserial set it up (a board
            # unplugged, a pseudo-terminal closed, mid-open); not an OSError
            raise LinkError(say("cannot open {port}: {reason}", port=self.port, reason=str(exc))) from None
        with contextlib.suppress(serial.SerialException, OSError):
            ser.reset_input_buffer()
        self._decoder = proto.FrameDecoder()
        self._ser = ser

    def close(self) -> None:
        """Close the port; idempotent, never raises."""
        ser, self._ser = self._ser, None
        if ser is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                ser.close()

    @property
    def is_open(self) -> bool:
        return self._ser is not None

    def __enter__(self) -> SerialLink:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- I/O -----------------------------------------------------------------

    def send(self, msg_type: int, board: int, seq: int, payload: bytes = b"") -> None:
        """Encode and write one frame; safe to call from any thread."""
        self.write(proto.encode_frame(msg_type, board, seq, payload))

    def write(self, data: bytes) -> None:
        ser = self._ser
        if ser is None:
            raise LinkError(say("{port} is not open", port=self.port))
        with self._write_lock:
            try:
                ser.write(data)
            except (serial.SerialException, OSError) as exc:
                raise LinkError(say("write to {port} failed: {reason}", port=self.port, reason=_reason(exc))) from None
        self.bytes_tx += len(data)

    def receive(self) -> list[Received]:
        """Wait up to ``read_timeout`` for bytes; return what they complete, in
        stream order: frames, and None where a corrupt frame was dropped (also
        counted in :attr:`rx_errors`), so the caller knows *where* data was lost.
        """
        ser = self._ser
        if ser is None:
            raise LinkError(say("{port} is not open", port=self.port))
        try:
            data = ser.read(1)
            if data:
                waiting = ser.in_waiting
                if waiting:
                    data += ser.read(waiting)
        except (serial.SerialException, OSError, TypeError) as exc:
            # TypeError: pyserial's posix read can fail this way when the port is
            # closed under it by another thread.
            raise LinkError(say("read from {port} failed: {reason}", port=self.port, reason=_reason(exc))) from None
        now = time.monotonic()
        if not data:
            # Half a frame and then silence: its end (the delimiter) was lost. Drop
            # it now and say so, rather than glue it to the next frame.
            if now - self._last_rx >= self.stale_frame and self._decoder.reset():
                self._decoder.framing_errors += 1
                return [None]
            return []
        self._last_rx = now
        self.bytes_rx += len(data)
        return split_frames(self._decoder, data)

    @property
    def rx_errors(self) -> int:
        """Frames dropped so far for a bad CRC, bad COBS, wrong version or size."""
        return self._decoder.errors

    @property
    def decoder(self) -> proto.FrameDecoder:
        return self._decoder


def split_frames(decoder: proto.FrameDecoder, data: bytes) -> list[Received]:
    """Feed ``data`` to ``decoder`` one delimiter at a time, marking each lost frame with None."""
    out: list[Received] = []
    start = 0
    while start < len(data):
        end = data.find(b"\x00", start)
        chunk = data[start:] if end < 0 else data[start : end + 1]
        start = len(data) if end < 0 else end + 1
        before = decoder.errors
        frames = decoder.feed(chunk)
        if decoder.errors != before:
            out.extend([None] * (decoder.errors - before))
        out.extend(frames)
    return out


def _reason(exc: BaseException) -> str:
    """Why the port failed, in words a person reads (translatable); what the
    OS or pyserial said otherwise, as it said it."""
    text = str(exc) or exc.__class__.__name__
    if "exclusively lock" in text or "Resource temporarily unavailable" in text:
        return say("another program has the port open (close it, e.g. a serial monitor or a second tablesense)")
    if "No such file" in text:
        return say("no such device (unplugged?)")
    if "returned no data" in text or "Input/output error" in text:
        return say("the device disconnected")
    return text
