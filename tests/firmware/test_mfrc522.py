"""Our MFRC522 driver against the register-level emulator, and the emulator
against the datasheet and ISO 14443-3."""

from __future__ import annotations

from typing import cast

import pytest

from tablesense.firmware import mfrc522 as drv
from tablesense.firmware.config import MCP23017, DecoderSelect, ExpanderSelect, make_selects, parse
from tablesense.sim.mfrc522_emu import (
    ACTIVE,
    HALT,
    IDLE,
    READY,
    Emulated138,
    EmulatedCard,
    EmulatedI2C,
    EmulatedMCP23017,
    EmulatedMFRC522,
    EmulatedPin,
    EmulatedSPIBus,
    crc_a,
)

UID4 = bytes.fromhex("11223344")
UID7 = bytes.fromhex("04a1b2c3d4e5f6")
UID10 = bytes.fromhex("04a1b2c3d4e5f6070809")


def reader(timeout_us: int = 500, **chip_kwargs: object) -> tuple[EmulatedSPIBus, EmulatedMFRC522, drv.MFRC522]:
    bus = EmulatedSPIBus()
    pin, chip = bus.add_reader(17, **chip_kwargs)
    r = drv.MFRC522(bus, pin, timeout_us=timeout_us)
    assert r.init()
    return bus, chip, r


def test_crc_a_vectors() -> None:
    # ISO 14443-3 annex: HLTA is 50 00 57 CD; REQA-less frames: 00 00 -> A0 1E
    assert crc_a(b"\x50\x00") == 0xCD57
    assert drv.crc_a(b"\x50\x00") == 0xCD57
    assert crc_a(b"\x00\x00") == 0x1EA0
    assert drv.crc_a(bytes(range(10))) == crc_a(bytes(range(10)))


def test_chip_calc_crc_matches_crc_a() -> None:
    _bus, _chip, r = reader()
    data = b"\x93\x70\x88\x04\xa1\xb2\x9f"
    got = r.calc_crc(data)
    assert got is not None
    lo, hi = got
    assert (hi << 8 | lo) == crc_a(data)


@pytest.mark.parametrize("uid", [UID4, UID7, UID10], ids=["4-byte", "7-byte", "10-byte"])
def test_read_uid_over_cascade_levels(uid: bytes) -> None:
    _bus, chip, r = reader()
    card = EmulatedCard(uid)
    chip.place(card)
    assert r.read_uid() == uid
    assert card.state == HALT  # parked after the read
    assert r.read_uid() == uid  # WUPA wakes it again


def test_empty_cell_costs_the_timer_not_the_poll_bound() -> None:
    bus, chip, r = reader(timeout_us=500)
    t0 = bus.now_us
    assert r.read_uid() is None
    cost = bus.now_us - t0
    assert r.polls < 60  # stopped on TimerIRq, far below max_polls=200
    assert 500 < cost < 1500
    # a longer timeout costs proportionally more: the timer is what ends it
    r.set_timeout(2000)
    t0 = bus.now_us
    assert r.read_uid() is None
    assert bus.now_us - t0 > 2000


def test_timeout_shorter_than_the_tag_answer_reads_empty() -> None:
    _bus, chip, r = reader(timeout_us=50)  # ISO frame delay is ~91 us
    chip.place(EmulatedCard(UID4))
    assert r.read_uid() is None


def test_the_default_timeout_hears_an_answer_that_stops_the_timer_in_time() -> None:
    """TAuto's timer stops only at the answer's 5th bit (datasheet 9.3.3.10):
    an answer 91 us after the frame needs a timer over 138 us (the chip
    model: 158 us for a select's, which it delays 20 us more). The default
    200 us (the timer fires after TReloadVal + 1 = 9 ticks, 225 us) reads
    every exchange of 4-, 7- and 10-byte tags; 100 us (125 us) loses the
    answers, as a real chip would."""
    for uid in (UID4, UID7, UID10):
        _bus, chip, r = reader(timeout_us=drv.MFRC522.__init__.__defaults__[0])  # type: ignore[index]
        assert r.timeout_us == 200
        chip.place(EmulatedCard(uid))
        for _ in range(10):
            assert r.read_uid() == uid
    _bus, chip, r = reader(timeout_us=100)
    chip.place(EmulatedCard(UID7))
    assert r.read_uid() is None


def test_dead_chip_is_a_timeout_error_not_empty_and_bounded() -> None:
    bus, chip, r = reader()
    chip.dead = True
    t0 = bus.now_us
    assert r.read_uid() == drv.ERR_TIMEOUT
    assert bus.now_us - t0 < 5000
    assert r.self_test() == (0xFF, True, False)


@pytest.mark.parametrize("absent", [0x00, 0xFF], ids=["pulled-down", "pulled-up"])
def test_a_missing_chip_fails_init_at_once_and_a_read_is_bounded_in_time(absent: int) -> None:
    """RP2040 pads reset pulled down (MISO 0x00 with no chip), the firmware
    pulls MISO up (0xFF): either way init gives up before configuring, and
    an exchange ends by its deadline (pulled up: at once, ErrorReg 0xFF)."""
    bus = EmulatedSPIBus(absent_miso=absent)
    pin, chip = bus.add_reader(3)
    chip.dead = True
    r = drv.MFRC522(bus, pin)
    n0 = bus.transfers
    assert r.init() is False
    assert bus.transfers - n0 <= 3  # soft reset, CommandReg, (VersionReg)
    t0 = bus.now_us
    assert r.read_uid() == drv.ERR_TIMEOUT
    limit = drv.airtime_us(1, 7) + r.timeout_us + drv._LONGEST_ANSWER_US + drv._MARGIN_US
    if absent == 0xFF:
        assert r.polls == 1
    else:
        assert r.polls > 1
    assert bus.now_us - t0 < limit + 400  # the deadline plus the set-up and the last poll
    with pytest.raises(ValueError):
        EmulatedSPIBus(absent_miso=0x7F)


def test_nobody_selected_reads_the_absent_level() -> None:
    for absent in (0x00, 0xFF):
        bus = EmulatedSPIBus(absent_miso=absent)
        r = bytearray(2)
        bus.write_readinto(b"\xee\x00", r)
        assert r == bytes((absent, absent))
        assert bus.transfer_byte(0xEE, 1.0) == absent


class _CountingReader(drv.MFRC522):
    """Records the most polls any one wait took."""

    most_polls = 0

    def _poll_into(self, w, r, mask, limit_us):  # type: ignore[no-untyped-def]
        value = super()._poll_into(w, r, mask, limit_us)
        self.most_polls = max(self.most_polls, self.polls)
        return value


@pytest.mark.parametrize("uid", [UID4, UID7, UID10], ids=["4-byte", "7-byte", "10-byte"])
def test_a_zero_cost_poll_loop_at_10_mhz_still_reads_every_tag(uid: bytes) -> None:
    """Issue 25's failure: at 10 MHz with a poll loop that costs nothing but
    its SPI bits (3.2 us a poll), a count of 200 polls ran out before a
    SELECT's answer (its frame alone is 0.8 ms on air). Deadlines in time
    wait for the air, however fast the loop."""
    bus = EmulatedSPIBus(baudrate=10_000_000, overhead_us=0.0)
    pin, chip = bus.add_reader(1)
    r = _CountingReader(bus, pin)
    assert r.init()
    chip.place(EmulatedCard(uid))
    for _ in range(3):
        assert r.read_uid() == uid
    assert r.most_polls > 200  # a 200-poll bound would have given up
    chip.remove()
    assert r.read_uid() is None


def test_the_known_tag_path_misses_no_lay_lift_or_swap() -> None:
    """Random lay, lift and swap between reads, over tags that share their
    ATQA (every 7-byte UID: 0x44 0x00), their first cascade level, or
    nothing: every read must give exactly what lies on the cell, and a
    second tag laid on the known one must show as a collision within
    full_read_every reads."""
    _lay_lift_swap(drv.MFRC522)


class _PresenceOnly(drv.MFRC522):
    """Broken: the known tag is taken as present on its ATQA alone."""

    def _select_known(self) -> bool:
        return True


class _FirstLevelOnly(drv.MFRC522):
    """Broken: only the first cascade level is selected by the remembered
    bytes (the tag is then left half-selected, and any tag sharing level 1
    passes)."""

    def _select_known(self) -> bool:
        levels = self._levels
        self._levels = 1
        try:
            return bool(super()._select_known())
        finally:
            self._levels = levels


class _NeverFull(drv.MFRC522):
    """Broken: the known tag's periodic full anticollision never comes."""

    def finish(self, st):  # type: ignore[no-untyped-def]
        got = super().finish(st)
        if self._known_left == 0 and self._uid is not None:
            self._known_left = 1
        return got


@pytest.mark.parametrize("broken", [_PresenceOnly, _FirstLevelOnly, _NeverFull])
def test_a_broken_presence_check_fails_the_lay_lift_swap_test(broken: type[drv.MFRC522]) -> None:
    """The randomized test can fail: each of these known-tag shortcuts
    misses a change (a same-ATQA swap, a swap sharing cascade level 1, a
    tag stacked on the known one), and the test catches it."""
    with pytest.raises(AssertionError):
        _lay_lift_swap(broken)


def _lay_lift_swap(cls: type[drv.MFRC522], skip_waits: bool = False) -> None:
    import random

    rng = random.Random(26)
    pool = [
        EmulatedCard(bytes.fromhex("04a1b2c3d4e5f6")),
        EmulatedCard(bytes.fromhex("04a1b2c3d4e5f7")),  # same level 1, level 2 differs
        EmulatedCard(bytes.fromhex("04a1b3c3d4e5f6")),  # level 1 differs, same level 2
        EmulatedCard(bytes.fromhex("04ffeeddccbbaa")),
        EmulatedCard(UID4),
        EmulatedCard(bytes.fromhex("55667788")),  # same ATQA as UID4
        EmulatedCard(UID10),
        EmulatedCard(bytes.fromhex("04a1b2c3d4e5f60708ff")),  # same ATQA, levels 1 and 2 as UID10
    ]
    every = 4
    bus = EmulatedSPIBus(skip_waits=skip_waits)
    pin, chip = bus.add_reader(1)
    r = cls(bus, pin, full_read_every=every)
    assert r.init()
    lying: EmulatedCard | None = None
    for _ in range(600):
        roll = rng.random()
        if roll < 0.15:
            chip.remove()
            lying = None
        elif roll < 0.4:
            lying = rng.choice(pool)
            chip.place(lying)  # lay, or swap for another
        for _ in range(rng.randint(1, 3)):
            assert r.read_uid() == (lying.uid if lying is not None else None)
        if lying is not None and rng.random() < 0.05:
            other = rng.choice([c for c in pool if c is not lying and c.atqa == lying.atqa])
            chip.add(other)  # a second tag on the known one: silent to the known-tag select
            got = [r.read_uid() for _ in range(every)]
            assert drv.ERR_COLLISION in got
            chip.place(lying)
    assert r.known_reads > 300  # the path did serve most reads


def test_a_bus_that_skips_the_waits_reads_the_same_in_far_fewer_polls() -> None:
    """The virtual boards' bus (``skip_waits``) lets its clock run to the
    chip's next event when the driver polls: every read gives what it gives
    on a bus that pays each poll (tags, empty cells, a collision, an answer
    lost to a timer shorter than it), and the lay/lift/swap test passes."""
    outcomes: dict[bool, list[object]] = {}
    transfers: dict[bool, int] = {}
    for skip in (False, True):
        got: list[object] = []
        for timeout_us in (500, 50):  # 50 us: the timer ends before any tag answers
            bus = EmulatedSPIBus(skip_waits=skip)
            pin, chip = bus.add_reader(1)
            r = drv.MFRC522(bus, pin, timeout_us=timeout_us)
            assert r.init()
            for uid in (UID4, UID7, UID10, None):
                if uid is None:
                    chip.remove()
                else:
                    chip.place(EmulatedCard(uid))
                got += [r.read_uid() for _ in range(3)]
            chip.place(EmulatedCard(UID7))
            chip.add(EmulatedCard(bytes.fromhex("04a1b2c3d4e5f7")))
            got += [r.read_uid() for _ in range(3)]
            transfers[skip] = transfers.get(skip, 0) + bus.transfers
        outcomes[skip] = got
    assert outcomes[True] == outcomes[False]
    assert UID10 in outcomes[True] and drv.ERR_COLLISION in outcomes[True] and None in outcomes[True]
    assert transfers[True] * 3 < transfers[False], transfers
    _lay_lift_swap(drv.MFRC522, skip_waits=True)


def test_the_known_tag_path_saves_the_anticollision() -> None:
    bus, chip, r = reader()
    r.full_read_every = 8
    chip.place(EmulatedCard(UID7))
    assert r.read_uid() == UID7
    e0 = chip.exchanges
    assert r.read_uid() == UID7
    assert chip.exchanges - e0 == 4  # WUPA, SELECT CL1, SELECT CL2, HLTA (no ANTICOLLISION)
    for _ in range(6):
        r.read_uid()
    e0 = chip.exchanges
    assert r.read_uid() == UID7  # the 8th read of the tag: a full one
    assert chip.exchanges - e0 == 6
    e0 = chip.exchanges
    assert r.read_uid() == UID7
    assert chip.exchanges - e0 == 4


def test_field_switch_and_tag_power_up() -> None:
    """field(on) is one TxControlReg write; a tag needs power_up_us of field
    before it hears a frame (the chip model's knob)."""
    bus, chip, r = reader()
    chip.power_up_us = 5000.0
    r.field(False)
    assert chip.field is False and chip.tags_in_field() == []
    chip.place(EmulatedCard(UID4))
    r.field(True)
    assert chip.field is True
    assert r.read_uid() is None  # not powered up yet
    bus.advance(5000)
    assert r.read_uid() == UID4
    r.field(False)
    assert r.read_uid() is None and chip.card is not None and not chip.card.powered


def test_receiver_gain_is_programmed_at_init() -> None:
    for db, code in ((18, 0), (23, 1), (33, 4), (38, 5), (43, 6), (48, 7)):
        bus = EmulatedSPIBus()
        pin, chip = bus.add_reader(1)
        r = drv.MFRC522(bus, pin, rx_gain_db=db)
        assert r.init()
        assert chip.regs[drv.RFCfgReg] == (code << 4) | 0x08
    assert drv.DEFAULT_RX_GAIN_DB == 33  # the chip's reset value, RFCfgReg 0x48
    with pytest.raises(ValueError, match="rx_gain_db"):
        drv.MFRC522(EmulatedSPIBus(), EmulatedPin(1), rx_gain_db=40)


def test_two_tags_collide() -> None:
    _bus, chip, r = reader()
    chip.place(EmulatedCard(UID7))
    chip.add(EmulatedCard(bytes.fromhex("04ffeeddccbbaa")))
    assert r.read_uid() == drv.ERR_COLLISION


def test_two_identical_uids_do_not_collide() -> None:
    _bus, chip, r = reader()
    chip.place(EmulatedCard(UID4))
    chip.add(EmulatedCard(UID4))
    assert r.read_uid() == UID4


def test_removal_mid_read_is_an_error_then_empty() -> None:
    bus, chip, r = reader()
    card = EmulatedCard(UID7)
    chip.place(card)
    st, atqa = r.wake()
    assert st == 0 and atqa == b"\x44\x00"
    chip.remove()
    assert r.select() == drv.ERR_PROTOCOL
    assert r.read_uid() is None


def test_noise_gives_errors_never_a_wrong_uid() -> None:
    _bus, chip, r = reader(noise=0.3, seed=11)
    chip.place(EmulatedCard(UID7))
    results = [r.read_uid() for _ in range(300)]
    uids = {x for x in results if isinstance(x, bytes)}
    assert uids == {UID7}
    assert any(isinstance(x, int) for x in results)


def test_flicker_misses_are_empty_reads_but_rare() -> None:
    _bus, chip, r = reader(flicker=0.1, seed=5)
    chip.place(EmulatedCard(UID4))
    results = [r.read_uid() for _ in range(200)]
    assert results.count(UID4) > 120
    assert None in results


def test_reqa_does_not_wake_a_halted_tag_but_wupa_does() -> None:
    _bus, chip, r = reader()
    card = EmulatedCard(UID4)
    chip.place(card)
    assert r.read_uid() == UID4
    assert card.state == HALT
    st, _ = r.request()
    assert st == -1
    st, atqa = r.wake()
    assert st == 0 and atqa == b"\x04\x00" and card.state == READY


def test_antenna_off_powers_the_tag_down() -> None:
    _bus, chip, r = reader()
    card = EmulatedCard(UID4)
    chip.place(card)
    assert r.read_uid() == UID4
    r.antenna_off()
    assert not r.antenna()
    assert r.read_uid() is None
    r.antenna_on()
    assert card.state == IDLE
    st, _ = r.request()  # fresh from power-up: REQA works again
    assert st == 0


def test_card_state_machine_falls_back_on_a_bad_select() -> None:
    card = EmulatedCard(UID4)
    card.power(True)
    assert card.receive(b"\x26", 7) == b"\x04\x00"
    bcc = 0x11 ^ 0x22 ^ 0x33 ^ 0x44
    assert card.receive(b"\x93\x20", 0) == UID4 + bytes([bcc])
    bad = b"\x93\x70" + UID4 + bytes([bcc]) + b"\x00\x00"
    assert card.receive(bad, 0) is None and card.state == IDLE
    card.receive(b"\x26", 7)
    frame = b"\x93\x70" + UID4 + bytes([bcc])
    c = crc_a(frame)
    sak = card.receive(frame + bytes([c & 0xFF, c >> 8]), 0)
    assert sak is not None and sak[0] == 0x08 and card.state == ACTIVE


def test_emulated_card_rejects_bad_uids() -> None:
    with pytest.raises(ValueError, match="4, 7 or 10"):
        EmulatedCard(b"\x01\x02\x03")
    with pytest.raises(ValueError, match="cascade tag"):
        EmulatedCard(b"\x88\x01\x02\x03")


# --- SPI and registers ------------------------------------------------------------


def test_spi_address_byte_format_and_streamed_reads() -> None:
    bus = EmulatedSPIBus()
    pin, chip = bus.add_reader(3)
    pin.value(0)
    out = bytearray(3)
    # read VersionReg (0x37) then CommandReg (0x01): 1aaaaaa0 bytes, then 00
    bus.write_readinto(bytes([0x80 | (0x37 << 1), 0x80 | (0x01 << 1), 0x00]), out)
    pin.value(1)
    assert out[1] == 0x92 and out[2] == 0x20
    # write 3 bytes into the FIFO in one transaction: 0aaaaaa0 then data
    pin.value(0)
    bus.write(bytes([(0x09 << 1), 1, 2, 3]))
    pin.value(1)
    assert chip.read_register(0x0A) == 3
    chip.write_register(0x0A, 0x80)  # FlushBuffer
    assert chip.read_register(0x0A) == 0


def test_com_irq_set1_rule() -> None:
    chip = EmulatedMFRC522()
    chip.write_register(0x04, 0x7F)  # clear all
    assert chip.read_register(0x04) == 0
    chip.write_register(0x04, 0x80 | 0x21)  # set RxIRq and TimerIRq
    assert chip.read_register(0x04) == 0x21
    chip.write_register(0x04, 0x01)  # clear TimerIRq only
    assert chip.read_register(0x04) == 0x20


def test_fifo_overflow_sets_buffer_ovfl() -> None:
    chip = EmulatedMFRC522()
    for i in range(70):
        chip.write_register(0x09, i)
    assert chip.read_register(0x0A) == 64
    assert chip.read_register(0x06) & 0x10


def test_unselected_bus_floats_high_and_two_selected_is_contention() -> None:
    bus = EmulatedSPIBus()
    p1, _c1 = bus.add_reader(1)
    p2, _c2 = bus.add_reader(2)
    assert bus.read(2) == b"\xff\xff"
    p1.value(0)
    p2.value(0)
    bus.read(2)
    assert bus.contention == 1


def test_decoder_chip_selects_route_to_the_right_chip() -> None:
    bus = EmulatedSPIBus()
    a = [EmulatedPin(n, value=0) for n in (6, 7, 8)]
    enables = [EmulatedPin(9, value=1), EmulatedPin(10, value=1)]
    decoders = [Emulated138(a[0], a[1], a[2], e) for e in enables]
    chips = []
    for ch in range(16):
        chip = EmulatedMFRC522(version=0x80 + ch)
        bus.attach(decoders[ch // 8].output(ch % 8), chip)
        chips.append(chip)
    selects = [DecoderSelect(a, enables[ch // 8], ch % 8) for ch in range(16)]
    versions = [drv.MFRC522(bus, s).version() for s in selects]
    assert versions == [0x80 + ch for ch in range(16)]
    assert bus.contention == 0


def test_shared_decoder_selects_route_every_transaction_in_any_order() -> None:
    """make_selects gives the selects of one decoder bus a shared record of the
    address on the pins, and the driver then toggles only the enable pin while
    the pins hold its address: interleaved readers (sharing their transfer
    buffers too) must still each reach their own chip, through both decoders,
    for register access and whole reads."""
    bus = EmulatedSPIBus()
    a = [EmulatedPin(n, value=0) for n in (6, 7, 8)]
    enables = [EmulatedPin(9, value=1), EmulatedPin(10, value=1)]
    decoders = [Emulated138(a[0], a[1], a[2], e) for e in enables]
    chips = []
    for ch in range(16):
        chip = EmulatedMFRC522(version=0x80 + ch)
        bus.attach(decoders[ch // 8].output(ch % 8), chip)
        chips.append(chip)
    pins = {6: a[0], 7: a[1], 8: a[2], 9: enables[0], 10: enables[1]}
    selects = make_selects(parse({"board": 1, "cells": 16, "cs": {"kind": "decoder", "address": [6, 7, 8],
                                                                  "enables": [9, 10]}}), pins.__getitem__)
    assert all(isinstance(s, DecoderSelect) for s in selects)
    shared = cast(DecoderSelect, selects[0]).shared
    buffers = drv.Buffers()  # shared by the readers of the bus, as main.py does
    readers = [drv.MFRC522(bus, s, buffers=buffers) for s in selects]
    assert shared is not None and all(r._shared is shared for r in readers)  # the fast path is in use
    order = [0, 1, 0, 9, 8, 0, 15, 7, 7, 3, 11, 3, 0]
    assert [readers[ch].version() for ch in order] == [0x80 + ch for ch in order]
    for ch in (2, 10, 13):
        chips[ch].place(EmulatedCard(bytes([0x04, ch, 2, 3, 4, 5, 6])))
    for r in readers:
        r.init()  # (False: these chips report made-up versions)
    for _ in range(2):
        for ch in (2, 10, 2, 5, 13, 10):
            want = bytes([0x04, ch, 2, 3, 4, 5, 6]) if ch in (2, 10, 13) else None
            assert readers[ch].read_uid() == want
    assert bus.contention == 0
    lone = DecoderSelect(a, enables[0], 4)  # no shared record: routes every time
    assert lone.fast_select() is None
    assert drv.MFRC522(bus, lone).version() == 0x84
    assert readers[3].version() == 0x83


def test_expander_chip_selects_route_to_the_right_chip() -> None:
    bus = EmulatedSPIBus()
    i2c = EmulatedI2C()
    exp = EmulatedMCP23017()
    i2c.attach(0x20, exp)
    chips = []
    for ch in range(16):
        chip = EmulatedMFRC522(version=0x40 + ch)
        bus.attach(exp.output(ch), chip)
        chips.append(chip)
    mcp = MCP23017(i2c, 0x20)
    selects = [ExpanderSelect(mcp, ch) for ch in range(16)]
    readers = [drv.MFRC522(bus, s) for s in selects]
    assert [r.version() for r in readers] == [0x40 + ch for ch in range(16)]
    assert bus.contention == 0
    with pytest.raises(OSError):
        MCP23017(i2c, 0x21)  # nobody at that address


def test_soft_reset_restores_defaults_and_init_recovers() -> None:
    _bus, chip, r = reader()
    chip.place(EmulatedCard(UID4))
    r.write_reg(drv.TxControlReg, 0x80)  # antenna off, as after a brown-out
    assert r.read_uid() is None
    assert r.init()
    assert r.read_uid() == UID4


def test_a_naive_poll_loop_ignoring_the_timer_costs_far_more() -> None:
    """What the common driver does: poll until RxIRq/IdleIRq or ~2000 reads.
    It never sees TimerIRq on an empty cell, so it burns the whole bound."""
    bus, _chip, r = reader(timeout_us=500)
    t0 = bus.now_us
    assert r.read_uid() is None
    ours = bus.now_us - t0
    r.write_reg(drv.CommandReg, drv.CMD_IDLE)
    r.write_reg(drv.ComIrqReg, 0x7F)
    r.write_reg(drv.FIFOLevelReg, 0x80)
    r.write_fifo(b"\x26")
    r.write_reg(drv.BitFramingReg, 7)
    r.write_reg(drv.CommandReg, drv.CMD_TRANSCEIVE)
    r.write_reg(drv.BitFramingReg, 0x87)
    t0 = bus.now_us
    for _ in range(2000):
        if r.read_reg(drv.ComIrqReg) & 0x30:
            break
    naive = bus.now_us - t0
    assert naive > 10 * ours


def test_hardware_crc_modes_of_the_emulated_chip() -> None:
    """TxModeReg.TxCRCEn appends CRC_A; RxModeReg.RxCRCEn checks and strips it."""
    _bus, chip, r = reader()
    chip.place(EmulatedCard(UID4))
    st, _ = r.wake()
    assert st == 0
    st, ans = r.transceive(b"\x93\x20")
    assert st == 0 and ans[:4] == UID4
    r.write_reg(drv.TxModeReg, 0x80)
    r.write_reg(drv.RxModeReg, 0x80)
    st, sak = r.transceive(b"\x93\x70" + ans)  # no CRC from us: the chip adds it
    assert st == 0 and sak == b"\x08"  # and strips the tag's


def test_timer_counts_down_while_waiting_for_an_absent_tag() -> None:
    bus, _chip, r = reader(timeout_us=1000)
    r.write_reg(drv.CommandReg, drv.CMD_IDLE)
    r.write_reg(drv.ComIrqReg, 0x7F)
    r.write_reg(drv.FIFOLevelReg, 0x80)
    r.write_fifo(b"\x52")
    r.write_reg(drv.CommandReg, drv.CMD_TRANSCEIVE)
    r.write_reg(drv.BitFramingReg, 0x87)
    bus.advance(200)  # the frame is sent, the timer has run for ~100 us
    hi, lo = r.read_regs((drv.TCounterValRegH, drv.TCounterValRegL))
    first = hi << 8 | lo
    assert r.read_reg(drv.Status1Reg) & 0x08  # TRunning
    assert 20 < first < 40  # of 40 ticks of 25 us
    bus.advance(300)
    hi, lo = r.read_regs((drv.TCounterValRegH, drv.TCounterValRegL))
    assert (hi << 8 | lo) < first
    bus.advance(1000)
    assert r.read_reg(drv.ComIrqReg) & drv.IRQ_TIMER
    assert not r.read_reg(drv.Status1Reg) & 0x08
