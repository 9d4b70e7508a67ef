"""The one MFRC522 model (tablesense.sim.mfrc522_emu) as the peer check found
the real chip: CalcCRC consumes the FIFO and does not go idle by itself.
And the byte-at-a-time bus entry the emulated RP2040 boards use."""

from __future__ import annotations

from tablesense.firmware import mfrc522 as fw
from tablesense.sim.mfrc522_emu import EmulatedSPIBus, crc_a


def _chip():
    bus = EmulatedSPIBus()
    pin, chip = bus.add_reader(pin_id=0)
    return bus, pin, chip, fw.MFRC522(bus, pin)


def test_calc_crc_consumes_the_fifo_and_keeps_running_until_the_host_ends_it() -> None:
    bus, _pin, chip, drv = _chip()
    assert drv.init()
    data = b"\x93\x70\x88\x04\xa1\xb2\x9f"
    drv.write_reg(fw.CommandReg, fw.CMD_IDLE)
    drv.write_reg(fw.ComIrqReg, 0x7F)
    drv.write_reg(fw.FIFOLevelReg, 0x80)
    drv.write_fifo(data)
    drv.write_reg(fw.CommandReg, fw.CMD_CALC_CRC)
    bus.advance(50.0)
    assert drv.read_reg(fw.DivIrqReg) & fw.DIV_CRC
    c = crc_a(data)
    assert (drv.read_reg(fw.CRCResultRegL), drv.read_reg(fw.CRCResultRegH)) == (c & 0xFF, c >> 8)
    assert drv.read_reg(fw.FIFOLevelReg) == 0  # the FIFO went into the coprocessor
    # still CalcCRC: no IdleIRq, CommandReg unchanged, until the host writes Idle
    assert drv.read_reg(fw.CommandReg) & 0x0F == fw.CMD_CALC_CRC
    assert not drv.read_reg(fw.ComIrqReg) & fw.IRQ_IDLE
    drv.write_reg(fw.CommandReg, fw.CMD_IDLE)
    assert drv.read_reg(fw.CommandReg) & 0x0F == fw.CMD_IDLE


def test_driver_calc_crc_and_self_test_still_pass() -> None:
    _bus, _pin, _c, drv = _chip()
    assert drv.init()
    data = b"\x50\x00"
    c = crc_a(data)
    assert drv.calc_crc(data) == (c & 0xFF, c >> 8)
    assert drv.self_test() == (0x92, True, True)


def test_transfer_byte_follows_the_external_clock_and_floats_high_unselected() -> None:
    bus, pin, chip, _drv = _chip()
    assert bus.transfer_byte(0x80 | (0x37 << 1), 5.0) == 0xFF  # nobody selected
    pin.value(0)
    assert bus.transfer_byte(0x80 | (0x37 << 1), 10.0) == 0x00  # address byte
    assert bus.transfer_byte(0x00, 12.0) == 0x92  # VersionReg
    assert bus.now_us == 12.0
    bus.transfer_byte(0x00, 11.0)  # time never runs backwards
    assert bus.now_us == 12.0
    pin.value(1)
