"""The PICOBOOT writer against a fake boot ROM that implements the protocol."""

from __future__ import annotations

import pytest
from fake_picoboot import FLASH_START, FakeBootRom

from tablesense.flash import picoboot, uf2


def _img(n_pages: int, base: int = FLASH_START) -> uf2.UF2Image:
    pages = {base + i * 256: bytes(((i * 7) + k) & 0xFF for k in range(256)) for i in range(n_pages)}
    return uf2.parse(uf2.build(pages))


def test_flash_image_erases_writes_verifies_and_reboots() -> None:
    rom = FakeBootRom()
    img = _img(37)  # 2 full sectors + 5 pages
    seen: list[tuple[str, int, int]] = []
    picoboot.Picoboot(rom).flash_image(img, progress=lambda w, d, t: seen.append((w, d, t)))
    assert rom.violations == []
    assert rom.rebooted
    assert not rom.xip
    for addr, page in img.pages.items():
        off = addr - FLASH_START
        assert bytes(rom.flash[off : off + 256]) == page
    tail = 37 * 256
    assert bytes(rom.flash[tail : 3 * 4096]) == b"\xff" * (3 * 4096 - tail)
    erases = [e for e in rom.log if e[0] == 0x03]
    assert [(a, s) for _c, a, s in erases] == [(FLASH_START, 4096), (FLASH_START + 4096, 4096), (FLASH_START + 8192, 4096)]
    writes = [e for e in rom.log if e[0] == 0x05]
    assert all(s == 256 and a % 256 == 0 for _c, a, s in writes)
    assert rom.tokens == sorted(set(rom.tokens))  # fresh, increasing tokens
    assert ("verify", 3, 3) in seen


def test_verify_catches_flash_that_does_not_hold_the_data() -> None:
    rom = FakeBootRom()
    original = rom._execute

    def flaky(cmd, token, args, data):
        if cmd == 0x05 and data is not None:
            data = bytes([data[0] ^ 0x01]) + data[1:]  # a stuck bit
        return original(cmd, token, args, data)

    rom._execute = flaky  # type: ignore[method-assign]
    with pytest.raises(picoboot.PicobootError, match="verify failed at 0x10000000"):
        picoboot.Picoboot(rom).flash_image(_img(3))
    assert not rom.rebooted


def test_device_refusal_reads_status_and_unstalls() -> None:
    rom = FakeBootRom()
    pb = picoboot.Picoboot(rom)
    with pytest.raises(picoboot.PicobootError, match="invalid address"):
        pb.read(0x30000000, 256)
    assert not rom.stalled  # the writer reset the interface
    assert pb.read(FLASH_START, 4) == b"\x00\x00\x00\x00"  # and the next command works


def test_alignment_is_checked_before_sending() -> None:
    rom = FakeBootRom()
    pb = picoboot.Picoboot(rom)
    with pytest.raises(ValueError, match="sectors"):
        pb.flash_erase(FLASH_START + 256, 4096)
    with pytest.raises(ValueError, match="pages"):
        pb.write(FLASH_START + 16, b"\x00" * 256)
    assert rom.tokens == []


def test_write_without_erase_is_what_the_fake_catches() -> None:
    rom = FakeBootRom()
    pb = picoboot.Picoboot(rom)
    pb.exclusive_access()
    pb.exit_xip()
    pb.write(FLASH_START, b"\x55" * 256)  # not erased first
    assert any("before erasing" in v for v in rom.violations)


def test_bad_magic_is_refused_by_the_device() -> None:
    rom = FakeBootRom()
    pb = picoboot.Picoboot(rom)
    original = picoboot.MAGIC
    try:
        picoboot.MAGIC = 0xDEADBEEF
        with pytest.raises(picoboot.PicobootError, match="unknown command"):
            pb.exit_xip()
    finally:
        picoboot.MAGIC = original
    assert "bad magic 0xdeadbeef" in rom.violations


# --- what the audit found: halts, stale interfaces, RP2350 reboot, silent stalls, RAM images ---


def test_a_stall_clears_the_host_side_halt_before_the_next_command() -> None:
    rom = FakeBootRom()
    pb = picoboot.Picoboot(rom)
    rom.requests.clear()
    with pytest.raises(picoboot.PicobootError, match="invalid address"):
        pb.read(0x30000000, 256)
    assert rom.requests == ["status", "clear_halt in", "clear_halt out", "reset"]
    assert not rom.host_halted["out"] and not rom.host_halted["in"]
    assert pb.read(FLASH_START, 4) == b"\x00\x00\x00\x00"
    pb.flash_image(_img(2))  # and a whole flash after it
    assert rom.rebooted


def test_connecting_resets_an_interface_left_stalled_mid_command() -> None:
    rom = FakeBootRom(left_stalled=True)
    pb = picoboot.Picoboot(rom)
    assert rom.requests[:3] == ["clear_halt in", "clear_halt out", "reset"]
    img = _img(5)
    pb.flash_image(img)
    assert rom.violations == [] and rom.rebooted
    assert bytes(rom.flash[: 5 * 256]) == b"".join(img.pages[a] for a in sorted(img.pages))


def test_rp2350_is_rebooted_with_reboot2() -> None:
    rom = FakeBootRom("rp2350")
    data = uf2.build({FLASH_START + i * 256: bytes([i]) * 256 for i in range(3)}, family=uf2.FAMILY_RP2350_ARM_S)
    img = uf2.parse(data, "rp2350")
    picoboot.Picoboot(rom, chip="rp2350").flash_image(img)
    assert rom.violations == []
    assert rom.reboot_args == ("reboot2", picoboot.REBOOT2_TYPE_NORMAL, 500, 0xFFFFFFFF, 0)
    # the RP2040's REBOOT is unknown to the RP2350 boot ROM (what the fake enforces)
    with pytest.raises(picoboot.PicobootError, match="unknown command"):
        picoboot.Picoboot(rom, chip="rp2040").reboot()


def test_rp2040_keeps_its_reboot() -> None:
    rom = FakeBootRom("rp2040")
    picoboot.Picoboot(rom).flash_image(_img(1))
    assert rom.reboot_args == ("reboot", 0, 0x20042000, 500)


def test_a_stall_whose_status_reads_ok_is_not_reported_as_ok() -> None:
    rom = FakeBootRom()
    pb = picoboot.Picoboot(rom)
    pb.exclusive_access()
    rom.stall_without_status = picoboot.PC_EXIT_XIP
    with pytest.raises(picoboot.PicobootError) as info:
        pb.exit_xip()
    msg = str(info.value)
    assert "without giving a reason" in msg and "EXIT_XIP" in msg
    assert ": ok" not in msg and "refused" not in msg
    rom.stall_without_status = None
    pb.exit_xip()  # the interface works again
    assert not rom.xip


def _ram_image(chip: str, family: int) -> uf2.UF2Image:
    pages = {0x20000000 + i * 256: bytes((i * 13 + k) & 0xFF for k in range(256)) for i in range(20)}
    return uf2.parse(uf2.build(pages, family=family), chip)


@pytest.mark.parametrize(
    ("chip", "family", "started"),
    [
        ("rp2040", uf2.FAMILY_RP2040, ("reboot", 0x20000000, 0x20042000, 500)),
        ("rp2350", uf2.FAMILY_RP2350_ARM_S, ("reboot2", picoboot.REBOOT2_TYPE_RAM_IMAGE, 500, 0x20000000, 0x82000)),
    ],
)
def test_ram_image_is_loaded_to_ram_and_started(chip: str, family: int, started: tuple) -> None:
    """flash_nuke.uf2 and friends: written to SRAM, read back, started at
    their start address as picotool load -x does; flash untouched."""
    rom = FakeBootRom(chip)
    img = _ram_image(chip, family)
    assert img.in_ram
    seen: list[tuple[str, int, int]] = []
    picoboot.Picoboot(rom, chip=chip).flash_image(img, progress=lambda w, d, t: seen.append((w, d, t)))
    assert rom.violations == []
    assert bytes(rom.sram[: 20 * 256]) == b"".join(img.pages[a] for a in sorted(img.pages))
    assert not any(c == 0x03 for c, _a, _s in rom.log)  # no flash erase
    assert rom.flash == bytearray(len(rom.flash))  # flash untouched
    assert rom.reboot_args == started
    assert ("verify", 2, 2) in seen  # 5 KiB in two runs of at most 4 KiB


def test_ram_image_verify_failure_does_not_start_it() -> None:
    rom = FakeBootRom()
    original = rom._execute

    def flaky(cmd, token, args, data):
        if cmd == 0x05 and data is not None:
            data = data[:-1] + bytes([data[-1] ^ 0x80])
        return original(cmd, token, args, data)

    rom._execute = flaky  # type: ignore[method-assign]
    with pytest.raises(picoboot.PicobootError, match="verify failed at 0x20000fff in RAM"):
        picoboot.Picoboot(rom).flash_image(_ram_image("rp2040", uf2.FAMILY_RP2040))
    assert not rom.rebooted
