"""The same firmware logic on real MicroPython: the WebAssembly port under
Node.js, with the firmware files, the MFRC522 emulator and the fake machine
module written into its filesystem. Every check compares MicroPython's
answer with CPython's."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from fw_mpy import firmware_files, run_micropython, wasm_available

from tablesense.firmware import config as host_config
from tablesense.firmware import proto
from testsupport import need

pytestmark = pytest.mark.timeout(120)

# Runs inside MicroPython. Prints one "RESULT <json>" line per check.
CHECKS = r"""
import json, random
import proto, board, config, leds, mfrc522, machine
from tablesense.sim.mfrc522_emu import EmulatedMFRC522, EmulatedCard

def result(name, value):
    print("RESULT " + json.dumps([name, value]))

def hx(b):
    return "".join("%02x" % x for x in b)

# 1. codec round trips and vectors
result("crc", proto.crc16(b"123456789"))
frames = [
    proto.encode_frame(proto.CELL, 1, 9, proto.encode_cell_event(3, b"\x04\xa1\xb2\xc3\xd4\xe5\xf6")),
    proto.encode_frame(proto.CELL, 1, 10, proto.encode_cell_event(4, None)),
    proto.encode_frame(proto.CELL, 1, 11, proto.encode_cell_event(5, proto.ERR_CRC)),
    proto.encode_frame(proto.SNAPSHOT, 2, 0, proto.encode_snapshot(7, [None, b"\x11\x22\x33\x44", -1, 3])),
    proto.encode_frame(proto.LEDS, 0, 1, proto.encode_leds([(1, 2, 3), (0, 0, 0)])),
    proto.encode_frame(proto.IDENTITY, 3, 4, proto.encode_identity(1, b"\x01" * 8, "1.0.0", 32, 32, 3, b"\xaa\xbb\xcc\xdd")),
    proto.encode_frame(proto.STATS, 3, 5, proto.encode_stats(2, {"sweeps": 7, "events": 70000}, [1, 2])),
    proto.encode_frame(proto.FILES, 3, 6, proto.encode_files(2, [("main.py", b"\x01" * 32)])),
    proto.encode_frame(proto.NAK, 3, 7, proto.encode_nak(2, 3, "no LEDs")),
    proto.encode_frame(proto.LOG, 3, 8, proto.encode_log(1, "h\u00e9llo")),
]
result("frames", [hx(f) for f in frames])
d = proto.FrameDecoder()
got = d.feed(b"".join(frames))
result("decoded", [[t, b, s, hx(p)] for t, b, s, p in got])
result("snapshot", [x if not isinstance(x, bytes) else hx(x) for x in proto.decode_snapshot(got[3][3])[1]])
result("identity_fw", proto.decode_identity(got[5][3])["fw_version"])
result("log", proto.decode_log(got[9][3])[1])

# 2. random-bytes fuzz: frames or counted errors, never an exception
random.seed(1234)
decoders = [proto.decode_cell_event, proto.decode_snapshot, proto.decode_leds, proto.decode_ack,
            proto.decode_nak, proto.decode_identity, proto.decode_stats, proto.decode_selftest,
            proto.decode_files, proto.decode_log]
crashes = 0
rejected = 0
d = proto.FrameDecoder(max_frame=200)
for i in range(400):
    n = random.getrandbits(8) % 90
    blob = bytes(random.getrandbits(8) for _ in range(n))
    if i % 3 == 0:
        blob = blob.replace(b"\x00", b"\x01")
    for dec in decoders:
        try:
            dec(blob)
        except proto.ProtocolError:
            rejected += 1
        except Exception as e:
            crashes += 1
            print("CRASH", dec, repr(e))
    try:
        d.feed(blob)
    except Exception as e:
        crashes += 1
        print("CRASH feed", repr(e))
good = proto.encode_frame(proto.PING, 1, 77)
after = d.feed(b"\x00" + good)
result("fuzz", {"crashes": crashes, "rejected": rejected, "errors": d.errors, "recovered": [f[2] for f in after]})

# invalid UTF-8 is a ProtocolError on MicroPython too
bad_text = []
for p, dec in ((b"\x01\x02\xff\xfe", proto.decode_nak), (b"\x01\xc3", proto.decode_log)):
    try:
        dec(p)
        bad_text.append("accepted")
    except proto.ProtocolError:
        bad_text.append("ProtocolError")
result("bad_utf8", bad_text)

# 3. Board.step against an in-MicroPython scripted reader
class Reader:
    def __init__(self, readings):
        self.readings = list(readings)
    def init(self):
        return True
    def read_uid(self):
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]
    def self_test(self):
        return (0x92, True, True)

class Clock:
    def __init__(self):
        self.ms = 0
    def ticks_ms(self):
        return self.ms
    def ticks_us(self):
        return self.ms * 1000
    def ticks_diff(self, a, b):
        return a - b

class Loop:
    def __init__(self):
        self.inbox = b""
        self.out = bytearray()
    def read(self):
        d = self.inbox
        self.inbox = b""
        return d
    def write(self, data):
        self.out.extend(data)

U = b"\x04\xa1\xb2\xc3\xd4\xe5\xf6"
readers = [Reader([U, U, None, U, U, proto.ERR_CRC, None, proto.ERR_CRC, U, None, None, None]),
           Reader([None]), Reader([proto.ERR_TIMEOUT])]
np = machine.NeoPixel(None, 3)
t = Loop()
clock = Clock()
cfg = {"board": 9, "cells": 3, "leds": 3, "cs": {"kind": "gpio", "pins": [10, 11, 12]}}
b = board.Board(cfg, readers, leds.Strip(np), t, clock, b"\x01\x02\x03\x04\x05\x06\x07\x08",
                files=[("main.py", b"\x02" * 32)], bootloader=lambda: None)
for step in range(3 * 14):
    if step == 20:
        t.inbox = (proto.encode_frame(proto.HELLO, 0, 1, b"\x01")
                   + proto.encode_frame(proto.SNAPSHOT_REQ, 0, 2)
                   + proto.encode_frame(proto.LEDS, 0, 3, proto.encode_leds([(5, 6, 7)] * 3))
                   + proto.encode_frame(proto.PING, 0, 4)
                   + proto.encode_frame(proto.STATS_REQ, 0, 5)
                   + proto.encode_frame(proto.FILES_REQ, 0, 6)
                   + proto.encode_frame(0x42, 0, 7)
                   + proto.encode_frame(proto.HOT, 0, 8, proto.encode_hot([])))
    b.step()
    clock.ms += 1
out = proto.FrameDecoder().feed(bytes(t.out))
result("board_frames", [[ty, bd, s, hx(p)] for ty, bd, s, p in out])
result("board_leds", [list(c) for c in np.written[-1]])

# the hot-cells hint: cell 2 read between every two cells of the sweep
t2 = Loop()
b2 = board.Board({"board": 9, "cells": 3}, [Reader([None]), Reader([None]), Reader([U])], None, t2, Clock(),
                 b"\x01" * 8)
b2.step()
t2.inbox = proto.encode_frame(proto.HOT, 0, 1, proto.encode_hot([2]))
for _ in range(12):
    b2.step()
result("board_hot", {"hot": b2.hot, "hot_reads": b2.hot_reads, "sweeps": b2.sweeps})

# 4. our driver against the emulator, on MicroPython
bus = machine.SPI(0)
chip = bus.attach(machine.Pin(17), EmulatedMFRC522())
r = mfrc522.MFRC522(bus, machine.Pin(17), timeout_us=500)
reads = [r.init()]
t0 = bus.now_us
reads.append(r.read_uid())
empty_us = bus.now_us - t0
for uid in (b"\x11\x22\x33\x44", U, b"\x04\xa1\xb2\xc3\xd4\xe5\xf6\x07\x08\x09"):
    chip.place(EmulatedCard(uid))
    reads.append(hx(r.read_uid()))
chip.dead = True
reads.append(r.read_uid())
result("driver", {"reads": reads, "empty_us": empty_us})

# 5. config hash: canonical JSON like CPython's json.dumps(sort_keys=True)
raw = {"board": 3, "cells": 2, "name": "caf\u00e9 \"x\"", "leds": 2, "channel_leds": [1, 0]}
result("config_hash", hx(config.parse(raw)["hash"]))
"""


@pytest.fixture(scope="module")
def mpy_results() -> dict[str, Any]:
    need(wasm_available(), "node and npm package @micropython/micropython-webassembly-pyscript")
    out = run_micropython(CHECKS)
    assert "CRASH" not in out, out
    results: dict[str, Any] = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            name, value = json.loads(line[len("RESULT ") :])
            results[name] = value
    return results


def test_codec_is_byte_identical_on_micropython(mpy_results: dict[str, Any]) -> None:
    assert mpy_results["crc"] == 0x29B1
    cpython = [
        proto.encode_frame(proto.CELL, 1, 9, proto.encode_cell_event(3, bytes.fromhex("04a1b2c3d4e5f6"))),
        proto.encode_frame(proto.CELL, 1, 10, proto.encode_cell_event(4, None)),
        proto.encode_frame(proto.CELL, 1, 11, proto.encode_cell_event(5, proto.ERR_CRC)),
        proto.encode_frame(proto.SNAPSHOT, 2, 0, proto.encode_snapshot(7, [None, b"\x11\x22\x33\x44", -1, 3])),
        proto.encode_frame(proto.LEDS, 0, 1, proto.encode_leds([(1, 2, 3), (0, 0, 0)])),
        proto.encode_frame(
            proto.IDENTITY, 3, 4, proto.encode_identity(1, b"\x01" * 8, "1.0.0", 32, 32, 3, b"\xaa\xbb\xcc\xdd")
        ),
        proto.encode_frame(proto.STATS, 3, 5, proto.encode_stats(2, {"sweeps": 7, "events": 70000}, [1, 2])),
        proto.encode_frame(proto.FILES, 3, 6, proto.encode_files(2, [("main.py", b"\x01" * 32)])),
        proto.encode_frame(proto.NAK, 3, 7, proto.encode_nak(2, 3, "no LEDs")),
        proto.encode_frame(proto.LOG, 3, 8, proto.encode_log(1, "h\u00e9llo")),
    ]
    assert mpy_results["frames"] == [f.hex() for f in cpython]
    decoded = proto.FrameDecoder().feed(b"".join(cpython))
    assert mpy_results["decoded"] == [[t, b, s, p.hex()] for t, b, s, p in decoded]
    assert mpy_results["snapshot"] == [None, "11223344", -1, 3]
    assert mpy_results["identity_fw"] == "1.0.0"
    assert mpy_results["log"] == "h\u00e9llo"


def test_random_bytes_fuzz_on_micropython(mpy_results: dict[str, Any]) -> None:
    fuzz = mpy_results["fuzz"]
    assert fuzz["crashes"] == 0
    assert fuzz["rejected"] > 3000  # nearly every random payload is refused ...
    assert fuzz["errors"] > 0  # ... and the garbage frames were counted
    assert fuzz["recovered"] == [77]  # and a good frame after it still decodes
    assert mpy_results["bad_utf8"] == ["ProtocolError", "ProtocolError"]


def test_board_step_on_micropython(mpy_results: dict[str, Any]) -> None:
    frames = [(t, b, s, bytes.fromhex(p)) for t, b, s, p in mpy_results["board_frames"]]
    assert frames[0][:3] == (proto.BOOT, 9, 0)
    assert [f[2] for f in frames] == list(range(len(frames)))
    events = [proto.decode_cell_event(p) for t, _b, _s, p in frames if t == proto.CELL]
    uid = bytes.fromhex("04a1b2c3d4e5f6")
    cell0 = [s for c, s in events if c == 0]
    # a tag confirmed after 1 read; single misses and errors never made it empty;
    # three empty reads in a row finally did
    assert cell0 == [uid, None]
    assert (1, None) in events and (2, proto.ERR_TIMEOUT) in events
    by_type: dict[int, list[bytes]] = {}
    for t, _b, _s, p in frames:
        by_type.setdefault(t, []).append(p)
    ident = proto.decode_identity(by_type[proto.IDENTITY][0])
    assert ident["ack_seq"] == 1 and ident["cells"] == 3 and ident["leds"] == 3
    assert ident["caps"] == proto.CAP_LEDS | proto.CAP_BOOTLOADER | proto.CAP_HOT
    ack, states = proto.decode_snapshot(by_type[proto.SNAPSHOT][0])
    assert ack == 2 and states[1] is None and states[2] == proto.ERR_TIMEOUT
    assert [proto.decode_ack(p) for p in by_type[proto.ACK]] == [(3, 0), (4, 0), (8, 0)]
    ack, stats, errs = proto.decode_stats(by_type[proto.STATS][0])
    assert ack == 5 and stats["frames_rx"] == 8 and errs[2] >= 6
    assert proto.decode_files(by_type[proto.FILES][0]) == (6, [("main.py", b"\x02" * 8)])
    assert proto.decode_nak(by_type[proto.NAK][0])[:2] == (7, proto.NAK_UNKNOWN_TYPE)
    assert mpy_results["board_leds"] == [[5, 6, 7]] * 3
    # HOT: 12 steps after it alternate ordinary and hot reads
    assert mpy_results["board_hot"] == {"hot": [2], "hot_reads": 6, "sweeps": 2}


def test_driver_against_emulator_on_micropython(mpy_results: dict[str, Any]) -> None:
    drv = mpy_results["driver"]
    assert drv["reads"] == [True, None, "11223344", "04a1b2c3d4e5f6", "04a1b2c3d4e5f6070809", 1]
    assert 500 < drv["empty_us"] < 1500


def test_config_hash_matches_cpython(mpy_results: dict[str, Any]) -> None:
    raw = {"board": 3, "cells": 2, "name": 'caf\u00e9 "x"', "leds": 2, "channel_leds": [1, 0]}
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":")).encode()
    assert mpy_results["config_hash"] == hashlib.sha256(canonical).digest()[:4].hex()
    assert host_config.parse(raw)["hash"].hex() == mpy_results["config_hash"]


def test_main_runs_on_micropython_with_the_fake_machine() -> None:
    need(wasm_available(), "node and npm package @micropython/micropython-webassembly-pyscript")
    code = r"""
import json, machine, proto, main
from tablesense.sim.mfrc522_emu import EmulatedMFRC522, EmulatedCard
with open("/config.json", "w") as f:
    f.write(json.dumps({"board": 2, "cells": 2, "leds": 2, "cs": {"kind": "gpio", "pins": [17, 18]}}))
bus = machine.SPI(0)
chips = [bus.attach(machine.Pin(p), EmulatedMFRC522()) for p in (17, 18)]
chips[1].place(EmulatedCard(b"\x11\x22\x33\x44"))
class T:
    def __init__(self):
        self.inbox = proto.encode_frame(proto.HELLO, 0, 1, b"\x01") + b"\r\x03\r\x01"
        self.out = bytearray()
    def read(self):
        # like UsbTransport: stop right after a 0x03 byte
        i = self.inbox.find(b"\x03")
        n = len(self.inbox) if i < 0 else i + 1
        d = self.inbox[:n]
        self.inbox = self.inbox[n:]
        return d
    def write(self, d):
        self.out.extend(d)
t = T()
b = main.main("/config.json", t, max_steps=50)
frames = proto.FrameDecoder().feed(bytes(t.out))
print("RESULT " + json.dumps([[f[0] for f in frames], b.maintenance, b.steps, t.inbox == b"\r\x01"]))
"""
    out = run_micropython(code, files=firmware_files(main=True))
    line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")][0]
    types, maintenance, steps, left = json.loads(line[len("RESULT ") :])
    assert types[:2] == [proto.BOOT, proto.IDENTITY]
    assert maintenance is True and steps <= 2 and left is True


SWAPS = r"""
import json, machine, mfrc522
from tablesense.sim.mfrc522_emu import EmulatedMFRC522, EmulatedCard

def hx(b):
    return b if b is None or isinstance(b, int) else "".join("%02x" % x for x in b)

bus = machine.SPI(0)
chip = bus.attach(machine.Pin(18), EmulatedMFRC522())
r = mfrc522.MFRC522(bus, machine.Pin(18), full_read_every=4)
got = [r.init()]
for uid, reads in SEQ:
    if uid is None:
        chip.remove()
    else:
        chip.place(EmulatedCard(bytes(int(uid[i:i + 2], 16) for i in range(0, len(uid), 2))))
    for _ in range(reads):
        got.append(hx(r.read_uid()))
print("RESULT " + json.dumps([got, r.known_reads]))
"""


def test_lay_lift_and_same_atqa_swaps_read_the_same_on_micropython() -> None:
    """The known-tag path on the WebAssembly port: one random sequence of
    lays, lifts and swaps for tiles of the same ATQA (some sharing their
    first cascade level), read by the driver against the chip model on
    MicroPython and on CPython: every read is what lies on the cell, on
    both, read for read."""
    import random

    need(wasm_available(), "node and npm package @micropython/micropython-webassembly-pyscript")
    from tablesense.firmware import mfrc522 as drv
    from tablesense.sim.mfrc522_emu import EmulatedCard, EmulatedSPIBus

    rng = random.Random(2026)
    tiles = ["04a1b2c3d4e5f6", "04a1b2c3d4e5f7", "04a1b3c3d4e5f6", "04ffeeddccbbaa", "11223344", "55667788"]
    seq: list[tuple[str | None, int]] = [(rng.choice([*tiles, None]), rng.randint(1, 6)) for _ in range(40)]
    out = run_micropython(SWAPS.replace("SEQ", repr(seq)))
    assert "CRASH" not in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT "))
    got, known = json.loads(line[len("RESULT "):])
    bus = EmulatedSPIBus()
    pin, chip = bus.add_reader(18)
    r = drv.MFRC522(bus, pin, full_read_every=4)
    expected: list[object] = [r.init()]
    cpython: list[object] = [expected[0]]
    for uid, reads in seq:
        if uid is None:
            chip.remove()
        else:
            chip.place(EmulatedCard(bytes.fromhex(uid)))
        for _ in range(reads):
            read = r.read_uid()
            cpython.append(read.hex() if isinstance(read, bytes) else read)
            expected.append(uid)
    assert cpython == expected  # every read is what lies there
    assert got == cpython  # MicroPython, read for read
    assert known == r.known_reads > 20  # the known-tag path served reads on both


QUIET = r"""
import json, machine, mfrc522, board, proto
from tablesense.sim.mfrc522_emu import EmulatedMFRC522, EmulatedCard

class Clock:
    def __init__(self, bus):
        self.bus = bus
    def ticks_us(self):
        return self.bus.ticks_us()
    def ticks_ms(self):
        return self.bus.ticks_us() // 1000
    def ticks_diff(self, a, b):
        return self.bus.ticks_diff(a, b)
    def sleep_us(self, us):
        self.bus.advance(us)

class Sink:
    def __init__(self):
        self.out = []
    def read(self):
        return b""
    def write(self, frame):
        self.out.append(frame)

def world(quiet):
    # (the fake machine shares a bus and a pin per id: each world its own)
    bus = machine.SPI(1 if quiet else 0)
    pin0 = 20 if quiet else 10
    chips = []
    readers = []
    for i in range(8):
        chip = bus.attach(machine.Pin(pin0 + i), EmulatedMFRC522(power_up_us=5000.0))
        chip.frame_log = []
        chips.append(chip)
        readers.append(mfrc522.MFRC522(bus, machine.Pin(pin0 + i)))
    cfg = {"format": "tablesense.board/1", "board": 7, "cells": 8, "leds": 0,
           "cs": {"kind": "gpio", "pins": list(range(pin0, pin0 + 8))}}
    sink = Sink()
    b = board.Board(cfg, readers, None, sink, Clock(bus), b"\x01" * 8)
    if not quiet:
        b._probes = None
    for cell, uid in SEQ:
        if uid is None:
            chips[cell].remove()
        else:
            chips[cell].place(EmulatedCard(bytes(int(uid[i:i + 2], 16) for i in range(0, len(uid), 2))))
        target = b.sweeps + 2
        while b.sweeps < target:
            b.step()
    frames = [[("".join("%02x" % x for x in f), n) for f, n in c.frame_log] for c in chips]
    return ["".join("%02x" % x for x in f) for f in sink.out], frames, bus.transfers, b.quiet_reads

got = [world(False), world(True)]
print("RESULT " + json.dumps(got))
"""


def test_quiet_cells_read_the_same_on_micropython() -> None:
    """The quiet-cell path (board._scan_quiet with the driver's probe()) on
    the WebAssembly port: a board of real drivers over the chip model, time-
    shared fields with a tag's 5 ms power-up, tiles laid, lifted and swapped
    two sweeps apart: the frames sent to the host, the frames on the air
    and the SPI transactions are the step-per-cell path's, and CPython's."""
    import random

    need(wasm_available(), "node and npm package @micropython/micropython-webassembly-pyscript")
    rng = random.Random(26)
    tiles = ["04a1b2c3d4e5f6", "04a1b2c3d4e5f7", "11223344", None]
    seq = [(rng.randrange(8), rng.choice(tiles)) for _ in range(12)]
    out = run_micropython(QUIET.replace("SEQ", repr(seq)), timeout=300.0)
    assert "CRASH" not in out and "Traceback" not in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT "))
    plain, quiet = json.loads(line[len("RESULT "):])
    assert plain[3] == 0 and quiet[3] > 40
    assert quiet[:3] == plain[:3]
    assert len(quiet[0]) > 5 and sum(len(f) for f in quiet[1]) > 100
    # CPython: the same script's board, the same results
    _board, sink, chips, _bus = _cpython_board(seq, 10)
    assert [f.hex() for f in sink.out] == quiet[0]
    assert [[[f.hex(), n] for f, n in c.frame_log or []] for c in chips] == quiet[1]


PAIRS = QUIET.replace(
    '"cs": {"kind": "gpio", "pins": list(range(pin0, pin0 + 8))}}',
    '"cs": {"kind": "gpio", "pins": list(range(pin0, pin0 + 8))}, "rfid": {"overlap": 4}}',
).replace("b.quiet_reads\n", "b.pair_reads\n").replace("got = [world(False), world(True)]", "got = [world(True)]")


def test_overlapped_reads_read_the_same_on_micropython() -> None:
    """The overlapped path (rfid.overlap 4: MFRC522.read_pair, the board's
    pairing) on the WebAssembly port against CPython: tiles laid, lifted and
    swapped (same ATQA too) on cells four apart, two sweeps apart: the same
    frames to the host, the same frames on each reader's air, the same SPI
    transactions and the same number of overlapped reads."""
    import random

    need(wasm_available(), "node and npm package @micropython/micropython-webassembly-pyscript")
    assert "b.pair_reads" in PAIRS and '"overlap": 4' in PAIRS
    rng = random.Random(2626)
    tiles = ["04a1b2c3d4e5f6", "04a1b2c3d4e5f7", "11223344", None]
    seq = [(rng.choice((0, 1, 4, 5)), rng.choice(tiles)) for _ in range(14)]
    out = run_micropython(PAIRS.replace("SEQ", repr(seq)), timeout=300.0)
    assert "CRASH" not in out and "Traceback" not in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT "))
    (mpy,) = json.loads(line[len("RESULT "):])
    b, sink, chips, bus = _cpython_board(seq, 20, rfid={"overlap": 4})
    assert b.pair_reads > 10
    assert [f.hex() for f in sink.out] == mpy[0]
    assert [[[f.hex(), n] for f, n in c.frame_log or []] for c in chips] == mpy[1]
    assert [bus.transfers, b.pair_reads] == mpy[2:]


def _cpython_board(seq: list[tuple[int, str | None]], pin0: int, rfid: dict[str, int] | None = None
                   ) -> tuple[Any, Any, list[Any], Any]:
    """The QUIET/PAIRS scripts' world on CPython: an 8-cell board on emulated
    readers (chip selects pin0..pin0 + 7, a tag's 5 ms power-up), each change
    of ``seq`` (cell, UID hex or None) followed by two sweeps -> the board,
    what it sent (``.out``), the chips and their bus."""
    from tablesense.firmware import board as fw_board
    from tablesense.firmware import mfrc522 as drv
    from tablesense.sim.mfrc522_emu import EmulatedCard, EmulatedMFRC522, EmulatedSPIBus

    bus = EmulatedSPIBus()
    chips = []
    readers = []
    for i in range(8):
        pin, chip = bus.add_reader(pin0 + i, power_up_us=5000.0)
        chip.frame_log = []
        chips.append(chip)
        readers.append(drv.MFRC522(bus, pin))
    assert isinstance(chips[0], EmulatedMFRC522)

    class Clock:
        def ticks_us(self) -> int:
            return bus.ticks_us()

        def ticks_ms(self) -> int:
            return bus.ticks_us() // 1000

        def ticks_diff(self, a: int, b: int) -> int:
            return bus.ticks_diff(a, b)

        def sleep_us(self, us: int) -> None:
            bus.advance(us)

    class Sink:
        def __init__(self) -> None:
            self.out: list[bytes] = []

        def read(self) -> bytes:
            return b""

        def write(self, frame: bytes) -> None:
            self.out.append(bytes(frame))

    cfg: dict[str, Any] = {"format": "tablesense.board/1", "board": 7, "cells": 8, "leds": 0,
                           "cs": {"kind": "gpio", "pins": list(range(pin0, pin0 + 8))}}
    if rfid is not None:
        cfg["rfid"] = rfid
    sink = Sink()
    b = fw_board.Board(cfg, readers, None, sink, Clock(), b"\x01" * 8)
    for cell, uid in seq:
        if uid is None:
            chips[cell].remove()
        else:
            chips[cell].place(EmulatedCard(bytes.fromhex(uid)))
        target = b.sweeps + 2
        while b.sweeps < target:
            b.step()
    return b, sink, chips, bus


def test_diag_times_whole_sweeps_of_the_board_on_micropython() -> None:
    """diag's REPL measurement (tablesense.diag.runtime) counts sweeps by the
    board's own counter: a step may read several quiet cells, so a count of
    steps would time several sweeps as one. Its figure agrees with the
    board's own sweep_us (real MicroPython, WebAssembly port)."""
    need(wasm_available(), "node and npm package @micropython/micropython-webassembly-pyscript")
    from tablesense.diag import runtime

    setup = r"""
import json, machine
from tablesense.sim.mfrc522_emu import EmulatedMFRC522
with open("/config.json", "w") as f:
    f.write(json.dumps({"board": 2, "cells": 8, "leds": 0, "cs": {"kind": "gpio", "pins": list(range(10, 18))}}))
bus = machine.SPI(0)
chips = [bus.attach(machine.Pin(p), EmulatedMFRC522()) for p in range(10, 18)]
"""
    out = run_micropython(setup + runtime.code([None, 0], 4), files=firmware_files(main=True), timeout=300.0)
    rt = runtime.parse(out.encode())
    (eight, none) = rt.sweeps
    assert eight["cells"] == 8 and none["cells"] == 0
    assert eight["sweep_ms"] > 0 and eight["board_sweep_ms"] > 0
    assert 0.5 < eight["sweep_ms"] / eight["board_sweep_ms"] < 2.0, eight
