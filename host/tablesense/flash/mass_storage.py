"""The fallback for installing MicroPython: copy the UF2 file to the boot volume.

A board in BOOTSEL mode also shows a small FAT volume (``RPI-RP2`` on an
RP2040, ``RP2350`` on an RP2350) holding ``INFO_UF2.TXT``. Copying a UF2 file
onto it flashes the board, which then reboots (and the volume vanishes). This
is what people do by hand; the flasher does it when PICOBOOT over USB is not
usable (no libusb, no permission) but the volume is mounted.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from tablesense.sentence import say

VOLUME_LABELS = ("RPI-RP2", "RP2350")
INFO_FILE = "INFO_UF2.TXT"


class MassStorageError(RuntimeError):
    """The copy to the boot volume failed; the message says what to do."""


def mounted_volumes(mounts_file: str = "/proc/mounts") -> list[Path]:
    """Mount points that look like an RP2 boot volume (they hold INFO_UF2.TXT)."""
    found: list[Path] = []
    try:
        lines = Path(mounts_file).read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        parts = line.split()
        if len(parts) < 2:
            continue
        mount = Path(parts[1].replace("\\040", " "))
        if (mount / INFO_FILE).is_file():
            found.append(mount)
    return sorted(set(found))


def board_info(volume: Path) -> dict[str, str]:
    """INFO_UF2.TXT as a dict ("Model", "Board-ID", ...)."""
    info: dict[str, str] = {}
    try:
        text = (volume / INFO_FILE).read_text(errors="replace")
    except OSError:
        return info
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            info[k.strip()] = v.strip()
    return info


def copy_uf2(uf2_path: Path, volume: Path, timeout: float = 20.0) -> None:
    """Copy the file, flush it to the device, and wait for the volume to go
    away (the board reboots once it has the whole file)."""
    if not (volume / INFO_FILE).is_file():
        raise MassStorageError(say("{volume} is not an RP2 boot volume (no {file})", volume=str(volume), file=INFO_FILE))
    target = volume / uf2_path.name
    try:
        with open(uf2_path, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 64 * 1024)
            dst.flush()
            os.fsync(dst.fileno())
    except OSError as exc:
        # The board may reboot before the close completes: that is success.
        if (volume / INFO_FILE).exists():
            raise MassStorageError(say("copying to {volume} failed: {error}; hold BOOTSEL, replug and retry",
                                       volume=str(volume), error=str(exc))) from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not (volume / INFO_FILE).exists():
            return
        time.sleep(0.2)
    raise MassStorageError(say(
        "{volume} is still there {seconds} s after the copy: the board did not accept the file "
        "(wrong chip family?). Check it with `tablesense flash --micropython FILE --check`",
        volume=str(volume), seconds=f"{timeout:.0f}",
    ))
