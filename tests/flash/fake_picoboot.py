"""A fake RP2040 boot ROM speaking PICOBOOT, strict about the protocol.

It implements the device side of pico-sdk's boot/picoboot.h: 32-byte command
packets (magic, token, command id, argument size, transfer length), the data
phase, the zero-length acknowledgement, stalls with a status on errors, and
NOR flash rules: erase by 4 KiB sector, write by 256-byte page, and a write
can only clear bits (writing a page that was not erased corrupts it, which
the fake records as a protocol violation).
"""

from __future__ import annotations

import struct

from tablesense.flash.picoboot import UsbStall

FLASH_START = 0x10000000
FLASH_SIZE = 2 * 1024 * 1024
ARG_SIZES = {0x01: 1, 0x02: 12, 0x03: 8, 0x84: 8, 0x05: 8, 0x06: 0, 0x07: 0, 0x08: 4, 0x09: 4}


class FakeBootRom:
    def __init__(self) -> None:
        self.flash = bytearray(b"\x00" * FLASH_SIZE)  # not erased: a previous image
        self.exclusive = 0
        self.xip = True
        self.tokens: list[int] = []
        self.violations: list[str] = []
        self.status = (0, 0, 0)  # token, code, cmd
        self.rebooted = False
        self.log: list[tuple[int, int, int]] = []  # (cmd, addr, size)
        self._pending: tuple | None = None  # (cmd, token, args, length)
        self._phase = "cmd"
        self._in_data = b""
        self.stalled = False

    # --- UsbIO ---------------------------------------------------------
    def bulk_out(self, data: bytes, timeout: int) -> int:
        if self.stalled:
            raise UsbStall("endpoint stalled")
        if self._phase == "cmd":
            self._command(bytes(data))
            return len(data)
        if self._phase == "data_out":
            cmd, token, args, length = self._pending  # type: ignore[misc]
            if len(data) != length:
                return self._fail(3, "data phase length differs from the transfer length")
            self._execute(cmd, token, args, bytes(data))
            self._phase = "ack_in"
            return len(data)
        if self._phase == "ack_out":
            if data:
                return self._fail(8, "acknowledgement must be a zero-length packet")
            self._phase = "cmd"
            return 0
        return self._fail(8, f"OUT transfer in phase {self._phase}")

    def bulk_in(self, size: int, timeout: int) -> bytes:
        if self.stalled:
            raise UsbStall("endpoint stalled")
        if self._phase == "data_in":
            out = self._in_data
            self._phase = "ack_out"
            return out
        if self._phase == "ack_in":
            self._phase = "cmd"
            return b""
        self._fail(8, f"IN transfer in phase {self._phase}")
        return b""

    def control_in(self, request: int, length: int, timeout: int) -> bytes:
        assert request == 0x42 and length == 16
        token, code, cmd = self.status
        return struct.pack("<IIBB6x", token, code, cmd, 0)

    def control_out(self, request: int, timeout: int) -> None:
        assert request == 0x41
        self.stalled = False
        self._phase = "cmd"

    def close(self) -> None:
        pass

    # --- device logic -----------------------------------------------------
    def _fail(self, code: int, why: str) -> int:
        self.violations.append(why)
        token = self._pending[1] if self._pending else 0
        cmd = self._pending[0] if self._pending else 0
        self.status = (token, code, cmd)
        self.stalled = True
        raise UsbStall(why)

    def _command(self, packet: bytes) -> None:
        if len(packet) != 32:
            self._fail(2, f"command packet of {len(packet)} bytes")
        magic, token, cmd, argsize, _unused, length, args = struct.unpack("<IIBBHI16s", packet)
        self._pending = (cmd, token, args, length)
        if magic != 0x431FD10B:
            self._fail(1, f"bad magic 0x{magic:08x}")
        if token in self.tokens:
            self.violations.append(f"token {token} reused")
        self.tokens.append(token)
        if cmd not in ARG_SIZES:
            self._fail(1, f"unknown command 0x{cmd:02x}")
        if argsize != ARG_SIZES[cmd]:
            self._fail(2, f"command 0x{cmd:02x} with {argsize} argument bytes")
        if cmd & 0x80:
            data = self._execute(cmd, token, args, None)
            self._in_data = data
            self._phase = "data_in" if length else "ack_out"
        elif length:
            if cmd != 0x05:
                self._fail(3, "only WRITE has an OUT data phase")
            self._phase = "data_out"
        else:
            self._execute(cmd, token, args, None)
            self._phase = "ack_in"

    def _execute(self, cmd: int, token: int, args: bytes, data: bytes | None) -> bytes:
        self.status = (token, 0, cmd)
        if cmd == 0x01:
            self.exclusive = args[0]
        elif cmd == 0x06:
            self.xip = False
        elif cmd == 0x07:
            self.xip = True
        elif cmd == 0x02:
            self.rebooted = True
        elif cmd in (0x03, 0x84, 0x05):
            addr, size = struct.unpack_from("<II", args)
            self.log.append((cmd, addr, size))
            off = addr - FLASH_START
            if not 0 <= off <= FLASH_SIZE - size:
                self._fail(4, f"address 0x{addr:08x}+{size} outside flash")
            if cmd == 0x03:
                if addr % 4096 or size % 4096:
                    self._fail(5, "erase not sector aligned")
                if not self.exclusive:
                    self.violations.append("erase without exclusive access")
                if self.xip:
                    self.violations.append("erase while in XIP mode")
                self.flash[off : off + size] = b"\xff" * size
            elif cmd == 0x05:
                assert data is not None
                if addr % 256 or size % 256:
                    self._fail(5, "write not page aligned")
                old = self.flash[off : off + size]
                if any(b != 0xFF for b in old):
                    self.violations.append(f"write to 0x{addr:08x} before erasing it")
                self.flash[off : off + size] = bytes(a & b for a, b in zip(old, data, strict=True))
            else:
                return bytes(self.flash[off : off + size])
        return b""
