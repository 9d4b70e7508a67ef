"""Every board the host can see: serial ports (pyserial) and raw USB devices
(pyusb, for boards in BOOTSEL mode that have no serial port), classified by
USB identity and, for MicroPython boards, by the protocol handshake."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tablesense.flash.client import Identity, identify
from tablesense.flash.mass_storage import board_info, mounted_volumes
from tablesense.sentence import say

VID_RPI = 0x2E8A
PID_MICROPYTHON = 0x0005
PID_RP2040_BOOT = 0x0003
PID_RP2350_BOOT = 0x000F

#: Board states, as `tablesense boards list` shows them (Sentences: English in
#: --json, in the command's language in the table).
STATE_FIRMWARE = say("tablesense firmware")
STATE_MICROPYTHON = say("MicroPython (no tablesense firmware)")
STATE_BOOTSEL_RP2040 = say("RP2040 boot ROM (BOOTSEL)")
STATE_BOOTSEL_RP2350 = say("RP2350 boot ROM (BOOTSEL)")
STATE_BUSY = say("busy: another program has the port open (tablesense play?)")


def port_busy(device: str) -> bool:
    """True when another program holds ``device`` exclusively (a running
    ``tablesense play``, a serial monitor): its silence is then no sign of
    missing firmware, and reflashing would be needless."""
    import serial

    try:
        with serial.Serial(device, exclusive=True, timeout=0):
            return False
    except serial.SerialException as exc:
        text = str(exc)
        return "exclusively lock" in text or "Resource temporarily unavailable" in text
    except OSError:
        return False


@dataclass(frozen=True)
class SeenBoard:
    state: str
    port: str | None  # serial port, None in BOOTSEL mode
    usb_id: str  # "2E8A:0005"
    serial: str | None
    location: str  # USB bus location or volume
    identity: Identity | None = None

    def to_json(self) -> dict:
        return {
            "state": self.state,
            "port": self.port,
            "usb_id": self.usb_id,
            "serial": self.serial,
            "location": self.location,
            "board": self.identity.board if self.identity else None,
            "fw_version": self.identity.fw_version if self.identity else None,
            "config_hash": self.identity.config_hash.hex() if self.identity else None,
            "cells": self.identity.cells if self.identity else None,
        }


def list_boards(
    extra_ports: list[str] | None = None,
    identify_port: Callable[[str], Identity | None] = identify,
    handshake: bool = True,
) -> list[SeenBoard]:
    """Serial ports with a Raspberry Pi USB id (plus ``extra_ports``, e.g.
    virtual boards), USB devices in BOOTSEL mode, and mounted boot volumes."""
    from serial.tools import list_ports

    seen: list[SeenBoard] = []
    ports: list[tuple[str, str, str | None, str]] = []
    for p in list_ports.comports():
        if p.vid == VID_RPI and p.pid == PID_MICROPYTHON:
            ports.append((p.device, f"{p.vid:04X}:{p.pid:04X}", p.serial_number, p.location or p.hwid or ""))
    for extra in extra_ports or []:
        if all(extra != existing[0] for existing in ports):
            ports.append((extra, "virtual", None, "pseudo-terminal"))
    for device, usb_id, serial, location in ports:
        ident = identify_port(device) if handshake else None
        state = STATE_FIRMWARE if ident is not None else STATE_MICROPYTHON
        if ident is None and handshake and port_busy(device):
            state = STATE_BUSY
        seen.append(SeenBoard(state, device, usb_id, serial or (ident.serial if ident else None), location, ident))
    from tablesense.flash.picoboot import find_devices

    for dev, chip in find_devices():
        pid = PID_RP2040_BOOT if chip == "rp2040" else PID_RP2350_BOOT
        serial = None
        try:
            serial = dev.serial_number  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - needs permission to read strings
            serial = None
        where = f"bus {getattr(dev, 'bus', '?')} address {getattr(dev, 'address', '?')}"
        state = STATE_BOOTSEL_RP2040 if chip == "rp2040" else STATE_BOOTSEL_RP2350
        seen.append(SeenBoard(state, None, f"{VID_RPI:04X}:{pid:04X}", serial, where))
    for volume in mounted_volumes():
        info = board_info(volume)
        model = info.get("Model", "")
        if any(b.location == str(volume) for b in seen):
            continue
        state = STATE_BOOTSEL_RP2350 if "2350" in model else STATE_BOOTSEL_RP2040
        if not any(b.state == state and b.port is None for b in seen):
            seen.append(SeenBoard(state, None, "volume", info.get("Board-ID"), str(volume)))
    return seen
