"""An emulated RP2040 sensor board: the real MicroPython UF2 in rp2040js.

:class:`Rp2040Board` starts ``board.mjs`` (Node.js, npm ``rp2040js`` pinned in
package.json) with the RP2040 boot ROM, the bundled MicroPython v1.27.0 UF2 and
a flash file of its own, and connects it to the host like a USB board:

- the board's USB CDC console is the master side of a pseudo-terminal the
  host opens as it opens ``/dev/ttyACM0`` (mpremote, ``tablesense flash``,
  ``diag``, ``play``);
- its SPI bus, chip-select lines (74HC138 decoders on GPIO, MCP23017
  expanders on I2C, or plain GPIO, as the board config says), reader reset
  line and MFRC522 readers are the objects of :mod:`tablesense.sim.mfrc522_emu`
  -- the same chip model and the same world (which tag lies on which cell)
  as the virtual boards of :mod:`tablesense.sim.virtual_board`. Node forwards
  every SPI byte with its emulated time and waits for the chip's answer (a
  synchronous pipe), chip-select levels and I2C bytes as they change;
- the WS2812 strip is decoded in Node from the data pin the firmware drives
  (MicroPython's ``neopixel``) and arrives here as LED colours.

The flash file keeps the filesystem and the board's unique id across restarts
(``machine.unique_id()`` reads the flash chip's unique id, which Node answers
from ``uid``; MicroPython's USB serial number is that id in hex). A board
whose flash file does not exist yet boots bare MicroPython from the UF2.

The board offers the interface of :class:`~tablesense.sim.virtual_board.VirtualBoard`
(``start``/``stop``/``unplug``/``replug``/``reboot``, ``chips``, ``lock``,
``leds()``, ``on_leds``), so :class:`~tablesense.sim.virtual_table.VirtualTable`
can build a table of them (``board_class=Rp2040Board``).

Time: the chips run on the emulator's clock (each SPI byte carries it), so the
readers' timeouts are emulated time; the emulator runs slower than real time
while the CPU is busy (about 0.4x on one core), which the host's time-outs allow for.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import shutil
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tablesense.firmware import config as fw_config
from tablesense.flash import images
from tablesense.sim.faults import FaultPlan
from tablesense.sim.mfrc522_emu import (
    EmulatedI2C,
    EmulatedMCP23017,
    EmulatedMFRC522,
    EmulatedPin,
    EmulatedSPIBus,
)
from tablesense.sim.pty_board import PtyBoard
from tablesense.sim.rp2040 import BOOTROM
from tablesense.sim.virtual_board import RGB

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "board.mjs"
REPO = HERE.parents[3]

#: Exit code of board.mjs when the firmware reset the chip (machine.reset()).
EXIT_RESET = 3

_MSG_SPI = 0x53
_MSG_SPI_PULLED_UP = 0x55  # an SPI read byte while the MISO pad is pulled up
_MSG_SPI_POSTED = 0x41
_MSG_PIN = 0x47
_MSG_I2C = 0x49
_MSG_LEDS = 0x4C
_MSG_EVENT = 0x45


class Rp2040Error(RuntimeError):
    """An emulated board cannot run here (no Node.js, no rp2040js); says what to install."""


def rp2040js_dir() -> Path | None:
    """Where ``npm install`` put rp2040js (TABLESENSE_RP2040JS overrides)."""
    env = os.environ.get("TABLESENSE_RP2040JS")
    candidates = [Path(env)] if env else []
    candidates += [REPO / "node_modules" / "rp2040js", Path.cwd() / "node_modules" / "rp2040js"]
    for c in candidates:
        if (c / "dist" / "esm" / "index.js").is_file():
            return c
    return None


def available() -> str | None:
    """None when emulated RP2040 boards can run here, else the reason."""
    if shutil.which("node") is None:
        return "Node.js (node) is not installed"
    if rp2040js_dir() is None:
        return "the npm package rp2040js is missing: run `npm ci` (or scripts/setup.sh) in the project folder"
    return None


def default_state_dir() -> Path:
    """Where boards keep their flash files between runs."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tablesense" / "rp2040"


def board_uid(name: str, board_id: int, seed: int) -> bytes:
    """The board's flash unique id (8 bytes): stable for a table, board and seed."""
    return hashlib.sha256(f"tablesense-rp2040:{name}:{board_id}:{seed}".encode()).digest()[:8]


class _Decoder:
    """One output of a 3-to-8 (or 2-to-4, 4-to-16) decoder: active while its
    enable is low and the address pins say n (74HC138 wiring of pinmap.toml)."""

    def __init__(self, address: list[EmulatedPin], enable: EmulatedPin, n: int) -> None:
        self.address = address
        self.enable = enable
        self.n = n

    def listen(self, callback: Callable[[], None]) -> None:
        for p in (*self.address, self.enable):
            p.listen(callback)

    @property
    def active(self) -> bool:
        if self.enable.value() != 0:
            return False
        a = 0
        for k, p in enumerate(self.address):
            a |= (p.value() or 0) << k
        return a == self.n


class _I2CBus:
    """The I2C side of the board: what Node's I2C peripheral clocks out,
    applied to EmulatedMCP23017 expanders (register pointer, then data)."""

    def __init__(self, i2c: EmulatedI2C) -> None:
        self.i2c = i2c
        self.device: EmulatedMCP23017 | None = None
        self.reg: int | None = None

    def op(self, code: int, value: int) -> int | None:
        if code == 0x73:  # start
            self.reg = None
            return None
        if code in (0x63, 0x43):  # connect (write / read)
            self.device = self.i2c.devices.get(value)
            if code == 0x63:
                self.reg = None
            return 1 if self.device is not None else 0
        dev = self.device
        if code == 0x77:  # write a byte
            if dev is None:
                return 0
            if self.reg is None:
                self.reg = value
            else:
                dev.write(self.reg, bytes((value,)))
                self.reg += 1
            return 1
        if code == 0x72:  # read a byte
            if dev is None:
                return 0xFF
            reg = self.reg or 0
            self.reg = reg + 1
            return dev.read(reg, 1)[0]
        return None  # stop


class Rp2040Board(PtyBoard):
    """One emulated RP2040 board; see the module docstring (the cable's
    lifecycle: :class:`~tablesense.sim.pty_board.PtyBoard`).

    ``config``: the board config the *hardware* is built from (cells, chip
    selects, LED pin); the firmware reads its own copy from /config.json once
    deployed. ``state_dir``: where the flash file lives (kept across restarts).
    """

    def __init__(
        self,
        geometry=None,  # TableGeometry | None
        board_id: int = 1,
        *,
        seed: int = 0,
        faults: FaultPlan | None = None,
        link_dir: Path | None = None,
        scan_interval: float = 0.0,  # the firmware paces itself (VirtualBoard compatibility)
        on_path: Callable[[int, str], None] | None = None,
        config: dict | None = None,
        state_dir: Path | None = None,
        name: str | None = None,
        uf2: Path | None = None,
        fresh: bool = False,
    ) -> None:
        from tablesense.flash.deploy import bench_config

        super().__init__(board_id, faults=faults, link_dir=link_dir, on_path=on_path)
        self.geometry = geometry
        self.seed = seed
        if config is None:
            config = geometry.board_config(board_id) if geometry is not None else bench_config(board_id)
        self.config = fw_config.parse(dict(config))
        self.name = name or (geometry.name if geometry is not None else "bench")
        self.uid = board_uid(self.name, board_id, seed)
        self.serial = self.uid.hex().upper()
        self.state_dir = Path(state_dir) if state_dir is not None else default_state_dir()
        self.flash_path = self.state_dir / f"{self.name}-board{board_id}-seed{seed}.flash"
        self.uf2 = Path(uf2) if uf2 is not None else images.MICROPYTHON_UF2
        if fresh:
            with contextlib.suppress(FileNotFoundError):
                self.flash_path.unlink()
        self.on_leds: Callable[[list[RGB]], None] | None = None
        self.on_frame_out: Callable[[bytes], None] | None = None
        self.boots = 0
        self.resets = 0
        self.led_frames = 0
        self.spi_bytes = 0
        self.usb_connected = threading.Event()
        self._leds: list[RGB] = [(0, 0, 0)] * int(self.config["leds"])
        self._build_hardware()
        self._proc: subprocess.Popen[bytes] | None = None
        self._dev_r = self._ans_w = -1
        self.log_lines: list[str] = []

    # --- the hardware around the chip --------------------------------------------

    def _build_hardware(self) -> None:
        cfg = self.config
        self.bus = EmulatedSPIBus(baudrate=cfg["spi"]["baudrate"], overhead_us=0.0)
        self.pins: dict[int, EmulatedPin] = {}
        self.i2c: EmulatedI2C | None = None

        def pin(n: int) -> EmulatedPin:
            if n not in self.pins:
                self.pins[n] = EmulatedPin(n, EmulatedPin.OUT, value=1)
            return self.pins[n]

        cs = cfg["cs"]
        n = cfg["cells"]
        lines: list[object] = []
        if cs["kind"] == "gpio":
            lines = [pin(p) for p in cs["pins"]]
        elif cs["kind"] == "decoder":
            address = [pin(p) for p in cs["address"]]
            enables = [pin(p) for p in cs["enables"]]
            per = 1 << len(address)
            lines = [_Decoder(address, enables[ch // per], ch % per) for ch in range(n)]
        else:
            self.i2c = EmulatedI2C()
            expanders = []
            for a in cs["addresses"]:
                e = EmulatedMCP23017()
                self.i2c.attach(a, e)
                expanders.append(e)
            lines = [expanders[ch // 16].output(ch % 16) for ch in range(n)]
        self._i2c_bus = _I2CBus(self.i2c) if self.i2c is not None else None
        self.chips: list[EmulatedMFRC522] = []
        for ch in range(n):
            chip = EmulatedMFRC522(seed=(self.seed * 1000 + self.board_id * 64 + ch) or 1)
            self.bus.attach(lines[ch], chip)  # type: ignore[arg-type]
            self.chips.append(chip)
        reset = cfg["rfid"]["reset_pin"]
        self._reset_pin = reset
        if reset is not None:
            pin(reset)

    # --- public API (VirtualBoard's; the cable's: PtyBoard) ---------------------------

    join_timeout = 5.0  # the emulator's process is killed on the way

    def start(self) -> str:
        """Plug the board in (its emulator starts, booting from its flash); returns the path."""
        reason = available()
        if reason is not None:
            raise Rp2040Error(f"cannot start an emulated RP2040 board: {reason}")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        return super().start()

    def reboot(self, cause: int = 1) -> None:
        """Reset the chip on the same port (the emulator restarts from its flash)."""
        with self._lock:
            if self._pty is not None:
                self._kill()
                self._spawn()
        self._wake()

    def set_faults(self, plan: FaultPlan) -> None:
        """Apply link faults from now on (e.g. once the firmware is deployed)."""
        with self._lock:
            self.plan = plan
            self._to_host = plan.byte_faults(self.board_id, "to_host", self._generation)
            self._to_board = plan.byte_faults(self.board_id, "to_board", self._generation)

    def leds(self) -> list[RGB]:
        """What the strip shows now (decoded from the data line)."""
        return list(self._leds)

    @property
    def running(self) -> bool:
        p = self._proc
        return p is not None and p.poll() is None

    # --- processes ---------------------------------------------------------------------

    def _power_on(self) -> None:
        self._spawn()

    def _power_off(self) -> None:
        self._kill()

    def _thread_name(self) -> str:
        return f"rp2040 board {self.board_id}"

    def _spawn(self) -> None:
        js = rp2040js_dir()
        assert js is not None
        dev_r, dev_w = os.pipe()  # node -> us
        ans_r, ans_w = os.pipe()  # us -> node
        cfg = self.config
        watch = sorted(self.pins)
        cmd = [
            "node", str(SCRIPT),
            "--rom", str(BOOTROM), "--uf2", str(self.uf2), "--flash", str(self.flash_path),
            "--uid", self.uid.hex(), "--spi-id", str(cfg["spi"]["id"]), "--miso", str(cfg["spi"]["miso"]),
            "--watch", ",".join(str(p) for p in watch),
            f"--led-pin={cfg['led_pin'] if cfg['leds'] else -1}",  # "=": -1 must not read as an option
            "--out-fd", str(dev_w), "--in-fd", str(ans_r), "--rp2040js", str(js),
        ]
        if cfg["cs"]["kind"] == "mcp23017":
            cmd += ["--i2c-id", str(cfg["cs"]["i2c"]["id"])]
        self._reset_hardware()
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            pass_fds=(dev_w, ans_r), bufsize=0, start_new_session=True,
        )
        os.close(dev_w)
        os.close(ans_r)
        self._dev_r, self._ans_w = dev_r, ans_w
        assert self._proc.stdout is not None and self._proc.stderr is not None
        os.set_blocking(self._proc.stdout.fileno(), False)
        os.set_blocking(self._proc.stderr.fileno(), False)
        self.usb_connected.clear()
        self.boots += 1
        t = threading.Thread(target=self._serve_device, args=(dev_r, ans_w), daemon=True,
                             name=f"rp2040 board {self.board_id} devices")
        t.start()

    def _reset_hardware(self) -> None:
        """Power-on state of what surrounds the chip: lines high, readers reset,
        and the chips' clock back to 0 with the new emulator's clock."""
        self.bus.now_us = 0.0
        for p in self.pins.values():
            p.value(1)
        for chip in self.chips:
            chip._reset_registers()
            chip.select(False)

    def _kill(self) -> None:
        p, self._proc = self._proc, None
        if p is not None and p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(5)
        if p is not None:
            for f in (p.stdin, p.stdout, p.stderr):
                with contextlib.suppress(OSError):
                    if f is not None:
                        f.close()
        self._dev_r = self._ans_w = -1  # the device thread closes them when Node is gone

    # --- the I/O loop ---------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                proc, pty = self._proc, self._pty
                fds = [self._wake_r]
                if proc is not None and proc.stdout is not None and proc.stderr is not None:
                    fds += [proc.stdout.fileno(), proc.stderr.fileno()]
                if pty is not None and proc is not None:
                    fds.append(pty.master)
            timeout = 0.5
            now = time.monotonic()
            for f in (self._to_host, self._to_board):
                if f is not None and f.next_release is not None:
                    timeout = min(timeout, max(0.0, f.next_release - now))
            try:
                ready, _, _ = select.select(fds, [], [], timeout)
            except (OSError, ValueError):
                continue
            with self._lock:
                if self._wake_r in ready:
                    with contextlib.suppress(OSError):
                        os.read(self._wake_r, 256)
                if proc is not self._proc or proc is None:
                    continue
                try:
                    if proc.stdout is not None and proc.stdout.fileno() in ready:
                        self._from_board(proc)
                    if proc.stderr is not None and proc.stderr.fileno() in ready:
                        with contextlib.suppress(OSError):
                            text = os.read(proc.stderr.fileno(), 65536).decode(errors="replace")
                            self.log_lines.extend(text.splitlines())
                            del self.log_lines[:-200]
                    if self._pty is not None and self._pty.master in ready:
                        self._to_board_bytes(self._pty.read())
                    self._release_held()
                except OSError:
                    pass
                if proc.poll() is not None:
                    self._exited(proc)

    def _from_board(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        try:
            data = os.read(proc.stdout.fileno(), 65536)
        except BlockingIOError:
            return
        if not data:
            return
        if self.on_frame_out is not None:
            self.on_frame_out(data)
        f = self._to_host
        if f is not None:
            data = f.push(data, time.monotonic())
        if data and self._pty is not None:
            self._pty.write(data)

    def _to_board_bytes(self, data: bytes) -> None:
        f = self._to_board
        if f is not None:
            now = time.monotonic()
            data = (f.due(now) + f.push(data, now)) if data else f.due(now)
        proc = self._proc
        if data and proc is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, OSError):
                proc.stdin.write(data)

    def _release_held(self) -> None:
        now = time.monotonic()
        if self._to_host is not None and self._pty is not None:
            held = self._to_host.due(now)
            if held:
                self._pty.write(held)
        if self._to_board is not None:
            held = self._to_board.due(now)
            if held:
                self._to_board_bytes_raw(held)

    def _to_board_bytes_raw(self, data: bytes) -> None:
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, OSError):
                proc.stdin.write(data)

    def _exited(self, proc: subprocess.Popen[bytes]) -> None:
        """The emulator ended: a firmware reset restarts it (same flash, same port)."""
        # drain what it said last
        with contextlib.suppress(OSError):
            if proc.stdout is not None:
                self._from_board(proc)
        code = proc.returncode
        self._kill()
        if code == EXIT_RESET and self._pty is not None and not self._stop.is_set():
            self.resets += 1
            self._spawn()
        elif self._pty is not None and not self._stop.is_set():
            self.log_lines.append(f"[board] emulator exited with status {code}")

    def _serve_device(self, dev_r: int, ans_w: int) -> None:
        """One thread per emulator run: block on Node's device messages and
        answer at once (Node's CPU waits for each SPI byte's answer)."""
        buf = bytearray()
        try:
            while True:
                try:
                    chunk = os.read(dev_r, 65536)
                except OSError:
                    return
                if not chunk:
                    return  # Node exited
                buf += chunk
                with self._lock:
                    self._device(buf, ans_w)
        finally:
            for fd in (dev_r, ans_w):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _device(self, buf: bytearray, ans_w: int) -> None:
        """Answer what Node sent: SPI bytes (synchronously), pin levels, I2C, LED frames."""
        i = 0
        n = len(buf)
        write = os.write
        while i < n:
            kind = buf[i]
            if kind in (_MSG_SPI, _MSG_SPI_PULLED_UP):
                if n - i < 10:
                    break
                (t_us,) = struct.unpack_from("<d", buf, i + 2)
                self.spi_bytes += 1
                # what a chip that does not drive MISO reads: the pad's pull
                # (RP2040 pads reset pulled down; the firmware pulls MISO up)
                self.bus.absent_miso = 0xFF if kind == _MSG_SPI_PULLED_UP else 0x00
                with contextlib.suppress(OSError):  # Node went away (unplug)
                    write(ans_w, bytes((self.bus.transfer_byte(buf[i + 1], t_us),)))
                i += 10
            elif kind == _MSG_SPI_POSTED:
                if n - i < 10:
                    break
                (t_us,) = struct.unpack_from("<d", buf, i + 2)
                self.spi_bytes += 1
                self.bus.transfer_byte(buf[i + 1], t_us)
                i += 10
            elif kind == _MSG_PIN:
                if n - i < 3:
                    break
                self._pin(buf[i + 1], buf[i + 2])
                i += 3
            elif kind == _MSG_I2C:
                if n - i < 3:
                    break
                op = buf[i + 1]
                ans = self._i2c_bus.op(op, buf[i + 2]) if self._i2c_bus is not None else None
                if op in (0x63, 0x43, 0x77, 0x72):
                    with contextlib.suppress(OSError):
                        write(ans_w, bytes(((ans if ans is not None else 0) & 0xFF,)))
                i += 3
            elif kind == _MSG_LEDS:
                if n - i < 3:
                    break
                count = buf[i + 1] | (buf[i + 2] << 8)
                if n - i < 3 + 3 * count:
                    break
                raw = bytes(buf[i + 3 : i + 3 + 3 * count])
                self._led_frame([(raw[3 * k], raw[3 * k + 1], raw[3 * k + 2]) for k in range(count)])
                i += 3 + 3 * count
            elif kind == _MSG_EVENT:
                if n - i < 2:
                    break
                if buf[i + 1] == 1:
                    self.usb_connected.set()
                i += 2
            else:  # out of step (never happens with one writer): drop it
                i = n
        del buf[:i]

    def _pin(self, pin: int, level: int) -> None:
        p = self.pins.get(pin)
        if p is None:
            return
        was = p.value()
        p.value(level)
        if pin == self._reset_pin and was == 1 and level == 0:
            for chip in self.chips:  # NRSTPD low: every reader of the board resets
                chip._reset_registers()

    def _led_frame(self, colors: list[RGB]) -> None:
        n = len(self._leds)
        frame = (colors + [(0, 0, 0)] * n)[:n] if n else colors
        self._leds = frame
        self.led_frames += 1
        if self.on_leds is not None:
            self.on_leds(list(frame))


def wait_for_prompt(path: str, timeout: float = 20.0) -> bool:
    """Open ``path`` and wait until MicroPython's REPL answers (a bare board's
    ``>>>``): True when it did. The boot takes ~15 ms emulated, well under 2 s wall."""
    import serial

    deadline = time.monotonic() + timeout
    with serial.Serial(path, 115200, timeout=0.1) as s:
        seen = b""
        while time.monotonic() < deadline:
            s.write(b"\r\n")
            t_end = time.monotonic() + 0.3
            while time.monotonic() < t_end:
                seen += s.read(256)
                if b">>> " in seen:
                    return True
    return False

