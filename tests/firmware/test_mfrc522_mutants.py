"""MFRC522 driver tests written to kill mutants that survived the emulator
tests (benchmarks/mutation.py, docs/mutation-testing.md).

The emulator answers like a chip; it does not check every register value the
driver writes, nor can it stage every error a chip or a tag can report. Here a
scripted chip records each SPI transaction and answers each exchange with the
IRQ, error and FIFO bytes a test chooses, and the values are checked against
the datasheet (NXP MFRC522 rev. 3.9) and ISO/IEC 14443-3."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tablesense.firmware import mfrc522 as drv

Answer = tuple[int | list[int], int, bytes]  # ComIrqReg (or its successive values), ErrorReg, FIFO


class ScriptedChip:
    """An SPI bus with one chip whose exchanges are answered by ``respond``."""

    def __init__(self, respond: Callable[[bytes], Answer] | None = None) -> None:
        self.regs: dict[int, int] = {drv.VersionReg: 0x92, drv.TxControlReg: 0x80}
        self.reads: dict[int, list[int]] = {}  # register -> values read in turn (last repeats)
        self.writes: list[tuple[int, bytes]] = []
        self.transfers: list[bytes] = []
        self.fifo_in = bytearray()
        self.fifo_out = bytearray()
        self.frames: list[bytes] = []
        self.respond = respond
        self.selected = False
        self.fail = False
        self.read_budget = 5000  # a driver loop that never ends fails here instead of hanging
        self.us = 0  # the clock the driver's deadlines are kept in: 10 us a transfer

    PERIOD = 1 << 30

    def ticks_us(self) -> int:
        return self.us & (self.PERIOD - 1)

    def ticks_diff(self, a: int, b: int) -> int:
        half = self.PERIOD // 2
        return ((a - b + half) & (self.PERIOD - 1)) - half

    # the chip select
    def value(self, v: int) -> None:
        self.selected = v == 0

    def _check(self) -> None:
        assert self.selected, "SPI transfer without the chip selected"
        self.us += 10
        if self.fail:
            raise OSError("SPI fault")

    def write(self, buf: Any) -> None:
        self._check()
        buf = bytes(buf)
        self.transfers.append(buf)
        assert buf[0] & 0x81 == 0, "write address byte is 0aaaaaa0"
        reg = buf[0] >> 1
        data = buf[1:]
        self.writes.append((reg, data))
        if reg == drv.FIFODataReg:
            self.fifo_in.extend(data)
            return
        self.regs[reg] = data[-1]
        if reg == drv.FIFOLevelReg and data[-1] & 0x80:
            self.fifo_in.clear()
        if reg == drv.CommandReg and data[-1] in (drv.CMD_TRANSCEIVE, drv.CMD_TRANSMIT):
            frame = bytes(self.fifo_in)
            self.frames.append(frame)
            self.fifo_in.clear()
            if data[-1] == drv.CMD_TRANSCEIVE and self.respond is not None:
                irq, err, answer = self.respond(frame)
                self.reads[drv.ComIrqReg] = list(irq) if isinstance(irq, list) else [irq]
                self.regs[drv.ErrorReg] = err
                self.fifo_out = bytearray(answer)

    def write_readinto(self, w: Any, r: Any) -> None:
        self._check()
        w = bytes(w)
        self.transfers.append(w)
        r[0] = 0
        for i in range(len(w) - 1):
            assert w[i] & 0x81 == 0x80, "read address byte is 1aaaaaa0"
            r[i + 1] = self.read((w[i] >> 1) & 0x3F)
        assert w[-1] == 0, "a read ends with 0x00"

    def read(self, reg: int) -> int:
        self.read_budget -= 1
        assert self.read_budget > 0, "the driver polls without end"
        if reg == drv.FIFODataReg:
            return self.fifo_out.pop(0) if self.fifo_out else 0
        seq = self.reads.get(reg)
        if seq:
            return seq.pop(0) if len(seq) > 1 else seq[0]
        if reg == drv.FIFOLevelReg:
            return len(self.fifo_out)
        return self.regs.get(reg, 0)

    def written(self, reg: int) -> list[int]:
        return [d[-1] for r, d in self.writes if r == reg]


def make(respond: Callable[[bytes], Answer] | None = None, **kw: int) -> tuple[ScriptedChip, drv.MFRC522]:
    chip = ScriptedChip(respond)
    return chip, drv.MFRC522(chip, chip, **kw)


def polls_for(limit_us: int) -> int:
    """Polls of a wait that never ends by itself, at 10 us a transfer: the
    clock is read before each, and the one read at limit_us or later is the
    last."""
    return -(-limit_us // 10) + 1


def exchange_limit(nbytes: int, last_bits: int = 0, timeout_us: int = 200) -> int:
    return drv.airtime_us(nbytes, last_bits) + timeout_us + drv._LONGEST_ANSWER_US + drv._MARGIN_US


def test_address_bytes_and_transactions() -> None:
    chip, r = make()
    assert chip.selected is False  # idle high after construction
    chip.regs[drv.VersionReg] = 0x91
    assert r.read_reg(drv.VersionReg) == 0x91
    assert chip.transfers[-1] == bytes([0x80 | (0x37 << 1), 0])
    r.write_reg(drv.CommandReg, 0x10F)
    assert chip.transfers[-1] == bytes([0x01 << 1, 0x0F])
    chip.regs[drv.ErrorReg] = 0x12
    chip.regs[drv.Status1Reg] = 0x34
    assert bytes(r.read_regs((drv.ErrorReg, drv.Status1Reg))) == b"\x12\x34"
    assert chip.transfers[-1] == bytes([0x80 | (0x06 << 1), 0x80 | (0x07 << 1), 0])
    chip.fifo_out = bytearray(b"\x01\x02\x03")
    assert r.read_fifo(3) == b"\x01\x02\x03"
    assert chip.transfers[-1] == bytes([0x92, 0x92, 0x92, 0])
    n = len(chip.transfers)
    assert r.read_fifo(0) == b"" and r.read_fifo(-1) == b""
    assert len(chip.transfers) == n  # nothing sent for an empty read
    r.write_fifo(b"\xaa\xbb")
    assert chip.transfers[-1] == b"\x12\xaa\xbb"
    assert chip.selected is False


def test_chip_select_is_released_when_spi_fails() -> None:
    chip, r = make()
    chip.fail = True
    for call in (lambda: r.read_reg(1), lambda: r.write_reg(1, 0), lambda: r.read_regs((1, 2)),
                 lambda: r.write_fifo(b"x"), lambda: r.read_fifo(2)):
        chip.selected = True
        with pytest.raises(OSError):
            call()
        assert chip.selected is False


def test_set_and_clear_bits() -> None:
    chip, r = make()
    chip.regs[drv.TxControlReg] = 0x80
    r.set_bits(drv.TxControlReg, 0x03)
    assert chip.regs[drv.TxControlReg] == 0x83
    r.clear_bits(drv.TxControlReg, 0x01)
    assert chip.regs[drv.TxControlReg] == 0x82
    r.clear_bits(drv.TxControlReg, 0x102)
    assert chip.regs[drv.TxControlReg] == 0x80
    chip.regs[drv.TxControlReg] = 0x81
    r.clear_bits(drv.TxControlReg, 0x02)  # only the bits asked for: bit 0 stays
    assert chip.regs[drv.TxControlReg] == 0x81


def test_init_programs_the_chip_as_the_datasheet_says() -> None:
    chip, r = make()
    chip.reads[drv.CommandReg] = [drv.POWER_DOWN, drv.POWER_DOWN, 0x00]
    assert r.init() is True
    assert chip.writes[0] == (drv.CommandReg, bytes([0x0F]))  # SoftReset
    reads_of_command = [t for t in chip.transfers if t[0] == 0x80 | (drv.CommandReg << 1)]
    assert len(reads_of_command) == 3  # polled until PowerDown cleared, then no more
    assert chip.regs[drv.TxModeReg] == 0x00
    assert chip.regs[drv.RxModeReg] == 0x00
    assert chip.regs[drv.ModWidthReg] == 0x26
    assert chip.regs[drv.TxASKReg] == 0x40
    assert chip.regs[drv.ModeReg] == 0x3D
    assert chip.regs[drv.TModeReg] == 0x80  # TAuto, prescaler high nibble 0
    assert chip.regs[drv.TPrescalerReg] == 0xA9  # 169
    assert (chip.regs[drv.TReloadRegH], chip.regs[drv.TReloadRegL]) == (0, 8)  # 200 us (the default)
    assert chip.regs[drv.TxControlReg] & 0x03 == 0x03
    assert {reg for reg, _ in chip.writes} >= {0x01, 0x12, 0x13, 0x24, 0x15, 0x11, 0x2A, 0x2B,
                                               0x2C, 0x2D, 0x14}


def test_init_bounds_the_reset_wait_and_checks_the_version() -> None:
    chip, r = make()
    chip.reads[drv.CommandReg] = [drv.POWER_DOWN]
    assert r.init() is True
    assert len([t for t in chip.transfers if t[0] == 0x80 | (drv.CommandReg << 1)]) == polls_for(drv._RESET_US)
    chip, r = make()
    chip.reads[drv.CommandReg] = [0xFF]  # MISO floating high: no chip, given up at once
    assert r.init() is False
    assert len(chip.transfers) == 2 and chip.written(drv.TxControlReg) == []
    chip, r = make()
    chip.regs[drv.VersionReg] = 0x00  # MISO pulled low: not configured either
    assert r.init() is False
    assert chip.written(drv.TxControlReg) == [] and chip.written(drv.ModeReg) == []
    for version in drv.KNOWN_VERSIONS:
        chip, r = make()
        chip.regs[drv.VersionReg] = version
        assert r.init() is True
    assert drv.KNOWN_VERSIONS == (0x91, 0x92, 0x88, 0xB2, 0x12)
    for version in (0x00, 0x90, 0xFF):
        chip, r = make()
        chip.regs[drv.VersionReg] = version
        assert r.init() is False


@pytest.mark.parametrize(("us", "ticks"), [(0, 1), (1, 1), (25, 1), (26, 2), (300, 12),
                                           (1638375, 0xFFFF), (1638376, 0xFFFF), (10**7, 0xFFFF)])
def test_timer_reload_rounds_up_and_is_clamped(us: int, ticks: int) -> None:
    chip, r = make()
    r.set_timeout(us)
    assert r.timeout_us == us
    assert (chip.regs[drv.TReloadRegH] << 8) | chip.regs[drv.TReloadRegL] == ticks


def test_antenna_bits() -> None:
    chip, r = make()
    chip.regs[drv.TxControlReg] = 0x83
    r.antenna_on()
    assert chip.written(drv.TxControlReg) == []  # already on: no write
    assert r.antenna() is True
    for partly in (0x81, 0x82):
        chip.regs[drv.TxControlReg] = partly
        assert r.antenna() is False
        r.antenna_on()
        assert chip.regs[drv.TxControlReg] == 0x83
    r.antenna_off()
    assert chip.regs[drv.TxControlReg] == 0x80


def _crc_chip(result: tuple[int, int] | None) -> tuple[ScriptedChip, drv.MFRC522]:
    chip, r = make()
    chip.regs[drv.TxControlReg] = 0x83
    if result is None:
        chip.reads[drv.DivIrqReg] = [0x00]
    else:
        chip.reads[drv.DivIrqReg] = [0x00, 0x00, drv.DIV_CRC]
        chip.regs[drv.CRCResultRegL], chip.regs[drv.CRCResultRegH] = result
    return chip, r


def test_calc_crc_and_self_test() -> None:
    probe = b"\x93\x70\x88\x04\xa1\xb2\x9f"
    c = drv.crc_a(probe)
    chip, r = _crc_chip((c & 0xFF, c >> 8))
    assert r.self_test() == (0x92, True, True)
    assert chip.written(drv.DivIrqReg) == [0x04]
    assert chip.written(drv.CommandReg) == [drv.CMD_IDLE, drv.CMD_CALC_CRC, drv.CMD_IDLE]
    assert chip.fifo_in == bytearray(probe)
    assert drv.DIV_CRC == 0x04 and drv.CMD_CALC_CRC == 0x03
    chip, r = _crc_chip((c >> 8, c & 0xFF))  # bytes swapped: wrong
    assert r.self_test() == (0x92, True, False)
    chip, r = _crc_chip(None)
    assert r.calc_crc(probe) is None
    assert len([t for t in chip.transfers if t[0] == 0x80 | (drv.DivIrqReg << 1)]) == polls_for(drv._CRC_US)
    assert chip.written(drv.CommandReg)[-1] == drv.CMD_IDLE
    chip, r = _crc_chip((c & 0xFF, c >> 8))
    chip.regs[drv.VersionReg] = 0x90
    assert r.self_test() == (0x90, True, False)
    chip, r = _crc_chip((c & 0xFF, c >> 8))
    chip.regs[drv.TxControlReg] = 0x81
    assert r.self_test() == (0x92, False, False)
    chip.fail = True
    assert r.self_test() == (0, False, False)


def _exchange(irq: int, err: int = 0, answer: bytes = b"", level: int | None = None,
              **kw: int) -> tuple[ScriptedChip, drv.MFRC522, tuple[int, bytes]]:
    chip, r = make(lambda frame: (irq, err, answer), **kw)
    if level is not None:
        chip.reads[drv.FIFOLevelReg] = [level]
    out = r.transceive(b"\x26", 7)
    return chip, r, out


def test_transceive_programs_the_exchange() -> None:
    chip, r, out = _exchange(drv.IRQ_RX, answer=b"\x44\x00")
    assert out == (0, b"\x44\x00")
    assert chip.written(drv.ComIrqReg) == [0x7F]
    assert chip.written(drv.FIFOLevelReg) == [0x80]
    assert chip.written(drv.CommandReg) == [drv.CMD_IDLE, 0x0C]
    assert chip.written(drv.BitFramingReg) == [0x87]
    assert chip.frames == [b"\x26"]
    r.transceive(b"\x93\x20")
    assert chip.written(drv.BitFramingReg)[-1] == 0x80
    r.transceive(b"\x93\x20", 0x0F)
    assert chip.written(drv.BitFramingReg)[-1] == 0x87
    assert r.polls == 1


@pytest.mark.parametrize(("irq", "err", "answer", "want"), [
    (drv.IRQ_TIMER, 0, b"", (-1, b"")),                     # nobody answered
    (drv.IRQ_TIMER, 0xFF, b"", (drv.ERR_TIMEOUT, b"")),       # MISO floating: no chip
    (drv.IRQ_RX, 0xFF, b"\x01", (drv.ERR_TIMEOUT, b"")),
    (drv.IRQ_RX, 0x08, b"\x01", (drv.ERR_COLLISION, b"")),
    (drv.IRQ_RX, 0x0C, b"\x01", (drv.ERR_COLLISION, b"")),    # collision wins over CRC
    (drv.IRQ_RX, 0x04, b"\x01", (drv.ERR_CRC, b"")),
    (drv.IRQ_RX, 0x02, b"\x01", (drv.ERR_CRC, b"")),          # parity
    (drv.IRQ_RX, 0x03, b"\x01", (drv.ERR_CRC, b"")),          # CRC wins over protocol
    (drv.IRQ_RX, 0x01, b"\x01", (drv.ERR_PROTOCOL, b"")),
    (drv.IRQ_RX, 0x10, b"\x01", (drv.ERR_PROTOCOL, b"")),     # buffer overflow
    (drv.IRQ_RX, 0x40, b"\x01", (0, b"\x01")),               # TempErr is none of ours
    (drv.IRQ_RX, 0x80, b"\x01", (0, b"\x01")),               # WrErr likewise
    (drv.IRQ_IDLE, 0, b"\x05", (0, b"\x05")),
    (drv.IRQ_IDLE, 0, b"", (0, b"")),                        # idle, nothing: an empty answer
    (drv.IRQ_RX | drv.IRQ_TIMER, 0, b"", (-1, b"")),          # the timer fired, FIFO empty
    (drv.IRQ_RX | drv.IRQ_TIMER, 0, b"\x07", (0, b"\x07")),
    (drv.IRQ_TIMER | drv.IRQ_ERR, 0x04, b"", (-1, b"")),       # no answer beats its errors
])
def test_transceive_outcomes(irq: int, err: int, answer: bytes, want: tuple[int, bytes]) -> None:
    _chip, _r, out = _exchange(irq, err, answer)
    assert out == want


def test_transceive_reads_fifo_level_low_seven_bits() -> None:
    _chip, _r, out = _exchange(drv.IRQ_RX, 0, b"\x01\x02\x03", level=0x83)
    assert out == (0, b"\x01\x02\x03")


@pytest.mark.parametrize("irq", [0x00, drv.IRQ_TX, drv.IRQ_ERR, drv.IRQ_HI_ALERT,
                                 drv.IRQ_LO_ALERT, drv.IRQ_SET])
def test_other_irq_bits_do_not_end_the_wait(irq: int) -> None:
    chip, r, out = _exchange(irq, 0, b"\x01")
    assert out == (drv.ERR_TIMEOUT, b"")
    assert r.polls == polls_for(exchange_limit(1, 7))
    assert chip.written(drv.CommandReg)[-1] == drv.CMD_IDLE


def test_polls_count_until_the_irq() -> None:
    _chip, r = make(lambda frame: ([0, 0, drv.IRQ_RX], 0, b"\x01"))
    assert r.transceive(b"\x26", 7) == (0, b"\x01")
    assert r.polls == 3


def test_transmit_and_halt() -> None:
    chip, r = make()
    chip.reads[drv.ComIrqReg] = [0, drv.IRQ_TX]
    assert r.transmit(b"\x01") is True
    assert chip.written(drv.BitFramingReg) == [0]
    assert chip.written(drv.CommandReg) == [drv.CMD_IDLE, 0x04]  # sent: Transmit ended in Idle by itself
    chip, r = make()
    chip.reads[drv.ComIrqReg] = [drv.IRQ_RX | drv.IRQ_TIMER]
    assert r.transmit(b"\x01") is False
    assert chip.written(drv.CommandReg) == [drv.CMD_IDLE, 0x04, drv.CMD_IDLE]  # never sent: stopped
    polls = polls_for(drv.airtime_us(1) + drv._MARGIN_US)
    assert len([t for t in chip.transfers if t[0] == 0x80 | (drv.ComIrqReg << 1)]) == polls
    chip, r = make()
    chip.reads[drv.ComIrqReg] = [drv.IRQ_TX]
    r.halt()
    assert chip.frames == [b"\x50\x00\x57\xcd"]  # ISO 14443-3: HLTA with its CRC_A


HLTA = b"\x50\x00\x57\xcd"  # ISO 14443-3: HLTA with its CRC_A


def _crc(frame: bytes) -> bytes:
    c = drv.crc_a(frame)
    return frame + bytes((c & 0xFF, c >> 8))


def _bcc(four: bytes) -> bytes:
    return four + bytes([four[0] ^ four[1] ^ four[2] ^ four[3]])


class Tag:
    """ISO 14443-3 answers of one tag, with one fault planted on request."""

    def __init__(self, uid: bytes, fault: str = "", levels: int | None = None,
                 sak: int = 0x08) -> None:
        self.uid = uid
        self.fault = fault
        self.sak = sak
        n = {4: 1, 7: 2, 10: 3}[len(uid)]
        self.levels = levels or n

    def cl(self, level: int) -> bytes:
        if self.fault == "always-cascade":
            return b"\x88" + self.uid[:3]
        if self.levels == 1 or level == self.levels - 1:
            start = {0: 0, 1: 3, 2: 6}[level]
            return self.uid[start:start + 4]
        return b"\x88" + self.uid[3 * level:3 * level + 3]

    def __call__(self, frame: bytes) -> Answer:
        f = self.fault
        rx = drv.IRQ_RX
        if frame in (b"\x52", b"\x26"):
            if f == "atqa-none":
                return drv.IRQ_TIMER, 0, b""
            if f == "atqa-crc":
                return rx, 0x04, b"\x44"
            if f == "atqa-short":
                return rx, 0, b"\x44"
            return rx, 0, b"\x44\x00"
        level = {0x93: 0, 0x95: 1, 0x97: 2}[frame[0]]
        if frame[1] == 0x20:
            if f == "anticoll-none":
                return drv.IRQ_TIMER, 0, b""
            if f == "anticoll-coll":
                return rx, 0x08, b""
            if f == "anticoll-short":
                return rx, 0, self.cl(level)
            if f == "anticoll-long":
                return rx, 0, _bcc(self.cl(level)) + b"\x00"
            if f == "bcc":
                bad = bytearray(_bcc(self.cl(level)))
                bad[4] ^= 0x01
                return rx, 0, bytes(bad)
            if f == "cascade-tag" and level == 0:
                return rx, 0, _bcc(b"\x87" + self.uid[0:3])
            return rx, 0, _bcc(self.cl(level))
        assert frame[1] == 0x70 and frame[-2:] == _crc(frame[:-2])[-2:]
        last = level == self.levels - 1
        sak = bytes([self.sak if last else 0x04])
        if f == "sak-none" or (f == "sak-none-last" and last):
            return drv.IRQ_TIMER, 0, b""
        if f == "sak-crc":
            return rx, 0x04, b""
        if f == "sak-short":
            return rx, 0, _crc(sak)[:2]
        if f == "sak-long":
            return rx, 0, _crc(sak) + b"\x00"
        if f == "sak-crc-lo":
            bad = bytearray(_crc(sak))
            bad[1] ^= 0x01
            return rx, 0, bytes(bad)
        if f == "sak-crc-hi":
            bad = bytearray(_crc(sak))
            bad[2] ^= 0x80
            return rx, 0, bytes(bad)
        if f == "always-cascade":
            sak = b"\x24"
        return rx, 0, _crc(sak)


@pytest.mark.parametrize("uid", [bytes.fromhex("11223344"), bytes.fromhex("04a1b2c3d4e5f6"),
                                 bytes.fromhex("04a1b2c3d4e5f6070809")])
def test_read_uid_over_a_scripted_tag(uid: bytes) -> None:
    tag = Tag(uid)
    chip, r = make(tag)
    assert r.read_uid() == uid
    assert chip.frames.count(HLTA) == 1
    assert chip.frames[0] == b"\x52"  # WUPA, never REQA (it wakes halted tags too)
    assert chip.frames[1] == b"\x93\x20"
    assert chip.frames[2][:2] == b"\x93\x70"


@pytest.mark.parametrize(("fault", "want", "halts"), [
    ("atqa-none", None, 0),
    ("atqa-crc", drv.ERR_CRC, 1),
    ("atqa-short", drv.ERR_PROTOCOL, 1),
    ("anticoll-none", drv.ERR_PROTOCOL, 1),
    ("anticoll-coll", drv.ERR_COLLISION, 1),
    ("anticoll-short", drv.ERR_PROTOCOL, 1),
    ("anticoll-long", drv.ERR_PROTOCOL, 1),
    ("bcc", drv.ERR_CRC, 1),
    ("sak-none", drv.ERR_PROTOCOL, 1),
    ("sak-crc", drv.ERR_CRC, 1),
    ("sak-short", drv.ERR_PROTOCOL, 1),
    ("sak-long", drv.ERR_PROTOCOL, 1),
    ("sak-crc-lo", drv.ERR_CRC, 1),
    ("sak-crc-hi", drv.ERR_CRC, 1),
    ("cascade-tag", drv.ERR_PROTOCOL, 1),
    ("always-cascade", drv.ERR_PROTOCOL, 1),
])
def test_read_uid_faults(fault: str, want: int | None, halts: int) -> None:
    tag = Tag(bytes.fromhex("04a1b2c3d4e5f6"), fault)
    chip, r = make(tag)
    assert r.read_uid() == want
    assert chip.frames.count(HLTA) == halts


def test_read_uid_on_a_failing_bus_is_a_timeout_error() -> None:
    chip, r = make(Tag(bytes.fromhex("11223344")))
    chip.fail = True
    assert r.read_uid() == drv.ERR_TIMEOUT


def test_request_sends_reqa_and_wake_sends_wupa() -> None:
    chip, r = make(Tag(bytes.fromhex("11223344")))
    assert r.request() == (0, b"\x44\x00")
    assert r.wake() == (0, b"\x44\x00")
    assert chip.frames == [b"\x26", b"\x52"]
    assert chip.written(drv.BitFramingReg) == [0x87, 0x87]


def test_iso_constants() -> None:
    assert (drv.PICC_REQA, drv.PICC_WUPA, drv.PICC_HLTA) == (0x26, 0x52, 0x50)
    assert (drv.PICC_SEL_CL1, drv.PICC_SEL_CL2, drv.PICC_SEL_CL3) == (0x93, 0x95, 0x97)
    assert (drv.CASCADE_TAG, drv.SAK_CASCADE) == (0x88, 0x04)
    assert drv.crc_a(b"") == 0x6363
    assert drv.crc_a(b"\x93\x70", 0) != drv.crc_a(b"\x93\x70")


def test_other_div_irq_bits_are_not_the_crc_done() -> None:
    chip, r = make()
    chip.reads[drv.DivIrqReg] = [0x80 | 0x10 | 0x02]  # Set2, MfinActIRq, bit 1: not CRCIRq
    assert r.calc_crc(b"\x01") is None


@pytest.mark.parametrize("timeout_us", [100, 300, 2000])
def test_the_deadline_is_exact_for_any_timeout(timeout_us: int) -> None:
    chip, r = make(lambda frame: (0, 0, b""), timeout_us=timeout_us)
    assert r.transceive(b"\x26", 7) == (drv.ERR_TIMEOUT, b"")
    assert r.polls == polls_for(exchange_limit(1, 7, timeout_us))
    assert r.transceive(b"\x93\x70" + bytes(7)) == (drv.ERR_TIMEOUT, b"")  # a longer frame waits longer
    assert r.polls == polls_for(exchange_limit(9, 0, timeout_us))
    assert chip.written(drv.CommandReg)[-1] == drv.CMD_IDLE


def test_an_empty_fifo_write_sends_only_the_address() -> None:
    chip, r = make()
    r.write_fifo(b"")
    assert chip.transfers[-1] == bytes([drv.FIFODataReg << 1])


@pytest.mark.parametrize("sak", [0x08, 0x09, 0x18, 0x00, 0x20])
def test_every_tag_type_reads(sak: int) -> None:
    """Classic 1K/Mini/4K, Ultralight, ISO 14443-4: their SAK CRCs have odd
    and even bytes, so the whole CRC is compared, not part of it."""
    chip, r = make(Tag(bytes.fromhex("11223344"), sak=sak))
    assert r.read_uid() == bytes.fromhex("11223344")


def test_idle_is_written_unless_the_driver_itself_left_the_chip_idle() -> None:
    """An exchange first stops the running command with Idle. Transceive keeps
    running after its answer (datasheet 10.3.1.8), so the next exchange needs
    the Idle; a Transmit that sent its frame ends in Idle by itself
    (10.3.1.5) and CalcCRC ends with an Idle the driver wrote, so the
    exchange after them skips it. Any other CommandReg write makes it needed
    again."""
    chip, r = make(Tag(bytes.fromhex("11223344")))
    r.transceive(b"\x52", 7)
    assert chip.written(drv.CommandReg) == [drv.CMD_IDLE, drv.CMD_TRANSCEIVE]  # unknown at start
    r.transceive(b"\x52", 7)
    assert chip.written(drv.CommandReg)[2:] == [drv.CMD_IDLE, drv.CMD_TRANSCEIVE]  # Transceive still runs
    chip.reads[drv.ComIrqReg] = [drv.IRQ_TX]
    assert r.transmit(b"\x01") is True
    assert chip.written(drv.CommandReg)[4:] == [drv.CMD_IDLE, drv.CMD_TRANSMIT]
    del chip.reads[drv.ComIrqReg]
    r.transceive(b"\x52", 7)
    assert chip.written(drv.CommandReg)[6:] == [drv.CMD_TRANSCEIVE]  # idle already: no Idle first
    r.write_reg(drv.CommandReg, drv.CMD_IDLE)
    r.write_reg(drv.CommandReg, drv.CMD_RECEIVE)  # a command the driver did not end itself
    r.transceive(b"\x52", 7)
    assert chip.written(drv.CommandReg)[-2:] == [drv.CMD_IDLE, drv.CMD_TRANSCEIVE]
    chip, r = _crc_chip(None)
    assert r.calc_crc(b"\x01") is None
    assert chip.written(drv.CommandReg) == [drv.CMD_IDLE, drv.CMD_CALC_CRC, drv.CMD_IDLE]
    r.transceive(b"\x52", 7)
    assert chip.written(drv.CommandReg)[3:] == [drv.CMD_TRANSCEIVE]
    chip, r = make(Tag(bytes.fromhex("11223344")))
    assert r.read_uid() == bytes.fromhex("11223344")  # ends with HLTA (Transmit, idle by itself)
    n = len(chip.written(drv.CommandReg))
    assert r.read_uid() == bytes.fromhex("11223344")
    assert chip.written(drv.CommandReg)[n] == drv.CMD_TRANSCEIVE  # the WUPA after a halt
    assert chip.written(drv.CommandReg)[n + 1] == drv.CMD_IDLE  # the anticollision after it


def test_fifo_reads_of_any_length_in_turn() -> None:
    """The FIFO read buffer is shared by every read (the address n times,
    then 0): a long read must not leave its bytes in a shorter one."""
    chip, r = make()
    for n in (5, 2, 64, 1, 3):
        chip.fifo_out = bytearray(range(1, n + 1))
        assert r.read_fifo(n) == bytes(range(1, n + 1))
        assert chip.transfers[-1] == bytes([0x92] * n + [0])
    chip.fifo_out = bytearray(range(100))
    assert r.read_fifo(0x7F) == bytes(range(64))  # never more than the 64-byte FIFO
    assert chip.transfers[-1] == bytes([0x92] * 64 + [0])
    with pytest.raises(ValueError):
        r.write_fifo(bytes(65))


def test_a_remembered_select_never_hides_a_new_tag_or_a_bad_answer() -> None:
    """select() remembers the last good (anticollision answer, select frame,
    SAK) per cascade level and skips the CRC work when the same bytes come
    back: other bytes must be checked as the first time. (The known-tag
    path is off here, full_read_every=1: every read is a full one.)"""
    uid = bytes.fromhex("04a1b2c3d4e5f6")
    tag = Tag(uid)
    chip, r = make(tag, full_read_every=1)
    assert r.read_uid() == uid
    first = list(chip.frames)
    assert r.read_uid() == uid
    assert chip.frames[len(first):] == first  # the same frames on the air, select CRCs included
    other = bytes.fromhex("04a1b2c3d4e5f7")
    tag.uid = other  # another tag laid on the cell: new select frames
    assert r.read_uid() == other
    assert chip.frames[-2] == _crc(b"\x95\x70" + _bcc(other[3:7]))
    for fault, want in (("sak-crc-lo", drv.ERR_CRC), ("sak-crc-hi", drv.ERR_CRC), ("", other)):
        tag.fault = fault
        assert r.read_uid() == want
    tag.fault = "bcc"
    assert r.read_uid() == drv.ERR_CRC
    tag.fault = ""
    assert r.read_uid() is r.read_uid() == other  # a tag that stays put: the UID is not built again
    third = bytes.fromhex("04a1b3c3d4e5f7")  # only cascade level 1 differs
    tag.uid = third
    assert r.read_uid() == third
    tag.uid = other
    tag.fault = "sak-none"  # level 1 repeats, level 2 fails: nothing remembered from this read
    assert r.read_uid() == drv.ERR_PROTOCOL
    tag.fault = ""
    assert r.read_uid() == other
    tag.uid = third  # level 1 new, level 2 as before and its select fails
    tag.fault = "sak-none-last"
    assert r.read_uid() == drv.ERR_PROTOCOL
    tag.fault = ""
    assert r.read_uid() == third  # now every level repeats, yet the UID is not the last one built
    tag.uid, tag.levels = bytes.fromhex("11223344"), 1  # one level now: SAK without the cascade bit
    assert r.read_uid() == bytes.fromhex("11223344")
    tag.uid, tag.levels = other, 2
    assert r.read_uid() == other


def test_the_status_comes_from_the_poll_that_saw_the_end() -> None:
    """Every poll of an exchange reads ComIrqReg, ErrorReg and FIFOLevelReg in
    one transaction; only the bytes of the poll whose ComIrqReg shows the end
    count (an error bit or a level seen while the frame was still arriving
    is not the outcome)."""
    chip, r = make(lambda frame: ([0, 0, drv.IRQ_RX], 0, b"\x44\x00"))
    chip.reads[drv.ErrorReg] = [drv.ERRREG_COLL, drv.ERRREG_CRC, 0]
    chip.reads[drv.FIFOLevelReg] = [0, 1, 2]
    assert r.transceive(b"\x52", 7) == (0, b"\x44\x00")
    assert r.polls == 3
    assert chip.transfers[-2] == bytes([0x80 | (drv.ComIrqReg << 1), 0x80 | (drv.ErrorReg << 1),
                                        0x80 | (drv.FIFOLevelReg << 1), 0])
