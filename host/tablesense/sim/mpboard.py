"""A virtual MicroPython board on a pseudo-terminal, backed by real MicroPython.

:class:`MicroPythonBoard` runs the MicroPython WebAssembly port under Node.js
(``mpboard.mjs`` next to this file) with its REPL and ``sys.stdin``/``stdout``
bridged to the master side of a pty. The host opens the slave path
(``/dev/pts/N``) as it opens ``/dev/ttyACM0``: mpremote, ``tablesense flash``
and ``tablesense diag`` cannot tell the difference, and firmware deployed to
it (``boot.py``/``main.py`` and their modules) really runs, on MicroPython.

The board keeps its files in memory (across soft and hard resets, not across
:meth:`MicroPythonBoard.stop`). Its ``/rom`` holds what a real board has in
ROM and the host never deploys: ``machine`` (pins, an SPI bus wired with one
emulated MFRC522 per configured cell, the LED strip) and ``neopixel``.

Differences from a real board that the host must cope with (and does):
raw-paste mode is answered "not supported" (the WebAssembly port blocks on
it), and with ``soft_reset=False`` the board also lacks soft reset, like some
real ports. ``machine.bootloader()`` restarts the board (no boot ROM here).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import tty
from pathlib import Path
from types import TracebackType

from tablesense.table.words import message_of, say

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "mpboard.mjs"
ROM_DIR = HERE / "mpboard_rom"
REPO = HERE.parents[2]


class MicroPythonBoardError(RuntimeError):
    """The virtual board could not start (no Node.js, no MicroPython port)."""


def micropython_mjs() -> Path:
    """Where ``npm install`` put the MicroPython WebAssembly port."""
    env = os.environ.get("TABLESENSE_MICROPYTHON_WASM")
    base = Path(env) if env else REPO / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"
    return base / "micropython.mjs"


def available() -> str | None:
    """None when virtual MicroPython boards can run here, else the reason."""
    if shutil.which("node") is None:
        return "Node.js (node) is not installed"
    if not micropython_mjs().is_file():
        return f"the MicroPython WebAssembly port is missing ({micropython_mjs()}): run npm install"
    return None


def _rom_files() -> dict[str, str]:
    """Board path -> host source of every ROM module."""
    rom = {
        "/rom/machine.py": ROM_DIR / "machine.py",
        "/rom/neopixel.py": ROM_DIR / "neopixel.py",
        "/rom/tablesense/sim/fake_machine.py": HERE / "fake_machine.py",
        "/rom/tablesense/sim/mfrc522_emu.py": HERE / "mfrc522_emu.py",
    }
    return {dest: str(src) for dest, src in rom.items()}


class MicroPythonBoard:
    """One virtual MicroPython board; ``start()`` returns its device path.

    ``uid`` is what ``machine.unique_id()`` returns (8 bytes on an RP2040).
    Use as a context manager, or call :meth:`stop` (idempotent).
    """

    def __init__(
        self,
        uid: bytes = b"\xe6\x61\x41\x04\x03\x00\x00\x01",
        *,
        soft_reset: bool = True,
        heapsize: int = 8 * 1024 * 1024,
        log_path: Path | None = None,
    ) -> None:
        self.uid = bytes(uid)
        self.soft_reset = soft_reset
        self.heapsize = heapsize
        self.log_path = log_path
        self._proc: subprocess.Popen[bytes] | None = None
        self._master: int | None = None
        self._slave: int | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._lock = threading.Lock()
        self.path: str | None = None

    def start(self) -> str:
        """Start Node.js + MicroPython; return the slave path once the board has booted."""
        reason = available()
        if reason is not None:
            raise MicroPythonBoardError(reason)
        with self._lock:
            if self._proc is not None:
                assert self.path is not None
                return self.path
            master, slave = os.openpty()
            tty.setraw(slave)  # binary-clean: no echo, no CR/LF translation
            os.set_blocking(master, False)
            self._master, self._slave = master, slave
            self.path = os.ttyname(slave)
            self._tmp = tempfile.TemporaryDirectory(prefix="mpboard-")
            spec = {
                "fd": master,
                "micropython": str(micropython_mjs()),
                "uid": self.uid.hex(),
                "heapsize": self.heapsize,
                "rom": _rom_files(),
                "soft_reset": self.soft_reset,
            }
            spec_path = Path(self._tmp.name) / "spec.json"
            spec_path.write_text(json.dumps(spec))
            log = self.log_path or Path(self._tmp.name) / "node.log"
            with open(log, "ab") as log_file:
                # The child inherits the pty master under the same number.
                self._proc = subprocess.Popen(
                    ["node", str(SCRIPT), str(spec_path)],
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=log_file,
                    pass_fds=(master,),
                )
            return self.path

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_text(self) -> str:
        """What Node.js printed (bridge messages, crashes): for error reports."""
        if self.log_path is not None:
            path = self.log_path
        elif self._tmp is not None:
            path = Path(self._tmp.name) / "node.log"
        else:
            return ""
        try:
            return path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """Power the board off (its files are lost). Idempotent."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
            for fd in (self._master, self._slave):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._master = self._slave = None
            if self._tmp is not None:
                self._tmp.cleanup()
                self._tmp = None

    def __enter__(self) -> MicroPythonBoard:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def board_uid(index: int, seed: int = 0) -> bytes:
    """A stable made-up RP2040 unique id for virtual board ``index``."""
    return bytes([0xE6, 0x61, 0x41, 0x04, (seed >> 8) & 0xFF, seed & 0xFF, (index >> 8) & 0xFF, index & 0xFF])


class MicroPythonBoards:
    """N virtual MicroPython boards (what ``tablesense sim boards --micropython`` serves)."""

    def __init__(self, count: int, *, seed: int = 0, soft_reset: bool = True) -> None:
        if count < 1:
            raise ValueError(say("--count must be at least 1"))
        self.boards = [MicroPythonBoard(board_uid(i + 1, seed), soft_reset=soft_reset) for i in range(count)]

    def start(self) -> dict[int, str]:
        paths: dict[int, str] = {}
        try:
            for i, b in enumerate(self.boards, start=1):
                paths[i] = b.start()
        except BaseException:
            self.stop()
            raise
        return paths

    def stop(self) -> None:
        for b in self.boards:
            b.stop()


def boards_command(count: int, micropython: bool) -> int:
    """Body of ``tablesense sim boards --micropython --count N``: print each
    device path on its own line (stdout), run until SIGINT/SIGTERM."""
    import signal
    import sys

    from rich.console import Console

    from tablesense.i18n.cli import _  # the language of `sim boards --lang`

    err = Console(stderr=True, highlight=False)
    if not micropython:
        err.print("[red]" + _("give --table FILE (virtual sensor boards) or --micropython --count N") + "[/]")
        return 2
    reason = available()
    if reason is not None:
        err.print("[red]" + _("cannot start virtual MicroPython boards: {reason}", reason=reason) + "[/]")
        return 1
    try:
        served = MicroPythonBoards(count)
    except ValueError as exc:
        err.print("[red]" + _(message_of(exc)) + "[/]")
        return 2
    stop = threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            paths = served.start()
        except (OSError, MicroPythonBoardError) as exc:
            err.print("[red]" + _("cannot start the virtual boards: {error}", error=exc) + "[/]")
            return 1
        for i in sorted(paths):
            sys.stdout.write(paths[i] + "\n")
            sys.stdout.flush()
            err.print(_("MicroPython board {board} (unique id {uid}): {path}", board=i,
                        uid=served.boards[i - 1].uid.hex(), path=paths[i]))
        err.print(_("{running}; deploy with `tablesense flash --port PATH`; Ctrl-C to stop",
                    running="[green]" + _("virtual MicroPython boards running") + "[/]"))
        while not stop.wait(0.5):
            for b in served.boards:
                if not b.running:
                    err.print("[red]" + _("a virtual board stopped unexpectedly:") + f"[/]\n{b.log_text()[-2000:]}")
                    return 1
        return 0
    finally:
        served.stop()
        for s, h in old.items():
            signal.signal(s, h)
        err.print(_("virtual boards stopped"))
