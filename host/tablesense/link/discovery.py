"""Find the table's sensor boards: USB identity first, then the handshake.

A MicroPython RP2040 board enumerates as USB CDC 2E8A:0005 with its unique id
(hex) as the USB serial number. Candidates come from pyserial's port list
(and, for boards without a serial port, pyusb: a board in BOOTSEL mode shows
as 2E8A:0003); a candidate only counts as a tablesense board once it answers
HELLO with IDENTITY (:func:`identify`). ``hardware/udev/99-tablesense.rules``
gives each board a stable name (``/dev/tablesense/<serial>``) which this
module prefers when it exists.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from tablesense.firmware import proto

VID_RPI = 0x2E8A
PID_MICROPYTHON = 0x0005
PID_RP2040_BOOT = 0x0003
PID_RP2350_BOOT = 0x000F

#: Where the udev rules put stable names.
UDEV_DIR = Path("/dev/tablesense")


@dataclass(frozen=True)
class PortCandidate:
    """A serial port that looks like a MicroPython RP2040 board."""

    path: str
    serial_number: str | None
    description: str
    vid: int | None
    pid: int | None


def candidate_ports(vid: int = VID_RPI, pid: int = PID_MICROPYTHON) -> list[PortCandidate]:
    """Serial ports with this USB vendor/product id, stable udev names preferred."""
    from serial.tools import list_ports

    out: list[PortCandidate] = []
    stable = _stable_names()
    for p in list_ports.comports():
        if p.vid != vid or p.pid != pid:
            continue
        path = stable.get(os.path.realpath(p.device), p.device)
        out.append(PortCandidate(path, p.serial_number, p.description or "", p.vid, p.pid))
    return sorted(out, key=lambda c: c.path)


def find_by_serial(serial_number: str) -> str | None:
    """The port of the board with this USB serial number, or None."""
    for c in candidate_ports():
        if c.serial_number and c.serial_number.upper() == serial_number.upper():
            return c.path
    return None


def usb_boards_in_bootloader() -> list[str]:
    """Descriptions of RP2040/RP2350 boards in BOOTSEL mode (no serial port), via pyusb.

    Returns [] when pyusb has no backend (no libusb): that is not an error here."""
    try:
        import usb.core
    except ImportError:
        return []
    found: list[str] = []
    try:
        for pid in (PID_RP2040_BOOT, PID_RP2350_BOOT):
            for dev in usb.core.find(find_all=True, idVendor=VID_RPI, idProduct=pid) or []:
                found.append(
                    f"bus {getattr(dev, 'bus', '?')} address {getattr(dev, 'address', '?')} (2E8A:{pid:04X})"
                )
    except Exception:  # noqa: BLE001 - NoBackendError and permission problems: nothing to report
        return []
    return found


def identify(path: str, timeout: float = 1.0) -> dict | None:
    """Open ``path``, say HELLO and return the decoded IDENTITY (plus ``board``),
    or None if nothing identified itself within ``timeout``. Never raises."""
    from tablesense.link.serial_link import LinkError, SerialLink

    link = SerialLink(path, read_timeout=0.02)
    try:
        link.open()
        seq = 0x5A
        deadline = time.monotonic() + timeout
        next_hello = 0.0
        while time.monotonic() < deadline:
            if time.monotonic() >= next_hello:
                link.send(proto.HELLO, 0, seq, bytes([proto.VERSION]))
                next_hello = time.monotonic() + 0.25
            for frame in link.receive():
                if frame is None or frame[0] != proto.IDENTITY:
                    continue
                try:
                    d = proto.decode_identity(frame[3])
                except proto.ProtocolError:
                    continue
                if d["ack_seq"] == seq:
                    d["board"] = frame[1]
                    return d
        return None
    except LinkError:
        return None
    finally:
        link.close()


def _stable_names() -> dict[str, str]:
    """Real device path -> udev stable name under /dev/tablesense."""
    names: dict[str, str] = {}
    try:
        entries = list(UDEV_DIR.iterdir())
    except OSError:
        return names
    for e in entries:
        try:
            names[os.path.realpath(e)] = str(e)
        except OSError:
            continue
    return names
