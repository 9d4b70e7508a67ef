"""Firmware figures: per-cell scan cost, full-sweep time, bytes per event.

    .venv/bin/python benchmarks/firmware.py

1. Reader time per cell on an RP2040, from our real driver running against the
   register-level MFRC522 emulator, whose virtual clock charges every SPI call
   its transfer time at the configured SPI clock plus a fixed per-call cost
   (the MicroPython call overhead) and every RF exchange its ISO 14443 A
   duration at 106 kbit/s. Peer: the poll loop of the widely copied
   MicroPython driver (exit on RxIRq/IdleIRq or after 2000 polls, TimerIRq
   ignored), on the same emulated chip.
2. Python cost of the board's own step (scan bookkeeping, debounce, framing)
   measured by wall clock on MicroPython (WebAssembly port, Node.js) and on
   CPython, with a reader that answers instantly.
3. Bytes on the wire per cell change, against the DGT protocol's 5-byte field
   update and Certabo's full text frame of 320 numbers sent on every scan.
4. The real thing, emulated: an RP2040 running the bundled MicroPython v1.27.0
   in rp2040js (tablesense.sim.rp2040) with the firmware deployed; the board
   times full sweeps of 8/16/32 cells on its own clock (time.ticks_us) and
   reports gc.mem_free() after boot and while sweeping. These are rp2040js
   figures: its cycle accounting is not a real Pico's (XIP cache and flash
   timing are not modelled); the peer is section 1's model, same run. Then
   the 16-cell firmware is booted as on a table and its own STATS give the
   sweep it really runs (``sweep16_empty_emulated_ms``, ``sweep16_emulated_ms``
   with an NTAG on every other cell, ``sweep16_dead_reader_ms`` with one
   reader dead; the REPL-stepped empty figure stands beside them as
   ``sweep16_empty_stepped_ms``), and
   tags laid one at a time on the running 16-cell firmware give the time
   from the tag's arrival to the host's CELL event, in the board's own time
   (``place_to_report_ms``, p95).
5. The floor: the same sweeps computed from ISO 14443-3 airtime alone (a
   reader that costs nothing but the air and its 300 us timer), so each
   emulated figure stands next to what the radio allows.

The last line sums it up as key=value pairs.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from timeit import default_timer  # time.perf_counter
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "host"))

from tablesense.firmware import config as fw_config  # noqa: E402
from tablesense.firmware import mfrc522 as drv  # noqa: E402
from tablesense.firmware import proto  # noqa: E402
from tablesense.firmware.board import Board  # noqa: E402
from tablesense.sim.mfrc522_emu import EmulatedCard, EmulatedSPIBus  # noqa: E402

SPI_HZ = 4_000_000
CALL_US = 12.0  # modelled cost of one MicroPython SPI call with its CS toggles
UID4 = bytes.fromhex("11223344")
UID7 = bytes.fromhex("04a1b2c3d4e5f6")


# --- 5. the radio's floor (ISO/IEC 14443-2/-3, 106 kbit/s) --------------------------

BIT_US = 128 / 13.56  # one bit: 9.44 us
ANSWER_DELAY_US = 1236 / 13.56  # the tag's frame delay time after our frame (~91 us)
GUARD_US = 1172 / 13.56  # from the end of a tag's answer to our next frame (~86 us)
# The floor's receive timer: issue 26 states the floor with 300 us, the
# firmware's default then; the default is 200 us now (docs/firmware.md, "The
# receive timeout"), and the empty floor with it is printed beside.
TIMER_US = 300


def frame_us(nbytes: int, short: bool = False) -> float:
    """A frame's airtime: 9 bits a byte (8 + parity), a short frame 7 bits,
    plus its start and end bits."""
    return ((7 if short else nbytes * 9) + 2) * BIT_US


def exchange_us(tx: int, rx: int, short: bool = False) -> float:
    return frame_us(tx, short) + ANSWER_DELAY_US + frame_us(rx) + GUARD_US


def floor_cell_us(timer_us: float = TIMER_US) -> dict[str, float]:
    """Airtime of one cell's read, nothing else: an empty cell is a WUPA and
    the timer; an NTAG (7-byte UID) read in full is WUPA/ATQA, anticollision
    and SELECT on cascade levels 1 and 2, and HLTA (no answer, and the next
    frame goes to another reader: no guard time); the known-tag read skips
    the two anticollisions."""
    wupa = exchange_us(1, 2, short=True)
    hlta = frame_us(4)
    return {
        "empty": frame_us(1, short=True) + timer_us,
        "ntag": wupa + 2 * (exchange_us(2, 5) + exchange_us(9, 3)) + hlta,
        "ntag_known": wupa + 2 * exchange_us(9, 3) + hlta,
    }


# --- 1. emulated reader time --------------------------------------------------------


def reader(timeout_us: int, call_us: float = CALL_US) -> tuple[EmulatedSPIBus, Any, drv.MFRC522]:
    bus = EmulatedSPIBus(baudrate=SPI_HZ, overhead_us=call_us)
    pin, chip = bus.add_reader(1)
    r = drv.MFRC522(bus, pin, timeout_us=timeout_us)
    r.init()
    return bus, chip, r


def cell_us(
    uid: bytes | None, timeout_us: int = 300, dead: bool = False, call_us: float = CALL_US
) -> tuple[float, int]:
    """Emulated microseconds and SPI calls for one read of one cell."""
    bus, chip, r = reader(timeout_us, call_us)
    if uid is not None:
        chip.place(EmulatedCard(uid))
    chip.dead = dead
    r.read_uid()  # warm: the first read after placement equals the others
    t0, n0 = bus.now_us, bus.transfers
    got = r.read_uid()
    if uid is not None:
        assert got == uid, got
    return bus.now_us - t0, bus.transfers - n0


def naive_empty_us(timeout_us: int = 300) -> float:
    """The common driver's wait on an empty cell: it programs a timer but
    polls until RxIRq/IdleIRq or 2000 reads, so the timer does not end it."""
    bus, _chip, r = reader(timeout_us)
    t0 = bus.now_us
    r.write_reg(drv.CommandReg, drv.CMD_IDLE)
    r.write_reg(drv.ComIrqReg, 0x7F)
    r.write_reg(drv.FIFOLevelReg, 0x80)
    r.write_fifo(b"\x26")
    r.write_reg(drv.BitFramingReg, 7)
    r.write_reg(drv.CommandReg, drv.CMD_TRANSCEIVE)
    r.write_reg(drv.BitFramingReg, 0x87)
    for _ in range(2000):
        if r.read_reg(drv.ComIrqReg) & 0x30:
            break
    r.write_reg(drv.BitFramingReg, 0)
    r.read_reg(drv.ErrorReg)
    return bus.now_us - t0


# --- 2. board step cost -----------------------------------------------------------------

MPY_STEP_BENCH = r"""
import time, board, proto
class R:
    def __init__(self, v):
        self.v = v
    def init(self):
        return True
    def read_uid(self):
        return self.v
    def self_test(self):
        return (0x92, True, True)
class T:
    def read(self):
        return b""
    def write(self, d):
        pass
class C:
    def ticks_ms(self):
        return time.ticks_ms()
    def ticks_us(self):
        return time.ticks_us()
    def ticks_diff(self, a, b):
        return time.ticks_diff(a, b)
U = b"\x04\xa1\xb2\xc3\xd4\xe5\xf6"
cfg = {"board": 1, "cells": 32}
readers = [R(U if i % 2 else None) for i in range(32)]
b = board.Board(cfg, readers, None, T(), C(), b"\x01" * 8)
for _ in range(320):
    b.step()
N = 32000
t0 = time.ticks_ms()
for _ in range(N):
    b.step()
dt = time.ticks_diff(time.ticks_ms(), t0)
print("STEP_US", dt * 1000 / N)
# codec: encode + decode one CELL event
t0 = time.ticks_ms()
d = proto.FrameDecoder()
for i in range(3000):
    d.feed(proto.encode_frame(proto.CELL, 1, i & 255, proto.encode_cell_event(3, U)))
dt = time.ticks_diff(time.ticks_ms(), t0)
print("CODEC_US", dt * 1000 / 3000)
# the driver's own Python cost per SPI call: an SPI bus that answers at once
# (every register reads 0x01 = TimerIRq: an empty cell after one poll)
import mfrc522
class FastSPI:
    def write(self, buf):
        pass
    def write_readinto(self, w, r):
        for i in range(len(r)):
            r[i] = 1
class CS:
    def value(self, v=None):
        pass
spi = FastSPI()
rd = mfrc522.MFRC522(spi, CS())
calls = [0]
orig_write, orig_wri = spi.write, spi.write_readinto
def count_write(buf):
    calls[0] += 1
def count_wri(w, r):
    calls[0] += 1
    orig_wri(w, r)
spi.write = count_write
spi.write_readinto = count_wri
rd.read_uid()
per_read = calls[0]
spi.write, spi.write_readinto = orig_write, orig_wri
t0 = time.ticks_ms()
for _ in range(3000):
    rd.read_uid()
dt = time.ticks_diff(time.ticks_ms(), t0)
print("SPICALL_US", dt * 1000 / 3000 / per_read)
"""


class _NullTransport:
    def read(self) -> bytes:
        return b""

    def write(self, data: bytes) -> None:
        pass


class _InstantReader:
    def __init__(self, value: Any) -> None:
        self.value = value

    def init(self) -> bool:
        return True

    def read_uid(self) -> Any:
        return self.value

    def self_test(self) -> tuple[int, bool, bool]:
        return (0x92, True, True)


def cpython_step_us() -> tuple[float, float]:
    from tablesense.firmware.board import HostClock

    cfg = {"board": 1, "cells": 32}
    readers = [_InstantReader(UID7 if i % 2 else None) for i in range(32)]
    b = Board(cfg, readers, None, _NullTransport(), HostClock(), b"\x01" * 8)
    for _ in range(320):
        b.step()
    n = 64000
    t0 = default_timer()
    for _ in range(n):
        b.step()
    step = (default_timer() - t0) * 1e6 / n
    d = proto.FrameDecoder()
    t0 = default_timer()
    for i in range(3000):
        d.feed(proto.encode_frame(proto.CELL, 1, i & 255, proto.encode_cell_event(3, UID7)))
    codec = (default_timer() - t0) * 1e6 / 3000
    return step, codec


def micropython_step_us() -> tuple[float, float, float] | None:
    node = shutil.which("node")
    runner = REPO / "tests" / "firmware" / "mpy_runner.mjs"
    if node is None or not (REPO / "node_modules" / "@micropython").is_dir():
        return None
    files = {f"/lib/{n}": str(REPO / "firmware" / n) for n in ("proto.py", "board.py", "config.py", "mfrc522.py")}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"files": files, "code": MPY_STEP_BENCH}, f)
        spec = f.name
    try:
        out = subprocess.run([node, str(runner), spec], capture_output=True, text=True, timeout=300)
    finally:
        Path(spec).unlink(missing_ok=True)
    if out.returncode != 0:
        print(out.stderr, file=sys.stderr)
        return None
    vals = dict(line.split() for line in out.stdout.splitlines() if line[:4] in ("STEP", "CODE", "SPIC"))
    return float(vals["STEP_US"]), float(vals["CODEC_US"]), float(vals["SPICALL_US"])


# --- 3. bytes per event -----------------------------------------------------------------


def certabo_scan_bytes(pieces: int = 32, seed: int = 1) -> int:
    """One Certabo board report: 64 squares x 5 tag bytes as decimal text,
    space separated, CR LF; empty squares are 0 0 0 0 0. Sent every scan."""
    numbers: list[int] = []
    for sq in range(64):
        if sq < pieces // 2 or sq >= 64 - pieces // 2:
            numbers.extend(hashlib.sha256(b"%d:%d" % (seed, sq)).digest()[:5])  # a made-up tag id
        else:
            numbers.extend([0] * 5)
    assert len(numbers) == 320
    return len(" ".join(str(n) for n in numbers).encode()) + 2


def ours_event_bytes() -> dict[str, int]:
    return {
        "tag7": len(proto.encode_frame(proto.CELL, 1, 0, proto.encode_cell_event(5, UID7))),
        "tag4": len(proto.encode_frame(proto.CELL, 1, 0, proto.encode_cell_event(5, UID4))),
        "empty": len(proto.encode_frame(proto.CELL, 1, 0, proto.encode_cell_event(5, None))),
        "error": len(proto.encode_frame(proto.CELL, 1, 0, proto.encode_cell_event(5, proto.ERR_CRC))),
    }


def place_to_report_ms(board: Any, path: str, cells: int, placements: int, seed: int = 26) -> list[float]:
    """Lay a tag on a random cell of the running firmware at a random moment,
    wait for its CELL event, lift it, wait for the empty event: the times from
    laying to the event, in the board's own (emulated) time -- the chip
    model's clock, which every SPI byte carries from the emulator."""
    import serial

    from tablesense.sim.mfrc522_emu import EmulatedCard as Card

    rng = random.Random(seed)
    decoder = proto.FrameDecoder()
    out: list[float] = []

    def wait_for(cell: int, state: Any, timeout: float = 30.0) -> bool:
        deadline = default_timer() + timeout
        while default_timer() < deadline:
            for msg_type, _b, _s, payload in decoder.feed(port.read(256)):
                if msg_type == proto.CELL and proto.decode_cell_event(payload) == (cell, state):
                    return True
        return False

    with serial.Serial(path, timeout=0.02) as port:
        for k in range(placements):
            cell = rng.randrange(cells)
            uid = bytes([0x04, k & 0xFF, cell, 0xC3, 0xD4, 0xE5, 0xF6])
            time_end = default_timer() + rng.random() * 0.3  # a random phase of the sweep
            while default_timer() < time_end:
                decoder.feed(port.read(256))
            card = Card(uid)
            with board.lock:
                t0 = board.bus.now_us
                board.chips[cell].place(card)
            if not wait_for(cell, uid):
                break
            out.append((board.bus.now_us - t0) / 1000)
            with board.lock:
                board.chips[cell].remove()
            if not wait_for(cell, None):
                break
    return out


def booted_sweep_ms(path: str, settle: int = 4, sweeps: int = 40, timeout: float = 300.0) -> tuple[float, float]:
    """The running firmware's own sweep, from its STATS: the mean over at
    least ``sweeps`` sweeps (board uptime over sweeps done: everything the
    booted loop does between two reads -- input polling, every eighth read
    a full anticollision, its collections) and the last sweep's
    ``sweep_us``, after ``settle`` sweeps (the events of what changed).
    One STATS request begins the timed sweeps and one ends them, nothing
    in between: a request costs the board a few ms (its frames, then a
    collection; ``host_request_ms``), and requests timed in wall seconds
    land on more or fewer sweeps as the machine's load slows the emulator,
    so they would time the load, not the sweep. The wait for the last one
    is sized from the emulator's pace while settling. What the
    REPL-stepped figures of diag cannot show: the heap as the booted
    program leaves it, input polling, collections."""
    from tablesense.flash.client import BoardClient

    deadline = default_timer() + timeout
    with BoardClient(path, timeout=5.0) as client:
        client.hello()
        first, _ = client.stats_request()
        began = default_timer()
        start = first
        while start["sweeps"] - first["sweeps"] < settle and default_timer() < deadline:
            client.poll_events(0.5)
            start, _ = client.stats_request()
        pace = (default_timer() - began) / max(1, start["sweeps"] - first["sweeps"])  # wall s a sweep
        end = start
        while end["sweeps"] - start["sweeps"] < sweeps and default_timer() < deadline:
            left = sweeps - (end["sweeps"] - start["sweeps"])
            client.poll_events(min(max(0.5, 1.1 * left * pace), max(0.0, deadline - default_timer())))
            end, _ = client.stats_request()
    done = end["sweeps"] - start["sweeps"]
    if done <= 0:
        return float("nan"), float("nan")
    return (end["uptime_ms"] - start["uptime_ms"]) / done, end["sweep_us"] / 1000


def host_request_ms(path: str, sweep_ms: float, requests: int = 10) -> float:
    """What one host request costs the running firmware, in its own time:
    ``requests`` STATS requests back to back, the board's uptime over them
    less the sweeps it made meanwhile at ``sweep_ms`` each, per request
    (its frames in and out, and the collection at the sweep's end that
    frame traffic asks for, main.py). A table's host sends a PING after
    0.1 s without a frame from the board."""
    from tablesense.flash.client import BoardClient

    with BoardClient(path, timeout=5.0) as client:
        client.hello()
        client.poll_events(1.0)
        start, _ = client.stats_request()
        end = start
        for _ in range(requests):
            end, _ = client.stats_request()
    busy = end["uptime_ms"] - start["uptime_ms"] - (end["sweeps"] - start["sweeps"]) * sweep_ms
    return busy / requests


def emulated_rp2040(placements: int = 40) -> dict[Any, Any] | None:
    """Section 4: sweeps and free memory measured by an emulated RP2040 board;
    a dead reader's cost; a placed tag's time to its event."""
    from tablesense.diag.runtime import query_runtime, wait_for_firmware
    from tablesense.flash import deploy as dp
    from tablesense.sim.mfrc522_emu import EmulatedCard as Card
    from tablesense.sim.rp2040.board import Rp2040Board, available, wait_for_prompt

    if available() is not None:
        print(f"  emulated RP2040: not available ({available()})")
        return None
    with tempfile.TemporaryDirectory(prefix="ts-bench-rp2040-") as tmp:
        cfg = dp.bench_config(cells=32, leds=32)
        board = Rp2040Board(None, 1, config=cfg, state_dir=Path(tmp), fresh=True)
        path = board.start()
        try:
            # bare MicroPython's banner first: one printed late, under load,
            # lands in the deploy's raw-REPL answer and fails it
            wait_for_prompt(path, timeout=60.0)
            r = dp.deploy(path, dp.build_payload(dp.FIRMWARE_DIR, config=cfg), confirm_timeout=120.0)
            print(f"  deploy (bare MicroPython -> firmware): {r.seconds:.1f} s wall, "
                  f"{len(r.uploaded)} files; redeploy unchanged: "
                  f"{dp.deploy(path, dp.build_payload(dp.FIRMWARE_DIR, config=cfg), confirm_timeout=120.0).seconds:.2f} s wall")
            empty = query_runtime(path, [8, 16, 32])
            with board.lock:  # one reader gone (MISO then reads the firmware's pull-up)
                board.chips[5].dead = True
            dead = query_runtime(path, [16])
            with board.lock:
                board.chips[5].dead = False
            # the firmware, 16 cells, booted and running: its own sweeps (all
            # empty, one reader dead, an NTAG on every other cell), then tags
            # laid one at a time
            cfg16 = dp.bench_config(cells=16, leds=16)
            # cell i's known-tag read overlaps cell i + 8's (rfid.overlap): a
            # bench's readers stand apart (a table's config says so only
            # where its geometry does, docs/firmware.md)
            cfg16["rfid"] = {"overlap": 8}
            dp.deploy(path, dp.build_payload(dp.FIRMWARE_DIR, config=cfg16), confirm_timeout=120.0)
            wait_for_firmware(path, 60.0)
            booted = {"empty": booted_sweep_ms(path)}
            with board.lock:
                board.chips[5].dead = True
            booted["dead"] = booted_sweep_ms(path)
            with board.lock:
                board.chips[5].dead = False
                for i in range(0, 16, 2):
                    board.chips[i].place(Card(bytes([0x04, i, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6])))
            booted["half"] = booted_sweep_ms(path)
            request = host_request_ms(path, booted["half"][0])
            with board.lock:
                for i in range(0, 16, 2):
                    board.chips[i].remove()
            booted_sweep_ms(path, settle=4, sweeps=1)  # the removals reported
            reports = place_to_report_ms(board, path, 16, placements)
            dp.deploy(path, dp.build_payload(dp.FIRMWARE_DIR, config=cfg), confirm_timeout=120.0)
            with board.lock:  # a 7-byte NTAG on every other reader
                for i in range(0, 32, 2):
                    board.chips[i].place(Card(bytes([0x04, i, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6])))
            half = query_runtime(path, [8, 16, 32])
        finally:
            board.stop()
    if empty.error or half.error or dead.error:
        print(f"  emulated RP2040: the board did not answer ({empty.error or half.error or dead.error})")
        return None
    print(f"  {empty.machine}, MicroPython {empty.micropython}; gc.mem_free() after boot "
          f"{(empty.mem_free_boot or 0) / 1024:.0f} KiB")
    out: dict[Any, Any] = {"mem_free_boot": empty.mem_free_boot, "booted": booted, "request": request}
    for name, label in (("empty", "all empty"), ("half", "half NTAG"), ("dead", "one reader dead")):
        mean, last = booted[name]
        print(f"  booted firmware, 16 cells, {label:15s}: {mean:6.1f} ms a sweep (mean over 40, STATS), "
              f"last sweep_us {last:.1f} ms")
    print(f"  a host request (STATS) costs the booted board {request:.1f} ms of its time "
          f"(its frames, then a collection); a table's host pings after 0.1 s of silence")
    print(f"  stepped from the REPL (diag), 16 cells: all empty {empty.sweeps[1]['sweep_ms']:.1f} ms, "
          f"one reader dead {dead.sweeps[0]['sweep_ms']:.1f} ms, half NTAG {half.sweeps[1]['sweep_ms']:.1f} ms")
    if reports:
        reports.sort()
        p95 = reports[min(len(reports) - 1, int(0.95 * len(reports)))]
        out["place_p95"] = p95
        print(f"  a tag laid on an empty 16-cell board -> its CELL event: median {reports[len(reports) // 2]:.1f} ms, "
              f"p95 {p95:.1f} ms over {len(reports)} placements (board time)")
    for e, h in zip(empty.sweeps, half.sweeps, strict=True):
        n = e["cells"]
        live = min(e["mem_free_live"], h["mem_free_live"])
        churn = min(e["mem_free_sweeping"], h["mem_free_sweeping"])
        out[n] = (e["sweep_ms"], h["sweep_ms"], live, churn)
        print(f"  {n:2d} cells: all empty {e['sweep_ms']:6.1f} ms | half NTAG {h['sweep_ms']:6.1f} ms "
              f"(rp2040js, board's own ticks_us) | free while sweeping {live / 1024:.0f} KiB after gc.collect(), "
              f"{churn / 1024:.0f} KiB before")
    return out


def main() -> None:
    print(f"== 1. reader time per cell (emulated RP2040: SPI {SPI_HZ / 1e6:.0f} MHz, "
          f"{CALL_US:.0f} us per SPI call)")
    rows = {
        "empty (timeout 300 us)": cell_us(None),
        "empty (timeout 1000 us)": cell_us(None, timeout_us=1000),
        "4-byte UID (MIFARE Classic)": cell_us(UID4),
        "7-byte UID (NTAG)": cell_us(UID7),
        "dead reader (no chip)": cell_us(None, dead=True),
    }
    for name, (us, calls) in rows.items():
        print(f"  {name:32s} {us / 1000:7.2f} ms  {calls:4d} SPI calls")
    for call in (25.0, 40.0):
        slow = {name: cell_us(uid, call_us=call)[0] for name, uid in (("empty", None), ("NTAG", UID7))}
        print(f"  sensitivity: at {call:.0f} us per SPI call, empty {slow['empty'] / 1000:.2f} ms, "
              f"NTAG {slow['NTAG'] / 1000:.2f} ms")
    naive = naive_empty_us()
    ours_empty = rows["empty (timeout 300 us)"][0]
    print(f"  peer: common driver, empty cell  {naive / 1000:7.2f} ms  "
          f"(ours {naive / ours_empty:.0f}x faster)")
    print("== full sweep (one read per cell, round robin)")
    empty = rows["empty (timeout 300 us)"][0]
    tag7 = rows["7-byte UID (NTAG)"][0]
    sweeps: dict[int, tuple[float, float, float]] = {}
    for n in (8, 16, 32):
        half = (n // 2) * empty + (n - n // 2) * tag7
        sweeps[n] = (n * empty, half, n * tag7)
        print(f"  {n:2d} cells: all empty {n * empty / 1000:6.1f} ms | half NTAG {half / 1000:6.1f} ms"
              f" | all NTAG {n * tag7 / 1000:6.1f} ms | common driver, all empty {n * naive / 1000:6.1f} ms")

    print("== 2. board step, Python cost per cell (instant reader, 32 cells, half tagged)")
    cp_step, cp_codec = cpython_step_us()
    print(f"  CPython {sys.version.split()[0]:10s} step {cp_step:7.2f} us   CELL encode+decode {cp_codec:7.2f} us")
    mp = micropython_step_us()
    if mp is None:
        print("  MicroPython wasm: not available (node or the npm package missing)")
        mp_step = mp_codec = mp_call = float("nan")
    else:
        mp_step, mp_codec, mp_call = mp
        print(f"  MicroPython wasm   step {mp_step:7.2f} us   CELL encode+decode {mp_codec:7.2f} us")
        print(f"  MicroPython wasm   driver Python cost per SPI call {mp_call:.1f} us "
              f"(the model above charges {CALL_US:.0f} us)")

    print("== 3. bytes on the wire per cell change")
    ours = ours_event_bytes()
    certabo = certabo_scan_bytes()
    print(f"  tablesense CELL frame: 7-byte tag {ours['tag7']} B, 4-byte tag {ours['tag4']} B, "
          f"empty {ours['empty']} B, read error {ours['error']} B (COBS, CRC-16, seq)")
    print("  DGT field update:      5 B (no checksum, no sequence number, piece type only)")
    print(f"  Certabo scan frame:    {certabo} B of text, sent on every scan, change or not")
    print(f"  a domino play (rack cell empties + line cell gets the tile): "
          f"{ours['empty'] + ours['tag7']} B")
    print("== 4. emulated RP2040 (rp2040js 1.4.1, MicroPython v1.27.0 UF2), measured by the board")
    emu = emulated_rp2040()
    for n in (8, 16, 32):
        if emu is not None:
            print(f"  {n:2d} cells: model above (half NTAG) {sweeps[n][1] / 1000:6.1f} ms vs rp2040js "
                  f"{emu[n][1]:6.1f} ms")
    if emu is not None:
        print(f"  target 'a 16-cell sweep within 40 ms' (rp2040js): all empty {emu[16][0]:.1f} ms, "
              f"half NTAG {emu[16][1]:.1f} ms")
    print("== 5. the radio's floor (ISO 14443-3 airtime at 106 kbit/s, 300 us timer, one reader at a time)")
    fl = floor_cell_us()
    floor_empty = 16 * fl["empty"] / 1000
    floor_half = 8 * (fl["empty"] + fl["ntag"]) / 1000
    floor_known = 8 * (fl["empty"] + fl["ntag_known"]) / 1000
    print(f"  cell: empty {fl['empty'] / 1000:.2f} ms, NTAG full read {fl['ntag'] / 1000:.2f} ms, "
          f"NTAG known-tag read {fl['ntag_known'] / 1000:.2f} ms")
    print(f"  16 cells: all empty {floor_empty:.1f} ms | half NTAG {floor_half:.1f} ms full reads, "
          f"{floor_known:.1f} ms known-tag reads")
    own_timer = fw_config.DEFAULT_RFID["timeout_us"]
    floor_empty_own = 16 * floor_cell_us(own_timer)["empty"] / 1000
    print(f"  with the firmware's own {own_timer} us timer: all empty {floor_empty_own:.1f} ms")
    if emu is not None:
        print(f"  stepped from the REPL / floor: all empty {emu[16][0] / floor_empty:.1f}x, half NTAG {emu[16][1] / floor_half:.1f}x "
              f"(of full reads), {emu[16][1] / floor_known:.1f}x (of known-tag reads)")
    if emu is not None:
        booted = emu["booted"]
        print(f"  booted firmware / floor: all empty {booted['empty'][0] / floor_empty:.1f}x, "
              f"half NTAG {booted['half'][0] / floor_half:.1f}x (of full reads), "
              f"{booted['half'][0] / floor_known:.1f}x (of known-tag reads)")
    emu16 = f"{emu['booted']['half'][0]:.1f}" if emu else "nan"
    emu16_empty = f"{emu['booted']['empty'][0]:.1f}" if emu else "nan"
    dead16 = f"{emu['booted']['dead'][0]:.1f}" if emu else "nan"
    stepped16 = f"{emu[16][0]:.1f}" if emu else "nan"
    place = f"{emu['place_p95']:.1f}" if emu and "place_p95" in emu else "nan"
    request = f"{emu['request']:.1f}" if emu else "nan"
    mem_kb = f"{min(emu[n][2] for n in (8, 16, 32)) / 1024:.0f}" if emu else "nan"
    print(
        f"empty_cell_ms={empty / 1000:.2f} ntag_cell_ms={tag7 / 1000:.2f} "
        f"common_driver_empty_ms={naive / 1000:.2f} sweep8_ms={sweeps[8][1] / 1000:.1f} "
        f"sweep16_ms={sweeps[16][1] / 1000:.1f} sweep32_ms={sweeps[32][1] / 1000:.1f} "
        f"step_us_mpy_wasm={mp_step:.1f} step_us_cpython={cp_step:.1f} spi_call_us_mpy_wasm={mp_call:.1f} "
        f"cell_event_bytes={ours['tag7']} dgt_bytes=5 certabo_scan_bytes={certabo} "
        f"floor16_half_known_ms={floor_known:.1f} floor16_empty_own_timer_ms={floor_empty_own:.1f} "
        f"sweep16_empty_stepped_ms={stepped16} host_request_ms={request}"
    )
    print(
        f"sweep16_empty_emulated_ms={emu16_empty} sweep16_emulated_ms={emu16} sweep16_dead_reader_ms={dead16} "
        f"place_to_report_ms={place} floor16_empty_ms={floor_empty:.1f} floor16_half_ms={floor_half:.1f} "
        f"mem_free_kb={mem_kb}"
    )


if __name__ == "__main__":
    main()
