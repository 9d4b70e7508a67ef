"""Emulated RP2040 boards (rp2040js + the real MicroPython v1.27.0 UF2), each
test on boards of its own: reader chip selects through an MCP23017 over I2C,
`sim boards --rp2040` alone and with a table, and the driver's compiled hot
path (viper, rp2 port only) against the plain path CPython and the
WebAssembly port run: the same results and the same frames on the air.

Apart from tests/sim/test_rp2040_board.py (one board's lifecycle) because an
emulated board running the firmware keeps a host core busy for as long as it
lives: that file's board is stopped when its own tests end, not after these.

Emulated time is not wall time: every wait here is a deadline on a condition,
generous for a loaded machine, never a sleep that assumes a speed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from tablesense.flash import deploy as dp
from tablesense.flash.repl import ReplSession
from tablesense.sim.rp2040.board import Rp2040Board, available, wait_for_prompt
from testsupport import need, wait_until

UID7 = bytes.fromhex("04a1b2c3d4e5f6")


def _load(s: ReplSession, *modules: str) -> None:
    """Put the firmware's modules on the board as a deploy does (mpy-cross's
    .mpy, cached on the host), for the test's script to import. Sending the
    sources and compiling them on the emulated core took ~20 s of a host
    core a board (and the driver's source no longer compiles in one piece on
    bare MicroPython: MemoryError); the viper functions are compiled on the
    board either way (compiled_transfer() execs their source on the rp2
    port)."""
    for name in modules:
        s.write_file(f"{name}.mpy", dp.compile_module(f"{name}.py", (dp.FIRMWARE_DIR / f"{name}.py").read_bytes()))


def test_mcp23017_chip_selects_over_i2c_reach_the_readers(tmp_path: Path) -> None:
    """The expander wiring (cs.kind mcp23017): MicroPython's machine.I2C on the
    emulated chip talks to the MCP23017 model, whose outputs select readers."""
    need(available() is None, f"emulated RP2040 boards: {available()}")
    cfg = {"board": 3, "cells": 2, "leds": 0,
           "cs": {"kind": "mcp23017", "addresses": [0x21], "i2c": {"id": 1, "sda": 14, "scl": 15, "freq": 400000}}}
    board = Rp2040Board(None, 3, config=cfg, state_dir=tmp_path, fresh=True)
    board.chips[1].version = 0x91  # tell the two readers apart
    path = board.start()
    try:
        assert wait_for_prompt(path, timeout=30.0)
        code = (
            "from machine import I2C, SPI, Pin\n"
            "i2c = I2C(1, sda=Pin(14), scl=Pin(15), freq=400000)\n"
            "i2c.writeto_mem(0x21, 0x14, b'\\xff\\xff'); i2c.writeto_mem(0x21, 0x00, b'\\x00\\x00')\n"
            "spi = SPI(0, baudrate=4000000, sck=Pin(2), mosi=Pin(3), miso=Pin(4))\n"
            "def version(pin):\n"
            " if pin is not None: i2c.writeto_mem(0x21, 0x14, bytes([0xff & ~(1 << pin)]))\n"
            " r = bytearray(2); spi.write_readinto(bytes([0x80 | (0x37 << 1), 0]), r)\n"
            " i2c.writeto_mem(0x21, 0x14, b'\\xff')\n"
            " return r[1]\n"
            "low = version(None)\n"
            "spi = SPI(0, baudrate=4000000, sck=Pin(2), mosi=Pin(3), miso=Pin(4, Pin.IN, Pin.PULL_UP))\n"
            "print(repr((version(0), version(1), low, version(None))))\n"
        )
        with ReplSession(path, timeout=15) as s:
            out = s.exec(code, timeout=60)
    finally:
        board.stop()
    import ast

    v0, v1, nobody, nobody_pulled_up = ast.literal_eval(out.decode().strip())
    # (not i2c.scan(): rp2040js's I2C model does not complete the zero-length
    # probes the rp2 port scans with, and each costs a time-out)
    assert (v0, v1) == (0x92, 0x91)
    # nobody selected: MISO reads its pad's pull, the RP2040's reset
    # pull-down, until the pin is pulled up (machine.SPI keeps the pull)
    assert (nobody, nobody_pulled_up) == (0x00, 0xFF)


def test_sim_boards_rp2040_prints_one_path_per_board(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    need(available() is None, f"emulated RP2040 boards: {available()}")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--rp2040", "--count", "2",
         "--state-dir", str(tmp_path), "--fresh"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        paths = [proc.stdout.readline().strip(), proc.stdout.readline().strip()]
        assert all(p.startswith("/dev/") and os.path.exists(p) for p in paths) and paths[0] != paths[1]
        assert wait_for_prompt(paths[1], timeout=30.0)
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    serials = [line.split("USB serial ")[1].split(")")[0] for line in err.splitlines() if "USB serial" in line]
    assert len(serials) == 2 and serials[0] != serials[1]  # a distinct USB serial per board
    assert len(list(tmp_path.glob("*.flash"))) == 2


def test_sim_boards_rp2040_with_a_table_serves_the_table_top(tmp_path: Path) -> None:
    """As `sim boards --table T` does: the table-top page over the same world,
    its seat keys and the play command, plus (bare MicroPython boards) the
    flash command of each board. kems-4: two boards (one per two seats), the
    fewest emulated RP2040s a shipped layout needs."""
    import re
    import signal
    import subprocess
    import sys
    import urllib.request

    need(available() is None, f"emulated RP2040 boards: {available()}")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--rp2040", "--table", "kems-4",
         "--state-dir", str(tmp_path), "--fresh", "--web-port", "0", "--display", ""],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None and proc.stderr is not None
        paths = [proc.stdout.readline().strip(), proc.stdout.readline().strip()]
        err = proc.stderr
        threading.Thread(target=lambda: lines.extend(err), daemon=True).start()
        wait_until(lambda: any("Ctrl-C to stop" in ln for ln in lines), 30.0, what="sim boards to say it runs")
        text = " ".join(" ".join(lines).split())  # rich wraps long lines
        urls = re.findall(r"table top: (\S+)", text)
        assert len(urls) == 4  # one per seat, each with its key
        with urllib.request.urlopen(urls[1], timeout=10) as r:
            assert r.status == 200 and 'data-seat="1"' in r.read().decode()
        for board, path in enumerate(paths, start=1):
            assert f"tablesense flash --port {path} --table kems-4 --board {board}" in text
        assert f"tablesense play --table kems-4 --port {paths[0]} --port {paths[1]} --seat-header" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 0, "".join(lines)


def _both_paths(board: Rp2040Board, modules: tuple[str, ...], script: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Boot ``board``, load ``modules``, run ``script`` (it defines ``fast``,
    the compiled transfer, and ``run(compiled)``) and call ``run(False)``,
    then ``run(True)`` -> each one's result and the frames every chip heard
    during it, by "False"/"True". The board is stopped after; its core must
    still answer (a wrong register address stops the emulated core) and
    rp2040js must have logged no invalid access."""
    logs: dict[str, Any] = {}
    results: dict[str, Any] = {}
    path = board.start()
    try:
        assert wait_for_prompt(path, timeout=30.0)
        with ReplSession(path, timeout=15) as s:
            _load(s, *modules)
            s.exec(script, timeout=120)
            assert s.eval("fast is not None", timeout=30) is True  # compiled on the rp2 port
            for mode in ("False", "True"):
                with board.lock:
                    for chip in board.chips:
                        chip.frame_log = []
                results[mode] = s.eval(f"run({mode})", timeout=180)
                with board.lock:
                    logs[mode] = [list(chip.frame_log or []) for chip in board.chips]
            assert s.eval("1 + 1", timeout=30) == 2  # the core still runs
    finally:
        board.stop()
    assert not [ln for ln in board.log_lines if "invalid" in ln.lower()], board.log_lines
    return results, logs


_COMPILED_VS_PLAIN = """
from machine import SPI, Pin
import time
from mfrc522 import MFRC522, compiled_transfer
spi = SPI(0, baudrate=4000000, sck=Pin(2), mosi=Pin(3), miso=Pin(4, Pin.IN, Pin.PULL_UP))
pins = (17, 18)
cs = [Pin(p, Pin.OUT, value=1) for p in pins]
fast = compiled_transfer()
def run(compiled):
    rs = [MFRC522(spi, cs[k], compiled=(fast, 0, pins[k]) if compiled else None) for k in range(2)]
    assert all((r._frun is not None) == compiled for r in rs)
    got = [r.init() for r in rs]
    t = time.ticks_us()
    for _ in range(4):
        for r in rs:
            got.append(r.read_uid())
    return got, time.ticks_diff(time.ticks_us(), t)
"""


def test_the_compiled_transfer_sends_the_plain_paths_frames(tmp_path: Path) -> None:
    """The rp2 port compiles the driver's SPI transaction (viper, against the
    PL022 and SIO registers): the same reads give the same results and put
    the same frames on the air, frame for frame, as the plain machine.SPI
    path that CPython and the WebAssembly port run."""
    need(available() is None, f"emulated RP2040 boards: {available()}")
    cfg = {"board": 3, "cells": 2, "leds": 0, "cs": {"kind": "gpio", "pins": [17, 18]}}
    board = Rp2040Board(None, 3, config=cfg, state_dir=tmp_path, fresh=True)
    from tablesense.sim.mfrc522_emu import EmulatedCard

    board.chips[0].place(EmulatedCard(UID7))
    board.chips[1].place(EmulatedCard(bytes.fromhex("11223344")))
    results, logs = _both_paths(board, ("mfrc522",), _COMPILED_VS_PLAIN)
    (plain, plain_us), (compiled, compiled_us) = results["False"], results["True"]
    assert plain == compiled
    assert plain[:2] == [True, True] and plain[2:4] == [UID7, bytes.fromhex("11223344")]
    assert logs["False"] == logs["True"] and all(logs["False"])
    assert compiled_us < plain_us  # (emulated time: the figure is in docs/firmware.md)
    print(f"8 reads: plain {plain_us} us, compiled {compiled_us} us")


_DECODED_VS_PLAIN = """
from machine import SPI, Pin
import time
from config import parse, make_selects, select_routes
from mfrc522 import MFRC522, compiled_transfer
spi = SPI(0, baudrate=4000000, sck=Pin(2), mosi=Pin(3), miso=Pin(4, Pin.IN, Pin.PULL_UP))
cfg = parse({"board": 3, "cells": 3, "leds": 0})
fast = compiled_transfer()
def run(compiled):
    selects = make_selects(cfg, lambda n: Pin(n, Pin.OUT, value=1))
    routes = select_routes(cfg)
    rs = [MFRC522(spi, selects[k], compiled=(fast, 0, 9, routes[k][0], routes[k][1]) if compiled else None)
          for k in range(3)]
    assert all((r._frun is not None) == compiled for r in rs)
    got = [r.init() for r in rs]
    for r in rs:
        r.field(False)
    t = time.ticks_us()
    for k in (0, 1, 2, 1, 0, 2, 2, 0, 1):
        r = rs[k]
        r.field(True)
        got.append(r.read_uid())
        r.field(False)
    return got, time.ticks_diff(time.ticks_us(), t)
"""


def test_the_compiled_transfer_routes_the_decoder_and_switches_fields(tmp_path: Path) -> None:
    """The compiled transfer also puts the decoder's address on its pins
    (SIO GPIO_OUT_SET/CLR, written as words: a ptr32 is indexed in words)
    and switches each reader's field without the Python select: readers
    behind a 74HC138, each read between its own field on and off, give the
    plain path's results and frames, reader for reader, and the booted
    board still answers (a wrong SIO address stops the emulated core)."""
    need(available() is None, f"emulated RP2040 boards: {available()}")
    from tablesense.firmware.config import parse, select_routes
    from tablesense.sim.mfrc522_emu import EmulatedCard

    cfg = {"board": 3, "cells": 3, "leds": 0}
    routes = select_routes(parse(cfg))
    assert routes == [(0, 0b111 << 6), (1 << 6, 0b110 << 6), (1 << 7, 0b101 << 6)]  # A0..A2 on GP6..8
    board = Rp2040Board(None, 3, config=cfg, state_dir=tmp_path, fresh=True)
    uids = [UID7, bytes.fromhex("11223344"), bytes.fromhex("0455667788990a")]
    for chip, uid in zip(board.chips, uids, strict=True):
        chip.place(EmulatedCard(uid))
    results, logs = _both_paths(board, ("config", "mfrc522"), _DECODED_VS_PLAIN)
    (plain, plain_us), (compiled, compiled_us) = results["False"], results["True"]
    assert plain == compiled
    assert plain[:3] == [True, True, True]
    assert plain[3:] == [uids[k] for k in (0, 1, 2, 1, 0, 2, 2, 0, 1)]
    assert logs["False"] == logs["True"] and all(logs["False"])
    assert compiled_us < plain_us
    print(f"9 reads behind a decoder, fields switched: plain {plain_us} us, compiled {compiled_us} us")


_PROBE_VS_PLAIN = """
from machine import SPI, Pin
import time
from config import parse, make_selects, select_routes
from mfrc522 import MFRC522, compiled_transfer
spi = SPI(0, baudrate=4000000, sck=Pin(2), mosi=Pin(3), miso=Pin(4, Pin.IN, Pin.PULL_UP))
cfg = parse({"board": 3, "cells": 4, "leds": 0})
fast = compiled_transfer()
def run(compiled):
    selects = make_selects(cfg, lambda n: Pin(n, Pin.OUT, value=1))
    routes = select_routes(cfg)
    rs = [MFRC522(spi, selects[k], compiled=(fast, 0, 9, routes[k][0], routes[k][1]) if compiled else None)
          for k in range(4)]
    assert all((r._frun is not None) == compiled for r in rs)
    got = [r.init() for r in rs]
    for r in rs:
        r.field(False)
    t = time.ticks_us()
    for k in (1, 2, 1, 0, 2, 3, 1, 0, 2, 2, 3, 1):
        r = rs[k]
        r.field(True)
        on = None if k == 2 else rs[(k + 1) % 4]
        st = r.probe(k != 3, on)
        if st is None:
            got.append(None)
        else:
            got.append(r.finish(st))
        got.append(tuple(x.read_reg(0x14) & 3 for x in rs))
        for x in rs:
            x.field(False)
    return got, time.ticks_diff(time.ticks_us(), t)
"""


def test_the_compiled_probe_decides_empty_and_switches_fields_as_the_plain_path(tmp_path: Path) -> None:
    """probe() -- a cell expected empty: WUPA, the decision and, when nobody
    answered, this reader's field off and another's on, in one compiled
    call on the rp2 port -- gives the plain path's results, field states
    (TxControlReg of every reader after each probe) and frames on the
    air, reader for reader, behind a 74HC138; a tag that answers is read
    to the end by finish() with no field switched."""
    need(available() is None, f"emulated RP2040 boards: {available()}")
    from tablesense.sim.mfrc522_emu import EmulatedCard

    cfg = {"board": 3, "cells": 4, "leds": 0}
    board = Rp2040Board(None, 3, config=cfg, state_dir=tmp_path, fresh=True)
    board.chips[0].place(EmulatedCard(UID7))
    board.chips[3].place(EmulatedCard(bytes.fromhex("11223344")))
    results, logs = _both_paths(board, ("config", "mfrc522"), _PROBE_VS_PLAIN)
    (plain, plain_us), (compiled, compiled_us) = results["False"], results["True"]
    assert compiled == plain
    reads = plain[4::2]
    fields = [tuple(f) for f in plain[5::2]]
    assert reads == [None, None, None, UID7, None, bytes.fromhex("11223344"), None, UID7, None, None,
                     bytes.fromhex("11223344"), None]
    assert fields[0] == (0, 0, 3, 0)  # cell 1 empty: its field off, cell 2's on
    assert fields[1] == (0, 0, 0, 0)  # cell 2 empty, no other field named
    assert fields[3] == (3, 0, 0, 0)  # cell 0 answered: no switch
    assert fields[5] == (0, 0, 0, 3)  # cell 3 answered: its own field stays on
    assert logs["False"] == logs["True"] and all(logs["False"])
    print(f"12 probes behind a decoder: plain {plain_us} us, compiled {compiled_us} us")


_PAIR_VS_PLAIN = """
from machine import SPI, Pin
import time
from config import parse, make_selects, select_routes
from mfrc522 import MFRC522, Buffers, compiled_transfer
spi = SPI(0, baudrate=4000000, sck=Pin(2), mosi=Pin(3), miso=Pin(4, Pin.IN, Pin.PULL_UP))
cfg = parse({"board": 3, "cells": 4, "leds": 0})
fast = compiled_transfer()
rs = {}
def make(compiled):
    selects = make_selects(cfg, lambda n: Pin(n, Pin.OUT, value=1))
    routes = select_routes(cfg)
    buf = Buffers()
    rs[compiled] = [MFRC522(spi, selects[k], buffers=buf, full_read_every=4,
                            compiled=(fast, 0, 9, routes[k][0], routes[k][1]) if compiled else None)
                    for k in range(4)]
    return [r.init() for r in rs[compiled]]
def reads(compiled, n):
    a, b = rs[compiled][0], rs[compiled][2]
    got = []
    t = time.ticks_us()
    for _ in range(n):
        if a.tagged() and b.tagged():
            got.append(("pair", a.read_pair(b), b.pair_reading))
        else:
            got.append(("one", a.read_uid(), b.read_uid()))
    return got, time.ticks_diff(time.ticks_us(), t), a.known_reads + b.known_reads
import mfrc522
stops = [0, 0, 0]
def count_pairs():
    # how each compiled pair() call ended: both reads done, A's or B's
    # answer not the expected one (read_pair() went on in Python)
    f = mfrc522.compiled_pair()
    def counted(q, pa, pb, r):
        v = f(q, pa, pb, r)
        stops[v] += 1
        return v
    mfrc522._compiled_pair[0] = counted
    return f is not None
"""


def test_the_compiled_overlapped_read_sends_the_plain_paths_frames(tmp_path: Path) -> None:
    """read_pair() -- two readers' known-tag reads overlapped, exchange by
    exchange -- on the compiled path (both reads in one pair() call: the
    known-tag read, or every fourth read the full read of the same tag;
    it hands over to the Python turns at the first answer that is not the
    expected one) against the plain
    path, behind a 74HC138 with shared transfer buffers: the same readings
    and the same frames on the air, reader for reader, through tags
    lifted, laid back and swapped for one with the same ATQA (the known
    path then falls back to a full read mid-pair). pair() handed over at
    A's answer and at B's."""
    need(available() is None, f"emulated RP2040 boards: {available()}")
    from tablesense.sim.mfrc522_emu import EmulatedCard

    cfg = {"board": 3, "cells": 4, "leds": 0}
    board = Rp2040Board(None, 3, config=cfg, state_dir=tmp_path, fresh=True)
    alike = bytes.fromhex("04a1b2c3d4e5f7")  # UID7's ATQA and first cascade level
    other = bytes.fromhex("0455667788990a")
    changes: list[tuple[int, bytes | None, int | None]] = [
        (2, alike, None), (0, None, None), (0, UID7, None), (2, other, None), (0, alike, None), (2, None, None),
        (2, UID7, None),
        # another ATQA (a 4-byte UID), then the same UID with another SAK:
        # the known-tag path's checks of the answers themselves
        (2, bytes.fromhex("11223344"), None), (2, UID7, None), (0, UID7, 0x20), (0, UID7, None),
    ]
    logs: dict[str, list[list[tuple[bytes, int]]]] = {}
    results: dict[str, list[Any]] = {}
    path = board.start()
    try:
        assert wait_for_prompt(path, timeout=30.0)
        with ReplSession(path, timeout=15) as s:
            _load(s, "config", "mfrc522")
            s.exec(_PAIR_VS_PLAIN, timeout=120)
            assert s.eval("fast is not None", timeout=30) is True
            assert s.eval("count_pairs()", timeout=30) is True
            for mode in ("False", "True"):
                with board.lock:
                    for chip in board.chips:
                        chip.remove()
                        chip.frame_log = []
                    board.chips[0].place(EmulatedCard(UID7))
                    board.chips[2].place(EmulatedCard(other))
                got: list[Any] = [s.eval(f"make({mode})", timeout=60)]
                got.append(s.eval(f"reads({mode}, 6)", timeout=180))
                for cell, uid, sak in changes:
                    with board.lock:
                        if uid is None:
                            board.chips[cell].remove()
                        else:
                            board.chips[cell].place(EmulatedCard(uid, sak))
                    got.append(s.eval(f"reads({mode}, 3)", timeout=180))
                results[mode] = got
                with board.lock:
                    logs[mode] = [list(chip.frame_log or []) for chip in board.chips]
            stops = s.eval("stops", timeout=30)
    finally:
        board.stop()
    assert not [ln for ln in board.log_lines if "invalid" in ln.lower()], board.log_lines
    assert isinstance(stops, list) and stops[0] > 5 and stops[1] and stops[2], stops
    plain, compiled = results["False"], results["True"]
    assert plain[0] == compiled[0] == [True] * 4
    strip = [(r[0], r[2]) for r in plain[1:]]  # (readings, known reads) without the times
    assert strip == [(r[0], r[2]) for r in compiled[1:]]
    kinds = [x[0] for r in plain[1:] for x in r[0]]
    assert kinds.count("pair") > 10 and "one" in kinds
    first = plain[1][0]
    assert first[0] == ("one", UID7, other) and first[-1] == ("pair", UID7, other)
    assert plain[2][0][-1][1:] == (UID7, alike)  # the same-ATQA swap is read
    assert logs["False"] == logs["True"] and logs["False"][0] and logs["False"][2]
    us = [sum(r[1] for r in got[1:]) for got in (plain, compiled)]
    print(f"overlapped reads behind a decoder: plain {us[0]} us, compiled {us[1]} us")


_BOARD_QUIET_VS_PLAIN = """
from machine import SPI, Pin
import time
from config import parse, make_selects, select_routes
from mfrc522 import MFRC522, Buffers, compiled_transfer
from board import Board
spi = SPI(0, baudrate=4000000, sck=Pin(2), mosi=Pin(3), miso=Pin(4, Pin.IN, Pin.PULL_UP))
# debounce empty 1: a lift is confirmed by the next sweep, so two sweeps a
# change see it reported (the emulated core is most of this test's time)
# the fields' lead (filled in): with overlap 4 the window of lit fields covers the
# board (every field stays on), with overlap 0 and 0.8 ms it does not (the
# fields are switched cell by cell; the chip models power a tag at once)
raw = {"board": 3, "cells": 8, "leds": 0, "debounce": {"empty": 1, "error": 1},
       "rfid": {"overlap": OVERLAP, "field_lead_us": LEAD}}
cfg = parse(raw)
fast = compiled_transfer()
class Sink:
    def __init__(self):
        self.out = []
    def read(self):
        return b""
    def write(self, b):
        self.out.append(bytes(b))
boards = {}
def make(compiled):
    selects = make_selects(cfg, lambda n: Pin(n, Pin.OUT, value=1))
    routes = select_routes(cfg)
    buf = Buffers()
    rs = [MFRC522(spi, selects[k], timeout_us=cfg["rfid"]["timeout_us"], buffers=buf,
                  compiled=(fast, 0, 9, routes[k][0], routes[k][1]) if compiled else None) for k in range(8)]
    b = Board(raw, rs, None, Sink(), time, b"\\x01" * 8)
    boards[compiled] = b
    return b._qp is not None
def sweeps(compiled, k):
    b = boards[compiled]
    t = b.sweeps + k
    while b.sweeps < t:
        b.step()
    return b.quiet_reads
def steady(compiled):
    import gc
    b = boards[compiled]
    p = b.pair_reads
    t = b.sweeps + 4
    gc.collect()
    m = gc.mem_free()
    while b.sweeps < t:
        b.step()
    return m - gc.mem_free(), b.pair_reads - p
def result(compiled):
    b = boards[compiled]
    lit = [k for k in range(8) if b._field_since[k] >= 0]
    return [f.hex() for f in b.transport.out], b.fields_on, lit, b.sweep_us, b.pair_reads, b._keep
"""


def test_the_compiled_quiet_run_reports_as_the_plain_board(tmp_path: Path) -> None:
    """The board's compiled quiet run (every quiet cell of a step read in
    one compiled call: WUPA, the decision, both field switches, the fields'
    times) against the same Board on plain drivers (probe() cell by cell),
    8 cells behind a 74HC138 on rp2040js, tiles laid, lifted and swapped
    (two with the same ATQA) a few sweeps apart: the same frames to the
    host, the same frames on the air, reader for reader, and its count of
    fields on is the chips' (how many are on depends on the speed: the
    window of lit fields is sized from the quickest step); the compiled
    board sweeps faster."""
    _board_compiled_vs_plain(tmp_path, 0)


def test_overlapped_reads_of_the_compiled_board_report_as_the_plain_board(tmp_path: Path) -> None:
    """The same with rfid.overlap 4: cell i's known-tag read overlaps cell
    i + 4's (MFRC522.read_pair) on both paths -- the same frames to the
    host, the same frames on the air, reader for reader, and reads were
    overlapped."""
    _board_compiled_vs_plain(tmp_path, 4)


def _board_compiled_vs_plain(tmp_path: Path, overlap: int) -> None:
    need(available() is None, f"emulated RP2040 boards: {available()}")
    from tablesense.sim.mfrc522_emu import EmulatedCard

    cfg = {"board": 3, "cells": 8, "leds": 0}
    board = Rp2040Board(None, 3, config=cfg, state_dir=tmp_path, fresh=True)
    tiles = [UID7, bytes.fromhex("04a1b2c3d4e5f7"), bytes.fromhex("11223344")]
    changes = [(1, 0), (6, 1), (1, None), (3, 2), (6, 0), (0, 1), (3, None), (7, 2), (0, None), (6, None)]
    if overlap:  # tiles on cells i and i + 4 (read together), a same-ATQA swap among them
        changes = [(1, 0), (5, 1), (2, 2), (6, 0), (5, 0), (1, None), (1, 1), (2, None), (6, None), (5, None)]
    results: dict[str, object] = {}
    logs: dict[str, list[list[tuple[bytes, int]]]] = {}
    path = board.start()
    try:
        assert wait_for_prompt(path, timeout=30.0)
        with ReplSession(path, timeout=15) as s:
            _load(s, "config", "proto", "mfrc522", "board")
            lead = 5000 if overlap else 800
            s.exec(_BOARD_QUIET_VS_PLAIN.replace("OVERLAP", str(overlap)).replace("LEAD", str(lead)), timeout=180)
            for mode in ("False", "True"):
                with board.lock:
                    for chip in board.chips:
                        chip.remove()
                        chip.frame_log = []
                assert s.eval(f"make({mode})", timeout=60) is (mode == "True")
                quiet = s.eval(f"sweeps({mode}, 4)", timeout=180)
                for cell, tile in changes:
                    with board.lock:
                        if tile is None:
                            board.chips[cell].remove()
                        else:
                            board.chips[cell].place(EmulatedCard(tiles[tile]))
                    quiet = s.eval(f"sweeps({mode}, 2)", timeout=180)
                assert isinstance(quiet, int) and quiet > 100
                if overlap:  # tiles on cells 1 and 5, read together: no sweep allocates
                    with board.lock:
                        board.chips[1].place(EmulatedCard(tiles[0]))
                        board.chips[5].place(EmulatedCard(tiles[1]))
                    s.eval(f"sweeps({mode}, 4)", timeout=180)
                    out = s.eval(f"steady({mode})", timeout=180)
                    assert isinstance(out, tuple)
                    grew, paired = out
                    assert grew <= 64 and paired >= 8, (mode, grew, paired)
                results[mode] = s.eval(f"result({mode})", timeout=60)
                with board.lock:
                    logs[mode] = [list(chip.frame_log or []) for chip in board.chips[:8]]
                    on = [k for k in range(8) if board.chips[k].field]
                got = results[mode]
                assert isinstance(got, tuple)
                assert got[2] == on and got[1] == len(on), (mode, got[1:], on)
            assert s.eval("1 + 1", timeout=30) == 2
    finally:
        board.stop()
    assert not [ln for ln in board.log_lines if "invalid" in ln.lower()], board.log_lines
    plain, compiled = results["False"], results["True"]
    assert isinstance(plain, tuple) and isinstance(compiled, tuple)
    assert compiled[0] == plain[0] and len(plain[0]) > 10  # BOOT, the cells' events
    assert logs["False"] == logs["True"] and all(logs["False"])
    assert compiled[3] < plain[3]
    if overlap:
        assert plain[4] > 20 and compiled[4] > 20, (plain[4], compiled[4])
        assert compiled[5]  # every field kept on: quiet() switches none
    else:
        assert plain[4] == compiled[4] == 0
        assert not plain[5] and not compiled[5]  # quiet() switched the fields, cell by cell
    print(f"8-cell sweep at the end (overlap {overlap}): plain {plain[3]} us, compiled {compiled[3]} us, "
          f"{plain[4]} reads overlapped")


_KILLED_HOST = r"""
import sys, threading, time
from pathlib import Path
from tablesense.flash.repl import ReplSession
from tablesense.sim.rp2040.board import Rp2040Board, wait_for_prompt
board = Rp2040Board(None, 3, config={"board": 3, "cells": 2, "leds": 0}, state_dir=Path(sys.argv[1]), fresh=True)
path = board.start()
assert wait_for_prompt(path, timeout=60.0)
s = ReplSession(path, timeout=15)
s.open()
spin = ("from machine import SPI, Pin\n"
        "spi = SPI(0, baudrate=4000000, sck=Pin(2), mosi=Pin(3), miso=Pin(4))\n"
        "b = bytearray(2)\n"
        "while True:\n"
        "    spi.write_readinto(b'\\x80\\x00', b)\n")
threading.Thread(target=lambda: s.exec(spin, timeout=600), daemon=True).start()
start = board.bus.now_us
deadline = time.monotonic() + 60
while board.bus.now_us == start and time.monotonic() < deadline:
    time.sleep(0.05)
print(board._proc.pid if board.bus.now_us != start else -1, flush=True)
time.sleep(600)
"""


def _running(pid: int) -> bool:
    """Whether the process lives (a zombie waiting for its reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_an_emulator_whose_host_is_killed_ends(tmp_path: Path) -> None:
    """The Python side of an emulated board killed (SIGKILL: no stop(), the
    pipes just close) while the firmware is in the middle of SPI traffic:
    the emulator ends too, instead of spinning on the closed pipe with a
    host core busy for ever (a killed benchmark left one running for 38
    minutes of CPU)."""
    import os
    import signal
    import subprocess
    import sys

    need(available() is None, f"emulated RP2040 boards: {available()}")
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_HOST, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    pid = -1
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line and int(line) > 0, f"the board never moved a byte on its SPI bus ({line!r})"
        pid = int(line)
        assert _running(pid)
        proc.kill()
        proc.wait(timeout=30)
        wait_until(lambda: not _running(pid), timeout=30, what="the emulator to end after its host was killed")
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if pid > 0 and _running(pid):
            os.kill(pid, signal.SIGKILL)
