# Board configuration: the JSON file the host writes when it flashes a board
# (/config.json; host side: tablesense.table.geometry.board_config()). Runs on
# MicroPython and CPython. docs/firmware.md lists every key.
#
# parse() checks the whole file and reports every problem at once, and fills
# in the defaults, so the Board never meets a half-valid config. The config
# hash (IDENTITY) is sha256 of the canonical JSON (sorted keys, no spaces,
# ASCII), the same bytes the host writes, so both sides agree even if the file
# was reformatted by hand.

import json

try:
    import hashlib
except ImportError:  # pragma: no cover - every port we use has hashlib
    hashlib = None

CONFIG_PATH = "/config.json"
FORMAT = "tablesense.board/1"
MAX_CELLS = 64

# Pin defaults of the reference board (hardware/): SPI0 on GP2/GP3/GP4, a
# 74HC138 decoder per 8 cells on address pins GP6..GP8 with enables GP9..GP12,
# reader reset on GP5, WS2812 data on GP22.
DEFAULT_SPI = {"id": 0, "sck": 2, "mosi": 3, "miso": 4, "baudrate": 4000000}
DEFAULT_CS = {"kind": "decoder", "address": [6, 7, 8], "enables": [9, 10, 11, 12]}
DEFAULT_DEBOUNCE = {"tag": 1, "empty": 3, "error": 3, "unstable": 10}
DEFAULT_RFID = {
    "timeout_us": 200,
    "reset_pin": 5,
    "retry_ms": 2000,
    "rx_gain_db": 33,
    "field_lead_us": 5000,
    "full_read_every": 8,
    # cell i's known-tag read overlaps cell i + overlap's (board.py,
    # MFRC522.read_pair): 0 never; set only where no two readers that far
    # apart in channel order have fields that reach a common cell
    "overlap": 0,
}
# RFCfgReg.RxGain values (MFRC522 datasheet 9.3.3.6), in dB
RX_GAINS_DB = (18, 23, 33, 38, 43, 48)
# Keys older configs carry that this firmware accepts and ignores: max_polls
# bounded the driver's waits in polls; they are deadlines in time now.
LEGACY_RFID = ("max_polls",)
DEFAULT_LED_PIN = 22


class ConfigError(ValueError):
    """The board config is unusable; the message lists every problem."""


def canonical_json(obj):
    """JSON with sorted keys, no spaces, ASCII only: byte-identical to
    CPython's json.dumps(obj, sort_keys=True, separators=(",", ":"))."""
    out = []
    _canon(obj, out)
    return "".join(out).encode("ascii")


def _canon(obj, out):
    if obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, int):
        out.append(str(obj))
    elif isinstance(obj, float):
        out.append(repr(obj))
    elif isinstance(obj, str):
        out.append(_canon_str(obj))
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        first = True
        for v in obj:
            if not first:
                out.append(",")
            first = False
            _canon(v, out)
        out.append("]")
    elif isinstance(obj, dict):
        out.append("{")
        first = True
        for k in sorted(obj):
            if not first:
                out.append(",")
            first = False
            out.append(_canon_str(str(k)))
            out.append(":")
            _canon(obj[k], out)
        out.append("}")
    else:
        raise ConfigError("cannot encode %r in a board config" % (obj,))


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _canon_str(s):
    parts = ['"']
    for ch in s:
        e = _ESCAPES.get(ch)
        if e is not None:
            parts.append(e)
            continue
        o = ord(ch)
        if o < 0x20 or o > 0x7E:
            if o > 0xFFFF:
                o -= 0x10000
                parts.append("\\u%04x\\u%04x" % (0xD800 | (o >> 10), 0xDC00 | (o & 0x3FF)))
            else:
                parts.append("\\u%04x" % o)
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)


def config_hash(obj):
    """First 4 bytes of sha256 of the canonical JSON of the raw config."""
    if hashlib is None:
        return b"\x00\x00\x00\x00"
    return hashlib.sha256(canonical_json(obj)).digest()[:4]


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class _Checker:
    def __init__(self):
        self.problems = []

    def int_(self, where, v, lo, hi):
        if not _is_int(v):
            self.problems.append("%s must be an integer, not %r" % (where, v))
            return None
        if v < lo or v > hi:
            self.problems.append("%s = %d is outside %d..%d" % (where, v, lo, hi))
            return None
        return v

    def pin(self, where, v):
        return self.int_(where, v, 0, 29)

    def pins(self, where, v, n_min, n_max):
        if not isinstance(v, list) or not n_min <= len(v) <= n_max:
            self.problems.append("%s must be a list of %d..%d pin numbers, not %r" % (where, n_min, n_max, v))
            return []
        return [self.pin("%s[%d]" % (where, i), p) for i, p in enumerate(v)]


def parse(raw):
    """Check a config dict (as loaded from JSON) and return the normalised
    config with every default filled in. Raises ConfigError listing every
    problem. Idempotent: parse(parse(x)) == parse(x)."""
    if not isinstance(raw, dict):
        raise ConfigError("the board config must be a JSON object, not %r" % (type(raw).__name__,))
    if raw.get("_normalised"):
        return raw
    c = _Checker()
    fmt = raw.get("format", FORMAT)
    if fmt != FORMAT:
        c.problems.append("format %r is not %r" % (fmt, FORMAT))
    board = c.int_("board", raw.get("board"), 1, 254)
    cells = c.int_("cells", raw.get("cells"), 0, MAX_CELLS)
    n = cells or 0

    leds = raw.get("leds", 0)
    if leds is None:
        leds = 0
    leds = c.int_("leds", leds, 0, 1024) or 0
    led_pin = raw.get("led_pin", DEFAULT_LED_PIN)
    if leds:
        c.pin("led_pin", led_pin)
    led_max_level = raw.get("led_max_level", 255)
    c.int_("led_max_level", led_max_level, 0, 255)
    channel_leds = raw.get("channel_leds")
    if channel_leds is None:
        channel_leds = [ch if ch < leds else -1 for ch in range(n)]
    elif not isinstance(channel_leds, list) or len(channel_leds) != n:
        c.problems.append("channel_leds must list one LED index (or -1) per cell (%d), not %r" % (n, channel_leds))
        channel_leds = [-1] * n
    else:
        seen = {}
        for ch, idx in enumerate(channel_leds):
            if c.int_("channel_leds[%d]" % ch, idx, -1, leds - 1) is None:
                continue
            if idx >= 0:
                if idx in seen:
                    c.problems.append("LED %d serves channels %d and %d" % (idx, seen[idx], ch))
                seen[idx] = ch

    spi = dict(DEFAULT_SPI)
    spi_raw = raw.get("spi", {})
    if not isinstance(spi_raw, dict):
        c.problems.append("spi must be an object, not %r" % (spi_raw,))
        spi_raw = {}
    for k in spi_raw:
        if k not in DEFAULT_SPI:
            c.problems.append("spi.%s is not a known key (%s)" % (k, ", ".join(sorted(DEFAULT_SPI))))
    spi.update(spi_raw)
    c.int_("spi.id", spi["id"], 0, 1)
    for k in ("sck", "mosi", "miso"):
        c.pin("spi." + k, spi[k])
    c.int_("spi.baudrate", spi["baudrate"], 100000, 10000000)

    cs = raw.get("cs", DEFAULT_CS)
    if not isinstance(cs, dict):
        c.problems.append("cs must be an object, not %r" % (cs,))
        cs = dict(DEFAULT_CS)
    kind = cs.get("kind")
    if kind == "gpio":
        pins = c.pins("cs.pins", cs.get("pins"), n, n)
        valid = [p for p in pins if p is not None]
        if len(set(valid)) != len(valid):
            c.problems.append("cs.pins repeats a pin: %r" % (cs.get("pins"),))
        cs = {"kind": "gpio", "pins": pins}
    elif kind == "decoder":
        addr = c.pins("cs.address", cs.get("address"), 1, 4)
        enables = c.pins("cs.enables", cs.get("enables"), 1, 16)
        per = 1 << len(addr)
        if n > per * len(enables):
            c.problems.append(
                "%d cells need more than %d decoder(s) of %d outputs" % (n, len(enables), per)
            )
        cs = {"kind": "decoder", "address": addr, "enables": enables}
    elif kind == "mcp23017":
        i2c = cs.get("i2c", {"id": 1, "sda": 14, "scl": 15, "freq": 400000})
        if not isinstance(i2c, dict):
            c.problems.append("cs.i2c must be an object")
            i2c = {}
        i2c = {
            "id": i2c.get("id", 1),
            "sda": i2c.get("sda", 14),
            "scl": i2c.get("scl", 15),
            "freq": i2c.get("freq", 400000),
        }
        c.int_("cs.i2c.id", i2c["id"], 0, 1)
        c.pin("cs.i2c.sda", i2c["sda"])
        c.pin("cs.i2c.scl", i2c["scl"])
        c.int_("cs.i2c.freq", i2c["freq"], 10000, 1000000)
        addrs = cs.get("addresses", [0x20])
        if not isinstance(addrs, list) or not addrs:
            c.problems.append("cs.addresses must list the expanders' I2C addresses")
            addrs = []
        for i, a in enumerate(addrs):
            c.int_("cs.addresses[%d]" % i, a, 0x20, 0x27)
        if n > 16 * len(addrs):
            c.problems.append("%d cells need more than %d expander(s) of 16 outputs" % (n, len(addrs)))
        cs = {"kind": "mcp23017", "i2c": i2c, "addresses": addrs}
    else:
        c.problems.append("cs.kind must be 'gpio', 'decoder' or 'mcp23017', not %r" % (kind,))

    deb = dict(DEFAULT_DEBOUNCE)
    deb_raw = raw.get("debounce", {})
    if not isinstance(deb_raw, dict):
        c.problems.append("debounce must be an object")
        deb_raw = {}
    for k in deb_raw:
        if k not in DEFAULT_DEBOUNCE:
            c.problems.append("debounce.%s is not a known key (%s)" % (k, ", ".join(sorted(DEFAULT_DEBOUNCE))))
    deb.update(deb_raw)
    for k in DEFAULT_DEBOUNCE:
        c.int_("debounce." + k, deb[k], 1, 100)
    if _is_int(deb["unstable"]) and _is_int(deb["tag"]) and deb["unstable"] <= max(deb["tag"], 1):
        c.problems.append("debounce.unstable must exceed debounce.tag")

    rfid = dict(DEFAULT_RFID)
    rfid_raw = raw.get("rfid", {})
    if not isinstance(rfid_raw, dict):
        c.problems.append("rfid must be an object")
        rfid_raw = {}
    for k in rfid_raw:
        if k in LEGACY_RFID:
            continue
        if k not in DEFAULT_RFID:
            c.problems.append("rfid.%s is not a known key (%s)" % (k, ", ".join(sorted(DEFAULT_RFID))))
            continue
        rfid[k] = rfid_raw[k]
    c.int_("rfid.timeout_us", rfid["timeout_us"], 100, 100000)
    c.int_("rfid.retry_ms", rfid["retry_ms"], 0, 600000)
    c.int_("rfid.field_lead_us", rfid["field_lead_us"], 0, 100000)
    c.int_("rfid.full_read_every", rfid["full_read_every"], 1, 1000)
    c.int_("rfid.overlap", rfid["overlap"], 0, MAX_CELLS)
    if rfid["rx_gain_db"] not in RX_GAINS_DB or not _is_int(rfid["rx_gain_db"]):
        c.problems.append(
            "rfid.rx_gain_db = %r is not one of %s (dB)" % (rfid["rx_gain_db"], ", ".join(str(g) for g in RX_GAINS_DB))
        )
    if rfid["reset_pin"] is not None:
        c.pin("rfid.reset_pin", rfid["reset_pin"])

    name = raw.get("name", "")
    if not isinstance(name, str):
        c.problems.append("name must be a string")
        name = ""

    if c.problems:
        raise ConfigError("bad board config: " + "; ".join(c.problems))
    return {
        "_normalised": True,
        "format": FORMAT,
        "board": board,
        "name": name,
        "table": raw.get("table", ""),
        "cells": n,
        "leds": leds,
        "led_pin": led_pin,
        "led_max_level": led_max_level,
        "channel_leds": channel_leds,
        "spi": spi,
        "cs": cs,
        "debounce": deb,
        "rfid": rfid,
        "hash": config_hash(raw),
    }


def loads(text):
    """Parse the config file's text (str or bytes)."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise ConfigError("the board config is not valid JSON: %s" % exc)
    return parse(raw)


def load(path=CONFIG_PATH):
    """Read and parse the config file; ConfigError names the file."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as exc:
        raise ConfigError("cannot read the board config %s: %s" % (path, exc))
    return loads(text)


# --- chip selects -------------------------------------------------------------


class DecoderSelect:
    """One output of a 74HC138-style decoder used as an active-low chip
    select: value(0) puts the address on A0..An and pulls this decoder's
    enable (G2A) low; value(1) releases the enable."""

    def __init__(self, address_pins, enable_pin, index, shared=None):
        self.address_pins = address_pins
        self.enable_pin = enable_pin
        self.index = index
        # shared[0]: the address the pins hold now, common to every select on
        # these pins (make_selects gives them one list). A cell read selects
        # its reader 10-40 times in a row, so the address is written only
        # when it changes, and a driver that knows (fast_select) skips even
        # this method: on rp2040js a Python method call costs ~9 us, a
        # native Pin.value() ~5 us (docs/firmware.md, "rp2040js figures").
        self.shared = shared

    def fast_select(self):
        """-> (the enable pin's value method, shared, index) for a driver that
        selects once per SPI transaction (mfrc522.py): while shared[0] ==
        index the address pins already hold ours, so value(0) is just the
        enable going low, and value(1) is always the enable going high.
        None without a shared list: nothing then says what the pins hold."""
        if self.shared is None:
            return None
        return self.enable_pin.value, self.shared, self.index

    def value(self, v=None):
        if v is None:
            return 0 if self.enable_pin.value() == 0 else 1
        if v:
            self.enable_pin.value(1)
        else:
            i = self.index
            shared = self.shared
            if shared is None or shared[0] != i:
                for k in range(len(self.address_pins)):
                    self.address_pins[k].value((i >> k) & 1)
                if shared is not None:
                    shared[0] = i
            self.enable_pin.value(0)


class MCP23017:
    """Minimal MCP23017 driver (IOCON.BANK = 0): all 16 pins outputs, idle
    high; pin writes go to OLATA/OLATB."""

    def __init__(self, i2c, address):
        self.i2c = i2c
        self.address = address
        self.latch = 0xFFFF
        self._buf = bytearray(2)
        self.i2c.writeto_mem(address, 0x14, b"\xff\xff")  # OLATA/B high first
        self.i2c.writeto_mem(address, 0x00, b"\x00\x00")  # IODIRA/B outputs

    def write_pin(self, n, v):
        if v:
            self.latch |= 1 << n
        else:
            self.latch &= ~(1 << n) & 0xFFFF
        buf = self._buf
        if n < 8:
            buf[0] = self.latch & 0xFF
            self.i2c.writeto_mem(self.address, 0x14, buf[:1])
        else:
            buf[0] = self.latch >> 8
            self.i2c.writeto_mem(self.address, 0x15, buf[:1])


class ExpanderSelect:
    """One MCP23017 output used as an active-low chip select."""

    def __init__(self, expander, pin):
        self.expander = expander
        self.pin = pin

    def value(self, v=None):
        if v is None:
            return (self.expander.latch >> self.pin) & 1
        self.expander.write_pin(self.pin, 1 if v else 0)


def select_routes(cfg):
    """Per cell, the decoder address pins its transactions need set and
    cleared (GPIO masks, A0 = bit 0 of the cell's output number), which the
    compiled transfer writes itself before selecting (docs/firmware.md);
    None for chip selects that need no routing (one GPIO per cell, an
    expander)."""
    cs = cfg["cs"]
    if cs["kind"] != "decoder":
        return None
    pins = cs["address"]
    every = 0
    for pin in pins:
        every |= 1 << pin
    out = []
    for ch in range(cfg["cells"]):
        out_no = ch % (1 << len(pins))
        on = 0
        for k in range(len(pins)):
            if (out_no >> k) & 1:
                on |= 1 << pins[k]
        out.append((on, every & ~on))
    return out


def make_selects(cfg, pin_factory, i2c_factory=None):
    """Chip-select objects for every cell, from the normalised config.
    pin_factory(n) -> an output pin idling high (machine.Pin(n, Pin.OUT,
    value=1)); i2c_factory(id, sda, scl, freq) -> machine.I2C."""
    cs = cfg["cs"]
    n = cfg["cells"]
    if cs["kind"] == "gpio":
        return [pin_factory(p) for p in cs["pins"]]
    if cs["kind"] == "decoder":
        address = [pin_factory(p) for p in cs["address"]]
        enables = [pin_factory(p) for p in cs["enables"]]
        per = 1 << len(address)
        shared = [None]
        return [DecoderSelect(address, enables[ch // per], ch % per, shared) for ch in range(n)]
    if i2c_factory is None:
        raise ConfigError("cs.kind mcp23017 needs an I2C bus")
    i2c = cs["i2c"]
    bus = i2c_factory(i2c["id"], i2c["sda"], i2c["scl"], i2c["freq"])
    expanders = [MCP23017(bus, a) for a in cs["addresses"]]
    return [ExpanderSelect(expanders[ch // 16], ch % 16) for ch in range(n)]
