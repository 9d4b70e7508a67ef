"""The protocol changes on real MicroPython (the board's interpreter): COBS
byte-identical to CPython's (and so to PyPI `cobs`) at the 254-byte
boundaries, a 1024-byte payload (a 340-LED frame) decoded by the board, and
the ranged SNAPSHOT_REQ answered by the board's step loop."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fw_mpy import run_micropython, wasm_available

from tablesense.firmware import proto
from testsupport import need

CODE = r"""
import json
import proto, board

def result(name, value):
    print("RESULT " + json.dumps([name, value]))

def hx(b):
    return "".join("%02x" % x for x in b)

cases = []
for n in (253, 254, 255, 508, 509, 1030):
    cases.append(b"\x07" * n)
    cases.append(b"\x07" * n + b"\x00")
result("cobs", [hx(proto.cobs_encode(c)) for c in cases])

d = proto.FrameDecoder()
sizes = []
for n in (1020, 1021, 1022, 1023, 1024):
    got = d.feed(proto.encode_frame(proto.LEDS, 0, n & 0xFF, bytes([0x55]) * n))
    sizes.append([len(g[3]) for g in got])
result("sizes", sizes)
result("errors", d.errors)

class Reader:
    def __init__(self, uid):
        self.uid = uid
    def init(self):
        return True
    def read_uid(self):
        return self.uid
    def self_test(self):
        return (0x92, True, True)

class Clock:
    def ticks_ms(self):
        return 0
    def ticks_us(self):
        return 0
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

t = Loop()
readers = [Reader(bytes([4, k, 2, 3, 4, 5, 6]) if k % 2 else None) for k in range(12)]
cfg = {"board": 4, "cells": 12, "debounce": {"tag": 1, "empty": 1, "error": 1, "unstable": 9}}
b = board.Board(cfg, readers, None, t, Clock(), b"\x01" * 8)
for _ in range(24):
    b.step()
t.out = bytearray()
t.inbox = (proto.encode_frame(proto.SNAPSHOT_REQ, 4, 1)
           + proto.encode_frame(proto.SNAPSHOT_REQ, 4, 2, proto.encode_snapshot_req(4, 5))
           + proto.encode_frame(proto.SNAPSHOT_REQ, 4, 3, proto.encode_snapshot_req(12, 1)))
b.step()
result("answers", [[f[0], hx(f[3])] for f in proto.FrameDecoder().feed(bytes(t.out)) if f[0] != proto.CELL])
result("events", b.events)
"""


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    need(wasm_available(), "node and npm package @micropython/micropython-webassembly-pyscript")
    out = run_micropython(CODE)
    found: dict[str, Any] = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            name, value = json.loads(line[len("RESULT ") :])
            found[name] = value
    return found


def test_cobs_on_micropython_is_standard_cobs(results: dict[str, Any]) -> None:
    cases = []
    for n in (253, 254, 255, 508, 509, 1030):
        cases.append(b"\x07" * n)
        cases.append(b"\x07" * n + b"\x00")
    assert results["cobs"] == [proto.cobs_encode(c).hex() for c in cases]
    assert results["cobs"][2] == "ff" + "07" * 254  # no needless trailing 0x01


def test_the_board_decodes_payloads_up_to_1024_bytes(results: dict[str, Any]) -> None:
    assert results["sizes"] == [[1020], [1021], [1022], [1023], [1024]]
    assert results["errors"] == 0


def test_the_board_answers_ranged_and_whole_snapshot_requests(results: dict[str, Any]) -> None:
    answers = [(t, bytes.fromhex(p)) for t, p in results["answers"]]
    assert [t for t, _p in answers] == [proto.SNAPSHOT, proto.SNAPSHOT_PART, proto.NAK]
    truth = [bytes([4, k, 2, 3, 4, 5, 6]) if k % 2 else None for k in range(12)]
    assert proto.decode_snapshot(answers[0][1]) == (1, truth)
    assert proto.decode_snapshot_part(answers[1][1]) == (2, 4, results["events"], truth[4:9])
    assert proto.decode_nak(answers[2][1])[:2] == (3, proto.NAK_BAD_PAYLOAD)
