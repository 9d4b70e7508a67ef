"""UF2 files (Microsoft's USB flashing format), as the RP2040/RP2350 boot ROM takes them.

A UF2 file is a sequence of 512-byte blocks, each carrying up to 476 bytes of
payload for one target address (RP2040 images use 256, one flash page)::

    0   u32 magic0 = 0x0A324655 ("UF2\\n")
    4   u32 magic1 = 0x9E5D5157
    8   u32 flags
    12  u32 target address
    16  u32 payload size
    20  u32 block number (0-based)
    24  u32 number of blocks in the file
    28  u32 family id (when flags has FAMILY_ID_PRESENT) or file size
    32  476 bytes of data (payload first, rest padding)
    508 u32 magic end = 0x0AB16F30

:func:`parse` checks every block and raises :class:`UF2Error` naming the
block and what is wrong: a file of another chip family, a truncated or
reordered file, an address outside flash. The result is a :class:`UF2Image`:
the flash pages to write, merged and sorted.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

BLOCK_SIZE = 512
MAGIC_START0 = 0x0A324655
MAGIC_START1 = 0x9E5D5157
MAGIC_END = 0x0AB16F30
MAX_PAYLOAD = 476

# flags
FLAG_NOT_MAIN_FLASH = 0x00000001
FLAG_FILE_CONTAINER = 0x00001000
FLAG_FAMILY_ID_PRESENT = 0x00002000
FLAG_MD5_PRESENT = 0x00004000
FLAG_EXTENSION_TAGS = 0x00008000

# family ids (uf2families.json, as picotool and the boot ROMs use them)
FAMILY_RP2040 = 0xE48BFF56
FAMILY_ABSOLUTE = 0xE48BFF57
FAMILY_DATA = 0xE48BFF58
FAMILY_RP2350_ARM_S = 0xE48BFF59
FAMILY_RP2350_RISCV = 0xE48BFF5A
FAMILY_RP2350_ARM_NS = 0xE48BFF5B

FAMILY_NAMES = {
    FAMILY_RP2040: "RP2040",
    FAMILY_ABSOLUTE: "absolute (any RP2)",
    FAMILY_DATA: "data (any RP2)",
    FAMILY_RP2350_ARM_S: "RP2350 Arm secure",
    FAMILY_RP2350_RISCV: "RP2350 RISC-V",
    FAMILY_RP2350_ARM_NS: "RP2350 Arm non-secure",
    0x00FF6919: "STM32L4",
    0x1C5F21B0: "ESP32",
    0xBFDD4EEE: "ESP32-S2",
    0xADA52840: "nRF52840",
    0x68ED2B88: "SAMD21",
    0x55114460: "SAMD51",
}

#: Which families each chip's boot ROM accepts.
CHIP_FAMILIES = {
    "rp2040": {FAMILY_RP2040},
    "rp2350": {FAMILY_RP2350_ARM_S, FAMILY_RP2350_RISCV, FAMILY_RP2350_ARM_NS, FAMILY_ABSOLUTE},
}

FLASH_START = 0x10000000
#: Largest flash the XIP window maps (16 MiB on both chips).
FLASH_MAX = 16 * 1024 * 1024
PAGE_SIZE = 256
SECTOR_SIZE = 4096

_HEADER = struct.Struct("<8I")


class UF2Error(ValueError):
    """A UF2 file that cannot be flashed; the message says which block and why."""


def family_name(family: int) -> str:
    return FAMILY_NAMES.get(family, f"unknown family 0x{family:08x}")


@dataclass(frozen=True)
class UF2Block:
    flags: int
    address: int
    payload: bytes
    block_no: int
    num_blocks: int
    family: int | None  # None when the block carries the file size instead


@dataclass
class UF2Image:
    """The flash contents a UF2 file describes: address -> 256-byte page."""

    family: int | None
    pages: dict[int, bytes] = field(default_factory=dict)
    blocks: int = 0

    @property
    def size(self) -> int:
        return len(self.pages) * PAGE_SIZE

    @property
    def start(self) -> int:
        return min(self.pages) if self.pages else FLASH_START

    @property
    def end(self) -> int:
        return max(self.pages) + PAGE_SIZE if self.pages else FLASH_START

    def sectors(self) -> list[int]:
        """4 KiB sectors (addresses) the image touches, in order: what to erase."""
        return sorted({a - (a % SECTOR_SIZE) for a in self.pages})

    def sector_data(self, sector: int, fill: int = 0xFF) -> bytes:
        """The whole sector as it should read after flashing (pages the image
        does not cover read erased)."""
        out = bytearray([fill]) * SECTOR_SIZE
        for off in range(0, SECTOR_SIZE, PAGE_SIZE):
            page = self.pages.get(sector + off)
            if page is not None:
                out[off : off + PAGE_SIZE] = page
        return bytes(out)


def parse_block(raw: bytes, index: int) -> UF2Block:
    """Decode and check one 512-byte block (``index``: its position in the file)."""
    if len(raw) != BLOCK_SIZE:
        raise UF2Error(f"block {index}: {len(raw)} bytes, a UF2 block has {BLOCK_SIZE} (the file is truncated)")
    m0, m1, flags, addr, size, block_no, num_blocks, fam = _HEADER.unpack_from(raw, 0)
    (m_end,) = struct.unpack_from("<I", raw, 508)
    if m0 != MAGIC_START0 or m1 != MAGIC_START1:
        raise UF2Error(f"block {index}: bad start magic (0x{m0:08x} 0x{m1:08x}): not a UF2 file, or damaged")
    if m_end != MAGIC_END:
        raise UF2Error(f"block {index}: bad end magic 0x{m_end:08x}: the block is damaged")
    if size > MAX_PAYLOAD:
        raise UF2Error(f"block {index}: payload of {size} bytes, at most {MAX_PAYLOAD} fit in a block")
    if num_blocks == 0 or block_no >= num_blocks:
        raise UF2Error(f"block {index}: block number {block_no} of {num_blocks}")
    family = fam if flags & FLAG_FAMILY_ID_PRESENT else None
    return UF2Block(flags, addr, bytes(raw[32 : 32 + size]), block_no, num_blocks, family)


def parse(data: bytes, chip: str = "rp2040", source: str = "the UF2 file") -> UF2Image:
    """Parse a whole UF2 file for ``chip`` ("rp2040" or "rp2350").

    Blocks flagged "not main flash" and file-container blocks are skipped (the
    boot ROM ignores them too); every other block must be of an accepted
    family, page-aligned, 256 bytes, inside flash, numbered 0..n-1 in order
    with the same count, and no page may be given twice."""
    if chip not in CHIP_FAMILIES:
        raise UF2Error(f"unknown chip {chip!r}: use rp2040 or rp2350")
    if not data:
        raise UF2Error(f"{source} is empty")
    if len(data) % BLOCK_SIZE:
        raise UF2Error(
            f"{source} is {len(data)} bytes, not a multiple of {BLOCK_SIZE}: it is truncated or not a UF2 file"
        )
    accepted = CHIP_FAMILIES[chip]
    image = UF2Image(family=None)
    expected_total: int | None = None
    next_no = 0
    for index in range(len(data) // BLOCK_SIZE):
        b = parse_block(data[index * BLOCK_SIZE : (index + 1) * BLOCK_SIZE], index)
        if expected_total is None:
            expected_total = b.num_blocks
        elif b.num_blocks != expected_total:
            raise UF2Error(f"block {index}: says the file has {b.num_blocks} blocks, block 0 said {expected_total}")
        if b.block_no != next_no:
            raise UF2Error(f"block {index}: numbered {b.block_no}, expected {next_no} (blocks missing or out of order)")
        next_no += 1
        if b.flags & (FLAG_NOT_MAIN_FLASH | FLAG_FILE_CONTAINER):
            continue
        if b.family is None:
            raise UF2Error(f"block {index}: no family id; the {chip.upper()} boot ROM needs one (rebuild with a current SDK)")
        if b.family not in accepted:
            raise UF2Error(
                f"{source} is for {family_name(b.family)}, not {chip.upper()} "
                f"(block {index}, family 0x{b.family:08x}): download the {chip.upper()} build"
            )
        if image.family is None:
            image.family = b.family
        elif b.family != image.family:
            raise UF2Error(f"block {index}: family {family_name(b.family)} after {family_name(image.family)} in one file")
        if len(b.payload) != PAGE_SIZE:
            raise UF2Error(f"block {index}: payload of {len(b.payload)} bytes; RP2 flash blocks carry {PAGE_SIZE}")
        if b.address % PAGE_SIZE:
            raise UF2Error(f"block {index}: address 0x{b.address:08x} is not aligned to a {PAGE_SIZE}-byte page")
        if not FLASH_START <= b.address < FLASH_START + FLASH_MAX:
            raise UF2Error(f"block {index}: address 0x{b.address:08x} is outside flash (0x10000000..0x11000000)")
        if b.address in image.pages:
            raise UF2Error(f"block {index}: page 0x{b.address:08x} is written twice")
        image.pages[b.address] = b.payload
        image.blocks += 1
    if expected_total is not None and next_no != expected_total:
        raise UF2Error(f"{source} has {next_no} blocks but says {expected_total}: it is truncated")
    if not image.pages:
        raise UF2Error(f"{source} has no flash blocks for {chip.upper()}")
    return image


def load(path: str | Path, chip: str = "rp2040") -> UF2Image:
    """Read and parse a UF2 file; UF2Error names the file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise UF2Error(f"cannot read {p}: {exc.strerror or exc}") from None
    return parse(data, chip, source=str(p))


def build(pages: dict[int, bytes], family: int = FAMILY_RP2040, flags: int = FLAG_FAMILY_ID_PRESENT) -> bytes:
    """Write a UF2 file for these pages (address -> up to 256 bytes): for
    tests, and to turn a raw image into something a boot volume accepts."""
    items = sorted(pages.items())
    out = bytearray()
    for no, (addr, payload) in enumerate(items):
        payload = bytes(payload)
        if len(payload) > MAX_PAYLOAD:
            raise UF2Error(f"page at 0x{addr:08x}: {len(payload)} bytes do not fit a block")
        head = _HEADER.pack(MAGIC_START0, MAGIC_START1, flags, addr, len(payload), no, len(items), family)
        block = bytearray(head) + payload + bytes(MAX_PAYLOAD - len(payload)) + struct.pack("<I", MAGIC_END)
        out += block
    return bytes(out)


def from_binary(image: bytes, base: int = FLASH_START, family: int = FAMILY_RP2040) -> bytes:
    """A UF2 file for a raw flash image starting at ``base`` (padded to pages with 0xFF)."""
    pages = {}
    for off in range(0, len(image), PAGE_SIZE):
        chunk = image[off : off + PAGE_SIZE]
        pages[base + off] = chunk + b"\xff" * (PAGE_SIZE - len(chunk))
    return build(pages, family)
