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
        (12, 0x20000000, "outside flash"),
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
