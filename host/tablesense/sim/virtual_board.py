"""One virtual sensor board: the real firmware on a pseudo-terminal.

A :class:`VirtualBoard` runs the firmware's step core
(:class:`tablesense.firmware.board.Board`) with the firmware's own MFRC522
driver talking SPI to emulated chips (:mod:`tablesense.sim.mfrc522_emu`) and an
emulated WS2812 strip, and connects it to the host through a pseudo-terminal
(``os.openpty``, raw mode): the host opens the slave path with pyserial
exactly as it opens ``/dev/ttyACM0``.

- ``unplug()`` closes the pty: the path vanishes and the host's pyserial
  raises as on a real unplug; the board is unpowered.
- ``replug()`` opens a new pty (a new path, reported through ``on_path``),
  powers the board up again: a fresh firmware boot with the same identity.
- ``reboot()`` restarts the firmware on the same port (BOOT frame, cells
  unscanned until read again), as after a watchdog reset.
- Byte faults (:mod:`tablesense.sim.faults`) apply between the firmware and the pty.

The readers and tags belong to the world (they survive reboots); the board's
thread steps the firmware one cell every ``scan_interval`` seconds (a real
board spends a millisecond or two per empty cell) and at once when the host
sends something.

A quiet board steps slower: once its firmware has stepped ``QUIET_SWEEPS``
sweeps' worth of cells since the world last changed where it can read it
(a tag laid, lifted or stacked on one of its cells, or on a neighbour's cell
that one of its fields reaches) or since it booted, it steps every
``idle_scan_interval`` instead,
because every further step would read the same chips the same way. A change
of the world (:meth:`VirtualBoard.world_changed`, called by the virtual table)
wakes it at once and it steps fast again, so a placed tag is seen as soon as
before; the host's frames are answered at once either way, without a cell
read when no scan is due (the firmware's ``answer()``: a PING every 0.1 s
would otherwise read a cell each time). On a table where nothing moves this
is most of the sim's CPU (a 7-board table used 0.36-0.46 of a core stepping
every 4 ms).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import time
from collections.abc import Callable
from pathlib import Path

from tablesense.firmware import board as fw_board
from tablesense.firmware import leds as fw_leds
from tablesense.firmware import mfrc522 as fw_mfrc522
from tablesense.firmware import proto
from tablesense.sim.faults import FaultPlan
from tablesense.sim.mfrc522_emu import EmulatedMFRC522, EmulatedPin, EmulatedSPIBus
from tablesense.sim.pty_board import PtyBoard, _Pty  # noqa: F401 - _Pty: where it was found before
from tablesense.table.geometry import TableGeometry

FIRMWARE_DIR = Path(fw_board.__file__).resolve().parent

RGB = tuple[int, int, int]


class MonotonicClock:
    """The MicroPython ``time`` tick API over the host's monotonic clock."""

    def ticks_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def ticks_us(self) -> int:
        return time.monotonic_ns() // 1_000

    def ticks_diff(self, a: int, b: int) -> int:
        return a - b


def _firmware_clock() -> object:
    """The firmware's own CPython clock (MicroPython's 30-bit wrapping ticks)
    when it has one, so tick arithmetic is exercised as on the board."""
    host_clock = getattr(fw_board, "HostClock", None)
    return host_clock() if host_clock is not None else MonotonicClock()


class EmulatedNeoPixel:
    """The ``neopixel.NeoPixel`` API the firmware's Strip drives; records each write."""

    def __init__(self, n: int, on_write: Callable[[list[RGB]], None] | None = None) -> None:
        self.n = n
        self.pixels: list[RGB] = [(0, 0, 0)] * n
        self.shown: list[RGB] = [(0, 0, 0)] * n
        self.writes = 0
        self._on_write = on_write

    def __setitem__(self, i: int, color: RGB) -> None:
        self.pixels[i] = (int(color[0]), int(color[1]), int(color[2]))

    def __getitem__(self, i: int) -> RGB:
        return self.pixels[i]

    def write(self) -> None:
        self.shown = list(self.pixels)
        self.writes += 1
        if self._on_write is not None:
            self._on_write(self.shown)


class _Transport:
    """The firmware's transport: pty bytes through the fault filters."""

    def __init__(self, vb: VirtualBoard) -> None:
        self.vb = vb

    def read(self) -> bytes:
        vb = self.vb
        pty = vb._pty
        if pty is None:
            return b""
        data = pty.read()
        f = vb._to_board
        if f is not None:
            now = time.monotonic()
            data = (f.due(now) + f.push(data, now)) if data else f.due(now)
        vb.bytes_rx += len(data)
        return data

    def write(self, data: bytes) -> None:
        vb = self.vb
        if vb.on_frame_out is not None:
            vb.on_frame_out(bytes(data))
        pty = vb._pty
        if pty is None:
            return  # unpowered
        f = vb._to_host
        if f is not None:
            data = f.push(bytes(data), time.monotonic())
        if data:
            vb.bytes_tx += pty.write(data)


#: Sweeps' worth of steps after a change (or a boot) before a board counts as
#: quiet: an empty cell needs several agreeing reads before it is reported.
QUIET_SWEEPS = 4


class VirtualBoard(PtyBoard):
    """The real firmware Board for one board of a table, on its own pty
    (the cable's lifecycle: :class:`~tablesense.sim.pty_board.PtyBoard`)."""

    def __init__(
        self,
        geometry: TableGeometry,
        board_id: int,
        *,
        seed: int = 0,
        faults: FaultPlan | None = None,
        link_dir: Path | None = None,
        scan_interval: float = 0.004,
        idle_scan_interval: float = 0.2,
        on_path: Callable[[int, str], None] | None = None,
        config: dict | None = None,
        with_leds: bool = True,
        fw_version: str | None = None,
    ) -> None:
        super().__init__(board_id, faults=faults, link_dir=link_dir, on_path=on_path)
        self.geometry = geometry
        self.spec = geometry.board(board_id)
        self.seed = seed
        self.scan_interval = scan_interval
        self.idle_scan_interval = max(scan_interval, idle_scan_interval)
        self._steps_since_change = 0
        """Firmware steps since the world last changed or the board booted (the board's thread's own count)."""
        self._world_changed = False
        """Set by :meth:`world_changed` from another thread; the board's thread
        takes it before its next step (no shared counter written from two threads)."""
        self.config = config if config is not None else geometry.board_config(board_id)
        self.with_leds = with_leds and self.spec.leds > 0
        self.fw_version = fw_version or fw_board.FW_VERSION
        self.uid = hashlib.sha256(
            f"tablesense-sim:{geometry.name}:{board_id}:{seed}".encode()
        ).digest()[:8]
        self.chips: list[EmulatedMFRC522] = []
        self._buses: list[EmulatedSPIBus] = []
        self._selects: list[EmulatedPin] = []
        for ch in range(self.spec.channels):
            bus = EmulatedSPIBus(skip_waits=True)  # the driver's airtime polls cost no CPU
            pin, chip = bus.add_reader(pin_id=ch, seed=(seed * 1000 + board_id * 64 + ch) or 1)
            self._buses.append(bus)
            self._selects.append(pin)
            self.chips.append(chip)
        self.neopixel = EmulatedNeoPixel(self.spec.leds, self._led_written)
        self.on_frame_out: Callable[[bytes], None] | None = None
        self.on_leds: Callable[[list[RGB]], None] | None = None
        self.bytes_rx = 0
        self.bytes_tx = 0
        self.boots = 0
        self.firmware: fw_board.Board | None = None
        self._pending_reboot = False
        self._files = self._firmware_files()

    # --- public API (the cable's: PtyBoard) -------------------------------------------

    def reboot(self, cause: int = proto.BOOT_WATCHDOG) -> None:
        """Restart the firmware on the same port (BOOT frame, cells unscanned)."""
        with self._lock:
            if self._pty is not None:
                self._boot(cause)
        self._wake()

    def world_changed(self) -> None:
        """A tag on the table was laid, lifted or stacked: step fast again, now."""
        self._world_changed = True
        self._wake()

    @property
    def quiet(self) -> bool:
        """The firmware has read every cell several times since anything changed."""
        return not self._world_changed and self._steps_since_change >= QUIET_SWEEPS * max(1, self.spec.channels)

    def leds(self) -> list[RGB]:
        """What the strip shows now."""
        return list(self.neopixel.shown)

    # --- internals -----------------------------------------------------------------

    def _power_on(self) -> None:
        self._boot(proto.BOOT_POWER_ON)

    def _power_off(self) -> None:
        self.firmware = None

    def _thread_name(self) -> str:
        return f"virtual-board {self.board_id}"


    def _boot(self, cause: int) -> None:
        self.boots += 1
        self._steps_since_change = 0
        strip = fw_leds.Strip(self.neopixel, self.spec.leds) if self.with_leds else fw_leds.NoLeds()
        if self.with_leds:
            self.neopixel.pixels = [(0, 0, 0)] * self.spec.leds
            self.neopixel.write()  # the strip goes dark at power-up
        rfid = self.config.get("rfid", {}) if isinstance(self.config.get("rfid"), dict) else {}
        readers = [
            fw_mfrc522.MFRC522(
                self._buses[ch],
                self._selects[ch],
                timeout_us=int(rfid.get("timeout_us", 500)),
                rx_gain_db=int(rfid.get("rx_gain_db", fw_mfrc522.DEFAULT_RX_GAIN_DB)),
                full_read_every=int(rfid.get("full_read_every", 8)),
            )
            for ch in range(self.spec.channels)
        ]
        self.firmware = fw_board.Board(
            self.config,
            readers,
            strip,
            _Transport(self),
            _firmware_clock(),
            self.uid,
            files=self._files,
            reboot=self._request_reboot,
            bootloader=None,
            reset_cause=cause,
            fw_version=self.fw_version,
        )

    def _request_reboot(self) -> None:
        self._pending_reboot = True

    def _firmware_files(self) -> list[tuple[str, bytes]]:
        out = []
        for p in sorted(FIRMWARE_DIR.glob("*.py")):
            if p.name == "__init__.py":
                continue
            out.append((p.name, hashlib.sha256(p.read_bytes()).digest()))
        return out

    def _led_written(self, frame: list[RGB]) -> None:
        if self.on_leds is not None:
            self.on_leds(frame)

    def _run(self) -> None:
        next_scan = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            timeout = max(0.0, next_scan - now)
            with self._lock:
                pty = self._pty
                fds = [self._wake_r] + ([pty.master] if pty is not None else [])
                release = self._to_host.next_release if self._to_host is not None else None
                if release is not None:
                    timeout = min(timeout, max(0.0, release - now))
                if self._to_board is not None and self._to_board.next_release is not None:
                    timeout = min(timeout, max(0.0, self._to_board.next_release - now))
            if pty is None:
                timeout = 0.5
            try:
                ready, _, _ = select.select(fds, [], [], timeout)
            except (OSError, ValueError):
                ready = []  # the pty was closed under us (unplug): go round again
            if self._wake_r in ready:
                with contextlib.suppress(OSError):
                    os.read(self._wake_r, 64)
            with self._lock:
                fw = self.firmware
                if fw is None or self._pty is None:
                    continue
                scan = self._world_changed or time.monotonic() >= next_scan
                if self._world_changed:
                    self._world_changed = False
                    self._steps_since_change = 0
                try:
                    if scan:  # the scan is due: a whole step, a cell read
                        self._steps_since_change += 1
                        running = fw.step()
                    else:  # woken by the host's frame: answer it, read no cell
                        running = fw.answer()
                except Exception:  # noqa: BLE001 - the firmware's step never raises; a bug here must not kill the sim
                    running = True
                if self._to_host is not None and self._pty is not None:
                    held = self._to_host.due(time.monotonic())
                    if held:
                        self.bytes_tx += self._pty.write(held)
                if self._pending_reboot:
                    self._pending_reboot = False
                    self._boot(proto.BOOT_SOFT)
                elif not running:
                    # A maintenance break (mpremote's Ctrl-C) stops the step loop; a real
                    # board would sit in the REPL. The virtual one soft-resets instead.
                    self._boot(proto.BOOT_SOFT)
            now = time.monotonic()
            if now >= next_scan:
                next_scan = now + (self.idle_scan_interval if self.quiet else self.scan_interval)
            elif not self.quiet:
                next_scan = min(next_scan, now + self.scan_interval)  # woken by a change: fast again
