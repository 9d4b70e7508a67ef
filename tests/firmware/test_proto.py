"""The frame codec: known vectors, round trips, and fuzzing (any bytes give
frames or counted errors, never an exception or a hang)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablesense.firmware import proto

DECODERS = [
    proto.decode_cell_event,
    proto.decode_snapshot,
    proto.decode_leds,
    proto.decode_ack,
    proto.decode_nak,
    proto.decode_identity,
    proto.decode_stats,
    proto.decode_selftest,
    proto.decode_files,
    proto.decode_log,
    proto.decode_snapshot_req,
    proto.decode_snapshot_part,
]

cell_states = st.one_of(
    st.none(),
    st.just(-1),
    st.integers(1, 255),
    st.binary(min_size=1, max_size=10),
)


def test_crc16_check_value() -> None:
    assert proto.crc16(b"123456789") == 0x29B1


@pytest.mark.parametrize(
    "raw, encoded",
    [
        (b"", b"\x01"),
        (b"\x00", b"\x01\x01"),
        (b"\x00\x00", b"\x01\x01\x01"),
        (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
        (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
        (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255))),
        (bytes(range(1, 255)) + b"\x00", b"\xff" + bytes(range(1, 255)) + b"\x01\x01"),
        (bytes(range(1, 256)), b"\xff" + bytes(range(1, 255)) + b"\x02\xff"),
    ],
)
def test_cobs_known_vectors(raw: bytes, encoded: bytes) -> None:
    assert proto.cobs_encode(raw) == encoded
    assert proto.cobs_decode(encoded) == raw


@settings(deadline=None)
@given(st.binary(max_size=700))
def test_cobs_round_trip_has_no_zero(data: bytes) -> None:
    enc = proto.cobs_encode(data)
    assert 0 not in enc
    assert proto.cobs_decode(enc) == data


@settings(deadline=None)
@given(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255), st.binary(max_size=300))
def test_frame_round_trip(msg_type: int, board: int, seq: int, payload: bytes) -> None:
    frame = proto.encode_frame(msg_type, board, seq, payload)
    assert frame.endswith(b"\x00") and 0 not in frame[:-1]
    assert proto.decode_frame(frame[:-1]) == (msg_type, board, seq, payload)


def test_cell_change_costs_14_to_17_bytes_on_the_wire() -> None:
    sizes = {
        "empty": len(proto.encode_frame(proto.CELL, 1, 9, proto.encode_cell_event(3, None))),
        "error": len(proto.encode_frame(proto.CELL, 1, 9, proto.encode_cell_event(3, proto.ERR_CRC))),
        "uid4": len(proto.encode_frame(proto.CELL, 1, 9, proto.encode_cell_event(3, b"\x11" * 4))),
        "uid7": len(proto.encode_frame(proto.CELL, 1, 9, proto.encode_cell_event(3, b"\x04" * 7))),
    }
    assert sizes["empty"] == 10
    assert sizes["error"] == 11
    assert sizes["uid4"] == 14
    assert sizes["uid7"] == 17
    assert max(sizes.values()) < 20


@settings(deadline=None)
@given(st.integers(0, 255), cell_states)
def test_cell_event_round_trip(cell: int, state: object) -> None:
    assert proto.decode_cell_event(proto.encode_cell_event(cell, state)) == (cell, state)


@settings(deadline=None)
@given(st.integers(0, 255), st.lists(cell_states, max_size=64))
def test_snapshot_round_trip(ack: int, states: list[object]) -> None:
    assert proto.decode_snapshot(proto.encode_snapshot(ack, states)) == (ack, states)


@settings(deadline=None)
@given(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)), max_size=300))
def test_leds_round_trip(colors: list[tuple[int, int, int]]) -> None:
    assert proto.decode_leds(proto.encode_leds(colors)) == colors


def test_other_payload_round_trips() -> None:
    assert proto.decode_ack(proto.encode_ack(7, 1)) == (7, 1)
    assert proto.decode_nak(proto.encode_nak(7, 3, "no LEDs — sorry")) == (7, 3, "no LEDs — sorry")
    ident = proto.encode_identity(9, b"\x01" * 8, "1.0.0", 32, 300, 3, b"\xaa\xbb\xcc\xdd")
    assert proto.decode_identity(ident) == {
        "ack_seq": 9,
        "protocol": proto.VERSION,
        "uid": b"\x01" * 8,
        "fw_version": "1.0.0",
        "cells": 32,
        "leds": 300,
        "caps": 3,
        "config_hash": b"\xaa\xbb\xcc\xdd",
    }
    stats = {k: i * 1000 for i, k in enumerate(proto.STATS_FIELDS)}
    assert proto.decode_stats(proto.encode_stats(4, stats, [0, 70000, 5])) == (4, stats, [0, 0xFFFF, 5])
    assert proto.decode_selftest(proto.encode_selftest(2, [(0x92, True, True), (0, False, False)])) == (
        2,
        [(0x92, True, True), (0, False, False)],
    )
    files = [("main.py", bytes(range(32))), ("ü.json", b"\x01" * 8)]
    assert proto.decode_files(proto.encode_files(1, files)) == (1, [(n, d[:8]) for n, d in files])
    assert proto.decode_log(proto.encode_log(2, "hello")) == (2, "hello")


def test_decode_nak_and_log_reject_invalid_utf8() -> None:
    with pytest.raises(proto.ProtocolError, match="UTF-8"):
        proto.decode_nak(b"\x01\x02\xff\xfe")
    with pytest.raises(proto.ProtocolError, match="UTF-8"):
        proto.decode_log(b"\x01\xc3")
    with pytest.raises(proto.ProtocolError, match="UTF-8"):
        proto.decode_files(b"\x01\x01\x02\xff\xfe" + bytes(8))


def test_encode_rejects_bad_uid_length() -> None:
    with pytest.raises(proto.ProtocolError):
        proto.encode_cell_state(b"")
    with pytest.raises(proto.ProtocolError):
        proto.encode_cell_state(b"\x01" * 11)


# --- fuzzing --------------------------------------------------------------------


@settings(deadline=None, max_examples=300)
@given(st.binary(max_size=400))
def test_every_payload_decoder_only_raises_protocol_error(data: bytes) -> None:
    for decode in DECODERS:
        with contextlib.suppress(proto.ProtocolError):
            decode(data)


@settings(deadline=None, max_examples=300)
@given(st.binary(max_size=2000))
def test_frame_decoder_never_raises_on_any_bytes(data: bytes) -> None:
    d = proto.FrameDecoder(max_frame=256)
    frames = d.feed(data)
    for f in frames:
        assert len(f) == 4 and isinstance(f[3], bytes)
    assert d.frames == len(frames)
    delimited = data.count(0)
    assert d.frames + d.errors <= delimited + 1


@settings(deadline=None, max_examples=200)
@given(
    st.lists(st.tuples(st.integers(0, 255), st.binary(max_size=60)), min_size=1, max_size=12),
    st.lists(st.integers(1, 50), min_size=1, max_size=20),
)
def test_frames_survive_arbitrary_chunking(msgs: list[tuple[int, bytes]], cuts: list[int]) -> None:
    stream = b"".join(proto.encode_frame(t, 1, i, p) for i, (t, p) in enumerate(msgs))
    d = proto.FrameDecoder()
    got = []
    pos = 0
    k = 0
    while pos < len(stream):
        n = cuts[k % len(cuts)]
        got.extend(d.feed(stream[pos : pos + n]))
        pos += n
        k += 1
    assert got == [(t, 1, i, p) for i, (t, p) in enumerate(msgs)]
    assert d.errors == 0


@settings(deadline=None, max_examples=150)
@given(st.randoms(use_true_random=False))
def test_corruption_is_counted_and_good_frames_still_decode(rnd: Any) -> None:
    frames = [proto.encode_frame(proto.CELL, 2, i, proto.encode_cell_event(i, b"\x04" * 7)) for i in range(40)]
    damaged: set[int] = set()
    out = bytearray()
    for i, f in enumerate(frames):
        f = bytearray(f)
        if rnd.random() < 0.3:
            pos = rnd.randrange(len(f) - 1)
            f[pos] = rnd.randrange(1, 256) if f[pos] != 0 else 1
            if f != bytearray(frames[i]):
                damaged.add(i)
        out += f
    d = proto.FrameDecoder()
    got = d.feed(bytes(out))
    seqs = [g[2] for g in got]
    assert set(range(40)) - damaged <= set(seqs)
    assert all(g[3] == proto.encode_cell_event(g[2], b"\x04" * 7) for g in got)
    assert d.frames + d.errors == 40


def test_oversize_run_is_dropped_and_decoding_resumes() -> None:
    d = proto.FrameDecoder(max_frame=64)
    good = proto.encode_frame(proto.PING, 1, 1)
    got = d.feed(b"\x01" * 500 + b"\x00" + good)
    assert got == [(proto.PING, 1, 1, b"")]
    assert d.oversize == 1


def test_version_mismatch_is_counted() -> None:
    body = bytearray(b"\x02\x04\x01\x05")
    crc = proto.crc16(body)
    body += bytes((crc & 0xFF, crc >> 8))
    d = proto.FrameDecoder()
    assert d.feed(proto.cobs_encode(bytes(body)) + b"\x00") == []
    assert d.version_errors == 1


def test_decoder_reset_drops_a_partial_frame() -> None:
    d = proto.FrameDecoder()
    f = proto.encode_frame(proto.PING, 1, 1)
    d.feed(f[:3])
    assert d.reset() is True
    assert d.reset() is False
    assert d.feed(f) == [(proto.PING, 1, 1, b"")]


@settings(deadline=None)
@given(st.text(max_size=400))
def test_long_text_is_cut_on_a_character_boundary(text: str) -> None:
    _ack, _code, msg = proto.decode_nak(proto.encode_nak(1, 2, text))
    assert text.startswith(msg) and len(msg.encode()) <= 200
    _level, log = proto.decode_log(proto.encode_log(1, text))
    assert text.startswith(log)
    _ack, files = proto.decode_files(proto.encode_files(1, [(text, bytes(8))]))
    assert text.startswith(files[0][0]) and len(files[0][0].encode()) <= 255
