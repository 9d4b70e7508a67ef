"""Run firmware code on real MicroPython (WebAssembly port, Node.js).

:func:`run_micropython` writes the firmware files, the MFRC522 emulator and
the fake ``machine`` module into MicroPython's filesystem and runs ``code``;
it returns MicroPython's stdout and raises :class:`MicroPythonError` with
MicroPython's traceback when the code fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("mpy_runner.mjs")
FIRMWARE = ("proto.py", "board.py", "config.py", "leds.py", "mfrc522.py")
SIM = REPO / "host" / "tablesense" / "sim"


class MicroPythonError(RuntimeError):
    """The code raised inside MicroPython (the message is its traceback)."""


def node() -> str | None:
    return shutil.which("node")


def wasm_available() -> bool:
    pkg = REPO / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"
    return node() is not None and (pkg / "micropython.mjs").is_file()


def firmware_files(main: bool = False) -> dict[str, str]:
    files = {f"/lib/{name}": str(REPO / "firmware" / name) for name in FIRMWARE}
    if main:
        files["/lib/main.py"] = str(REPO / "firmware" / "main.py")
    files["/lib/tablesense/sim/mfrc522_emu.py"] = str(SIM / "mfrc522_emu.py")
    files["/lib/machine.py"] = str(SIM / "fake_machine.py")
    return files


def run_micropython(
    code: str,
    files: dict[str, str] | None = None,
    texts: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> str:
    """Run code on MicroPython with the firmware installed in /lib."""
    node_bin = node()
    if node_bin is None:
        raise MicroPythonError("node is not installed")
    spec = {
        "files": firmware_files() if files is None else files,
        "texts": {
            "/lib/neopixel.py": "from machine import NeoPixel\n",
            "/lib/tablesense/__init__.py": "",
            "/lib/tablesense/sim/__init__.py": "",
            **(texts or {}),
        },
        "code": code,
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
        spec_path = f.name
    try:
        proc = subprocess.run(
            [node_bin, str(RUNNER), spec_path],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        Path(spec_path).unlink(missing_ok=True)
    if proc.returncode != 0:
        raise MicroPythonError(f"MicroPython failed (exit {proc.returncode}):\n{proc.stderr}{proc.stdout[-2000:]}")
    return proc.stdout
