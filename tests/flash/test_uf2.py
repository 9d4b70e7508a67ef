"""UF2 parser: good files, corrupt files, foreign files (built here, byte by byte)."""

from __future__ import annotations

import struct

import pytest

from tablesense.flash import uf2


def _image(n_pages: int = 20, base: int = 0x10000000) -> dict[int, bytes]:
    return {base + i * 256: bytes((i + k) & 0xFF for k in range(256)) for i in range(n_pages)}


def test_round_trip_pages_and_sectors() -> None:
    pages = _image(20)
    img = uf2.parse(uf2.build(pages))
    assert img.pages == pages
    assert img.family == uf2.FAMILY_RP2040
    assert img.blocks == 20
    assert img.sectors() == [0x10000000, 0x10001000]
    second = img.sector_data(0x10001000)
    assert second[: 4 * 256] == b"".join(pages[0x10001000 + i * 256] for i in range(4))
    assert second[4 * 256 :] == b"\xff" * (4096 - 4 * 256)


def test_from_binary_pads_the_last_page() -> None:
    img = uf2.parse(uf2.from_binary(b"\x01" * 300))
    assert len(img.pages) == 2
    assert img.pages[0x10000100] == b"\x01" * 44 + b"\xff" * 212


def test_rp2350_file_refused_for_rp2040_and_accepted_for_rp2350() -> None:
    data = uf2.build(_image(2), family=uf2.FAMILY_RP2350_ARM_S)
    with pytest.raises(uf2.UF2Error, match="RP2350 Arm secure, not RP2040"):
        uf2.parse(data, "rp2040")
    assert uf2.parse(data, "rp2350").family == uf2.FAMILY_RP2350_ARM_S


def test_foreign_family_named() -> None:
    data = uf2.build(_image(2), family=0xADA52840)
    with pytest.raises(uf2.UF2Error, match="nRF52840"):
        uf2.parse(data)


def test_no_family_id() -> None:
    with pytest.raises(uf2.UF2Error, match="no family id"):
        uf2.parse(uf2.build(_image(2), flags=0))


@pytest.mark.parametrize(
    ("offset", "value", "message"),
    [
        (0, 0x12345678, "bad start magic"),
        (4, 0, "bad start magic"),
        (508, 0, "bad end magic"),
        (16, 477, "at most 476"),
        (16, 128, "RP2 flash blocks carry 256"),
        (12, 0x10000080, "not aligned"),
        (12, 0x30000000, "outside flash"),
        (12, 0x20042000, "outside flash"),
        (12, 0x20000000, "a RAM block in an image for flash"),
        (24, 5, "block 0 said"),
    ],
)
def test_corrupt_block(offset: int, value: int, message: str) -> None:
    data = bytearray(uf2.build(_image(3)))
    struct.pack_into("<I", data, 512 + offset, value)
    with pytest.raises(uf2.UF2Error, match=message):
        uf2.parse(bytes(data))


def test_truncated_and_reordered() -> None:
    data = uf2.build(_image(4))
    with pytest.raises(uf2.UF2Error, match="not a multiple of 512"):
        uf2.parse(data[:-10])
    with pytest.raises(uf2.UF2Error, match="truncated"):
        uf2.parse(data[:-512])
    swapped = data[512:1024] + data[:512] + data[1024:]
    with pytest.raises(uf2.UF2Error, match="out of order"):
        uf2.parse(swapped)


def test_duplicate_page_and_not_uf2() -> None:
    pages = _image(2)
    a = uf2.build({0x10000000: pages[0x10000000]})
    twice = bytearray(a + a)
    struct.pack_into("<II", twice, 20, 0, 2)
    struct.pack_into("<II", twice, 512 + 20, 1, 2)
    with pytest.raises(uf2.UF2Error, match="written twice"):
        uf2.parse(bytes(twice))
    with pytest.raises(uf2.UF2Error, match="not a UF2 file"):
        uf2.parse(b"\x7fELF" + b"\x00" * 508)
    with pytest.raises(uf2.UF2Error, match="empty"):
        uf2.parse(b"")


def test_skips_not_main_flash_blocks_and_load_errors(tmp_path) -> None:
    data = bytearray(uf2.build(_image(2)))
    struct.pack_into("<I", data, 8, uf2.FLAG_FAMILY_ID_PRESENT | uf2.FLAG_NOT_MAIN_FLASH)
    img = uf2.parse(bytes(data))
    assert list(img.pages) == [0x10000100]
    with pytest.raises(uf2.UF2Error, match="cannot read"):
        uf2.load(tmp_path / "missing.uf2")


# --- RP2350 files, several families, RAM-loaded files (read as picotool reads them) ---


def _e10_block(tagged: bool = True, address: int = 0x10FFFF00) -> bytes:
    """The RP2350-E10 workaround block as picotool writes it (gen_abs_block):
    family absolute, 256 x 0xEF, block 0 of 2, "RP2 ignore block" tag."""
    flags = uf2.FLAG_FAMILY_ID_PRESENT | (uf2.FLAG_EXTENSION_TAGS if tagged else 0)
    head = struct.pack("<8I", 0x0A324655, 0x9E5D5157, flags, address, 256, 0, 2, 0xE48BFF57)
    data = bytearray(476)
    data[:256] = b"\xef" * 256
    if tagged:
        struct.pack_into("<I", data, 256, 0x9957E304)
    return head + bytes(data) + struct.pack("<I", 0x0AB16F30)


@pytest.mark.parametrize("tagged", [True, False])
def test_rp2350_file_with_the_e10_block_first(tagged: bool) -> None:
    pages = _image(5)
    data = _e10_block(tagged) + uf2.build(pages, family=uf2.FAMILY_RP2350_ARM_S)
    img = uf2.parse(data, "rp2350")
    assert img.pages == pages  # the workaround block is not written
    assert img.family == uf2.FAMILY_RP2350_ARM_S
    assert img.e10_block == 0x10FFFF00 and img.skipped == 1
    assert 0x10FFFF00 not in img.pages
    with pytest.raises(uf2.UF2Error, match="RP2350 Arm secure, not RP2040"):
        uf2.parse(data, "rp2040")


def test_an_absolute_block_that_is_not_the_e10_block_is_data() -> None:
    """A real absolute-family image numbered 0 of 2 with other bytes is not skipped."""
    block = bytearray(_e10_block(tagged=False, address=0x10000000))
    block[32] = 0x00
    second = bytearray(block)
    struct.pack_into("<I", second, 20, 1)
    struct.pack_into("<I", second, 12, 0x10000100)
    img = uf2.parse(bytes(block + second), "rp2350")
    assert sorted(img.pages) == [0x10000000, 0x10000100] and img.e10_block is None


def test_multi_family_file_takes_the_chips_blocks() -> None:
    rp2040 = _image(3)
    rp2350 = {a: bytes([0x35]) * 256 for a in _image(4)}
    riscv = {a: bytes([0x5A]) * 256 for a in _image(2)}
    data = (
        uf2.build(rp2040, family=uf2.FAMILY_RP2040)
        + _e10_block()
        + uf2.build(rp2350, family=uf2.FAMILY_RP2350_ARM_S)
        + uf2.build(riscv, family=uf2.FAMILY_RP2350_RISCV)
    )
    a = uf2.parse(data, "rp2040")
    assert a.pages == rp2040 and a.family == uf2.FAMILY_RP2040 and a.skipped == 7
    b = uf2.parse(data, "rp2350")
    assert b.pages == rp2350 and b.family == uf2.FAMILY_RP2350_ARM_S  # the first family it accepts


def test_multi_family_file_checks_each_familys_numbering() -> None:
    data = bytearray(uf2.build(_image(3), family=uf2.FAMILY_RP2040) + uf2.build(_image(3), family=uf2.FAMILY_RP2350_ARM_S))
    with pytest.raises(uf2.UF2Error, match="truncated"):
        uf2.parse(bytes(data[: 5 * 512]), "rp2040")
    struct.pack_into("<I", data, 4 * 512 + 20, 2)  # the RP2350 part's block 1 says 2
    with pytest.raises(uf2.UF2Error, match="out of order"):
        uf2.parse(bytes(data), "rp2040")


def test_foreign_multi_family_file_names_every_family() -> None:
    data = uf2.build(_image(1), family=0xADA52840) + uf2.build(_image(1), family=0x68ED2B88)
    with pytest.raises(uf2.UF2Error, match="nRF52840 and SAMD21, not RP2040"):
        uf2.parse(data)


def test_ram_loaded_file_like_flash_nuke() -> None:
    pages = {0x20000000 + i * 256: bytes([i]) * 256 for i in range(6)}
    img = uf2.parse(uf2.build(pages, family=uf2.FAMILY_RP2040))
    assert img.in_ram and img.pages == pages and img.start == 0x20000000
    assert not uf2.parse(uf2.build(_image(2))).in_ram
    big = {0x20041F00: b"\x00" * 256, 0x20042000: b"\x00" * 256}  # past the RP2040's SRAM
    with pytest.raises(uf2.UF2Error, match="outside flash"):
        uf2.parse(uf2.build(big))
    assert uf2.parse(uf2.build(big, family=uf2.FAMILY_RP2350_ARM_S), "rp2350").in_ram


def test_only_a_bounded_regular_file_is_read(tmp_path) -> None:
    import os

    with pytest.raises(uf2.UF2Error, match="not a regular file"):
        uf2.load("/dev/zero")
    fifo = tmp_path / "image.fifo"
    os.mkfifo(fifo)
    with pytest.raises(uf2.UF2Error, match="not a regular file"):
        uf2.load(fifo)
    huge = tmp_path / "huge.uf2"
    with huge.open("wb") as f:
        f.truncate(uf2.MAX_UF2_BYTES + uf2.BLOCK_SIZE)  # sparse: no disk used
    with pytest.raises(uf2.UF2Error, match=f"at most {uf2.MAX_UF2_BYTES}"):
        uf2.load(huge)


def test_the_first_block_is_checked_before_the_rest_is_read(tmp_path, monkeypatch) -> None:
    import os

    junk = tmp_path / "junk.uf2"
    with junk.open("wb") as f:
        f.truncate(uf2.MAX_UF2_BYTES)  # zeros: no UF2 magic
    reads: list[int] = []
    real_fdopen = os.fdopen

    class Counting:
        def __init__(self, *a, **kw) -> None:
            self.f = real_fdopen(*a, **kw)

        def read(self, n: int = -1) -> bytes:
            data = self.f.read(n)
            reads.append(len(data))
            return data

        def fileno(self) -> int:
            return self.f.fileno()

        def __enter__(self):
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()

    monkeypatch.setattr(uf2.os, "fdopen", Counting)
    with pytest.raises(uf2.UF2Error, match="block 0: bad start magic"):
        uf2.load(junk)
    assert sum(reads) == uf2.BLOCK_SIZE, "read past a first block that is not UF2"
