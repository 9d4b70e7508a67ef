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
reordered file, an address outside flash and RAM. The result is a
:class:`UF2Image`: the pages to write, merged and sorted, in flash or (for
RAM-loaded programs such as ``flash_nuke.uf2``) in SRAM.

Read as picotool reads them (its ``build_rmap_uf2``):

- current pico-sdk builds for the RP2350 begin with the RP2350-E10
  workaround block: family "absolute", 256 bytes of 0xEF, numbered 0 of 2,
  optionally tagged "RP2 ignore block". It is skipped; the chip's own blocks
  that follow have their own numbering from 0;
- a file may hold several families one after the other (each numbered from
  0): the blocks of the first family the chip accepts are taken, the others
  skipped.
"""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass, field
from pathlib import Path

from tablesense.sentence import say

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

UF2_EXTENSION_RP2_IGNORE_BLOCK = 0x9957E304
#: The RP2350-E10 workaround block's payload byte.
E10_FILL = 0xEF

FLASH_START = 0x10000000
SRAM_START = 0x20000000
#: End of striped SRAM of each chip (RAM-loaded UF2 files must fit below it).
SRAM_END = {"rp2040": 0x20042000, "rp2350": 0x20082000}
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
    """What a UF2 file puts on the chip: address -> 256-byte page, all in
    flash or all in SRAM (:attr:`in_ram`: a program the boot ROM loads to RAM
    and starts, such as ``flash_nuke.uf2``)."""

    family: int | None
    pages: dict[int, bytes] = field(default_factory=dict)
    blocks: int = 0
    skipped: int = 0  # blocks not taken: other families, not main flash, the E10 block
    e10_block: int | None = None  # address of the RP2350-E10 workaround block, if the file had one
    chip: str = "rp2040"

    @property
    def in_ram(self) -> bool:
        return bool(self.pages) and self.start >= SRAM_START

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


def is_e10_block(raw: bytes) -> bool:
    """The RP2350-E10 workaround block picotool and the SDK put first in a
    flash image for the RP2350 (as picotool's ``check_abs_block`` tests it):
    family absolute, 256 bytes of 0xEF, block 0 of 2, and if extension tags
    are flagged, the "RP2 ignore block" tag."""
    if len(raw) != BLOCK_SIZE:
        return False
    m0, m1, flags, _addr, size, block_no, num_blocks, fam = _HEADER.unpack_from(raw, 0)
    (m_end,) = struct.unpack_from("<I", raw, 508)
    if (m0, m1, m_end) != (MAGIC_START0, MAGIC_START1, MAGIC_END):
        return False
    if flags & ~FLAG_EXTENSION_TAGS != FLAG_FAMILY_ID_PRESENT:
        return False
    if (size, block_no, num_blocks, fam) != (PAGE_SIZE, 0, 2, FAMILY_ABSOLUTE):
        return False
    if raw[32 : 32 + PAGE_SIZE] != bytes([E10_FILL]) * PAGE_SIZE:
        return False
    if flags & FLAG_EXTENSION_TAGS:
        (tag,) = struct.unpack_from("<I", raw, 32 + PAGE_SIZE)
        return tag == UF2_EXTENSION_RP2_IGNORE_BLOCK
    return True


def parse_block(raw: bytes, index: int) -> UF2Block:
    """Decode and check one 512-byte block (``index``: its position in the file)."""
    if len(raw) != BLOCK_SIZE:
        raise UF2Error(say("block {index}: {n} bytes, a UF2 block has {size} (the file is truncated)", index=index,
                           n=len(raw), size=BLOCK_SIZE))
    m0, m1, flags, addr, size, block_no, num_blocks, fam = _HEADER.unpack_from(raw, 0)
    (m_end,) = struct.unpack_from("<I", raw, 508)
    if m0 != MAGIC_START0 or m1 != MAGIC_START1:
        raise UF2Error(say("block {index}: bad start magic ({magic}): not a UF2 file, or damaged", index=index,
                           magic=f"0x{m0:08x} 0x{m1:08x}"))
    if m_end != MAGIC_END:
        raise UF2Error(say("block {index}: bad end magic {magic}: the block is damaged", index=index, magic=f"0x{m_end:08x}"))
    if size > MAX_PAYLOAD:
        raise UF2Error(say("block {index}: payload of {n} bytes, at most {most} fit in a block", index=index, n=size,
                           most=MAX_PAYLOAD))
    if num_blocks == 0 or block_no >= num_blocks:
        raise UF2Error(say("block {index}: block number {number} of {total}", index=index, number=block_no,
                           total=num_blocks))
    family = fam if flags & FLAG_FAMILY_ID_PRESENT else None
    return UF2Block(flags, addr, bytes(raw[32 : 32 + size]), block_no, num_blocks, family)


def parse(data: bytes, chip: str = "rp2040", source: str = "the UF2 file") -> UF2Image:
    """Parse a whole UF2 file for ``chip`` ("rp2040" or "rp2350").

    Every block is checked (magic numbers, payload size); each family's blocks
    must be numbered 0..n-1 in order with the same count (a file may hold
    several families, or several images of one, one after the other). The
    RP2350-E10 workaround block, blocks flagged "not main flash" and
    file-container blocks are skipped (the boot ROM ignores them too). Of the
    rest, the blocks of the first family the chip accepts are taken: each
    256 bytes, page-aligned, inside flash or inside the chip's SRAM (never
    both in one image), no page given twice."""
    if chip not in CHIP_FAMILIES:
        raise UF2Error(say("unknown chip {chip}: use rp2040 or rp2350", chip=repr(chip)))
    if not data:
        raise UF2Error(say("{file} is empty", file=source))
    if len(data) % BLOCK_SIZE:
        raise UF2Error(say("{file} is {n} bytes, not a multiple of {size}: it is truncated or not a UF2 file",
                           file=source, n=len(data), size=BLOCK_SIZE))
    accepted = CHIP_FAMILIES[chip]
    image = UF2Image(family=None, chip=chip)
    blocks: list[tuple[int, UF2Block]] = []
    runs: dict[int | None, list[int]] = {}  # family -> [next block number, count, index of its block 0]
    for index in range(len(data) // BLOCK_SIZE):
        raw = data[index * BLOCK_SIZE : (index + 1) * BLOCK_SIZE]
        b = parse_block(raw, index)
        if is_e10_block(raw):
            image.e10_block = b.address
            image.skipped += 1
            continue  # numbered on its own (0 of 2); the chip's blocks start again at 0
        run = runs.get(b.family)
        if run is None or (b.block_no == 0 and run[0] == run[1]):
            run = [0, b.num_blocks, index]  # a new image of this family starts
            runs[b.family] = run
        if b.num_blocks != run[1]:
            raise UF2Error(say("block {index}: says the file has {total} blocks, block {other} said {said}", index=index,
                               total=b.num_blocks, other=run[2], said=run[1]))
        if b.block_no != run[0]:
            raise UF2Error(say("block {index}: numbered {number}, expected {expected} (blocks missing or out of order)",
                               index=index, number=b.block_no, expected=run[0]))
        run[0] += 1
        blocks.append((index, b))
    for family, (got, total, _first) in runs.items():
        if got != total:
            if len(runs) == 1:
                raise UF2Error(say("{file} has {got} blocks but says {total}: it is truncated", file=source, got=got,
                                   total=total))
            raise UF2Error(say("{file} has {got} blocks of {family} but says {total}: it is truncated", file=source,
                               got=got, family=_family_label(family), total=total))
    flash_blocks = [(i, b) for i, b in blocks if not b.flags & (FLAG_NOT_MAIN_FLASH | FLAG_FILE_CONTAINER)]
    image.skipped += len(blocks) - len(flash_blocks)
    families: list[int] = []
    for index, b in flash_blocks:
        if b.family is None:
            raise UF2Error(say("block {index}: no family id; the {chip} boot ROM needs one (rebuild with a current SDK)",
                               index=index, chip=chip.upper()))
        if b.family not in families:
            families.append(b.family)
    chosen = next((f for f in families if f in accepted), None)
    if chosen is None:
        if not families:
            raise UF2Error(say("{file} has no flash blocks for {chip}", file=source, chip=chip.upper()))
        first = next(i for i, b in flash_blocks if b.family == families[0])
        names = " and ".join(family_name(f) for f in families)
        raise UF2Error(say("{file} is for {families}, not {chip} (block {block}, family {family}): download the {chip} build",
                           file=source, families=names, chip=chip.upper(), block=first, family=f"0x{families[0]:08x}"))
    image.family = chosen
    sram_end = SRAM_END[chip]
    region: str | None = None
    for index, b in flash_blocks:
        if b.family != chosen:
            image.skipped += 1
            continue
        if len(b.payload) != PAGE_SIZE:
            raise UF2Error(say("block {index}: payload of {n} bytes; RP2 flash blocks carry {size}", index=index,
                               n=len(b.payload), size=PAGE_SIZE))
        if b.address % PAGE_SIZE:
            raise UF2Error(say("block {index}: address {address} is not aligned to a {size}-byte page", index=index,
                               address=f"0x{b.address:08x}", size=PAGE_SIZE))
        if FLASH_START <= b.address < FLASH_START + FLASH_MAX:
            where = "flash"
        elif SRAM_START <= b.address <= sram_end - PAGE_SIZE:
            where = "RAM"
        else:
            raise UF2Error(say("block {index}: address {address} is outside flash (0x10000000..0x11000000) "
                               "and the {chip}'s RAM ({ram})", index=index, address=f"0x{b.address:08x}",
                               chip=chip.upper(), ram=f"0x20000000..0x{sram_end:08x}"))
        if region is None:
            region = where
        elif where != region:
            raise UF2Error(say("block {index}: a {where} block in an image for {region}: one file loads one or the other",
                               index=index, where=where, region=region))
        if b.address in image.pages:
            raise UF2Error(say("block {index}: page {address} is written twice", index=index,
                               address=f"0x{b.address:08x}"))
        image.pages[b.address] = b.payload
        image.blocks += 1
    return image


def _family_label(family: int | None) -> str:
    return "no family" if family is None else family_name(family)


#: The largest UF2 file read: two whole 16 MiB flash images (a file may carry
#: an RP2040 and an RP2350 build), 512 bytes for every 256 of flash.
MAX_UF2_BYTES = 2 * (FLASH_MAX // PAGE_SIZE) * BLOCK_SIZE


def load(path: str | Path, chip: str = "rp2040") -> UF2Image:
    """Read and parse a UF2 file; UF2Error names the file.

    Only a regular file of at most ``MAX_UF2_BYTES`` is read (``/dev/zero``,
    a pipe or a 1 GiB file are refused before a byte is taken), and its first
    block is checked before the rest is read: what is not a UF2 file costs
    512 bytes, not its whole size."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
    except OSError as exc:
        raise UF2Error(say("cannot read {file}: {error}", file=str(p), error=str(exc.strerror or exc))) from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UF2Error(say("{file} is not a regular file: a UF2 image is a file", file=str(p)))
        if st.st_size > MAX_UF2_BYTES:
            raise UF2Error(say("{file} is {n} bytes; a UF2 image for these chips has at most {most}", file=str(p),
                               n=st.st_size, most=MAX_UF2_BYTES))
        try:
            first = f.read(BLOCK_SIZE)
            if len(first) == BLOCK_SIZE and st.st_size % BLOCK_SIZE == 0:
                parse_block(first, 0)  # not a UF2 file: say so before reading on (a torn size is said by parse)
            data = first + f.read(MAX_UF2_BYTES + 1 - len(first))
        except OSError as exc:
            raise UF2Error(say("cannot read {file}: {error}", file=str(p), error=str(exc.strerror or exc))) from None
    if len(data) > MAX_UF2_BYTES:  # it grew while being read
        raise UF2Error(say("{file} is {n} bytes; a UF2 image for these chips has at most {most}", file=str(p),
                           n=len(data), most=MAX_UF2_BYTES))
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
