"""The codec against the wire rules the audit checked: every legal payload
size passes the decoder, COBS is byte for byte standard COBS (PyPI `cobs`),
and the ranged SNAPSHOT_REQ keeps the version-1 request meaning the whole
board."""

from __future__ import annotations

import random

import pytest
from cobs import cobs as pypi_cobs
from hypothesis import given, settings
from hypothesis import strategies as st

from tablesense.firmware import board as fw_board
from tablesense.firmware import proto

# --- the decoder takes every payload up to MAX_FRAME --------------------------


@pytest.mark.parametrize("size", [1018, 1019, 1020, 1021, 1022, 1023, 1024])
@pytest.mark.parametrize("fill", [0x55, 0x00])
def test_every_payload_up_to_the_maximum_decodes(size: int, fill: int) -> None:
    payload = bytes([fill]) * size
    frame = proto.encode_frame(proto.LEDS, 0, 9, payload)
    d = proto.FrameDecoder()
    assert d.feed(frame) == [(proto.LEDS, 0, 9, payload)]
    assert d.errors == 0


def test_led_frame_for_340_leds_decodes() -> None:
    # no zero byte anywhere: the most COBS overhead
    colors = [(1 + k % 255, 0x80, 0xFF - k % 255) for k in range(340)]
    payload = proto.encode_leds(colors)
    assert len(payload) == 1022 and 0 not in payload
    frame = proto.encode_frame(proto.LEDS, 1, 200, payload)
    d = proto.FrameDecoder()
    got = d.feed(frame)
    assert d.errors == 0
    assert [proto.decode_leds(g[3]) for g in got] == [[tuple(c) for c in colors]]


def test_worst_case_encoding_of_the_maximum_is_the_limit() -> None:
    """No zero byte anywhere: COBS adds one code byte per 254 bytes, the most
    it can; that frame must pass and one byte more must be oversize."""
    payload = b"\x01" * proto.MAX_FRAME
    frame = proto.encode_frame(proto.LEDS, 1, 1, payload)
    # crc16 could contain a zero byte; this payload's does not
    assert len(frame) - 1 == proto.encoded_limit(proto.MAX_FRAME)
    d = proto.FrameDecoder()
    assert d.feed(frame) == [(proto.LEDS, 1, 1, payload)]
    d.feed(b"\x01" * (proto.encoded_limit(proto.MAX_FRAME) + 1) + b"\x00")
    assert d.oversize == 1


def test_random_payloads_near_the_maximum_decode() -> None:
    rnd = random.Random(1024)
    d = proto.FrameDecoder()
    for k in range(200):
        size = rnd.randrange(900, proto.MAX_FRAME + 1)
        payload = bytes(0 if rnd.random() < rnd.choice((0.0, 0.001, 0.2)) else rnd.randrange(1, 256) for _ in range(size))
        assert d.feed(proto.encode_frame(proto.LEDS, 3, k & 0xFF, payload)) == [(proto.LEDS, 3, k & 0xFF, payload)]
    assert d.errors == 0


# --- COBS is standard COBS -----------------------------------------------------


def _boundary_cases() -> list[bytes]:
    out: list[bytes] = [b"", b"\x00", b"\x00\x00", b"\x01"]
    for n in (253, 254, 255, 507, 508, 509, 762, 1016, 1030):
        out.append(b"\x07" * n)
        out.append(b"\x07" * n + b"\x00")
        out.append(b"\x00" + b"\x07" * n)
        out.append(b"\x07" * n + b"\x00" + b"\x07" * 254)
    return out


@pytest.mark.parametrize("data", _boundary_cases(), ids=lambda d: f"len{len(d)}")
def test_cobs_matches_pypi_cobs_at_boundaries(data: bytes) -> None:
    assert proto.cobs_encode(data) == pypi_cobs.encode(data)
    assert proto.cobs_decode(pypi_cobs.encode(data)) == data


def test_cobs_matches_pypi_cobs_on_random_data() -> None:
    rnd = random.Random(20261201)
    for _ in range(1500):
        n = rnd.choice((rnd.randrange(0, 40), rnd.randrange(200, 1100), 254 * rnd.randrange(1, 5)))
        zeros = rnd.choice((0.0, 0.002, 0.05, 0.5))
        data = bytes(0 if rnd.random() < zeros else rnd.randrange(1, 256) for _ in range(n))
        assert proto.cobs_encode(data) == pypi_cobs.encode(data), data
        assert proto.cobs_decode(proto.cobs_encode(data)) == data


def test_old_encoding_with_the_needless_block_still_decodes() -> None:
    """A board running the previous firmware adds 0x01 after a full run; the
    new decoder must still read its frames."""
    data = bytes(range(1, 255))
    assert proto.cobs_decode(b"\xff" + data + b"\x01") == data


# --- ranged SNAPSHOT_REQ ---------------------------------------------------------


class _Reader:
    def __init__(self, uid: bytes | None) -> None:
        self.uid = uid

    def init(self) -> bool:
        return True

    def read_uid(self) -> bytes | None:
        return self.uid

    def self_test(self) -> tuple[int, bool, bool]:
        return (0x92, True, True)


class _Clock:
    def __init__(self) -> None:
        self.ms = 0

    def ticks_ms(self) -> int:
        return self.ms

    def ticks_us(self) -> int:
        return self.ms * 1000

    def ticks_diff(self, a: int, b: int) -> int:
        return a - b


class _Loop:
    def __init__(self) -> None:
        self.inbox = b""
        self.out = bytearray()

    def read(self) -> bytes:
        data, self.inbox = self.inbox, b""
        return data

    def write(self, data: bytes) -> None:
        self.out += data


def _board(cells: int = 10) -> tuple[fw_board.Board, _Loop]:
    uids: list[bytes | None] = [bytes([0x04, k, 2, 3, 4, 5, 6]) if k % 3 else None for k in range(cells)]
    loop = _Loop()
    cfg = {"board": 2, "cells": cells, "debounce": {"tag": 1, "empty": 1, "error": 1, "unstable": 9}}
    b = fw_board.Board(cfg, [_Reader(u) for u in uids], None, loop, _Clock(), b"\x01" * 8)
    for _ in range(cells * 2):
        b.step()
    return b, loop


def _ask(b: fw_board.Board, loop: _Loop, seq: int, payload: bytes) -> tuple[int, int, int, bytes]:
    loop.out.clear()
    loop.inbox = proto.encode_frame(proto.SNAPSHOT_REQ, 2, seq, payload)
    b.step()
    frames = [f for f in proto.FrameDecoder().feed(bytes(loop.out)) if f[0] != proto.CELL]
    assert len(frames) == 1
    return frames[0]


def test_old_style_request_still_means_every_cell() -> None:
    b, loop = _board()
    t, _board_id, _seq, payload = _ask(b, loop, 7, b"")
    assert t == proto.SNAPSHOT
    assert proto.decode_snapshot(payload) == (7, b.snapshot())


def test_ranged_request_answers_those_cells_with_the_event_count() -> None:
    b, loop = _board()
    truth = b.snapshot()
    t, _b, _s, payload = _ask(b, loop, 8, proto.encode_snapshot_req(3, 4))
    assert t == proto.SNAPSHOT_PART
    assert proto.decode_snapshot_part(payload) == (8, 3, b.events, truth[3:7])
    # count 0 and a count past the end: through the last cell
    _t, _b, _s, payload = _ask(b, loop, 9, proto.encode_snapshot_req(6, 0))
    assert proto.decode_snapshot_part(payload)[3] == truth[6:]
    _t, _b, _s, payload = _ask(b, loop, 10, proto.encode_snapshot_req(8, 200))
    assert proto.decode_snapshot_part(payload)[1:] == (8, b.events, truth[8:])


def test_bad_range_is_a_nak_not_a_crash() -> None:
    b, loop = _board()
    t, _b, _s, payload = _ask(b, loop, 11, proto.encode_snapshot_req(10, 1))
    assert t == proto.NAK
    assert proto.decode_nak(payload)[:2] == (11, proto.NAK_BAD_PAYLOAD)
    t, _b, _s, payload = _ask(b, loop, 12, b"\x01")
    assert t == proto.NAK


@settings(deadline=None)
@given(st.integers(0, 255), st.integers(0, 255), st.integers(0, 0xFFFF), st.lists(st.one_of(st.none(), st.just(-1), st.integers(1, 255), st.binary(min_size=1, max_size=10)), max_size=40))
def test_snapshot_part_round_trip(ack: int, first: int, events: int, states: list[object]) -> None:
    states = states[: 256 - first]
    payload = proto.encode_snapshot_part(ack, first, events, states)
    assert proto.decode_snapshot_part(payload) == (ack, first, events, states)
    assert proto.decode_snapshot_req(proto.encode_snapshot_req(first, len(states))) == (first, len(states) & 0xFF)
    assert proto.decode_snapshot_req(proto.encode_snapshot_req()) is None
