"""A fake RP2040 / RP2350 boot ROM speaking PICOBOOT, strict about the protocol.

It implements the device side of pico-sdk's boot/picoboot.h: 32-byte command
packets (magic, token, command id, argument size, transfer length), the data
phase, the zero-length acknowledgement, stalls with a status on errors, and
NOR flash rules: erase by 4 KiB sector, write by 256-byte page, and a write
can only clear bits (writing a page that was not erased corrupts it, which
the fake records as a protocol violation). SRAM takes plain writes and reads
(RAM-loaded programs such as flash_nuke.uf2).

USB as the host sees it: a stall halts the endpoint on the host side too;
every later transfer on it fails until the host clears that halt
(``clear_halt``); the interface reset (control request 0x41) un-stalls the
device side and forgets a half-done command, but does not clear the host's
halt. ``left_stalled`` starts the device as a previous program may leave it:
stalled in the middle of a command.

Per chip: the RP2350 boot ROM has REBOOT2 (0x0a, 16 argument bytes) and no
REBOOT, EXEC or VECTORIZE_FLASH; the RP2040's has REBOOT and no REBOOT2.
"""

from __future__ import annotations

import struct

from tablesense.flash.picoboot import UsbStall

FLASH_START = 0x10000000
FLASH_SIZE = 2 * 1024 * 1024
SRAM_START = 0x20000000
SRAM_SIZE = {"rp2040": 0x42000, "rp2350": 0x82000}
ARG_SIZES = {
    "rp2040": {0x01: 1, 0x02: 12, 0x03: 8, 0x84: 8, 0x05: 8, 0x06: 0, 0x07: 0, 0x08: 4, 0x09: 4},
    "rp2350": {0x01: 1, 0x0A: 16, 0x03: 8, 0x84: 8, 0x05: 8, 0x06: 0, 0x07: 0},
}


class FakeBootRom:
    def __init__(self, chip: str = "rp2040", left_stalled: bool = False) -> None:
        self.chip = chip
        self.flash = bytearray(b"\x00" * FLASH_SIZE)  # not erased: a previous image
        self.sram = bytearray(SRAM_SIZE[chip])
        self.exclusive = 0
        self.xip = True
        self.tokens: list[int] = []
        self.violations: list[str] = []
        self.status = (0, 0, 0)  # token, code, cmd
        self.rebooted = False
        self.reboot_args: tuple | None = None  # ("reboot", pc, sp, delay) / ("reboot2", flags, delay, p0, p1)
        self.log: list[tuple[int, int, int]] = []  # (cmd, addr, size)
        self.requests: list[str] = []  # control requests and halt clears, in order
        self._pending: tuple | None = None  # (cmd, token, args, length)
        self._phase = "cmd"
        self._in_data = b""
        self.device_stalled = {"in": False, "out": False}
        self.host_halted = {"in": False, "out": False}
        self.stall_without_status: int | None = None  # a command id the device stalls leaving its status ok
        if left_stalled:
            self._phase = "data_in"
            self.device_stalled = {"in": True, "out": True}

    @property
    def stalled(self) -> bool:
        return any(self.device_stalled.values()) or any(self.host_halted.values())

    # --- UsbIO ---------------------------------------------------------
    def _endpoint(self, ep: str) -> None:
        if self.host_halted[ep]:
            raise UsbStall(f"{ep} endpoint halted (host side): clear the halt first")
        if self.device_stalled[ep]:
            self.host_halted[ep] = True
            raise UsbStall(f"{ep} endpoint stalled")

    def bulk_out(self, data: bytes, timeout: int) -> int:
        self._endpoint("out")
        try:
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
        except UsbStall:
            self.host_halted["out"] = True
            raise

    def bulk_in(self, size: int, timeout: int) -> bytes:
        self._endpoint("in")
        try:
            if self._phase == "data_in":
                out = self._in_data
                self._phase = "ack_out"
                return out
            if self._phase == "ack_in":
                self._phase = "cmd"
                return b""
            self._fail(8, f"IN transfer in phase {self._phase}")
            return b""
        except UsbStall:
            self.host_halted["in"] = True
            raise

    def control_in(self, request: int, length: int, timeout: int) -> bytes:
        assert request == 0x42 and length == 16
        self.requests.append("status")
        token, code, cmd = self.status
        return struct.pack("<IIBB6x", token, code, cmd, 0)

    def control_out(self, request: int, timeout: int) -> None:
        assert request == 0x41
        self.requests.append("reset")
        self.device_stalled = {"in": False, "out": False}
        self._phase = "cmd"
        self._pending = None

    def clear_halt(self, endpoint_in: bool, timeout: int) -> None:
        ep = "in" if endpoint_in else "out"
        self.requests.append(f"clear_halt {ep}")
        self.host_halted[ep] = False
        self.device_stalled[ep] = False  # CLEAR_FEATURE ENDPOINT_HALT reaches the device too

    def close(self) -> None:
        pass

    # --- device logic -----------------------------------------------------
    def _fail(self, code: int, why: str, keep_status: bool = False) -> int:
        self.violations.append(why)
        if not keep_status:
            token = self._pending[1] if self._pending else 0
            cmd = self._pending[0] if self._pending else 0
            self.status = (token, code, cmd)
        self.device_stalled = {"in": True, "out": True}
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
        sizes = ARG_SIZES[self.chip]
        if cmd not in sizes:
            self._fail(1, f"unknown command 0x{cmd:02x}")
        if argsize != sizes[cmd]:
            self._fail(2, f"command 0x{cmd:02x} with {argsize} argument bytes")
        if cmd == self.stall_without_status:
            self._fail(0, f"stalled 0x{cmd:02x} leaving the status of the last command", keep_status=True)
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

    def _memory(self, addr: int, size: int) -> tuple[bytearray, int, str]:
        off = addr - FLASH_START
        if 0 <= off <= FLASH_SIZE - size:
            return self.flash, off, "flash"
        off = addr - SRAM_START
        if 0 <= off <= len(self.sram) - size:
            return self.sram, off, "ram"
        self._fail(4, f"address 0x{addr:08x}+{size} outside flash and RAM")
        raise AssertionError  # unreachable

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
            self.reboot_args = ("reboot", *struct.unpack_from("<III", args))
        elif cmd == 0x0A:
            self.rebooted = True
            self.reboot_args = ("reboot2", *struct.unpack_from("<IIII", args))
        elif cmd in (0x03, 0x84, 0x05):
            addr, size = struct.unpack_from("<II", args)
            self.log.append((cmd, addr, size))
            mem, off, kind = self._memory(addr, size)
            if cmd == 0x03:
                if kind != "flash":
                    self._fail(4, "erase outside flash")
                if addr % 4096 or size % 4096:
                    self._fail(5, "erase not sector aligned")
                if not self.exclusive:
                    self.violations.append("erase without exclusive access")
                if self.xip:
                    self.violations.append("erase while in XIP mode")
                mem[off : off + size] = b"\xff" * size
            elif cmd == 0x05:
                assert data is not None
                if kind == "ram":
                    mem[off : off + size] = data
                    return b""
                if addr % 256 or size % 256:
                    self._fail(5, "write not page aligned")
                old = mem[off : off + size]
                if any(b != 0xFF for b in old):
                    self.violations.append(f"write to 0x{addr:08x} before erasing it")
                mem[off : off + size] = bytes(a & b for a, b in zip(old, data, strict=True))
            else:
                return bytes(mem[off : off + size])
        return b""
