"""Frame codec tests written to kill mutants that survived the older suite
(benchmarks/mutation.py, docs/mutation-testing.md): the wire constants against the
protocol document (an independent source, so a changed code is seen), exact
byte vectors for every message, and the boundaries of every length check."""

from __future__ import annotations

import re
import struct

import pytest

from tablesense.firmware import proto
from testsupport import REPO

PROTOCOL_MD = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")


def _table_codes() -> dict[str, int]:
    """Message name -> type code from the two message tables of docs/protocol.md."""
    return {m.group(2): int(m.group(1), 16)
            for m in re.finditer(r"^\| (0x[0-9A-F]{2}) \| ([A-Z_]+) \|", PROTOCOL_MD, re.M)}


def test_message_codes_are_the_documented_ones() -> None:
    codes = _table_codes()
    assert len(codes) == 21
    for name, code in codes.items():
        assert getattr(proto, name) == code, name


def test_version_and_frame_limit_are_the_documented_ones() -> None:
    assert proto.VERSION == 1
    assert proto.MAX_FRAME == 1024
    assert proto.encode_frame(0x04, 0, 0)[1] == 1  # version byte on the wire


def test_nak_codes_error_codes_caps_and_boot_causes_are_the_documented_ones() -> None:
    m = re.search(r"NAK codes: 1 unknown type, 2 bad payload, 3 unsupported, 4 busy", PROTOCOL_MD)
    assert m is not None
    assert (proto.NAK_UNKNOWN_TYPE, proto.NAK_BAD_PAYLOAD, proto.NAK_UNSUPPORTED,
            proto.NAK_BUSY) == (1, 2, 3, 4)
    assert "1 timeout" in PROTOCOL_MD and "5 unstable" in PROTOCOL_MD
    assert (proto.ERR_TIMEOUT, proto.ERR_CRC, proto.ERR_COLLISION, proto.ERR_PROTOCOL,
            proto.ERR_UNSTABLE) == (1, 2, 3, 4, 5)
    assert "bit 0 `CAP_LEDS`, bit 1 `CAP_BOOTLOADER`, bit 2 `CAP_HOT`" in PROTOCOL_MD
    assert (proto.CAP_LEDS, proto.CAP_BOOTLOADER, proto.CAP_HOT) == (0x01, 0x02, 0x04)
    assert "0 power on, 1 watchdog, 2 soft reset, 3 other" in PROTOCOL_MD
    assert (proto.BOOT_POWER_ON, proto.BOOT_WATCHDOG, proto.BOOT_SOFT,
            proto.BOOT_OTHER) == (0, 1, 2, 3)
    assert (proto.CELL_EMPTY, proto.CELL_ERROR, proto.CELL_UNSCANNED) == (0x00, 0xFE, 0xFF)


def test_stats_fields_are_in_the_documented_order() -> None:
    doc = PROTOCOL_MD[PROTOCOL_MD.index("**STATS** u32 fields"):]
    named = re.findall(r"`([a-z_]+)`", doc[:doc.index("Then one u16")])
    assert tuple(named) == proto.STATS_FIELDS
    assert proto.STATS_FIELDS.index("events") == 7


def test_crc_table_and_check_values() -> None:
    assert len(proto._CRC_TABLE) == 256
    assert proto._CRC_TABLE[1] == 0x1021
    assert proto._CRC_TABLE[255] == 0x1EF0
    assert all(0 <= v <= 0xFFFF for v in proto._CRC_TABLE)
    assert proto.crc16(b"") == 0xFFFF
    assert proto.crc16(b"123456789", 0) == 0x31C3  # CRC-16/XMODEM: the same table, init 0
    assert proto.crc16(b"A") == 0xB915


def test_encoded_limit_exact_values() -> None:
    assert proto.encoded_limit(0) == 7
    assert proto.encoded_limit(248) == 256  # body 254: one full block, one more code byte
    assert proto.encoded_limit(247) == 254
    assert proto.encoded_limit(1024) == 1030 + 1030 // 254 + 1
    assert proto.FrameDecoder()._limit == proto.encoded_limit(1024)
    assert proto.FrameDecoder(10)._limit == proto.encoded_limit(10)


def test_cobs_exact_bytes_around_a_full_block() -> None:
    run = bytes(range(1, 255))  # 254 non-zero bytes
    assert proto.cobs_encode(run) == b"\xff" + run
    assert proto.cobs_encode(run + b"\x00") == b"\xff" + run + b"\x01\x01"
    assert proto.cobs_encode(run + b"\x07") == b"\xff" + run + b"\x02\x07"
    assert proto.cobs_encode(b"\x00") == b"\x01\x01"
    assert proto.cobs_encode(b"") == b"\x01"
    assert proto.cobs_decode(b"\xff" + run + b"\x02\x07") == run + b"\x07"
    assert proto.cobs_decode(b"\x01") == b""
    assert proto.cobs_decode(b"\x03\x01\x02") == b"\x01\x02"
    assert proto.cobs_decode(b"\x02\x01\x01") == b"\x01\x00"
    with pytest.raises(proto.ProtocolError, match="zero byte"):
        proto.cobs_decode(b"\x02\x01\x00")
    with pytest.raises(proto.ProtocolError, match="past the end"):
        proto.cobs_decode(b"\x04\x01\x02")


def test_frame_exact_bytes() -> None:
    frame = proto.encode_frame(0x84, 0x1FF, 0x102, b"\x05\x00")
    body = bytes([1, 0x84, 0xFF, 0x02, 5, 0])
    crc = proto.crc16(body)
    assert frame == proto.cobs_encode(body + bytes([crc & 0xFF, crc >> 8])) + b"\x00"
    assert proto.decode_frame(frame[:-1]) == (0x84, 0xFF, 0x02, b"\x05\x00")
    # the shortest frame: header and CRC, no payload
    assert proto.decode_frame(proto.encode_frame(4, 0, 0)[:-1]) == (4, 0, 0, b"")
    with pytest.raises(proto.ProtocolError, match="too short"):
        proto.decode_frame(proto.cobs_encode(b"\x01\x04\x00\x00\x00"))


def test_decoder_counts_each_error_kind_apart() -> None:
    good = proto.encode_frame(4, 1, 2, b"xy")
    bad_crc = bytearray(proto.cobs_decode(good[:-1]))
    bad_crc[-1] ^= 0x55
    other_version = bytearray(bad_crc)
    other_version[-1] ^= 0x55
    other_version[0] = 2
    c = proto.crc16(bytes(other_version[:-2]))
    other_version[-2:] = bytes([c & 0xFF, c >> 8])
    dec = proto.FrameDecoder()
    out = dec.feed(proto.cobs_encode(bytes(bad_crc)) + b"\x00"
                   + proto.cobs_encode(bytes(other_version)) + b"\x00"
                   + b"\x05\x01\x00" + good)
    assert out == [(4, 1, 2, b"xy")]
    assert (dec.frames, dec.crc_errors, dec.version_errors, dec.framing_errors,
            dec.oversize) == (1, 1, 1, 1, 0)
    assert dec.errors == 3


def test_oversize_exactly_at_the_limit() -> None:
    dec = proto.FrameDecoder(max_frame=0)
    limit = proto.encoded_limit(0)
    assert dec.feed(b"\x01" * limit + b"\x00") == []  # a full-limit block is not oversize
    assert (dec.oversize, dec.errors) == (0, 1)
    assert dec.feed(b"\x01" * (limit + 1) + b"\x00") == []
    assert dec.oversize == 1
    assert dec.errors == 2
    # after an oversize run the next frame decodes
    assert dec.feed(proto.encode_frame(4, 0, 0)) == [(4, 0, 0, b"")]
    assert dec.reset() is False


def test_reset_reports_a_discarding_decoder() -> None:
    dec = proto.FrameDecoder(max_frame=0)
    dec.feed(b"\x01" * 50)  # oversize, discarding the rest of the run
    assert dec.reset() is True
    assert dec.feed(proto.encode_frame(4, 0, 0)) == [(4, 0, 0, b"")]
    dec.feed(b"\x02")
    assert dec.reset() is True
    assert dec.reset() is False


def test_utf8_cut_at_the_exact_limits() -> None:
    assert proto._utf8_cut("ab", 2) == b"ab"
    assert proto._utf8_cut("abc", 2) == b"ab"
    assert proto._utf8_cut("aé", 2) == b"a"  # é is two bytes: never half of it
    assert proto._utf8_cut("éa", 2) == "é".encode()
    assert proto._utf8_cut("€", 2) == b""
    assert proto.encode_log(1, "x" * 300) == b"\x01" + b"x" * 200
    assert proto.encode_nak(1, 2, "y" * 201) == b"\x01\x02" + b"y" * 200
    assert proto._str8("z" * 300) == b"\xff" + b"z" * 255
    assert proto._str8("") == b"\x00"


def test_cell_state_boundaries() -> None:
    assert proto.encode_cell_state(None) == b"\x00"
    assert proto.encode_cell_state(-1) == b"\xff"
    assert proto.encode_cell_state(0) == b"\xfe\x00"
    assert proto.encode_cell_state(0x105) == b"\xfe\x05"
    assert proto.encode_cell_state(b"\x01") == b"\x01\x01"
    assert proto.encode_cell_state(b"1234567890") == b"\x0a1234567890"
    for bad in (b"", b"12345678901"):
        with pytest.raises(proto.ProtocolError, match="UID of"):
            proto.encode_cell_state(bad)
    assert proto.decode_cell_state(b"\x0a1234567890", 0) == (b"1234567890", 11)
    assert proto.decode_cell_state(b"\xaa\xfe\x03", 1) == (3, 3)
    assert proto.decode_cell_state(b"\xff", 0) == (-1, 1)
    with pytest.raises(proto.ProtocolError, match="bad cell state"):
        proto.decode_cell_state(b"\x0b" + b"1" * 11, 0)
    with pytest.raises(proto.ProtocolError, match="error code missing"):
        proto.decode_cell_state(b"\xfe", 0)
    with pytest.raises(proto.ProtocolError, match="UID runs past"):
        proto.decode_cell_state(b"\x04123", 0)
    with pytest.raises(proto.ProtocolError, match="cell state missing"):
        proto.decode_cell_state(b"\x00", 1)


def test_every_message_exact_bytes() -> None:
    assert proto.encode_cell_event(0x103, b"\xaa\xbb\xcc\xdd") == b"\x03\x04\xaa\xbb\xcc\xdd"
    assert proto.decode_cell_event(b"\x03\x00") == (3, None)
    with pytest.raises(proto.ProtocolError, match="trailing"):
        proto.decode_cell_event(b"\x03\x00\x00")
    assert proto.encode_snapshot(0x1FE, [None, -1]) == b"\xfe\x02\x00\xff"
    assert proto.decode_snapshot(b"\x07\x00") == (7, [])
    with pytest.raises(proto.ProtocolError, match="short SNAPSHOT"):
        proto.decode_snapshot(b"\x07")
    with pytest.raises(proto.ProtocolError, match="trailing"):
        proto.decode_snapshot(b"\x07\x00\x00")
    assert proto.encode_snapshot_req() == b""
    assert proto.encode_snapshot_req(0x101, 0x102) == b"\x01\x02"
    assert proto.encode_snapshot_req(0) == b"\x00\x00"
    assert proto.decode_snapshot_req(b"") is None
    assert proto.decode_snapshot_req(b"\x05\x06") == (5, 6)
    for bad in (b"\x01", b"\x01\x02\x03"):
        with pytest.raises(proto.ProtocolError, match="0 or 2"):
            proto.decode_snapshot_req(bad)
    assert proto.encode_snapshot_part(0x101, 0x102, 0x10203, [None]) == b"\x01\x02\x01\x03\x02\x00"
    assert proto.decode_snapshot_part(b"\x01\x02\x00\x03\x02") == (1, 2, 0x0203, [])
    assert proto.decode_snapshot_part(bytes([1, 255, 1, 0, 0, 0])) == (1, 255, 0, [None])
    with pytest.raises(proto.ProtocolError, match="past cell 255"):
        proto.decode_snapshot_part(bytes([1, 255, 2, 0, 0, 0, 0]))
    with pytest.raises(proto.ProtocolError, match="short SNAPSHOT_PART"):
        proto.decode_snapshot_part(b"\x01\x02\x00\x03")
    with pytest.raises(proto.ProtocolError, match="trailing"):
        proto.decode_snapshot_part(b"\x01\x02\x00\x03\x02\x00")
    assert proto.encode_leds([(0x101, 2, 3)] * 2) == b"\x02\x00\x01\x02\x03\x01\x02\x03"
    assert proto.decode_leds(b"\x00\x00") == []
    assert proto.decode_leds(b"\x01\x00\x04\x05\x06") == [(4, 5, 6)]
    assert len(proto.decode_leds(b"\x00\x01" + b"\x01" * 768)) == 256
    with pytest.raises(proto.ProtocolError, match="short LEDS"):
        proto.decode_leds(b"\x00")
    with pytest.raises(proto.ProtocolError, match="does not match"):
        proto.decode_leds(b"\x01\x00\x04\x05")
    assert proto.encode_ack(0x1FF) == b"\xff\x00"
    assert proto.encode_ack(1, 0x102) == b"\x01\x02"
    assert proto.decode_ack(b"\x01\x02") == (1, 2)
    for bad in (b"\x01", b"\x01\x02\x03"):
        with pytest.raises(proto.ProtocolError, match="ACK payload of"):
            proto.decode_ack(bad)
    assert proto.encode_nak(0x101, 0x103, "é") == b"\x01\x03" + "é".encode()
    assert proto.decode_nak(b"\x01\x03") == (1, 3, "")
    with pytest.raises(proto.ProtocolError, match="short NAK"):
        proto.decode_nak(b"\x01")
    assert proto.encode_log(0x102, "hi") == b"\x02hi"
    assert proto.decode_log(b"\x03") == (3, "")
    with pytest.raises(proto.ProtocolError, match="empty LOG"):
        proto.decode_log(b"")


def test_identity_exact_bytes_and_lengths() -> None:
    raw = proto.encode_identity(0x105, b"\x01\x02", "v1", 24, 0x0102, 3, b"\xaa\xbb\xcc\xdd\xee")
    assert raw == (b"\x05\x01\x02\x01\x02\x02v1" + bytes([24, 0x02, 0x01, 3])
                   + b"\xaa\xbb\xcc\xdd")
    ident = proto.decode_identity(raw)
    assert ident == {"ack_seq": 5, "protocol": 1, "uid": b"\x01\x02", "fw_version": "v1",
                     "cells": 24, "leds": 0x0102, "caps": 3,
                     "config_hash": b"\xaa\xbb\xcc\xdd"}
    assert proto.decode_identity(b"\x05\x01\x00\x00" + b"\x00" * 8)["uid"] == b""
    with pytest.raises(proto.ProtocolError, match="short IDENTITY"):
        proto.decode_identity(b"\x05\x01")
    with pytest.raises(proto.ProtocolError, match="uid runs past"):
        proto.decode_identity(b"\x05\x01\x02\x01")
    with pytest.raises(proto.ProtocolError, match="string length missing"):
        proto.decode_identity(b"\x05\x01\x01\x01")
    with pytest.raises(proto.ProtocolError, match="string runs past"):
        proto.decode_identity(b"\x05\x01\x00\x03ab")
    for bad in (raw[:-1], raw + b"\x00"):
        with pytest.raises(proto.ProtocolError, match="bad IDENTITY length"):
            proto.decode_identity(bad)


def test_stats_exact_bytes_and_saturation() -> None:
    stats = {k: i + 1 for i, k in enumerate(proto.STATS_FIELDS)}
    stats["uptime_ms"] = 2**32 + 7
    raw = proto.encode_stats(0x109, stats, [1, 70000])
    vals = [7, 2, 3, 4, 5, 6, 7, 8]
    assert raw == b"\x09" + struct.pack("<8I", *vals) + b"\x02" + b"\x01\x00\xff\xff"
    ack, got, errs = proto.decode_stats(raw)
    assert (ack, errs) == (9, [1, 0xFFFF])
    assert got == dict(zip(proto.STATS_FIELDS, vals, strict=True))
    assert proto.encode_stats(0, {}, [])[1:33] == b"\x00" * 32
    empty = b"\x00" + b"\x00" * 32 + b"\x00"
    assert proto.decode_stats(empty) == (0, dict.fromkeys(proto.STATS_FIELDS, 0), [])
    with pytest.raises(proto.ProtocolError, match="short STATS"):
        proto.decode_stats(empty[:-1])
    for bad in (raw[:-1], raw + b"\x00"):
        with pytest.raises(proto.ProtocolError, match="count does not match"):
            proto.decode_stats(bad)


def test_selftest_and_files_exact_bytes() -> None:
    raw = proto.encode_selftest(0x102, [(0x192, 5, 0), (0x91, 0, 1)])
    assert raw == b"\x02\x02\x92\x01\x00\x91\x00\x01"
    assert proto.decode_selftest(raw) == (2, [(0x92, True, False), (0x91, False, True)])
    assert proto.decode_selftest(b"\x02\x00") == (2, [])
    for bad in (b"\x02", raw[:-1], raw + b"\x00"):
        with pytest.raises(proto.ProtocolError, match="SELFTEST_RESULT length"):
            proto.decode_selftest(bad)
    digest = bytes(range(32))
    raw = proto.encode_files(0x103, [("a.py", digest), ("", digest[:8])])
    assert raw == b"\x03\x02\x04a.py" + digest[:8] + b"\x00" + digest[:8]
    assert proto.decode_files(raw) == (3, [("a.py", digest[:8]), ("", digest[:8])])
    assert proto.decode_files(b"\x03\x00") == (3, [])
    with pytest.raises(proto.ProtocolError, match="short FILES"):
        proto.decode_files(b"\x03")
    with pytest.raises(proto.ProtocolError, match="digest cut short"):
        proto.decode_files(raw[:-1])
    with pytest.raises(proto.ProtocolError, match="trailing"):
        proto.decode_files(raw + b"\x00")


def test_error_messages_name_the_offending_values() -> None:
    with pytest.raises(proto.ProtocolError, match=r"^SNAPSHOT_PART cells 255\.\.256 past cell 255$"):
        proto.decode_snapshot_part(bytes([1, 255, 2, 0, 0, 0, 0]))
    with pytest.raises(proto.ProtocolError, match=r"^SNAPSHOT_PART cells 200\.\.299 past cell 255$"):
        proto.decode_snapshot_part(bytes([1, 200, 100, 0, 0]))
    body = bytearray([7, 4, 0, 0])
    c = proto.crc16(bytes(body))
    with pytest.raises(proto.ProtocolError, match=r"^protocol version 7, expected 1$"):
        proto.decode_frame(proto.cobs_encode(bytes(body) + bytes([c & 0xFF, c >> 8])))
    with pytest.raises(proto.ProtocolError, match=r"^UID of 11 bytes$"):
        proto.encode_cell_state(b"x" * 11)
    with pytest.raises(proto.ProtocolError, match=r"^bad cell state byte 0x0b$"):
        proto.decode_cell_state(b"\x0b", 0)
    with pytest.raises(proto.ProtocolError, match=r"^SNAPSHOT_REQ payload of 3 bytes \(0 or 2\)$"):
        proto.decode_snapshot_req(b"abc")
    with pytest.raises(proto.ProtocolError, match=r"^ACK payload of 3 bytes$"):
        proto.decode_ack(b"abc")
    with pytest.raises(proto.ProtocolError, match=r"^text is not valid UTF-8$"):
        proto.decode_log(b"\x01\xff")
