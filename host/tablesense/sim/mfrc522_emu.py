"""Register-level emulation of the NXP MFRC522 and of ISO 14443 A tags.

It speaks SPI like the chip (datasheet 8.1.2: address byte ``1aaaaaa0`` for a
read, ``0aaaaaa0`` for a write; a read streams one register per following MOSI
byte, a write streams data into one register), so the firmware's real driver
(``firmware/mfrc522.py``) runs against it unchanged, and the virtual table runs
the real firmware Board over it.

Emulated: the 64-byte FIFO and its level/flush, CommandReg (Idle, Mem,
CalcCRC, Transmit, Transceive, SoftReset, PowerDown), ComIrqReg/DivIrqReg with
their Set1/Set2 write rule, ErrorReg, CollReg, ControlReg.RxLastBits,
BitFramingReg (TxLastBits, StartSend), the timer (TModeReg.TAuto, prescaler,
reload: TimerIRq when no tag answers in time), the antenna (TxControlReg), and
on the RF side REQA/WUPA, anticollision and select over cascade levels 1..3
(4-, 7- and 10-byte UIDs, cascade tag, BCC, CRC_A), HLTA, the ISO 14443-3
state machine (IDLE, READY, ACTIVE, HALT), card placement and removal, several
tags on one antenna (a collision), and noise knobs (``noise``: an answer is
corrupted; ``flicker``: a present tag misses an exchange; ``dead``: the chip
does not answer SPI at all, MISO then reads the bus's ``absent_miso`` level;
``power_up_us``: how long a tag needs the field before it hears a frame).

Time is virtual: the bus advances its clock by the SPI transfer time of every
byte plus a per-call overhead (what a MicroPython call costs on an RP2040), and
RF exchanges take their ISO 14443 duration at 106 kbit/s. The driver therefore
sees realistic timing, and a test can read how many emulated microseconds a
read cost (``bus.now_us``).

This module is also valid MicroPython (no ``__future__``, no dataclasses), so
the driver-against-emulator tests run on the MicroPython WebAssembly port too.
"""

# Registers we model (others read back what was written)
_COMMAND = 0x01
_COM_IEN = 0x02
_DIV_IEN = 0x03
_COM_IRQ = 0x04
_DIV_IRQ = 0x05
_ERROR = 0x06
_STATUS1 = 0x07
_STATUS2 = 0x08
_FIFO_DATA = 0x09
_FIFO_LEVEL = 0x0A
_CONTROL = 0x0C
_BIT_FRAMING = 0x0D
_COLL = 0x0E
_MODE = 0x11
_TX_MODE = 0x12
_RX_MODE = 0x13
_TX_CONTROL = 0x14
_CRC_H = 0x21
_CRC_L = 0x22
_T_MODE = 0x2A
_T_PRESCALER = 0x2B
_T_RELOAD_H = 0x2C
_T_RELOAD_L = 0x2D
_T_COUNTER_H = 0x2E
_T_COUNTER_L = 0x2F
_VERSION = 0x37

# Reset values (datasheet table 20 and section 9.3)
_RESET_VALUES = {
    _COMMAND: 0x20,
    _COM_IEN: 0x80,
    _COM_IRQ: 0x14,
    _CONTROL: 0x10,
    _COLL: 0x80,
    _MODE: 0x3F,
    _TX_CONTROL: 0x80,
    0x15: 0x00,  # TxASKReg
    0x16: 0x10,  # TxSelReg
    0x17: 0x84,  # RxSelReg
    0x18: 0x84,  # RxThresholdReg
    0x19: 0x4D,  # DemodReg
    0x24: 0x26,  # ModWidthReg
    0x26: 0x48,  # RFCfgReg
    0x27: 0x88,  # GsNReg
    0x28: 0x20,  # CWGsPReg
    0x29: 0x20,  # ModGsPReg
    _CRC_H: 0xFF,
    _CRC_L: 0xFF,
    0x0B: 0x08,  # WaterLevelReg
}

_FC_HZ = 13560000
_BIT_US = 128 / 13.56  # one bit at 106 kbit/s: 9.44 us
_TIMER_STOP_BITS = 5  # TAuto's timer stops after an answer's 5th bit
_FDT_US = 1236 / 13.56  # frame delay time PCD->PICC->PCD for a bit-oriented answer: 91 us
_FIFO_SIZE = 64

# ISO 14443-3 tag states
IDLE = "IDLE"
READY = "READY"
ACTIVE = "ACTIVE"
HALT = "HALT"


def crc_a(data, crc=0x6363):
    """ISO/IEC 14443-3 CRC_A (low byte is sent first)."""
    for b in data:
        b ^= crc & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    return crc & 0xFFFF


def _crc_bytes(data, preset=0x6363):
    c = crc_a(data, preset)
    return bytes((c & 0xFF, c >> 8))


class _XorShift:
    """Tiny seeded PRNG (MicroPython has no random.Random). Anything with a
    ``random() -> float in [0, 1)`` method can be passed instead."""

    def __init__(self, seed=1):
        self.state = (seed * 2654435761 + 1) & 0xFFFFFFFF or 1

    def random(self):
        x = self.state
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.state = x
        return x / 4294967296.0


class EmulatedCard:
    """An ISO 14443 A tag (an NTAG sticker for 7-byte UIDs, a MIFARE Classic
    style tag for 4-byte ones). ``sak`` is the final SAK (0x00 NTAG, 0x08
    Classic 1K)."""

    def __init__(self, uid, sak=None):
        uid = bytes(uid)
        if len(uid) not in (4, 7, 10):
            raise ValueError(f"an ISO 14443 A UID has 4, 7 or 10 bytes, not {len(uid)}")
        if len(uid) == 4 and uid[0] == 0x88:
            raise ValueError("a 4-byte UID cannot start with the cascade tag 0x88")
        self.uid = uid
        self.sak = sak if sak is not None else (0x08 if len(uid) == 4 else 0x00)
        self.state = IDLE
        self.halted_before = False  # came to READY from HALT (WUPA)
        self.level = 0  # cascade level being selected (0-based)
        self.powered = False
        self.powered_at = 0.0  # when the field last came on (the chip's clock, us)
        self._fields = set()  # the chips whose field powers it now

    def __repr__(self):
        return f"EmulatedCard({self.uid!r})"

    @property
    def atqa(self):
        size = {4: 0, 7: 1, 10: 2}[len(self.uid)]
        return bytes((0x04 | (size << 6), 0x00))

    def levels(self):
        """The UID split into cascade levels: list of 4-byte parts."""
        u = self.uid
        if len(u) == 4:
            return [u]
        if len(u) == 7:
            return [b"\x88" + u[0:3], u[3:7]]
        return [b"\x88" + u[0:3], b"\x88" + u[3:6], u[6:10]]

    def power(self, on, now_us=0.0, source=None):
        """A reader's field appeared or vanished (at now_us): a tag without
        any field forgets everything (back to IDLE when powered again).

        ``source`` is the chip whose field it is: a tag that two fields reach
        (a neighbour's, in a tight layout) stays powered while either is on.
        ``source`` None switched off means the tag left every field (taken
        off the table); switched on, an anonymous field (tests)."""
        if on:
            if not self._fields:
                self.state = IDLE
                self.level = 0
                self.powered_at = now_us
            self._fields.add(source)
        elif source is None:
            self._fields.clear()
        else:
            self._fields.discard(source)
        self.powered = bool(self._fields)

    def _fallback(self):
        self.state = HALT if self.halted_before else IDLE
        self.level = 0

    def receive(self, frame, last_bits):
        """One PCD frame (bytes, bits valid in its last byte: 0 = 8).
        -> the answer bytes, or None for silence."""
        if not self.powered:
            return None
        short = len(frame) == 1 and last_bits == 7
        if short:
            cmd = frame[0] & 0x7F
            if self.state == IDLE and cmd in (0x26, 0x52):
                self.halted_before = False
                self.state = READY
                self.level = 0
                return self.atqa
            if self.state == HALT and cmd == 0x52:
                self.halted_before = True
                self.state = READY
                self.level = 0
                return self.atqa
            if self.state in (READY, ACTIVE):
                self._fallback()
            return None
        if last_bits not in (0, 8):
            if self.state in (READY, ACTIVE):
                self._fallback()
            return None
        if self.state == READY and len(frame) >= 2 and frame[0] in (0x93, 0x95, 0x97):
            level = (frame[0] - 0x93) // 2
            parts = self.levels()
            if level != self.level or level >= len(parts):
                self._fallback()
                return None
            part = parts[level]
            bcc = part[0] ^ part[1] ^ part[2] ^ part[3]
            if frame[1] == 0x20 and len(frame) == 2:
                return part + bytes((bcc,))
            if frame[1] == 0x70 and len(frame) == 9:
                if frame[2:7] != part + bytes((bcc,)) or frame[7:9] != _crc_bytes(frame[:7]):
                    self._fallback()
                    return None
                if level + 1 < len(parts):
                    self.level = level + 1
                    sak = 0x04
                else:
                    self.state = ACTIVE
                    sak = self.sak
                return bytes((sak,)) + _crc_bytes(bytes((sak,)))
            self._fallback()
            return None
        if self.state == ACTIVE and len(frame) == 4 and frame[0] == 0x50 and frame[1] == 0:
            if frame[2:4] == _crc_bytes(frame[:2]):
                self.state = HALT
                self.halted_before = True
                self.level = 0
            else:
                self._fallback()
            return None
        if self.state in (READY, ACTIVE):
            self._fallback()
        return None


class EmulatedMFRC522:
    """One MFRC522 chip with its antenna and the tags lying on it.

    Knobs (change them any time): ``noise`` probability that an answer is
    corrupted on the air (a parity error or a flipped bit), ``flicker``
    probability that a present tag misses one exchange, ``dead`` the chip does
    not drive MISO (it reads the bus's ``absent_miso``: 0x00 with the RP2040's
    reset pull-down, 0xFF pulled up), ``version`` the VersionReg value,
    ``power_up_us`` how long a tag must have had this chip's field before it
    hears a frame (0: at once; ISO 14443-3 allows a tag up to 5 ms, which
    the firmware's time-shared fields wait for, docs/firmware.md).

    ``space``: None, and the field reaches exactly the tags on this antenna;
    or a space model (``tablesense.sim.space.Space``) whose
    ``tags_for(chip)`` says which tags the field reaches, neighbours' included.
    """

    def __init__(self, version=0x92, noise=0.0, flicker=0.0, rng=None, seed=1, power_up_us=0.0, space=None):
        self.space = space
        self.version = version
        self.noise = noise
        self.flicker = flicker
        self.power_up_us = power_up_us
        self.dead = False
        self.rng = rng if rng is not None else _XorShift(seed)
        self.cards = []
        self.bus = None
        self.exchanges = 0  # RF exchanges started (statistics for tests)
        # a list to record every frame sent, (bytes, last bits): tests set one
        self.frame_log = None  # type: list[tuple[bytes, int]] | None
        self.spi_bytes = 0
        self._reset_registers()
        # SPI transaction state
        self._selected = False
        self._addr = None
        self._reading = False

    # --- the world ---------------------------------------------------------

    def place(self, card):
        """Put one tag on the antenna (replacing any other)."""
        for c in self.cards:
            c.power(False)
        self.cards = [card]
        card.power(self._field_on(), self._now(), source=self)

    def add(self, card):
        """Put another tag on the antenna as well (two tags collide)."""
        self.cards = self.cards + [card]
        card.power(self._field_on(), self._now(), source=self)

    def remove(self, card=None):
        """Take the tag (or every tag) off the antenna."""
        if card is None:
            for c in self.cards:
                c.power(False)
            self.cards = []
        elif card in self.cards:
            card.power(False)
            # a new list, never an in-place change: the world (another
            # thread in the virtual table) may call this while a read runs
            self.cards = [c for c in self.cards if c is not card]

    @property
    def card(self):
        return self.cards[0] if self.cards else None

    def _reached(self):
        """The tags this chip's field reaches: its own antenna's, or whatever
        the space model says (a neighbour's tag close enough answers too)."""
        return self.cards if self.space is None else self.space.tags_for(self)

    # --- registers -----------------------------------------------------------

    def _reset_registers(self):
        self.regs = bytearray(64)
        for k, v in _RESET_VALUES.items():
            self.regs[k] = v
        self.regs[_VERSION] = self.version
        self.fifo = bytearray()
        self._tx_end = None
        self._rx_at = None
        self._answer = None
        self._answer_err = 0
        self._timer_at = None
        self._crc_at = None
        self._soft_reset_until = None
        self._transmit_only = False
        self._air_until = None  # the end of this chip's exchange on the air (tx, answer or listening)
        self.garbled = 0  # exchanges garbled by an interfering reader (statistics for tests)
        for c in self._reached() if hasattr(self, "cards") else []:
            c.power(False, self._now(), source=self)

    def _now(self):
        return self.bus.now_us if self.bus is not None else 0.0

    def _field_on(self):
        return self.regs[_TX_CONTROL] & 0x03 != 0 and not self.regs[_COMMAND] & 0x10

    @property
    def field(self):
        """Whether this chip's RF field is on (TxControlReg, not powered
        down): what a tag near its antenna needs to answer."""
        return self._field_on()

    def _absent(self):
        """What MISO reads while this chip does not drive it."""
        return self.bus.absent_miso if self.bus is not None else 0xFF

    def _power_cards(self, on):
        now = self._now()
        for c in self._reached():
            c.power(on, now, source=self)

    def tags_in_field(self):
        """The tags that hear a frame this chip sends now: those on its
        antenna (or, with a space model, that its field reaches), powered by
        its field for at least ``power_up_us``. The one
        place that decides who is in the field (an empty list with the field
        off)."""
        if not self._field_on():
            return []
        ready = self._now() - self.power_up_us
        return [c for c in self._reached() if c.powered and c.powered_at <= ready]

    def _timer_us(self):
        presc = ((self.regs[_T_MODE] & 0x0F) << 8) | self.regs[_T_PRESCALER]
        reload = (self.regs[_T_RELOAD_H] << 8) | self.regs[_T_RELOAD_L]
        return (2 * presc + 1) * (reload + 1) / _FC_HZ * 1e6

    def next_event_us(self):
        """When the next timed event is due (bus time), or None: the end of a
        soft reset, a CRC, a transmission, an answer or the timer."""
        due = [t for t in (self._soft_reset_until, self._crc_at, self._tx_end, self._rx_at, self._timer_at)
               if t is not None]
        return min(due) if due else None

    def _advance(self):
        """Apply every timed event that is due at the bus's current time."""
        now = self._now()
        r = self.regs
        if self._soft_reset_until is not None and now >= self._soft_reset_until:
            self._soft_reset_until = None
            r[_COMMAND] &= ~0x10 & 0xFF
        if self._crc_at is not None and now >= self._crc_at:
            self._crc_at = None
            preset = (0x0000, 0x6363, 0xA671, 0xFFFF)[r[_MODE] & 0x03]
            c = crc_a(self.fifo, preset)
            r[_CRC_L] = c & 0xFF
            r[_CRC_H] = c >> 8
            r[_DIV_IRQ] |= 0x04
            # The FIFO's bytes went into the CRC coprocessor (datasheet 10.3.1.4:
            # "the FIFO buffer content is transferred to the CRC coprocessor"),
            # and CalcCRC does not end by itself: it keeps running until the
            # host writes another command (Idle), so no IdleIRq here.
            self.fifo = bytearray()
        if self._tx_end is not None and now >= self._tx_end:
            self._tx_end = None
            r[_COM_IRQ] |= 0x40  # TxIRq
            if self._transmit_only:  # Transmit ends in Idle
                self._transmit_only = False
                r[_COMMAND] &= 0xF0
                r[_COM_IRQ] |= 0x10  # IdleIRq
        if self._rx_at is not None and now >= self._rx_at:
            self._rx_at = None
            self._timer_at = None  # TAuto: the timer stops when reception starts
            ans = self._answer or b""
            self._answer = None
            self.fifo = bytearray(ans[:_FIFO_SIZE])
            r[_ERROR] = self._answer_err
            r[_CONTROL] = (r[_CONTROL] & 0xF8) | 0  # whole bytes received
            r[_COM_IRQ] |= 0x20  # RxIRq
            if self._answer_err:
                r[_COM_IRQ] |= 0x02  # ErrIRq
        if self._timer_at is not None and now >= self._timer_at:
            self._timer_at = None
            r[_COM_IRQ] |= 0x01  # TimerIRq

    def read_register(self, reg):
        if self.dead:
            return self._absent()
        self._advance()
        r = self.regs
        if reg == _FIFO_DATA:
            if self.fifo:
                v = self.fifo[0]
                self.fifo = self.fifo[1:]
                return v
            return 0
        if reg == _FIFO_LEVEL:
            return len(self.fifo) & 0x7F
        if reg == _VERSION:
            return self.version
        if reg in (_T_COUNTER_H, _T_COUNTER_L):
            value = self._timer_counter()
            return value >> 8 if reg == _T_COUNTER_H else value & 0xFF
        if reg == _STATUS1:
            status = 0x01 if len(self.fifo) <= r[0x0B] else 0  # LoAlert
            if len(self.fifo) >= _FIFO_SIZE - r[0x0B]:
                status |= 0x02  # HiAlert
            if self._timer_at is not None:
                status |= 0x08  # TRunning
            if r[_DIV_IRQ] & 0x04:
                status |= 0x20  # CRCReady
            return status
        return r[reg & 0x3F]

    def _timer_counter(self):
        """TCounterVal: ticks left before TimerIRq (0 when the timer stands)."""
        if self._timer_at is None:
            return 0
        presc = ((self.regs[_T_MODE] & 0x0F) << 8) | self.regs[_T_PRESCALER]
        tick_us = (2 * presc + 1) / _FC_HZ * 1e6
        left = (self._timer_at - self._now()) / tick_us
        return max(0, min(0xFFFF, int(left)))

    def write_register(self, reg, value):
        if self.dead:
            return
        self._advance()
        r = self.regs
        reg &= 0x3F
        value &= 0xFF
        if reg == _FIFO_DATA:
            if len(self.fifo) >= _FIFO_SIZE:
                r[_ERROR] |= 0x10  # BufferOvfl
            else:
                self.fifo.append(value)
            return
        if reg == _FIFO_LEVEL:
            if value & 0x80:
                self.fifo = bytearray()
                r[_ERROR] &= ~0x10 & 0xFF
            return
        if reg == _COM_IRQ:
            if value & 0x80:
                r[_COM_IRQ] |= value & 0x7F
            else:
                r[_COM_IRQ] &= ~value & 0x7F
            return
        if reg == _DIV_IRQ:
            if value & 0x80:
                r[_DIV_IRQ] |= value & 0x7F
            else:
                r[_DIV_IRQ] &= ~value & 0x7F
            return
        if reg in (_ERROR, _STATUS1, _CRC_H, _CRC_L, _VERSION, _T_COUNTER_H, _T_COUNTER_L):
            return  # read-only
        if reg == _COMMAND:
            self._command(value)
            return
        if reg == _BIT_FRAMING:
            r[reg] = value & 0x7F
            if value & 0x80 and (r[_COMMAND] & 0x0F) == 0x0C:
                self._start_transceive()
            return
        if reg == _TX_CONTROL:
            was = self._field_on()
            r[reg] = value
            now_on = self._field_on()
            if was != now_on:
                self._power_cards(now_on)
            return
        if reg == _CONTROL:
            if value & 0x80:
                self._timer_at = None  # TStopNow
            if value & 0x40:
                self._timer_at = self._now() + self._timer_us()  # TStartNow
            return
        r[reg] = value

    def _command(self, value):
        r = self.regs
        cmd = value & 0x0F
        field_was = self._field_on()
        if cmd == 0x0F:  # SoftReset
            self._reset_registers()
            r[_COMMAND] = 0x30  # PowerDown set until the oscillator is up
            self._soft_reset_until = self._now() + 40.0
            return
        # bits 5 (RcvOff) and 4 (PowerDown) are written with every command
        r[_COMMAND] = (r[_COMMAND] & 0xC0) | (value & 0x30) | cmd
        if field_was != self._field_on():
            self._power_cards(self._field_on())
        if cmd == 0x00:  # Idle: cancel whatever runs
            self._air_until = None
            self._tx_end = None
            self._rx_at = None
            self._answer = None
            self._timer_at = None
            self._crc_at = None
        elif cmd == 0x03:  # CalcCRC: about 1 us per byte
            self._crc_at = self._now() + 1.0 + len(self.fifo) * 0.6
        elif cmd == 0x01 or cmd == 0x02:  # Mem: 25 bytes between FIFO and internal buffer
            r[_COMMAND] &= 0xF0
        elif cmd == 0x04:  # Transmit: send, then Idle
            self._start_exchange(expect_answer=False)
        elif cmd == 0x0C:  # Transceive: waits for StartSend
            pass

    def _start_transceive(self):
        self._start_exchange(expect_answer=True)

    def _start_exchange(self, expect_answer):
        r = self.regs
        now = self._now()
        frame = bytes(self.fifo)
        self.fifo = bytearray()
        last_bits = r[_BIT_FRAMING] & 0x07
        r[_ERROR] = 0
        r[_COLL] = 0x80 | 0x20
        self.exchanges += 1
        if self.frame_log is not None:
            self.frame_log.append((frame, last_bits))
        nbits = len(frame) * 9 - (0 if last_bits == 0 else 8 - last_bits)
        tx_us = (nbits + 2) * _BIT_US
        self._tx_end = now + tx_us
        if r[_TX_MODE] & 0x80:  # TxCRCEn: the chip appends CRC_A
            frame = frame + _crc_bytes(frame)
        self._transmit_only = not expect_answer
        if self._interfered(now, frame, expect_answer):
            return
        if not expect_answer:
            # Transmit: the tags hear the frame (HLTA), nobody is listened to
            self._answer = None
            self._rx_at = None
            for c in self.tags_in_field():
                if not (self.flicker and self.rng.random() < self.flicker):
                    c.receive(frame, last_bits)
            return
        if not self._field_on() or r[_COMMAND] & 0x20:  # no field, or RcvOff
            self._answer = None
            self._rx_at = None
            if r[_T_MODE] & 0x80:
                self._timer_at = self._tx_end + self._timer_us()
            return
        answers = []
        for c in self.tags_in_field():
            if self.flicker and self.rng.random() < self.flicker:
                # the tag missed this frame: it neither answers nor changes state
                continue
            a = c.receive(frame, last_bits)
            if a is not None:
                answers.append(a)
        err = 0
        answer = None
        if answers:
            answer = answers[0]
            for other in answers[1:]:
                if other != answer:
                    err |= 0x08  # CollErr
                    r[_COLL] = 0x00
            if self.noise and self.rng.random() < self.noise:
                if self.rng.random() < 0.5:
                    err |= 0x02  # ParityErr
                else:
                    pos = int(self.rng.random() * len(answer) * 8)
                    flipped = bytearray(answer)
                    flipped[pos // 8] ^= 1 << (pos % 8)
                    answer = bytes(flipped)
            if r[_RX_MODE] & 0x80 and not err:  # RxCRCEn: the chip checks/strips CRC_A
                if len(answer) < 3 or _crc_bytes(answer[:-2]) != answer[-2:]:
                    err |= 0x04
                else:
                    answer = answer[:-2]
        fdt = _FDT_US if len(frame) <= 2 else _FDT_US + 20.0
        timeout = self._timer_us() if r[_T_MODE] & 0x80 else None
        start_rx = self._tx_end + fdt
        # TAuto: the timer stops only once the 5th bit of the answer (a start
        # bit and 4 data bits) is in (datasheet 9.3.3.10); a timer that fires
        # before that ends the wait with TimerIRq and the answer is lost
        if answer is not None and (timeout is None or fdt + _TIMER_STOP_BITS * _BIT_US < timeout):
            self._answer = answer
            self._answer_err = err
            self._rx_at = start_rx + (len(answer) * 9 + 2) * _BIT_US
            self._timer_at = None
        else:
            self._answer = None
            self._rx_at = None
            if timeout is not None:
                self._timer_at = self._tx_end + timeout
        if self._rx_at is not None:
            self._air_until = self._rx_at
        elif self._timer_at is not None:
            self._air_until = self._timer_at

    def _interfered(self, now, frame, expect_answer):
        """Two readers on the air at once. When a reader whose field reaches
        a cell this chip's field reaches (the space model's ``interfering``;
        none without a space) has an exchange in flight -- its frame, its
        tag's answer or its wait for one -- the two garble each other: this
        frame reaches no tag intact (a tag in READY or ACTIVE drops back, as
        after any corrupted frame) and this chip receives noise instead of
        an answer; the other chip's answer (or, while it only listens, the
        noise of this frame) arrives with ParityErr and CRCErr. The driver
        sees ERR_CRC. Readers out of each other's reach are independent.
        Only chips on the same bus are compared (their clocks are the same
        clock). -> True when this exchange was garbled (set up here)."""
        space = self.space
        if space is None:
            self._air_until = self._tx_end
            return False
        hit = False
        for other in space.interfering(self):
            until = other._air_until
            if other.bus is not self.bus or until is None or until <= now:
                continue
            hit = True
            other.garbled += 1
            if other._rx_at is not None:
                other._answer_err |= 0x06
            elif other._timer_at is not None and not other._transmit_only:
                # it listens: this frame's modulation is what it receives
                other._answer = b"\x00"
                other._answer_err = 0x06
                other._rx_at = max(now, other._tx_end or now) + len(frame) * 9 * _BIT_US
                other._timer_at = None
                other._air_until = other._rx_at
        if not hit:
            self._air_until = self._tx_end
            return False
        self.garbled += 1
        for c in self.tags_in_field():
            if c.state in (READY, ACTIVE):
                c._fallback()
        self._answer = None
        self._timer_at = None
        if expect_answer:
            self._answer = b"\x00"
            self._answer_err = 0x06
            tx_end = self._tx_end if self._tx_end is not None else now
            self._rx_at = tx_end + _FDT_US + 11 * _BIT_US
            self._air_until = self._rx_at
        else:
            self._rx_at = None
            self._air_until = self._tx_end
        return True

    # --- SPI slave -----------------------------------------------------------

    def select(self, active):
        """Chip select edge (active = NSS low)."""
        self._selected = active
        self._addr = None
        self._reading = False

    def transfer(self, mosi):
        """One SPI byte while selected -> the MISO byte."""
        self.spi_bytes += 1
        if self.dead:
            return self._absent()
        if self._addr is None:
            self._addr = (mosi >> 1) & 0x3F
            self._reading = bool(mosi & 0x80)
            return 0x00
        if self._reading:
            value = self.read_register(self._addr)
            self._addr = (mosi >> 1) & 0x3F
            return value
        self.write_register(self._addr, mosi)
        return 0x00


#: How many of its first levels an :class:`EmulatedPin` keeps (``history``).
HISTORY_KEPT = 64


class EmulatedPin:
    """A GPIO pin like machine.Pin (value/on/off/high/low/__call__/init),
    driven by the firmware. As a chip select it is active low. Listeners are
    told about every change (the SPI bus watches its chip selects)."""

    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, id=None, mode=-1, pull=-1, value=None, **kwargs):
        self.id = id
        self.mode = mode
        self.pull = pull  # -1: none asked for (an RP2040 pad keeps its reset pull-down)
        self._value = 1 if value is None else (1 if value else 0)
        # how often the level changed, and only the first levels it took (a reset
        # pulse at start-up): a chip select toggles at every cell read, ~100,000
        # times a second on a virtual table, and a list of every level grew a
        # `sim boards` process by ~50 MB a minute
        self.changes = 0
        self.history = []
        self._listeners = []

    def __repr__(self):
        return f"EmulatedPin({self.id!r}, value={self._value})"

    def init(self, mode=-1, pull=-1, value=None, **kwargs):
        if mode != -1:
            self.mode = mode
        if pull != -1:
            self.pull = pull
        if value is not None:
            self.value(value)

    def listen(self, callback):
        self._listeners.append(callback)

    def value(self, v=None):
        if v is None:
            return self._value
        v = 1 if v else 0
        if v != self._value:
            self._value = v
            self.changes += 1
            if len(self.history) < HISTORY_KEPT:
                self.history.append(v)
            for cb in self._listeners:
                cb()
        return None

    def __call__(self, v=None):
        return self.value(v)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def high(self):
        self.value(1)

    def low(self):
        self.value(0)

    @property
    def active(self):
        """As an active-low chip select."""
        return self._value == 0


class Emulated138:
    """A 74HC138 3-to-8 decoder: address pins A0..A2, enable G2A (active low;
    G1 and G2B strapped). Output Yn is low (selects) when enabled and the
    address is n."""

    def __init__(self, a0, a1, a2, enable):
        self.pins = (a0, a1, a2)
        self.enable = enable
        self._listeners = []
        for p in (a0, a1, a2, enable):
            p.listen(self._changed)

    def _changed(self):
        for cb in self._listeners:
            cb()

    def listen(self, callback):
        self._listeners.append(callback)

    def address(self):
        return self.pins[0].value() | (self.pins[1].value() << 1) | (self.pins[2].value() << 2)

    def output(self, n):
        return _DecoderLine(self, n)


class _DecoderLine:
    def __init__(self, decoder, n):
        self.decoder = decoder
        self.n = n

    def listen(self, callback):
        self.decoder.listen(callback)

    @property
    def active(self):
        d = self.decoder
        return d.enable.value() == 0 and d.address() == self.n


class EmulatedMCP23017:
    """An MCP23017 I2C port expander (IOCON.BANK = 0) whose outputs serve as
    chip selects: registers IODIRA/B (0x00/0x01), GPIOA/B (0x12/0x13),
    OLATA/B (0x14/0x15). Give it to an EmulatedI2C at its address."""

    def __init__(self):
        self.regs = bytearray(0x16)
        self.regs[0] = 0xFF
        self.regs[1] = 0xFF
        self.regs[0x14] = 0x00
        self.regs[0x15] = 0x00
        self._listeners = []

    def listen(self, callback):
        self._listeners.append(callback)

    def write(self, reg, data):
        for b in data:
            if reg < len(self.regs):
                if reg in (0x12, 0x13):
                    self.regs[reg + 2] = b  # writing GPIO writes the latch
                self.regs[reg] = b
            reg += 1
        for cb in self._listeners:
            cb()

    def read(self, reg, n):
        out = bytearray()
        for k in range(n):
            r = reg + k
            if r in (0x12, 0x13):
                out.append(self.regs[r + 2])
            else:
                out.append(self.regs[r] if r < len(self.regs) else 0)
        return bytes(out)

    def pin_level(self, n):
        port = 0x14 + (n >> 3)
        iodir = self.regs[n >> 3]
        if iodir & (1 << (n & 7)):
            return 1  # an input floats high through the CS pull-up
        return (self.regs[port] >> (n & 7)) & 1

    def output(self, n):
        return _ExpanderLine(self, n)


class _ExpanderLine:
    def __init__(self, expander, n):
        self.expander = expander
        self.n = n

    def listen(self, callback):
        self.expander.listen(callback)

    @property
    def active(self):
        return self.expander.pin_level(self.n) == 0


class EmulatedI2C:
    """machine.I2C-like bus carrying MCP23017 expanders
    (writeto_mem/readfrom_mem/writeto/scan)."""

    def __init__(self, *args, **kwargs):
        self.devices = {}

    def attach(self, address, device):
        self.devices[address] = device

    def scan(self):
        return sorted(self.devices)

    def _dev(self, addr):
        d = self.devices.get(addr)
        if d is None:
            raise OSError(19)  # ENODEV: nobody acknowledged the address
        return d

    def writeto_mem(self, addr, memaddr, buf, addrsize=8):
        self._dev(addr).write(memaddr, bytes(buf))

    def readfrom_mem(self, addr, memaddr, nbytes, addrsize=8):
        return self._dev(addr).read(memaddr, nbytes)

    def writeto(self, addr, buf, stop=True):
        buf = bytes(buf)
        if buf:
            self._dev(addr).write(buf[0], buf[1:])
        return len(buf)


class EmulatedSPIBus:
    """A machine.SPI-like bus shared by emulated chips, each behind its own
    chip-select line (an EmulatedPin, a decoder or expander output). Bytes go
    to every selected chip; with none selected (or a dead chip selected) MISO
    reads ``absent_miso``: 0xFF when the master pulls MISO up (the firmware
    does), 0x00 with the RP2040's reset pull-down; with two selected their
    answers clash (counted in ``contention``).

    ``now_us`` is the bus's virtual clock: every call costs ``overhead_us``
    plus 8 bit times at ``baudrate``. ``ticks_us``/``ticks_diff`` read it
    the way MicroPython's time module reads a board's clock, so a driver on
    this bus keeps its deadlines in the chips' time.

    ``skip_waits``: a transaction that only reads registers while the
    selected chip has a timed event ahead (an answer, the timer, a CRC)
    first lets the virtual clock run to that event, as if the driver had
    polled until then. The driver sees the same registers in the same order,
    in a few polls instead of the hundreds a wait of airtime takes at
    ``overhead_us`` a poll: the CPU a virtual table spends on its boards.
    Off by default, so a test that counts the driver's polls sees every one.
    """

    TICKS_PERIOD = 1 << 30

    def __init__(self, id=0, baudrate=4000000, overhead_us=12.0, absent_miso=0xFF, skip_waits=False, **kwargs):
        if absent_miso not in (0x00, 0xFF):
            raise ValueError(f"absent_miso is 0x00 (pulled down) or 0xFF (pulled up), not {absent_miso!r}")
        self.absent_miso = absent_miso
        self.skip_waits = skip_waits
        self.id = id
        self.baudrate = baudrate
        self.overhead_us = overhead_us
        self.now_us = 0.0
        self.devices = []  # (line, chip)
        self.contention = 0
        self.transfers = 0
        self._selected = []  # chips whose chip select is active now

    def init(self, baudrate=None, **kwargs):
        if baudrate:
            self.baudrate = baudrate

    def deinit(self):
        pass

    def attach(self, line, chip):
        """Wire chip's NSS to line (anything with .active and .listen())."""
        self.devices.append((line, chip))
        chip.bus = self
        line.listen(lambda: self._line_changed(line, chip))
        self._line_changed(line, chip)
        return chip

    def add_reader(self, pin_id=None, **chip_kwargs):
        """Convenience: a new EmulatedPin chip select and a new chip on it."""
        pin = EmulatedPin(pin_id, EmulatedPin.OUT, value=1)
        chip = EmulatedMFRC522(**chip_kwargs)
        self.attach(pin, chip)
        return pin, chip

    def advance(self, us):
        """Let virtual time pass (the firmware doing something else)."""
        self.now_us += us

    def ticks_us(self):
        """The virtual clock as MicroPython's time.ticks_us (wraps at 2**30)."""
        return int(self.now_us) & (self.TICKS_PERIOD - 1)

    def ticks_diff(self, a, b):
        half = self.TICKS_PERIOD // 2
        return ((a - b + half) & (self.TICKS_PERIOD - 1)) - half

    def _line_changed(self, line, chip):
        active = bool(line.active)
        if active != chip._selected:
            chip.select(active)
            if active:
                self._selected.append(chip)
            elif chip in self._selected:
                self._selected.remove(chip)

    def _xfer(self, wbuf, rbuf):
        self.transfers += 1
        n = len(wbuf)
        self.now_us += self.overhead_us + n * 8e6 / self.baudrate
        chips = self._selected
        if len(chips) == 1:
            chip = chips[0]
            if self.skip_waits and n and wbuf[0] & 0x80:  # reads only: a poll
                due = chip.next_event_us()
                if due is not None and due > self.now_us:
                    self.now_us = due
            if rbuf is None:
                for i in range(n):
                    chip.transfer(wbuf[i])
            else:
                for i in range(n):
                    rbuf[i] = chip.transfer(wbuf[i])
            return
        if len(chips) > 1:
            self.contention += 1
        chips = list(chips)
        for i in range(n):
            out = 0xFF if chips else self.absent_miso
            for chip in chips:
                out &= chip.transfer(wbuf[i])  # open bus: a 0 wins
            if rbuf is not None:
                rbuf[i] = out

    def transfer_byte(self, mosi, now_us=None):
        """One byte clocked by a bus master outside this process (an emulated
        RP2040's SPI peripheral) at its own time ``now_us`` -> the MISO byte
        (0xFF when no chip is selected; selected chips' answers AND together)."""
        if now_us is not None and now_us > self.now_us:
            self.now_us = now_us
        chips = self._selected
        if len(chips) == 1:
            return chips[0].transfer(mosi)
        if not chips:
            return self.absent_miso
        out = 0xFF
        if len(chips) > 1:
            self.contention += 1
            for chip in list(chips):
                out &= chip.transfer(mosi)
        return out

    # machine.SPI API
    def write(self, buf):
        self._xfer(buf, None)

    def read(self, nbytes, write=0):
        r = bytearray(nbytes)
        self._xfer(bytes([write & 0xFF]) * nbytes, r)
        return bytes(r)

    def readinto(self, buf, write=0):
        self._xfer(bytes([write & 0xFF]) * len(buf), buf)

    def write_readinto(self, write_buf, read_buf):
        if len(write_buf) != len(read_buf):
            raise ValueError("buffers must be the same length")
        self._xfer(bytes(write_buf), read_buf)
