"""Binaries shipped inside the package, with their sha256 (see PROVENANCE.md).

``MICROPYTHON_UF2`` is what ``tablesense flash --micropython`` installs on a
BOOTSEL board by default, and what the emulated RP2040 boards
(:mod:`tablesense.sim.rp2040`) run: the firmware a user flashes is the binary
the tests run.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tablesense.sentence import say

HERE = Path(__file__).resolve().parent

#: MicroPython v1.27.0, port rp2, board RPI_PICO (built from source; PROVENANCE.md).
MICROPYTHON_UF2 = HERE / "RPI_PICO-v1.27.0.uf2"
MICROPYTHON_UF2_SHA256 = "b0d6c4557bae1fb31614f5c0874dafc05a8002e56d0bb871654e67a8f57d81cc"
MICROPYTHON_VERSION = "1.27.0"


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file (what PROVENANCE.md lists)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check(path: Path, expected: str) -> None:
    """Raise ValueError when a shipped binary is not the one PROVENANCE.md names."""
    found = sha256_of(path)
    if found != expected:
        raise ValueError(say("{file} has sha256 {found}, expected {expected}: the package is damaged; reinstall it",
                             file=path.name, found=found, expected=expected))
