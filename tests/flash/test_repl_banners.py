"""The raw REPL's answer to code: a board still booting may print its boot
banner or a second raw-REPL banner before "OK" (seen on emulated boards under
load, and possible on a real board deployed right after it was plugged in);
those are skipped, anything else is refused."""

from __future__ import annotations

import pytest

from tablesense.flash.repl import ReplError, ReplSession


class _Serial:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)


class _Transport:
    """mpremote's SerialTransport as _exec_fast uses it, answering from a script."""

    def __init__(self, before_ok: bytes) -> None:
        self.serial = _Serial()
        self.answers = [b"raw REPL; CTRL-B to exit\r\n>", before_ok + b"OK"]

    def read_until(self, _min: int, _ending: bytes, timeout: int = 10) -> bytes:
        return self.answers.pop(0)

    def follow(self, _timeout: float) -> tuple[bytes, bytes]:
        return b"42\r\n", b""


def _session(before_ok: bytes) -> tuple[ReplSession, _Transport]:
    session = ReplSession("/dev/pts/99")
    t = _Transport(before_ok)
    session._t = t  # type: ignore[assignment]
    return session, t


@pytest.mark.parametrize(
    "before_ok",
    [
        b"",
        b"raw REPL; CTRL-B to exit\r\n>",
        b'MicroPython v1.27.0 on 2025-12-09; Raspberry Pi Pico with RP2040\r\nType "help()" for more information.\r\n>>> \r\n',
    ],
)
def test_banners_before_ok_are_skipped(before_ok: bytes) -> None:
    session, t = _session(before_ok)
    assert session._exec_fast(b"print(42)", 5.0) == (b"42\r\n", b"")
    assert t.serial.written == [b"print(42)\x04"]


def test_anything_else_before_ok_is_refused() -> None:
    session, _t = _session(b"Traceback (most recent call last):\r\n")
    with pytest.raises(ReplError, match="did not accept the code"):
        session._exec_fast(b"print(42)", 5.0)
