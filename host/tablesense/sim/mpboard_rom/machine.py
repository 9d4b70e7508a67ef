# pyright: reportMissingImports=false, reportAttributeAccessIssue=false
# The `machine` module of the virtual MicroPython board (sim/mpboard.py): it
# lives in the board's /rom, like a frozen module, and is never deployed.
#
# Pins, buses and the WS2812 strip come from the firmware helper's fake
# machine (tablesense.sim.fake_machine); this file adds what makes the board a
# board: reset(), soft_reset() and bootloader() really restart the interpreter
# (through the Node.js bridge, module `_mpboard`), unique_id() is this board's,
# and the first SPI bus created is wired with one emulated MFRC522 per cell
# of /config.json, so the firmware's readers pass their self-test.
import json

import _mpboard

from tablesense.sim import fake_machine as _fm
from tablesense.sim.fake_machine import (  # noqa: F401
    I2C,
    PWRON_RESET,
    SOFT_RESET,
    WDT_RESET,
    NeoPixel,
    Pin,
    freq,
)
from tablesense.sim.mfrc522_emu import Emulated138, EmulatedMCP23017, EmulatedMFRC522

HARD_RESET = 3
_wired = {}


def unique_id():
    return bytes.fromhex(_mpboard.uid)


def reset_cause():
    return _mpboard.reset_cause()


def reset():
    _mpboard.reset("hard")
    raise SystemExit


def soft_reset():
    _mpboard.reset("soft")
    raise SystemExit


def bootloader(value=None):
    _mpboard.reset("bootloader")
    raise SystemExit


def idle():
    _mpboard.idle()


def _lines(cfg):
    """Chip-select lines of every cell, as the config wires them."""
    n = int(cfg.get("cells", 0))
    cs = cfg.get("cs") or {"kind": "decoder", "address": [6, 7, 8], "enables": [9, 10, 11, 12]}
    kind = cs.get("kind")
    if kind == "gpio":
        return [Pin(p) for p in cs.get("pins", [])][:n]
    if kind == "decoder":
        addr = cs.get("address", [])
        if len(addr) != 3:
            return []
        decs = [Emulated138(Pin(addr[0]), Pin(addr[1]), Pin(addr[2]), Pin(e)) for e in cs.get("enables", [])]
        return [decs[ch // 8].output(ch % 8) for ch in range(n) if ch // 8 < len(decs)]
    if kind == "mcp23017":
        i2c = cs.get("i2c", {})
        bus = I2C(i2c.get("id", 1))
        exps = []
        for a in cs.get("addresses", [0x20]):
            e = EmulatedMCP23017()
            bus.attach(a, e)
            exps.append(e)
        return [exps[ch // 16].output(ch % 16) for ch in range(n) if ch // 16 < len(exps)]
    return []


class SPI(_fm.SPI):
    """machine.SPI whose bus carries one emulated MFRC522 per configured cell."""

    def __init__(self, id=0, baudrate=None, **kwargs):
        _fm.SPI.__init__(self, id, baudrate, **kwargs)
        # the driver's polls while a frame is on the air cost no interpreter
        # time (EmulatedSPIBus.skip_waits): the board answers the host as
        # fast as the virtual boards do, even on a busy machine
        self.skip_waits = True
        if id in _wired:
            return
        _wired[id] = True
        try:
            with open("/config.json") as f:
                cfg = json.load(f)
        except (OSError, ValueError):
            return
        spi = cfg.get("spi") or {}
        if spi.get("id", 0) != id:
            return
        for ch, line in enumerate(_lines(cfg)):
            self.attach(line, EmulatedMFRC522(seed=ch + 1))
