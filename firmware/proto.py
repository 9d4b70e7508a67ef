# The board <-> host frame codec. This one file runs unchanged on the sensor
# boards (MicroPython) and on the host (CPython, imported as
# tablesense.firmware.proto), so both sides always agree on the wire format.
#
# Frame on the wire:   COBS( header | payload | crc16 ) 0x00
#   header  = version u8, type u8, board u8, seq u8
#   crc16   = CRC-16/CCITT-FALSE over header+payload, little-endian
#
# Each side numbers the frames it sends (seq, u8, wrapping). A reply carries
# the sequence number of the command it answers as the first payload byte
# (ack_seq), so replies can be matched while unsolicited events interleave.
# docs/protocol.md describes every message; keep the two in step.
#
# Only MicroPython-compatible Python here: no dataclasses, no typing at run
# time, no f-strings with '=' and no bytes.hex(sep).

import struct

VERSION = 1
MAX_FRAME = 1024  # payload bytes; every payload up to this size must decode


def encoded_limit(max_payload):
    """The longest COBS block (delimiter excluded) a frame with a payload of
    max_payload bytes can become: header 4 + payload + CRC 2, plus one COBS
    code byte per started run of 254 bytes. A longer run without a delimiter
    cannot be a frame and is dropped as oversize."""
    body = max_payload + 6
    return body + body // 254 + 1


# Host -> board commands (each answered with a reply carrying ack_seq).
HELLO = 0x01  # payload: host protocol version u8 -> IDENTITY
SNAPSHOT_REQ = 0x02  # no payload -> SNAPSHOT; first u8, count u8 -> SNAPSHOT_PART
LEDS = 0x03  # payload: count u16, count x (r, g, b) -> ACK
PING = 0x04  # -> ACK (keep-alive)
SELFTEST = 0x05  # -> SELFTEST_RESULT
STATS_REQ = 0x06  # -> STATS
REBOOT = 0x07  # -> ACK, then machine.reset()
BOOTLOADER = 0x08  # -> ACK, then machine.bootloader()
FILES_REQ = 0x09  # -> FILES
HOT = 0x0A  # payload: count u8, count x cell u8 (cells a legal move can touch) -> ACK

# Board -> host replies and events.
ACK = 0x80  # ack_seq u8, status u8 (0 = ok)
NAK = 0x81  # ack_seq u8, code u8, message (utf-8, rest of payload)
IDENTITY = 0x82  # see encode_identity
SNAPSHOT = 0x83  # ack_seq u8, count u8, count x cell state
CELL = 0x84  # unsolicited: cell u8, cell state (an event: a hint, not the truth)
SELFTEST_RESULT = 0x85  # ack_seq u8, count u8, count x (version u8, antenna u8, ok u8)
STATS = 0x86  # see encode_stats
BOOT = 0x87  # unsolicited, first frame after a (re)start: reset cause u8; its seq is 0
LOG = 0x88  # unsolicited: level u8, message (utf-8)
FILES = 0x89  # ack_seq u8, count u8, count x (name str8, sha256 prefix 8 bytes)
SNAPSHOT_PART = 0x8A  # ack_seq u8, first u8, count u8, events u16, count x cell state

# NAK codes
NAK_UNKNOWN_TYPE = 1
NAK_BAD_PAYLOAD = 2
NAK_UNSUPPORTED = 3  # e.g. LEDS on a board without LEDs
NAK_BUSY = 4

# Cell state byte: 0 = empty; 1..10 = a tag, the byte is the UID length and the
# UID follows; ERROR (then an error code byte) = the reader could not tell, which
# is never the same as empty; UNSCANNED = not read yet since boot.
CELL_EMPTY = 0
CELL_ERROR = 0xFE
CELL_UNSCANNED = 0xFF

# Read-error codes carried after CELL_ERROR
ERR_TIMEOUT = 1  # the reader did not answer (chip missing, SPI fault)
ERR_CRC = 2  # a tag answered with a bad CRC (noise, two tags, a tag moving)
ERR_COLLISION = 3  # more than one tag on the antenna
ERR_PROTOCOL = 4  # a malformed answer
ERR_UNSTABLE = 5  # reads disagreed for longer than the debounce allows

# Capability bits in IDENTITY
CAP_LEDS = 0x01
CAP_BOOTLOADER = 0x02
CAP_HOT = 0x04  # the board takes HOT (an older board NAKs it: the host asks first)

# Reset causes in BOOT
BOOT_POWER_ON = 0
BOOT_WATCHDOG = 1
BOOT_SOFT = 2
BOOT_OTHER = 3


class ProtocolError(ValueError):
    """A payload that does not decode as its message type says."""


# --- CRC and COBS ---------------------------------------------------------


def _make_crc_table():
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _make_crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF): check value 0x29B1."""
    table = _CRC_TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
    return crc


def cobs_encode(data):
    """Consistent Overhead Byte Stuffing (standard COBS, byte for byte what
    other implementations produce): the result contains no 0x00 byte.

    A full run of 254 non-zero bytes (code 0xFF) closes its block without an
    implied zero; the next block is only opened when more data follows, so
    data ending in such a run gets no needless trailing 0x01 block."""
    out = bytearray(b"\x00")
    code_index = 0  # where the open block's code byte goes; -1: no block open
    code = 1
    for b in data:
        if code_index < 0:
            code_index = len(out)
            out.append(0)
            code = 1
        if b == 0:
            out[code_index] = code
            code_index = len(out)
            out.append(0)
            code = 1
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_index] = code
                code_index = -1
    if code_index >= 0:
        out[code_index] = code
    return bytes(out)


def cobs_decode(data):
    """Inverse of cobs_encode; raises ProtocolError on a malformed block."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ProtocolError("zero byte inside a COBS block")
        end = i + code
        if end > n:
            raise ProtocolError("COBS block runs past the end of the frame")
        out.extend(data[i + 1 : end])
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


# --- frames ---------------------------------------------------------------


def encode_frame(msg_type, board, seq, payload=b""):
    """Build one wire frame, delimiter included."""
    body = bytearray(4 + len(payload) + 2)
    body[0] = VERSION
    body[1] = msg_type
    body[2] = board & 0xFF
    body[3] = seq & 0xFF
    body[4 : 4 + len(payload)] = payload
    crc = crc16(memoryview(body)[: 4 + len(payload)])
    body[-2] = crc & 0xFF
    body[-1] = crc >> 8
    return cobs_encode(body) + b"\x00"


def decode_frame(block):
    """Decode one COBS block (without its delimiter) into
    (msg_type, board, seq, payload); raises ProtocolError."""
    body = cobs_decode(block)
    if len(body) < 6:
        raise ProtocolError("frame too short")
    crc = body[-2] | (body[-1] << 8)
    if crc16(memoryview(body)[:-2]) != crc:
        raise ProtocolError("CRC mismatch")
    if body[0] != VERSION:
        raise ProtocolError("protocol version %d, expected %d" % (body[0], VERSION))
    return body[1], body[2], body[3], bytes(body[4:-2])


class FrameDecoder:
    """Splits a byte stream into frames. Never raises on bad input: every bad
    frame is counted (crc_errors, framing_errors, version_errors, oversize) and
    skipped, and decoding resumes at the next 0x00 delimiter."""

    def __init__(self, max_frame=MAX_FRAME):
        self.max_frame = max_frame  # the largest payload that must pass
        self._limit = encoded_limit(max_frame)
        self._buf = bytearray()
        self._discarding = False
        self.frames = 0
        self.crc_errors = 0
        self.framing_errors = 0
        self.version_errors = 0
        self.oversize = 0

    def reset(self):
        """Drop a partly received frame (the sender went quiet mid-frame);
        returns True when something was dropped."""
        dropped = bool(self._buf) or self._discarding
        self._buf[:] = b""
        self._discarding = False
        return dropped

    @property
    def errors(self):
        return self.crc_errors + self.framing_errors + self.version_errors + self.oversize

    def feed(self, data):
        """Feed received bytes; return the list of decoded
        (msg_type, board, seq, payload) tuples completed by them."""
        out = []
        buf = self._buf
        for b in data:
            if b != 0:
                if self._discarding:
                    continue
                if len(buf) >= self._limit:
                    self.oversize += 1
                    self._discarding = True
                    buf[:] = b""
                    continue
                buf.append(b)
                continue
            # delimiter
            if self._discarding:
                self._discarding = False
                continue
            if not buf:
                continue  # empty frame: idle delimiters are allowed
            try:
                out.append(decode_frame(bytes(buf)))
                self.frames += 1
            except ProtocolError as exc:
                msg = str(exc)
                if "CRC" in msg:
                    self.crc_errors += 1
                elif "version" in msg:
                    self.version_errors += 1
                else:
                    self.framing_errors += 1
            buf[:] = b""
        return out


# --- payload helpers ------------------------------------------------------


def _utf8_cut(text, limit):
    """text as UTF-8, at most limit bytes, never cutting a character in half
    (a cut character would make the whole message undecodable)."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return raw
    cut = limit
    while cut > 0 and (raw[cut] & 0xC0) == 0x80:
        cut -= 1
    return raw[:cut]


def _str8(text):
    raw = _utf8_cut(text, 255)
    return bytes([len(raw)]) + raw


def _utf8(raw):
    """Decode UTF-8 text from the wire; bad bytes are a ProtocolError (never
    a UnicodeError escaping to the caller)."""
    try:
        return bytes(raw).decode("utf-8")
    except (UnicodeError, ValueError):
        raise ProtocolError("text is not valid UTF-8")


def _read_str8(payload, i):
    if i >= len(payload):
        raise ProtocolError("string length missing")
    n = payload[i]
    end = i + 1 + n
    if end > len(payload):
        raise ProtocolError("string runs past the payload")
    return _utf8(payload[i + 1 : end]), end


def encode_cell_state(state):
    """state: None = empty; bytes = a tag UID (1..10 bytes);
    int = read error code; -1 = unscanned."""
    if state is None:
        return bytes([CELL_EMPTY])
    if isinstance(state, int):
        if state < 0:
            return bytes([CELL_UNSCANNED])
        return bytes([CELL_ERROR, state & 0xFF])
    uid = bytes(state)
    if not 1 <= len(uid) <= 10:
        raise ProtocolError("UID of %d bytes" % len(uid))
    return bytes([len(uid)]) + uid


def decode_cell_state(payload, i):
    """Inverse of encode_cell_state at offset i; returns (state, next_offset)."""
    if i >= len(payload):
        raise ProtocolError("cell state missing")
    tag = payload[i]
    if tag == CELL_EMPTY:
        return None, i + 1
    if tag == CELL_UNSCANNED:
        return -1, i + 1
    if tag == CELL_ERROR:
        if i + 1 >= len(payload):
            raise ProtocolError("error code missing")
        return payload[i + 1], i + 2
    if tag > 10:
        raise ProtocolError("bad cell state byte 0x%02x" % tag)
    end = i + 1 + tag
    if end > len(payload):
        raise ProtocolError("UID runs past the payload")
    return bytes(payload[i + 1 : end]), end


def encode_cell_event(cell, state):
    return bytes([cell & 0xFF]) + encode_cell_state(state)


def decode_cell_event(payload):
    """-> (cell, state)"""
    if not payload:
        raise ProtocolError("empty CELL payload")
    state, end = decode_cell_state(payload, 1)
    if end != len(payload):
        raise ProtocolError("trailing bytes in CELL")
    return payload[0], state


def encode_snapshot(ack_seq, states):
    parts = [bytes([ack_seq & 0xFF, len(states)])]
    for s in states:
        parts.append(encode_cell_state(s))
    return b"".join(parts)


def decode_snapshot(payload):
    """-> (ack_seq, [state, ...])"""
    if len(payload) < 2:
        raise ProtocolError("short SNAPSHOT")
    count = payload[1]
    i = 2
    states = []
    for _ in range(count):
        s, i = decode_cell_state(payload, i)
        states.append(s)
    if i != len(payload):
        raise ProtocolError("trailing bytes in SNAPSHOT")
    return payload[0], states


def encode_snapshot_req(first=None, count=0):
    """SNAPSHOT_REQ payload. No arguments: the whole board in one SNAPSHOT
    (what every version-1 host sends). With first: cells first ..
    first+count-1 in one SNAPSHOT_PART (count 0 or past the end: through the
    last cell), so a resync over a noisy cable is a few small frames, each
    asked again on its own, rather than one long frame that must survive."""
    if first is None:
        return b""
    return bytes([first & 0xFF, count & 0xFF])


def decode_snapshot_req(payload):
    """-> None (the whole board) or (first, count)."""
    if not payload:
        return None
    if len(payload) != 2:
        raise ProtocolError("SNAPSHOT_REQ payload of %d bytes (0 or 2)" % len(payload))
    return payload[0], payload[1]


def encode_hot(cells):
    """HOT payload: the cells the host wants read more often (at most 255,
    each below 256); an empty list makes every cell ordinary again."""
    cells = list(cells)
    if len(cells) > 255:
        raise ProtocolError("%d hot cells (at most 255)" % len(cells))
    return bytes([len(cells)] + [c & 0xFF for c in cells])


def decode_hot(payload):
    """-> the list of hot cells (as sent, duplicates kept)."""
    if not payload or len(payload) != 1 + payload[0]:
        raise ProtocolError("HOT payload of %d bytes" % len(payload))
    return list(payload[1:])


def encode_snapshot_part(ack_seq, first, events, states):
    """SNAPSHOT_PART: the states of cells first .. first+len(states)-1, and
    events = CELL events the board has sent since it started (mod 65536):
    the host compares it with the CELL frames it received to know whether a
    lost frame was a CELL event (then the parts taken before it are stale)."""
    parts = [bytes([ack_seq & 0xFF, first & 0xFF, len(states)]), struct.pack("<H", events & 0xFFFF)]
    for s in states:
        parts.append(encode_cell_state(s))
    return b"".join(parts)


def decode_snapshot_part(payload):
    """-> (ack_seq, first, events, [state, ...])"""
    if len(payload) < 5:
        raise ProtocolError("short SNAPSHOT_PART")
    first = payload[1]
    count = payload[2]
    if first + count > 256:
        raise ProtocolError("SNAPSHOT_PART cells %d..%d past cell 255" % (first, first + count - 1))
    events = payload[3] | (payload[4] << 8)
    i = 5
    states = []
    for _ in range(count):
        s, i = decode_cell_state(payload, i)
        states.append(s)
    if i != len(payload):
        raise ProtocolError("trailing bytes in SNAPSHOT_PART")
    return payload[0], first, events, states


def encode_leds(colors):
    """colors: list of (r, g, b). The whole strip, applied atomically."""
    out = bytearray(struct.pack("<H", len(colors)))
    for c in colors:
        out.extend(bytes((c[0] & 0xFF, c[1] & 0xFF, c[2] & 0xFF)))
    return bytes(out)


def decode_leds(payload):
    if len(payload) < 2:
        raise ProtocolError("short LEDS")
    count = payload[0] | (payload[1] << 8)
    if len(payload) != 2 + 3 * count:
        raise ProtocolError("LEDS payload length does not match its count")
    return [tuple(payload[2 + 3 * k : 5 + 3 * k]) for k in range(count)]


def encode_ack(ack_seq, status=0):
    return bytes([ack_seq & 0xFF, status & 0xFF])


def decode_ack(payload):
    if len(payload) != 2:
        raise ProtocolError("ACK payload of %d bytes" % len(payload))
    return payload[0], payload[1]


def encode_nak(ack_seq, code, message=""):
    return bytes([ack_seq & 0xFF, code & 0xFF]) + _utf8_cut(message, 200)


def decode_nak(payload):
    if len(payload) < 2:
        raise ProtocolError("short NAK")
    return payload[0], payload[1], _utf8(payload[2:])


def encode_identity(ack_seq, uid, fw_version, cells, leds, caps, config_hash):
    """uid: the board's unique id (machine.unique_id(), 8 bytes on RP2040);
    config_hash: first 4 bytes of sha256 of the board's config file."""
    return (
        bytes([ack_seq & 0xFF, VERSION, len(uid)])
        + bytes(uid)
        + _str8(fw_version)
        + struct.pack("<BHB", cells, leds, caps)
        + bytes(config_hash[:4])
    )


def decode_identity(payload):
    """-> dict(ack_seq, protocol, uid, fw_version, cells, leds, caps, config_hash)"""
    if len(payload) < 3:
        raise ProtocolError("short IDENTITY")
    ack_seq, protocol, n = payload[0], payload[1], payload[2]
    if 3 + n > len(payload):
        raise ProtocolError("IDENTITY uid runs past the payload")
    uid = bytes(payload[3 : 3 + n])
    fw, i = _read_str8(payload, 3 + n)
    if i + 8 != len(payload):
        raise ProtocolError("bad IDENTITY length")
    cells, leds, caps = struct.unpack("<BHB", bytes(payload[i : i + 4]))
    config_hash = bytes(payload[i + 4 : i + 8])
    return {
        "ack_seq": ack_seq,
        "protocol": protocol,
        "uid": uid,
        "fw_version": fw,
        "cells": cells,
        "leds": leds,
        "caps": caps,
        "config_hash": config_hash,
    }


_STATS_FMT = "<IIIIIIII"
STATS_FIELDS = (
    "uptime_ms",
    "sweeps",
    "sweep_us",
    "frames_rx",
    "frames_tx",
    "crc_errors",
    "framing_errors",
    "events",
)


def encode_stats(ack_seq, stats, cell_errors):
    """stats: dict with STATS_FIELDS; cell_errors: per-cell read error counts."""
    vals = [int(stats.get(k, 0)) & 0xFFFFFFFF for k in STATS_FIELDS]
    out = bytearray([ack_seq & 0xFF])
    out.extend(struct.pack(_STATS_FMT, *vals))
    out.append(len(cell_errors))
    for e in cell_errors:
        out.extend(struct.pack("<H", min(int(e), 0xFFFF)))
    return bytes(out)


def decode_stats(payload):
    """-> (ack_seq, dict of STATS_FIELDS, [cell errors])"""
    size = struct.calcsize(_STATS_FMT)
    if len(payload) < 2 + size:
        raise ProtocolError("short STATS")
    vals = struct.unpack(_STATS_FMT, payload[1 : 1 + size])
    n = payload[1 + size]
    i = 2 + size
    if len(payload) != i + 2 * n:
        raise ProtocolError("STATS cell count does not match")
    errs = [struct.unpack("<H", payload[i + 2 * k : i + 2 * k + 2])[0] for k in range(n)]
    return payload[0], dict(zip(STATS_FIELDS, vals)), errs


def encode_selftest(ack_seq, readers):
    """readers: list of (version_register, antenna_on, ok)."""
    out = bytearray([ack_seq & 0xFF, len(readers)])
    for v, a, ok in readers:
        out.extend(bytes((v & 0xFF, 1 if a else 0, 1 if ok else 0)))
    return bytes(out)


def decode_selftest(payload):
    if len(payload) < 2 or len(payload) != 2 + 3 * payload[1]:
        raise ProtocolError("bad SELFTEST_RESULT length")
    readers = []
    for k in range(payload[1]):
        j = 2 + 3 * k
        readers.append((payload[j], bool(payload[j + 1]), bool(payload[j + 2])))
    return payload[0], readers


def encode_files(ack_seq, files):
    """files: list of (name, sha256 digest or its first 8 bytes)."""
    out = bytearray([ack_seq & 0xFF, len(files)])
    for name, digest in files:
        out.extend(_str8(name))
        out.extend(bytes(digest[:8]))
    return bytes(out)


def decode_files(payload):
    if len(payload) < 2:
        raise ProtocolError("short FILES")
    i = 2
    files = []
    for _ in range(payload[1]):
        name, i = _read_str8(payload, i)
        digest = bytes(payload[i : i + 8])
        if len(digest) != 8:
            raise ProtocolError("FILES digest cut short")
        files.append((name, digest))
        i += 8
    if i != len(payload):
        raise ProtocolError("trailing bytes in FILES")
    return payload[0], files


def encode_log(level, message):
    return bytes([level & 0xFF]) + _utf8_cut(message, 200)


def decode_log(payload):
    if not payload:
        raise ProtocolError("empty LOG")
    return payload[0], _utf8(payload[1:])
