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

    def flaky(cmd, token, args, data):  # noqa: ANN001, ANN202
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
