"""A PICOBOOT writer: install a UF2 image on an RP2040/RP2350 in BOOTSEL mode over USB.

Written from the public protocol description in pico-sdk's
``boot/picoboot.h`` (BSD-3-Clause) and the RP2040 datasheet, section 2.8.5:

- the boot ROM exposes a vendor interface (class 0xFF) with one bulk OUT and
  one bulk IN endpoint;
- each command is a 32-byte packet on OUT: magic 0x431fd10b, a token the host
  chooses, the command id (top bit set = data flows IN), the size of the
  argument bytes used, the length of the data phase, and 16 argument bytes;
- then the data phase (``transfer length`` bytes, IN or OUT), then a
  zero-length acknowledgement in the other direction;
- on an error the device stalls; the host reads the 16-byte status
  (token, status code, command id, in progress) with control request 0x42,
  clears the halt of its own endpoints (a stalled endpoint stays halted on
  the host side until cleared) and resets the interface with control
  request 0x41. A stall whose status reads "ok" (or names another command)
  is reported as a failure without a reason, never as "ok";
- a new connection starts with that same reset (as picotool does): a
  previous program may have left the interface stalled or mid-command;
- the RP2350 boot ROM has no REBOOT (0x02): it reboots with REBOOT2 (0x0a:
  flags, delay, two parameters), as picotool does.

Flash is written as the boot ROM wants it: take exclusive access (the boot
volume disappears from the host meanwhile), leave XIP, erase whole 4 KiB
sectors, write whole 256-byte pages, read every sector back and compare,
then reboot into the new firmware. A RAM-loaded image (``flash_nuke.uf2``)
is written to SRAM, read back, and started as picotool's ``load -x`` starts
it: REBOOT with its start address as PC and the top of SRAM as stack on
the RP2040, REBOOT2 "RAM image" (start, size) on the RP2350.

The USB device is injected (:class:`UsbIO`); :class:`PyUsbIO` is the pyusb
implementation and the tests give a fake device that implements the protocol.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Protocol

from tablesense.flash.uf2 import FLASH_START, PAGE_SIZE, SECTOR_SIZE, SRAM_END, UF2Image
from tablesense.sentence import say

MAGIC = 0x431FD10B

# command ids (picoboot.h enum picoboot_cmd_id)
PC_EXCLUSIVE_ACCESS = 0x01
PC_REBOOT = 0x02
PC_FLASH_ERASE = 0x03
PC_READ = 0x84
PC_WRITE = 0x05
PC_EXIT_XIP = 0x06
PC_ENTER_CMD_XIP = 0x07
PC_EXEC = 0x08
PC_VECTORIZE_FLASH = 0x09
PC_REBOOT2 = 0x0A  # RP2350 only

COMMAND_NAMES = {
    PC_EXCLUSIVE_ACCESS: "EXCLUSIVE_ACCESS",
    PC_REBOOT: "REBOOT",
    PC_FLASH_ERASE: "FLASH_ERASE",
    PC_READ: "READ",
    PC_WRITE: "WRITE",
    PC_EXIT_XIP: "EXIT_XIP",
    PC_ENTER_CMD_XIP: "ENTER_CMD_XIP",
    PC_EXEC: "EXEC",
    PC_VECTORIZE_FLASH: "VECTORIZE_FLASH",
    PC_REBOOT2: "REBOOT2",
}

# REBOOT2 flags (pico-sdk boot/picoboot_constants.h)
REBOOT2_TYPE_NORMAL = 0x0  # param0: diagnostic partition
REBOOT2_TYPE_BOOTSEL = 0x2
REBOOT2_TYPE_RAM_IMAGE = 0x3  # param0: image start, param1: its size (as picotool passes it)
REBOOT2_TYPE_FLASH_UPDATE = 0x4
#: param0 of a normal REBOOT2: no diagnostic partition (BOOT_PARTITION_NONE, -1).
BOOT_PARTITION_NONE = 0xFFFFFFFF

# control requests on the PICOBOOT interface
IF_RESET = 0x41
IF_CMD_STATUS = 0x42

# exclusive access levels
NOT_EXCLUSIVE = 0
EXCLUSIVE = 1
EXCLUSIVE_AND_EJECT = 2

STATUS_NAMES = {
    0: "ok",
    1: "unknown command",
    2: "invalid command length",
    3: "invalid transfer length",
    4: "invalid address",
    5: "bad alignment",
    6: "interleaved write",
    7: "rebooting",
    8: "unknown error",
    9: "invalid state",
    10: "not permitted",
    11: "invalid argument",
    12: "buffer too small",
    13: "precondition not met",
    14: "modified data",
    15: "invalid data",
    16: "not found",
    17: "unsupported modification",
}

#: Initial stack pointer the SDK tools give REBOOT (top of RP2040 SRAM).
RP2040_STACK = SRAM_END["rp2040"]
#: Delay the SDK tools give a reboot, so the acknowledgement gets out first.
REBOOT_DELAY_MS = 500

_CMD = struct.Struct("<IIBBHI16s")
_STATUS = struct.Struct("<IIBB6x")


class PicobootError(RuntimeError):
    """A command the boot ROM refused or a USB failure; says what to do."""


class UsbIO(Protocol):
    """The PICOBOOT interface of one device: its two bulk endpoints and the
    interface's control requests. Timeouts in milliseconds."""

    def bulk_out(self, data: bytes, timeout: int) -> int: ...

    def bulk_in(self, size: int, timeout: int) -> bytes: ...

    def control_in(self, request: int, length: int, timeout: int) -> bytes: ...

    def control_out(self, request: int, timeout: int) -> None: ...

    def clear_halt(self, endpoint_in: bool, timeout: int) -> None:
        """Clear the halt of the IN (True) or OUT bulk endpoint if it is halted
        (host and device side: CLEAR_FEATURE ENDPOINT_HALT)."""
        ...

    def close(self) -> None: ...


class UsbStall(OSError):
    """An endpoint stalled (the device's way to refuse a command)."""


class PicobootStatus:
    """The 16-byte answer to IF_CMD_STATUS."""

    def __init__(self, raw: bytes) -> None:
        if len(raw) < 16:
            raise PicobootError(f"status of {len(raw)} bytes, expected 16")
        self.token, self.code, self.cmd_id, in_progress = _STATUS.unpack(raw[:16])
        self.in_progress = bool(in_progress)

    @property
    def name(self) -> str:
        return STATUS_NAMES.get(self.code, f"status {self.code}")


class Picoboot:
    """Commands of the PICOBOOT protocol over a :class:`UsbIO` of one
    ``chip`` ("rp2040" or "rp2350"). Connecting resets the interface (a
    previous program may have left it stalled or mid-command), as picotool
    does; ``reset=False`` skips that."""

    def __init__(self, usb: UsbIO, timeout_ms: int = 5000, chip: str = "rp2040", reset: bool = True) -> None:
        if chip not in SRAM_END:
            raise ValueError(f"unknown chip {chip!r}: use rp2040 or rp2350")
        self.usb = usb
        self.timeout = timeout_ms
        self.chip = chip
        self._token = 1
        if reset:
            self.reset_interface()

    # --- the protocol -----------------------------------------------------

    def command(self, cmd_id: int, args: bytes = b"", transfer_length: int = 0, data: bytes | None = None) -> bytes:
        """One command: packet, data phase, acknowledgement. Returns IN data."""
        if len(args) > 16:
            raise ValueError("PICOBOOT arguments are at most 16 bytes")
        token = self._token
        self._token = (self._token + 1) & 0xFFFFFFFF or 1
        packet = _CMD.pack(MAGIC, token, cmd_id, len(args), 0, transfer_length, args.ljust(16, b"\0"))
        is_in = bool(cmd_id & 0x80)
        received = b""
        try:
            self.usb.bulk_out(packet, self.timeout)
            if transfer_length:
                if is_in:
                    received = self.usb.bulk_in(transfer_length, self.timeout)
                    if len(received) != transfer_length:
                        raise PicobootError(f"asked for {transfer_length} bytes, got {len(received)}")
                else:
                    if data is None or len(data) != transfer_length:
                        raise ValueError("data must be exactly transfer_length bytes")
                    sent = self.usb.bulk_out(data, self.timeout)
                    if sent != transfer_length:
                        raise PicobootError(f"sent {sent} of {transfer_length} bytes")
            # acknowledgement: a zero-length packet against the data direction
            if is_in:
                self.usb.bulk_out(b"", self.timeout)
            else:
                self.usb.bulk_in(0, self.timeout)
        except UsbStall:
            status = self.status()
            self.reset_interface()
            what = f"command 0x{cmd_id:02x} ({COMMAND_NAMES.get(cmd_id, 'unknown')})"
            if status.code == 0 or status.token != token:
                # the stall came without a status for this command: never "refused: ok"
                raise PicobootError(say(
                    "the boot ROM stopped {what} without giving a reason (unknown error; its status "
                    "names token {token}, status {code}): unplug the board, hold BOOTSEL, plug it in, retry",
                    what=what, token=status.token, code=status.code,
                )) from None
            raise PicobootError(say("the boot ROM refused {what}: {status} (token {token})", what=what,
                                    status=status.name, token=status.token)) from None
        except OSError as exc:
            raise PicobootError(say("USB transfer failed ({error}): unplug the board, hold BOOTSEL, plug it in, retry",
                                    error=str(exc))) from None
        return received

    def status(self) -> PicobootStatus:
        try:
            return PicobootStatus(self.usb.control_in(IF_CMD_STATUS, 16, self.timeout))
        except OSError as exc:
            raise PicobootError(f"cannot read the PICOBOOT status: {exc}") from None

    def reset_interface(self) -> None:
        """Clear the halt of both bulk endpoints (a stall leaves the host's
        side halted too), then reset the interface (device side: un-stall,
        forget any half-done command)."""
        try:
            self.usb.clear_halt(True, self.timeout)
            self.usb.clear_halt(False, self.timeout)
            self.usb.control_out(IF_RESET, self.timeout)
        except OSError as exc:
            raise PicobootError(f"cannot reset the PICOBOOT interface: {exc}") from None

    # --- commands ---------------------------------------------------------

    def exclusive_access(self, level: int = EXCLUSIVE) -> None:
        self.command(PC_EXCLUSIVE_ACCESS, bytes([level]))

    def exit_xip(self) -> None:
        self.command(PC_EXIT_XIP)

    def enter_cmd_xip(self) -> None:
        self.command(PC_ENTER_CMD_XIP)

    def flash_erase(self, address: int, size: int) -> None:
        if address % SECTOR_SIZE or size % SECTOR_SIZE or size <= 0:
            raise ValueError(f"erase 0x{address:08x}+{size}: must be whole {SECTOR_SIZE}-byte sectors")
        self.command(PC_FLASH_ERASE, struct.pack("<II", address, size))

    def write(self, address: int, data: bytes) -> None:
        if address >= FLASH_START and (address % PAGE_SIZE or len(data) % PAGE_SIZE):
            raise ValueError(f"flash write 0x{address:08x}+{len(data)}: must be whole {PAGE_SIZE}-byte pages")
        self.command(PC_WRITE, struct.pack("<II", address, len(data)), len(data), data)

    def read(self, address: int, size: int) -> bytes:
        return self.command(PC_READ, struct.pack("<II", address, size), size)

    def reboot(self, pc: int = 0, sp: int = RP2040_STACK, delay_ms: int = REBOOT_DELAY_MS) -> None:
        """Restart the chip: into flash (pc 0), or at ``pc`` with stack ``sp``
        (RP2040). The RP2350 has no REBOOT: it gets REBOOT2, a normal boot
        for pc 0, else a RAM-image boot of the image at pc."""
        if self.chip == "rp2350":
            if pc == 0:
                self.reboot2(REBOOT2_TYPE_NORMAL, delay_ms, BOOT_PARTITION_NONE, 0)
            else:
                self.reboot2(REBOOT2_TYPE_RAM_IMAGE, delay_ms, pc, SRAM_END["rp2350"] - pc)
            return
        self.command(PC_REBOOT, struct.pack("<III", pc, sp, delay_ms))

    def reboot2(self, flags: int, delay_ms: int = REBOOT_DELAY_MS, param0: int = 0, param1: int = 0) -> None:
        """REBOOT2 (RP2350 boot ROM): flags, delay, param0, param1."""
        self.command(PC_REBOOT2, struct.pack("<IIII", flags, delay_ms, param0, param1))

    def exec(self, address: int) -> None:
        self.command(PC_EXEC, struct.pack("<I", address))

    def vectorize_flash(self, address: int) -> None:
        self.command(PC_VECTORIZE_FLASH, struct.pack("<I", address))

    # --- flashing an image ----------------------------------------------------

    def flash_image(
        self, image: UF2Image, progress: Callable[[str, int, int], None] | None = None, reboot: bool = True
    ) -> None:
        """Erase, write, verify every sector the image touches; then reboot.
        A RAM-loaded image goes to :meth:`load_ram` instead."""
        if image.in_ram:
            self.load_ram(image, progress, start=reboot)
            return
        sectors = image.sectors()
        total = len(sectors)

        def tell(what: str, done: int) -> None:
            if progress is not None:
                progress(what, done, total)

        self.exclusive_access(EXCLUSIVE)
        self.exit_xip()
        for n, sector in enumerate(sectors):
            self.flash_erase(sector, SECTOR_SIZE)
            for off in range(0, SECTOR_SIZE, PAGE_SIZE):
                page = image.pages.get(sector + off)
                if page is not None:
                    self.write(sector + off, page)
            tell("write", n + 1)
        for n, sector in enumerate(sectors):
            got = self.read(sector, SECTOR_SIZE)
            want = image.sector_data(sector)
            if got != want:
                bad = next(i for i in range(SECTOR_SIZE) if got[i] != want[i])
                raise PicobootError(say(
                    "verify failed at {address}: flash holds {got}, image has {want}; "
                    "run the flash again (a board that keeps failing has a flash problem)",
                    address=f"0x{sector + bad:08x}", got=f"0x{got[bad]:02x}", want=f"0x{want[bad]:02x}",
                ))
            tell("verify", n + 1)
        if reboot:
            self.reboot()
        else:
            self.exclusive_access(NOT_EXCLUSIVE)

    def load_ram(
        self, image: UF2Image, progress: Callable[[str, int, int], None] | None = None, start: bool = True
    ) -> None:
        """Write a RAM-loaded image (``flash_nuke.uf2``) to SRAM, read it
        back, and start it at its lowest address (picotool ``load -x``)."""
        runs: list[tuple[int, bytearray]] = []
        for addr in sorted(image.pages):
            if runs and runs[-1][0] + len(runs[-1][1]) == addr and len(runs[-1][1]) < SECTOR_SIZE:
                runs[-1][1].extend(image.pages[addr])
            else:
                runs.append((addr, bytearray(image.pages[addr])))
        total = len(runs)

        def tell(what: str, done: int) -> None:
            if progress is not None:
                progress(what, done, total)

        self.exclusive_access(EXCLUSIVE)
        for n, (addr, data) in enumerate(runs):
            self.write(addr, bytes(data))
            tell("write", n + 1)
        for n, (addr, data) in enumerate(runs):
            got = self.read(addr, len(data))
            if got != data:
                bad = next(i for i in range(len(data)) if got[i] != data[i])
                raise PicobootError(say(
                    "verify failed at {address} in RAM: it holds {got}, the image has {want}; "
                    "unplug the board, hold BOOTSEL, plug it in, retry",
                    address=f"0x{addr + bad:08x}", got=f"0x{got[bad]:02x}", want=f"0x{data[bad]:02x}",
                ))
            tell("verify", n + 1)
        if start:
            self.reboot(pc=image.start, sp=SRAM_END[self.chip])
        else:
            self.exclusive_access(NOT_EXCLUSIVE)


# --- pyusb ------------------------------------------------------------------------


class PyUsbIO:
    """The PICOBOOT interface of a pyusb device (found by :func:`find_devices`)."""

    def __init__(self, device: object) -> None:
        import usb.core
        import usb.util

        self._usb_core = usb.core
        self.dev = device
        cfg = device.get_active_configuration()  # type: ignore[attr-defined]
        intf = None
        for candidate in cfg:
            eps = list(candidate)
            if candidate.bInterfaceClass == 0xFF and len(eps) == 2:
                intf = candidate
                break
        if intf is None:
            raise PicobootError("the device has no PICOBOOT interface (vendor class with two bulk endpoints)")
        self.interface = intf.bInterfaceNumber
        try:
            if device.is_kernel_driver_active(self.interface):  # type: ignore[attr-defined]
                device.detach_kernel_driver(self.interface)  # type: ignore[attr-defined]
        except (NotImplementedError, usb.core.USBError):
            pass
        usb.util.claim_interface(device, self.interface)
        self.ep_out = usb.util.find_descriptor(
            intf, custom_match=lambda e: usb.util.endpoint_direction(e.bEndpointAddress) == usb.util.ENDPOINT_OUT
        )
        self.ep_in = usb.util.find_descriptor(
            intf, custom_match=lambda e: usb.util.endpoint_direction(e.bEndpointAddress) == usb.util.ENDPOINT_IN
        )
        if self.ep_out is None or self.ep_in is None:
            raise PicobootError("the PICOBOOT interface lacks its bulk endpoints")

    def _translate(self, exc: Exception) -> OSError:
        if getattr(exc, "errno", None) == 32 or "Pipe error" in str(exc):  # EPIPE: a stall
            return UsbStall(str(exc))
        return OSError(str(exc))

    def bulk_out(self, data: bytes, timeout: int) -> int:
        try:
            return int(self.ep_out.write(data, timeout))  # type: ignore[union-attr]
        except self._usb_core.USBError as exc:
            raise self._translate(exc) from None

    def bulk_in(self, size: int, timeout: int) -> bytes:
        try:
            return bytes(self.ep_in.read(max(size, 1) if size == 0 else size, timeout))  # type: ignore[union-attr]
        except self._usb_core.USBError as exc:
            raise self._translate(exc) from None

    def control_in(self, request: int, length: int, timeout: int) -> bytes:
        try:
            return bytes(self.dev.ctrl_transfer(0xC1, request, 0, self.interface, length, timeout))  # type: ignore[attr-defined]
        except self._usb_core.USBError as exc:
            raise self._translate(exc) from None

    def control_out(self, request: int, timeout: int) -> None:
        try:
            self.dev.ctrl_transfer(0x41, request, 0, self.interface, None, timeout)  # type: ignore[attr-defined]
        except self._usb_core.USBError as exc:
            raise self._translate(exc) from None

    def clear_halt(self, endpoint_in: bool, timeout: int) -> None:
        """GET_STATUS of the endpoint; CLEAR_FEATURE ENDPOINT_HALT (libusb
        also resets the host side) when it is halted, as picotool does."""
        ep = self.ep_in if endpoint_in else self.ep_out
        address = int(ep.bEndpointAddress)  # type: ignore[union-attr]
        try:
            status = bytes(self.dev.ctrl_transfer(0x82, 0x00, 0, address, 2, timeout))  # type: ignore[attr-defined]
            halted = bool(status and status[0] & 1)
        except self._usb_core.USBError:
            halted = True  # cannot tell: clearing a halt that is not set is harmless
        if halted:
            try:
                self.dev.clear_halt(address)  # type: ignore[attr-defined]
            except self._usb_core.USBError as exc:
                raise self._translate(exc) from None

    def close(self) -> None:
        import usb.util

        try:
            usb.util.release_interface(self.dev, self.interface)
            usb.util.dispose_resources(self.dev)
        except Exception:  # noqa: BLE001 - the device may have rebooted away
            pass


VID_RPI = 0x2E8A
PID_RP2040_BOOT = 0x0003
PID_RP2350_BOOT = 0x000F


def find_devices() -> list[tuple[object, str]]:
    """(pyusb device, chip) of every board in BOOTSEL mode. [] without libusb."""
    try:
        import usb.core
    except ImportError:
        return []
    out: list[tuple[object, str]] = []
    try:
        for pid, chip in ((PID_RP2040_BOOT, "rp2040"), (PID_RP2350_BOOT, "rp2350")):
            for dev in usb.core.find(find_all=True, idVendor=VID_RPI, idProduct=pid) or []:
                out.append((dev, chip))
    except Exception:  # noqa: BLE001 - NoBackendError, permissions: none visible
        return []
    return out
