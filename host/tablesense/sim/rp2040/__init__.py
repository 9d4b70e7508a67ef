"""Emulated RP2040 boards: the real MicroPython v1.27.0 UF2 in rp2040js.

See :mod:`tablesense.sim.rp2040.board` and docs/firmware.md.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The RP2040 B1 boot ROM (PROVENANCE.md in tablesense/flash/images).
BOOTROM = HERE / "rp2040-bootrom-b1.bin"
BOOTROM_SHA256 = "90b31e108faedfa6bbcfcc33ba05dac61e645108cfbbdc385f8dafc71fde44ae"
