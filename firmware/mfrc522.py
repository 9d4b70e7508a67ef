# MFRC522 reader driver (ISO/IEC 14443 A), written from the NXP MFRC522
# datasheet (rev. 3.9) and ISO/IEC 14443-3. Runs on MicroPython and CPython.
#
# Why our own driver: the widely copied MicroPython driver waits for a card in
# a loop that only exits on RxIRq/IdleIRq or after ~2000 polls; it ignores
# TimerIRq, so an empty cell costs far more than the timer it programmed.
# This driver programs the chip's timer (TAuto: it starts when the frame has
# been sent) to a short timeout and stops polling as soon as TimerIRq is set,
# so an empty cell costs one short-frame exchange (~1 ms). Every wait has a
# deadline in time (ticks_us), computed from what the chip is doing: the
# frame's airtime, the timer, the longest answer and a margin. A poll count
# would not do: a faster loop (10 MHz SPI, a compiled poll) runs out of polls
# before a SELECT's answer has arrived, and a present tag reads as an error.
# The last poll always starts after the deadline, so however slow the loop,
# an answer that came in time is seen.
#
# read_uid() returns the cell's state in the same shape as proto's cell state:
#   None        no tag answered (the timer expired)
#   bytes       the tag's UID (4, 7 or 10 bytes)
#   int         a read error code (proto.ERR_*); never confused with empty.
#
# The chip select is any object with value(v): a machine.Pin, or a decoder /
# expander output from config.py. It is driven low for one SPI transaction.

# Registers (datasheet section 9)
CommandReg = 0x01
ComIEnReg = 0x02
DivIEnReg = 0x03
ComIrqReg = 0x04
DivIrqReg = 0x05
ErrorReg = 0x06
Status1Reg = 0x07
Status2Reg = 0x08
FIFODataReg = 0x09
FIFOLevelReg = 0x0A
WaterLevelReg = 0x0B
ControlReg = 0x0C
BitFramingReg = 0x0D
CollReg = 0x0E
ModeReg = 0x11
TxModeReg = 0x12
RxModeReg = 0x13
TxControlReg = 0x14
TxASKReg = 0x15
CRCResultRegH = 0x21
CRCResultRegL = 0x22
ModWidthReg = 0x24
RFCfgReg = 0x26
TModeReg = 0x2A
TPrescalerReg = 0x2B
TReloadRegH = 0x2C
TReloadRegL = 0x2D
TCounterValRegH = 0x2E
TCounterValRegL = 0x2F
VersionReg = 0x37

# Commands (CommandReg bits 3..0)
CMD_IDLE = 0x00
CMD_MEM = 0x01
CMD_GENERATE_RANDOM_ID = 0x02
CMD_CALC_CRC = 0x03
CMD_TRANSMIT = 0x04
CMD_NO_CHANGE = 0x07
CMD_RECEIVE = 0x08
CMD_TRANSCEIVE = 0x0C
CMD_MF_AUTHENT = 0x0E
CMD_SOFT_RESET = 0x0F
POWER_DOWN = 0x10  # CommandReg bit 4

# ComIrqReg bits
IRQ_SET = 0x80
IRQ_TX = 0x40
IRQ_RX = 0x20
IRQ_IDLE = 0x10
IRQ_HI_ALERT = 0x08
IRQ_LO_ALERT = 0x04
IRQ_ERR = 0x02
IRQ_TIMER = 0x01
# DivIrqReg bits
DIV_CRC = 0x04

# ErrorReg bits
ERRREG_WR = 0x80
ERRREG_TEMP = 0x40
ERRREG_BUFFER_OVFL = 0x10
ERRREG_COLL = 0x08
ERRREG_CRC = 0x04
ERRREG_PARITY = 0x02
ERRREG_PROTOCOL = 0x01

# ISO 14443-3 commands
PICC_REQA = 0x26
PICC_WUPA = 0x52
PICC_SEL_CL1 = 0x93
PICC_SEL_CL2 = 0x95
PICC_SEL_CL3 = 0x97
PICC_HLTA = 0x50
CASCADE_TAG = 0x88
SAK_CASCADE = 0x04

# Known VersionReg values: 0x91 = v1.0, 0x92 = v2.0, 0x88 = FM17522 clone,
# 0xB2 = FM17522 clone, 0x12 = counterfeit (works).
KNOWN_VERSIONS = (0x91, 0x92, 0x88, 0xB2, 0x12)

# Read-error codes (same numbers as proto.ERR_*; repeated here so the driver
# does not import the codec)
ERR_TIMEOUT = 1
ERR_CRC = 2
ERR_COLLISION = 3
ERR_PROTOCOL = 4

_NO_ANSWER = -1  # internal: the timer expired with no answer
_OK = 0
# read_pair()'s stages of a full read (see MFRC522._full_stage)
_FULL = 100
_FULL_HALT = 199

_FIFO_SIZE = 64  # datasheet 8.3.1

# ISO/IEC 14443-2/-3 at 106 kbit/s: a bit lasts 128/fc = 9.44 us, a byte is 9
# bits on air (8 + parity), a frame adds a start and an end bit. In hundredths
# of a microsecond, so the arithmetic stays in small ints (no allocation).
_BIT_CUS = 944
# The longest answer any exchange of ours waits for: 5 bytes (anticollision:
# 4 UID bytes + BCC). The timer stops when an answer starts (TAuto), so an
# answer begun just before the time-out still needs its own airtime.
_LONGEST_ANSWER_US = ((5 * 9 + 2) * _BIT_CUS + 99) // 100  # 444 us
# Margin on every exchange deadline: the timer's 25 us tick rounding, the
# chip's start of transmission after StartSend, and the clocks' granularity.
_MARGIN_US = 200
# SoftReset: the chip clears PowerDown once its oscillator runs (datasheet
# 8.8.2: start-up is crystal-dependent, well under a millisecond in practice).
_RESET_US = 20000
# CalcCRC of a FIFO's worth of bytes takes a few microseconds.
_CRC_US = 500

# RFCfgReg.RxGain (datasheet 9.3.3.6): dB -> the 3-bit code. 18 and 23 dB have
# two codes each; the lower one is used.
RX_GAINS_DB = (18, 23, 33, 38, 43, 48)
_RX_GAIN_CODE = {18: 0, 23: 1, 33: 4, 38: 5, 43: 6, 48: 7}
DEFAULT_RX_GAIN_DB = 33  # the chip's reset value (RFCfgReg = 0x48)


def airtime_us(nbytes, last_bits=0):
    """Airtime of a PCD frame of nbytes at 106 kbit/s (a short frame: one
    byte of 7 bits, last_bits = 7, has no parity bit), start and end bit
    included, rounded up to whole microseconds."""
    bits = nbytes * 9 + 2
    if last_bits:
        bits -= 9 - last_bits
    return (bits * _BIT_CUS + 99) // 100

# by the frame's length in bytes (the FIFO write less its address byte)
_AIR = tuple(airtime_us(n) for n in range(_FIFO_SIZE + 1))
_AIR_SHORT = airtime_us(1, 7)  # WUPA/REQA: one 7-bit byte

# Timer: prescaler 169 gives f_timer = 13.56 MHz / (2*169+1) = 40 kHz, one tick
# every 25 us, so the timeout has 25 us resolution (datasheet 8.5).
_PRESCALER = 169
_TICK_NS = 25000  # (2 * 169 + 1) / 13.56 MHz = 25.0 us


def crc_a(data, crc=0x6363):
    """ISO/IEC 14443-3 CRC_A (what the chip's CalcCRC computes with
    ModeReg.CRCPreset = 01); returns the 16-bit value, sent low byte first."""
    for b in data:
        b ^= crc & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    return crc & 0xFFFF


def _fifo_write(frame):
    """The SPI transaction that loads frame into the FIFO: the FIFODataReg
    write address, then the bytes (datasheet 8.1.2.2)."""
    if len(frame) > _FIFO_SIZE:
        raise ValueError("%d bytes for a %d-byte FIFO" % (len(frame), _FIFO_SIZE))
    return bytes(((FIFODataReg << 1) & 0x7E,)) + bytes(frame)


# The FIFO writes of the frames a cell read sends every time, built once
_WUPA_WRITE = _fifo_write(bytes((PICC_WUPA,)))
_HLTA_WRITE = _fifo_write(bytes((PICC_HLTA, 0, crc_a(b"\x50\x00") & 0xFF, crc_a(b"\x50\x00") >> 8)))
_SEL = (PICC_SEL_CL1, PICC_SEL_CL2, PICC_SEL_CL3)


def _script(idle, after):
    """A compiled exchange's register writes, as _start() and then
    _exchange() or _transmit() make them: (length, address, value) each; a
    0 where the FIFO write goes and after the writes, then the poll (the
    same transaction as Buffers.ws). after: the (register, value) writes
    after the FIFO write."""
    out = bytearray()
    if not idle:
        out.extend((2, (CommandReg << 1) & 0x7E, CMD_IDLE))
    out.extend((2, (ComIrqReg << 1) & 0x7E, 0x7F, 2, (FIFOLevelReg << 1) & 0x7E, 0x80, 0))
    for reg, value in after:
        out.extend((2, (reg << 1) & 0x7E, value))
    out.extend((0, 4, 0x80 | (ComIrqReg << 1), 0x80 | (ErrorReg << 1), 0x80 | (FIFOLevelReg << 1), 0))
    return bytes(out)


def _transceive_script(idle, last_bits):
    return _script(idle, ((CommandReg, CMD_TRANSCEIVE), (BitFramingReg, 0x80 | last_bits)))


# by (chip idle: 0, running: 2) + (whole bytes: 0, a 7-bit short frame: 1)
_SCRIPTS = (
    _transceive_script(True, 0),
    _transceive_script(True, 7),
    _transceive_script(False, 0),
    _transceive_script(False, 7),
)
_ONE_TRANSACTION = bytes((0, 0))  # run(): no writes before or after, no poll
# run() with no FIFO write (an empty fw): the poll alone, an exchange's wait
# after _begin() (read_pair)
_POLL_SCRIPT = bytes((0, 0, 4, 0x80 | (ComIrqReg << 1), 0x80 | (ErrorReg << 1), 0x80 | (FIFOLevelReg << 1), 0))
_NO_WRITE = b""
# Transmit (HLTA): by (chip idle: 0, running: 1)
_TX_SCRIPTS = tuple(_script(idle, ((BitFramingReg, 0), (CommandReg, CMD_TRANSMIT))) for idle in (True, False))
_ANTICOLL_WRITE = tuple(_fifo_write(bytes((sel, 0x20))) for sel in _SEL)


class Buffers:
    """Preallocated SPI transfer buffers: every transaction of an exchange
    reuses them, so reading a cell allocates nothing (docs/firmware.md: on
    MicroPython garbage makes every later allocation slower until the next
    collection). About 0.5 KiB with their views: the readers of one bus take
    turns, so they share one set (main.py); readers used from several
    threads (CPython virtual boards) each keep their own."""

    def __init__(self):
        self.w2 = bytearray(2)
        self.r2 = bytearray(2)
        # an exchange's poll: ComIrqReg, ErrorReg and FIFOLevelReg at once
        self.ws = bytearray((0x80 | (ComIrqReg << 1), 0x80 | (ErrorReg << 1), 0x80 | (FIFOLevelReg << 1), 0))
        # One buffer for an exchange's last poll (rs, 4 bytes) and its answer
        # (rf, answers land at rf[1:]): the compiled run() gets both in one
        # argument and reads the answer in the same call (_compiled_exchange)
        self.rsf = bytearray(4 + _FIFO_SIZE + 1)
        whole = memoryview(self.rsf)
        self.rs = whole[:4]
        self.wf = bytearray(_FIFO_SIZE + 1)  # FIFO reads: the address n times, then 0
        self.rf = whole[4:]
        for i in range(_FIFO_SIZE + 1):
            self.wf[i] = 0x80 | (FIFODataReg << 1)
        self.junk = bytearray(_FIFO_SIZE + 1)  # what a write clocks in (the compiled path)
        self.mwf = memoryview(self.wf)
        self.mrf = memoryview(self.rf)
        # the transfer views of the short answers a cell read gets (2, 3, 5 bytes)
        self.views = [(self.mwf[: k + 1], self.mrf[: k + 1]) for k in range(6)]


# The compiled hot path (rp2 port only): one SPI transaction written against
# the RP2040's registers -- the PL022's SSPDR/SSPSR and the SIO's GPIO set and
# clear -- as a @micropython.viper function. A 4-byte poll costs ~9 us this
# way on rp2040js against ~32 us through machine.SPI and Pin.value (issue 26).
# It is compiled on the board at import (exec of this text): mpy-cross, which
# builds the deployed .mpy files, and the WebAssembly port cannot compile
# viper code, and CPython has no decorator for it. Every other port, and any
# board where compiling fails, keeps the plain path; both are tested against
# the same chip model, frame for frame (tests/sim/test_rp2040_chip.py).
_COMPILED_SRC = """
@micropython.viper
def run(params, sc, fw, r) -> int:
    # params (array 'I'): SPI base, chip-select mask, IRQ mask, limit in us,
    # then the decoder address pins to set and to clear first (0, 0: none).
    # r: the poll's 4 bytes at r[0:4]; a Transceive's answer at r[4:].
    # The transactions of the script sc (each: its length, then its bytes; a
    # 0 ends a part): its first part, the transaction fw, its second part,
    # then its last transaction (a poll) again and again until r[1] has a
    # bit of the IRQ mask or a poll began limit us after the first (time:
    # the RP2040's 1 MHz TIMERAWL, which time.ticks_us reads too). IRQ mask
    # 0: no poll, and fw's answer lands in r (one transaction: sc = 0, 0).
    # -> the number of polls.
    p = ptr32(params)
    cs_mask = p[1]
    mask = p[2]
    limit = p[3]
    dr = ptr32(p[0] + 8)
    sr = ptr32(p[0] + 12)
    sio = uint(0xD) << 28
    gpio_set = ptr32(sio + 0x14)
    gpio_clr = ptr32(sio + 0x18)
    timer = ptr32((uint(0x4005) << 16) + 0x4028)
    # (a ptr32 is indexed in words: every register is its own pointer at [0])
    aset = p[4]
    aclr = p[5]
    if aset | aclr:
        gpio_clr[0] = aclr
        gpio_set[0] = aset
    s = ptr8(sc)
    f = ptr8(fw)
    rb = ptr8(r)
    keep = mask == 0
    k = 0
    phase = 0
    start = 0
    t = 0
    polls = 0
    while True:
        if phase == 1:
            n = int(len(fw))
            if n == 0:
                phase = 2
                continue
        else:
            n = s[k]
            if n == 0:
                phase += 1
                k += 1
                if phase == 3:
                    if keep:
                        break
                    start = timer[0]
                continue
        if phase == 3:
            t = timer[0]
            polls += 1
        while sr[0] & 4:
            v = dr[0]
        gpio_clr[0] = cs_mask
        j = 0
        while j < n:
            while not (sr[0] & 2):
                pass
            if phase == 1:
                dr[0] = f[j]
            else:
                dr[0] = s[k + 1 + j]
            while not (sr[0] & 4):
                pass
            v = dr[0]
            if phase == 3 or keep:
                rb[j] = v
            j += 1
        while sr[0] & 16:
            pass
        gpio_set[0] = cs_mask
        if phase == 1:
            phase = 2
        elif phase == 3:
            if rb[1] & mask or uint(t - start) >= uint(limit):
                break
        else:
            k += n + 1
    # A Transceive's wait (RxIRq in the mask) that ended with an answer and
    # no error, by _outcome()'s rules: its FIFO bytes are read here, the
    # transaction _fifo_into() makes (the FIFODataReg read address n times,
    # then 0), into r[4:] (Buffers.rf).
    n = rb[3] & 0x7F
    # probe(): params[6] bit 0 / bit 1 when the wait ended with nobody
    # answering (by _outcome()'s rules: its _NO_ANSWER), switch this
    # reader's field off (TxControlReg 0x80) / route params[8] (set) and
    # params[9] (clear) and switch the field of the reader whose chip select
    # is params[7] on (0x83). params[10] := 1 when nobody answered, else 0.
    e = p[6]
    if e:
        irq = rb[1]
        err = rb[2]
        quiet = 0
        if irq & 0x31 and err != 0xFF:
            if not (irq & 0x30):
                quiet = 1
            elif not (err & 0x1F) and n == 0 and irq & 1:
                quiet = 1
        p[10] = quiet
        if quiet:
            w = 0
            while w < 2:
                if e & (1 << w):
                    csm = cs_mask
                    val = 0x80
                    if w == 1:
                        gpio_clr[0] = p[9]
                        gpio_set[0] = p[8]
                        csm = p[7]
                        val = 0x83
                    while sr[0] & 4:
                        v = dr[0]
                    gpio_clr[0] = csm
                    j = 0
                    while j < 2:
                        while not (sr[0] & 2):
                            pass
                        if j == 0:
                            dr[0] = 0x28
                        else:
                            dr[0] = val
                        while not (sr[0] & 4):
                            pass
                        v = dr[0]
                        j += 1
                    while sr[0] & 16:
                        pass
                    gpio_set[0] = csm
                w += 1
            return polls
    if mask & 0x20 and rb[1] & 0x30 and rb[2] != 0xFF and not (rb[2] & 0x1F) and n:
        if n > 64:
            n = 64
        while sr[0] & 4:
            v = dr[0]
        gpio_clr[0] = cs_mask
        j = 0
        while j <= n:
            while not (sr[0] & 2):
                pass
            if j < n:
                dr[0] = 0x92
            else:
                dr[0] = 0
            while not (sr[0] & 4):
                pass
            rb[4 + j] = dr[0]
            j += 1
        while sr[0] & 16:
            pass
        gpio_set[0] = cs_mask
    return polls
"""
# The quiet run (rp2 port only, compiled like run()): a run of quiet cells
# (board.py, _scan_quiet) read in one call. Per cell: its WUPA with
# probe()'s transactions (the script _QUIET_SCRIPT), the decision "nobody
# answered" by _outcome()'s rules, then its field off and, when it is off
# and may be lit, the field of the cell `ahead` places on: what probe()
# does for one cell, for every cell of the run without a Python call
# between them (the Python around each probe() was most of an empty
# cell's time on rp2040js, docs/firmware.md).
_COMPILED_QUIET_SRC = """
@micropython.viper
def quiet(P, S, sc, r) -> int:
    # P (array 'i'): [0] SPI base, [1] the first cell (out: the cell the run
    # stopped at), [2] the end of the run, [3] cells, [4] ahead, [5] a
    # field's lead in us, [6] the WUPA's wait limit in us, [7] when the last
    # read began (ticks_us; -1: none; in and out), [8] the quickest step so
    # far (0: none; in and out), [9] out: fields switched off with none lit,
    # [10] out: 1 when the run stopped at a cell that answered (its last
    # poll in r[0:4], its answer in r[4:], as run() leaves them), [11] out:
    # the last cell whose address went on the decoder (-1: none); from [16]
    # four words a cell: its chip-select mask, the decoder address pins to
    # set and to clear, flags: 1 when its field must not be lit (a skipped
    # reader), 2 when it was read early (with the cell `overlap` before it,
    # board.py _read_pair): no WUPA, only its field off and the next on.
    # S (array 'i'): per cell the ticks_us its field came on, -1 when off.
    # A cell is read only if its field has had its lead (else the run stops).
    # sc: the WUPA's transactions (each: its length, then its bytes), a 0,
    # then the poll, repeated until r[1] has RxIRq, IdleIRq or TimerIRq or
    # a poll began limit us after the first.
    p = ptr32(P)
    s = ptr32(S)
    dr = ptr32(p[0] + 8)
    sr = ptr32(p[0] + 12)
    sio = uint(0xD) << 28
    gpio_set = ptr32(sio + 0x14)
    gpio_clr = ptr32(sio + 0x18)
    timer = ptr32((uint(0x4005) << 16) + 0x4028)
    sb = ptr8(sc)
    rb = ptr8(r)
    c = p[1]
    end = p[2]
    n = p[3]
    ahead = p[4]
    keep = ahead == n - 1
    lead = p[5]
    limit = p[6]
    last = p[7]
    quick = p[8]
    off = 0
    answered = 0
    routed = -1
    while c < end:
        lit = s[c]
        if lit < 0:
            break
        early = p[19 + 4 * c] & 2
        if not early:
            now = timer[0] & 0x3FFFFFFF
            d = (now - lit) & 0x3FFFFFFF
            if d >= 0x20000000:
                d = d - 0x20000000 - 0x20000000
            if d < lead:
                break
            if last >= 0:
                d = (now - last) & 0x3FFFFFFF
                if d >= 0x20000000:
                    d = d - 0x20000000 - 0x20000000
                if d > 0 and (quick == 0 or d < quick):
                    quick = d
            last = now
        j = c + ahead
        if j >= n:
            j -= n
        cs_mask = p[16 + 4 * c]
        aset = p[17 + 4 * c]
        aclr = p[18 + 4 * c]
        if aset | aclr:
            gpio_clr[0] = aclr
            gpio_set[0] = aset
        routed = c
        k = 0
        polling = 0
        start = 0
        t = 0
        while not early:
            m = sb[k]
            if m == 0:
                polling = 1
                k += 1
                start = timer[0]
                continue
            if polling:
                t = timer[0]
            while sr[0] & 4:
                v = dr[0]
            gpio_clr[0] = cs_mask
            i = 0
            while i < m:
                while not (sr[0] & 2):
                    pass
                dr[0] = sb[k + 1 + i]
                while not (sr[0] & 4):
                    pass
                v = dr[0]
                if polling:
                    rb[i] = v
                i += 1
            while sr[0] & 16:
                pass
            gpio_set[0] = cs_mask
            if polling:
                if rb[1] & 0x31 or uint(t - start) >= uint(limit):
                    break
            else:
                k += m + 1
        irq = rb[1]
        err = rb[2]
        q = early
        if not early and irq & 0x31 and err != 0xFF:
            if not (irq & 0x30):
                q = 1
            elif not (err & 0x1F) and (rb[3] & 0x7F) == 0 and irq & 1:
                q = 1
        if not q:
            answered = 1
            # its answer, read as run() reads it (the same rules)
            m = rb[3] & 0x7F
            if irq & 0x30 and err != 0xFF and not (err & 0x1F) and m:
                if m > 64:
                    m = 64
                while sr[0] & 4:
                    v = dr[0]
                gpio_clr[0] = cs_mask
                i = 0
                while i <= m:
                    while not (sr[0] & 2):
                        pass
                    if i < m:
                        dr[0] = 0x92
                    else:
                        dr[0] = 0
                    while not (sr[0] & 4):
                        pass
                    rb[4 + i] = dr[0]
                    i += 1
                while sr[0] & 16:
                    pass
                gpio_set[0] = cs_mask
            break
        # nobody answered: this field off (TxControlReg 0x80), then cell
        # j's on (0x83) when it is off and may be lit; neither when the
        # window is every other cell (ahead n - 1: every field stays on,
        # board.py _size_window)
        if keep:
            c += 1
            continue
        light = 0
        if s[j] < 0 and not (p[19 + 4 * j] & 1):
            light = 1
        w = 0
        while w <= light:
            csm = cs_mask
            val = 0x80
            if w == 1:
                csm = p[16 + 4 * j]
                gpio_clr[0] = p[18 + 4 * j]
                gpio_set[0] = p[17 + 4 * j]
                routed = j
                val = 0x83
            while sr[0] & 4:
                v = dr[0]
            gpio_clr[0] = csm
            i = 0
            while i < 2:
                while not (sr[0] & 2):
                    pass
                if i == 0:
                    dr[0] = 0x28
                else:
                    dr[0] = val
                while not (sr[0] & 4):
                    pass
                v = dr[0]
                i += 1
            while sr[0] & 16:
                pass
            gpio_set[0] = csm
            w += 1
        s[c] = -1
        if light:
            s[j] = timer[0] & 0x3FFFFFFF
        else:
            off += 1
        c += 1
    p[1] = c
    p[7] = last
    p[8] = quick
    p[9] = off
    p[10] = answered
    p[11] = routed
    return c
"""


# The pair (rp2 port only, compiled like run()): read_pair()'s reads of two
# readers' remembered tags as one call. Each reader's read is a program of
# exchanges (_pair_program(): WUPA, the SELECT of each cascade level -- with
# its anticollision first on a periodic full read -- then HLTA),
# each the transactions _begin() makes, the wait _end() makes, and the
# answer the known-tag path expects (the ATQA; a level's SAK and CRC). The
# two take turns exactly as read_pair()'s loop does: A's WUPA begun, B's,
# then A's exchange waited for, checked and A's next begun, then B's, and
# so on. The first answer that is not the one expected (or that is an
# error) stops the call right after its wait, its poll and answer in r as
# _end() leaves them: read_pair() goes on from there in Python. Its SPI
# loops are written out as run()'s and quiet()'s are: a call from one viper
# function to another is a Python call, the cost these functions save.
_COMPILED_PAIR_SRC = """
@micropython.viper
def pair(Q, pa, pb, r) -> int:
    # Q (array 'i'): [0] SPI base; [1] out: 0 both reads done, 1 A's
    # answer was not the expected one (its wait done, its poll and answer
    # in r), 2 B's so; [2] out: the last reader routed (0 A, 1 B); from [8]
    # eight words a reader (A, then B): its chip-select mask, the decoder
    # address pins to set and to clear, 1 when its chip is idle (the first
    # exchange's leading Idle write is left out, as _begin() leaves it),
    # out: the exchange in flight (0 WUPA, 1.. the SELECTs, then HLTA; -1
    # done), out: the polls of its last wait.
    # pa, pb: the programs (see _pair_program()): per exchange its
    # transactions (each: its length, then its bytes), a 0, the wait's IRQ
    # mask, its limit in us (2 bytes, low first), the answer's length and
    # its bytes (0: a Transmit, HLTA).
    q = ptr32(Q)
    dr = ptr32(q[0] + 8)
    sr = ptr32(q[0] + 12)
    sio = uint(0xD) << 28
    gpio_set = ptr32(sio + 0x14)
    gpio_clr = ptr32(sio + 0x18)
    timer = ptr32((uint(0x4005) << 16) + 0x4028)
    ga = ptr8(pa)
    gb = ptr8(pb)
    rb = ptr8(r)
    wait_a = 0  # where the wait of the exchange in flight is, in the program
    wait_b = 0
    x = 0
    begins = 2  # the two WUPAs first
    out = 0
    routed = 0
    while True:
        g = ga
        base = 8
        if x:
            g = gb
            base = 16
        cs = q[base]
        aset = q[base + 1]
        aclr = q[base + 2]
        if begins:
            k = 0
            if q[base + 3]:
                k = g[0] + 1  # (idle: no Idle write)
            q[base + 4] = 0
        else:
            stage = q[base + 4]
            if stage < 0:
                x ^= 1
                if q[8 + 4] < 0 and q[16 + 4] < 0:
                    break
                continue
            w = wait_a
            if x:
                w = wait_b
            mask = g[w]
            limit = g[w + 1] | (g[w + 2] << 8)
            want = g[w + 3]
            if aset | aclr:
                gpio_clr[0] = aclr
                gpio_set[0] = aset
            routed = x
            polls = 0
            start = timer[0]
            while True:
                t = timer[0]
                polls += 1
                while sr[0] & 4:
                    v = dr[0]
                gpio_clr[0] = cs
                i = 0
                while i < 4:
                    while not (sr[0] & 2):
                        pass
                    if i == 0:
                        dr[0] = 0x88
                    elif i == 1:
                        dr[0] = 0x8C
                    elif i == 2:
                        dr[0] = 0x94
                    else:
                        dr[0] = 0
                    while not (sr[0] & 4):
                        pass
                    rb[i] = dr[0]
                    i += 1
                while sr[0] & 16:
                    pass
                gpio_set[0] = cs
                if rb[1] & mask or uint(t - start) >= uint(limit):
                    break
            q[base + 5] = polls
            irq = rb[1]
            err = rb[2]
            if mask & 0x20:
                n = rb[3] & 0x7F
                good = 0
                if irq & 0x30 and err != 0xFF and not (err & 0x1F) and n:
                    # the answer, read as run() reads it
                    if n > 64:
                        n = 64
                    while sr[0] & 4:
                        v = dr[0]
                    gpio_clr[0] = cs
                    i = 0
                    while i <= n:
                        while not (sr[0] & 2):
                            pass
                        if i < n:
                            dr[0] = 0x92
                        else:
                            dr[0] = 0
                        while not (sr[0] & 4):
                            pass
                        rb[4 + i] = dr[0]
                        i += 1
                    while sr[0] & 16:
                        pass
                    gpio_set[0] = cs
                    if n == want:
                        good = 1
                        i = 0
                        while i < n:
                            if rb[5 + i] != g[w + 4 + i]:
                                good = 0
                            i += 1
                if not good:
                    out = x + 1
                    break
                k = w + 4 + want
                q[base + 4] = stage + 1
            else:
                # HLTA sent, or not: then Idle (_end_transmit()'s _stop())
                if not (irq & 0x40):
                    while sr[0] & 4:
                        v = dr[0]
                    gpio_clr[0] = cs
                    i = 0
                    while i < 2:
                        while not (sr[0] & 2):
                            pass
                        if i == 0:
                            dr[0] = 0x02
                        else:
                            dr[0] = 0
                        while not (sr[0] & 4):
                            pass
                        v = dr[0]
                        i += 1
                    while sr[0] & 16:
                        pass
                    gpio_set[0] = cs
                q[base + 4] = -1
                x ^= 1
                if q[8 + 4] < 0 and q[16 + 4] < 0:
                    break
                continue
        # begin the exchange whose transactions start at k
        if aset | aclr:
            gpio_clr[0] = aclr
            gpio_set[0] = aset
        routed = x
        while True:
            m = g[k]
            if m == 0:
                break
            while sr[0] & 4:
                v = dr[0]
            gpio_clr[0] = cs
            i = 0
            while i < m:
                while not (sr[0] & 2):
                    pass
                dr[0] = g[k + 1 + i]
                while not (sr[0] & 4):
                    pass
                v = dr[0]
                i += 1
            while sr[0] & 16:
                pass
            gpio_set[0] = cs
            k += m + 1
        if x:
            wait_b = k + 1
        else:
            wait_a = k + 1
        if begins:
            begins -= 1
        x ^= 1
    q[1] = out
    q[2] = routed
    return out
"""


def _quiet_script():
    """probe()'s WUPA (the chip running: Idle first) as quiet() runs it:
    the transactions of _SCRIPTS[3] with the FIFO write in its place."""
    out = bytearray()
    for reg, value in ((CommandReg, CMD_IDLE), (ComIrqReg, 0x7F), (FIFOLevelReg, 0x80)):
        out.extend((2, (reg << 1) & 0x7E, value))
    out.append(len(_WUPA_WRITE))
    out.extend(_WUPA_WRITE)
    for reg, value in ((CommandReg, CMD_TRANSCEIVE), (BitFramingReg, 0x87)):
        out.extend((2, (reg << 1) & 0x7E, value))
    out.extend((0, 4, 0x80 | (ComIrqReg << 1), 0x80 | (ErrorReg << 1), 0x80 | (FIFOLevelReg << 1), 0))
    return bytes(out)


_QUIET_SCRIPT = _quiet_script()
SPI_BASES = (0x4003C000, 0x40040000)  # SPI0, SPI1 (RP2040 datasheet 2.2)
_compiled = []  # [the compiled run() or None], once per boot


def compiled_transfer():
    """The compiled run() on the rp2 port (compiled on the first call),
    None on any other port or when the board cannot compile it."""
    if not _compiled:
        fns = None
        try:
            import sys

            if sys.platform == "rp2":
                import micropython

                scope = {"micropython": micropython}
                exec(_COMPILED_SRC, scope)
                fns = scope["run"]
        except Exception:  # noqa: BLE001 - no native emitter: the plain path
            fns = None
        _compiled.append(fns)
    return _compiled[0]


def _compile_beside_run(cache, source, name):
    """The viper function `name` of source, compiled once per boot into
    cache (a one-item list) where run() compiles (the rp2 port) -> it, or
    None on any other port or when the board cannot compile it (its caller
    then takes the plain path)."""
    if not cache:
        fn = None
        if compiled_transfer() is not None:
            try:
                import micropython

                scope = {"micropython": micropython}
                exec(source, scope)
                fn = scope[name]
            except Exception:  # noqa: BLE001 - no native code: the plain path
                fn = None
        cache.append(fn)
    return cache[0]


_compiled_quiet = []  # [the compiled quiet() or None], once per boot


def compiled_quiet():
    """The compiled quiet() (the board then reads quiet cells one by one
    without it)."""
    return _compile_beside_run(_compiled_quiet, _COMPILED_QUIET_SRC, "quiet")


_compiled_pair = []  # [the compiled pair() or None], once per boot


def compiled_pair():
    """The compiled pair() (read_pair() then takes its turns in Python
    without it)."""
    return _compile_beside_run(_compiled_pair, _COMPILED_PAIR_SRC, "pair")


def _script_part(out, k, script, j):
    """Copy the transactions of script from j up to its next 0 into out at
    k -> (k, j) past them (j past the 0)."""
    while script[j]:
        m = script[j] + 1
        out[k : k + m] = script[j : j + m]
        k += m
        j += m
    return k, j + 1


def _pair_exchange(out, k, script, fifo_write, mask, limit, answer):
    """One exchange of a pair() program into out at k: the transactions
    _begin() makes (script's first part, the FIFO write, its second
    part), a 0, the wait's IRQ mask and limit, the answer expected ->
    the offset past it."""
    k, j = _script_part(out, k, script, 0)
    m = len(fifo_write)
    out[k] = m
    out[k + 1 : k + 1 + m] = fifo_write
    k, j = _script_part(out, k + 1 + m, script, j)
    out[k] = 0
    out[k + 1] = mask
    out[k + 2] = limit & 0xFF
    out[k + 3] = limit >> 8
    m = len(answer)
    out[k + 4] = m
    out[k + 5 : k + 5 + m] = answer
    return k + 5 + m


_PAIR_PROGRAM_SIZE = 256  # a 10-byte UID's full read: ~240 bytes


def _default_clock(spi):
    """The clock the deadlines are kept in: an emulated bus keeps its own
    virtual time (ticks_us on the bus: the chip model's clock, which a slow
    host must follow, not the wall clock); on a board, the time module."""
    if hasattr(spi, "ticks_us"):
        return spi
    import time

    if hasattr(time, "ticks_us"):
        return time
    try:
        from .board import HostClock  # CPython without an emulated bus
    except ImportError:
        from board import HostClock
    return HostClock()


class MFRC522:
    """One reader on a shared SPI bus, selected by its own chip select.

    spi: a machine.SPI-like object (write, write_readinto), mode 0, MSB first,
    up to 10 MHz. cs: an object with value(v), idle high.
    timeout_us: how long to wait for a tag's answer once the frame is sent.
    An ISO 14443 A tag starts its answer 1236/fc (91 us) after our frame
    ends, fixed for every answer we wait for, and TAuto's timer stops once
    the answer's 5th bit is in (datasheet 9.3.3.10): 138 us. 200 us (the
    timer fires after TReloadVal + 1 = 9 ticks, 225 us) leaves 87 us; an
    empty cell waits the whole timer, the one part of an empty sweep that
    is not interpreter time.
    buffers: a Buffers shared with the other readers of the bus (default:
    this reader's own).
    clock: ticks_us() and ticks_diff(a, b) (default: see _default_clock):
    every wait ends at a deadline in this clock.
    rx_gain_db: the receiver gain init() programs (RX_GAINS_DB).
    full_read_every: a tag read last time is re-read by selecting its
    remembered UID (read_uid); every full_read_every-th read of it is a full
    anticollision (1: always).
    compiled: (compiled_transfer(), SPI id, chip-select GPIO) to move
    this reader's bytes with compiled_transfer() instead of spi and cs (the
    rp2 port, main.py); the chip select is then that GPIO, driven low for a
    transaction (a decoder's enable: the address is still routed by cs).
    """

    def __init__(
        self,
        spi,
        cs,
        timeout_us=200,
        buffers=None,
        clock=None,
        rx_gain_db=DEFAULT_RX_GAIN_DB,
        full_read_every=8,
        compiled=None,
    ):
        if rx_gain_db not in _RX_GAIN_CODE:
            raise ValueError("rx_gain_db %r is not one of %r" % (rx_gain_db, RX_GAINS_DB))
        self.spi = spi
        self.cs = cs
        self.timeout_us = timeout_us
        self.rx_gain_db = rx_gain_db
        clock = clock if clock is not None else _default_clock(spi)
        self._ticks_us = clock.ticks_us
        self._ticks_diff = clock.ticks_diff
        # The transfer buffers (see Buffers): the readers of one bus may
        # share them, as main.py's do.
        b = buffers if buffers is not None else Buffers()
        self._w2 = b.w2
        self._r2 = b.r2
        self._ws = b.ws
        self._rs = b.rs
        self._rsf = b.rsf
        self._wf = b.wf
        self._rf = b.rf
        self._mwf = b.mwf
        self._mrf = b.mrf
        self._views = b.views
        self._junk = b.junk
        # compiled[3:5]: the decoder address pins to set and to clear for
        # this reader (GPIO masks): run() then routes the address itself
        self._routed = compiled is not None and len(compiled) > 3
        if compiled is None:
            self._frun = None
            self._spi_base = 0
            self._cs_mask = 0
        else:
            self._frun = compiled[0]
            self._spi_base = SPI_BASES[compiled[1]]
            self._cs_mask = 1 << compiled[2]
            from array import array

            # the compiled poll loop's parameters: SPI base, chip-select
            # mask, IRQ mask, limit (those two set per wait), the address
            # pins to set and to clear before the first transaction
            route = (compiled[3], compiled[4]) if self._routed else (0, 0)
            # [6:11]: probe()'s field switches after a quiet WUPA (see run())
            self._fparams = array("I", (self._spi_base, self._cs_mask, 0, 0, route[0], route[1], 0, 0, 0, 0, 0))
        self._n = 0  # bytes of the last exchange's answer, in self._rf[1:]
        # The chip select, per transaction. A decoder output (config.py)
        # offers fast_select(): its enable pin's value method, plus the shared
        # "address on the pins now" cell and its own address. While the pins
        # already hold our address (every transaction of a cell read after
        # the first), selecting is one native Pin call instead of a Python
        # method call (~30 us on rp2040js); otherwise cs.value(0) routes the
        # address first. Release is the enable pin going high either way.
        fast = getattr(cs, "fast_select", None)
        fast = fast() if fast is not None else None
        if fast is None:
            self._cs, self._shared, self._index = cs.value, None, 0
        else:
            self._cs, self._shared, self._index = fast
        # Whether the chip is known to be idle (no command running): the
        # next exchange then need not write Idle first. Unknown at start.
        self._idle = False
        # per cascade level: (anticollision answer, select FIFO write, SAK
        # answer or None until one passed its CRC) of the last select()
        self._memo = [None, None, None]  # type: list[tuple[bytes, bytes, bytes | None] | None]
        self._uid = None  # type: bytes | None  # the UID those answers make
        self._levels = 0  # cascade levels of that UID
        self._atqa = 0  # its ATQA (2 bytes, little end first) as an int
        self.full_read_every = full_read_every
        # reads of the known tag left before the next full anticollision
        self._known_left = 0
        self.known_reads = 0  # reads answered by the known-tag path (statistics)
        self.polls = 0  # IRQ polls in the last exchange (for the benchmark)
        self._limit = 0  # the wait limit of the exchange _begin() started (us)
        self.pair_reading = None  # this reader's reading from another's read_pair()
        # the compiled pair(): this reader's program (_pair_program), what it
        # was made from (memo of each level, ATQA, levels), its parameters
        self._kprog = [None, None]  # type: list[bytearray | None]  # by full read: 0 known-tag, 1 full
        self._kfor = [[None, None, None, -1, -1], [None, None, None, -1, -1]]
        self._kq = None
        self._kq_with = None  # the reader _kq's fixed words were filled for
        self._polled = False  # pair() stopped after this reader's wait: _end() has its result
        self._pair_left = 0  # the stage pair() left this reader at
        self._patqa = 0  # read_pair()'s full read: the ATQA it answered
        self._same = False  # read_pair()'s full read: every level repeats so far
        cs.value(1)

    # --- register access (datasheet 8.1.2) ---------------------------------

    def _transfer(self, w, r=None):
        """One SPI transaction with the chip selected: w written, and read
        into r (same length) when r is given."""
        sh = self._shared
        frun = self._frun
        if frun is not None:
            if sh is not None:
                if self._routed:
                    sh[0] = self._index  # run() puts our address on the decoder
                elif sh[0] != self._index:
                    self.cs.value(0)  # puts our address on the decoder first
            p = self._fparams
            p[2] = 0  # one transaction, no poll
            frun(p, _ONE_TRANSACTION, w, self._junk if r is None else r)
            return
        if sh is None or sh[0] == self._index:
            self._cs(0)
        else:
            self.cs.value(0)  # puts our address on the decoder first
        try:
            if r is None:
                self.spi.write(w)
            else:
                self.spi.write_readinto(w, r)
        finally:
            self._cs(1)

    def read_reg(self, reg):
        w = self._w2
        r = self._r2
        w[0] = 0x80 | ((reg << 1) & 0x7E)
        w[1] = 0
        self._transfer(w, r)
        return r[1]

    def write_reg(self, reg, value):
        w = self._w2
        w[0] = (reg << 1) & 0x7E
        w[1] = value & 0xFF
        if reg == CommandReg:
            self._idle = False  # only _stop() knows the chip is idle
        # _transfer(w) written out: six of these start every exchange, and
        # the saved call is 6 % of an empty sweep on rp2040js
        sh = self._shared
        if self._frun is not None:
            self._transfer(w)
            return
        if sh is None or sh[0] == self._index:
            self._cs(0)
        else:
            self.cs.value(0)
        try:
            self.spi.write(w)
        finally:
            self._cs(1)

    def read_regs(self, regs):
        """Several registers in one SPI transaction (datasheet 8.1.2.1: each
        MOSI byte after the first addresses the next register to read)."""
        n = len(regs)
        w = bytearray(n + 1)
        for i in range(n):
            w[i] = 0x80 | ((regs[i] << 1) & 0x7E)
        r = bytearray(n + 1)
        self._transfer(w, r)
        return r[1:]

    def write_fifo(self, data):
        self._transfer(_fifo_write(data))

    def _fifo_into(self, n):
        """Read n FIFO bytes into self._rf[1 : n + 1] (n clamped to the
        FIFO's 64) -> n."""
        if n > _FIFO_SIZE:
            n = _FIFO_SIZE
        w = self._wf
        w[n] = 0  # the address n times, then 0
        try:
            if n < len(self._views):
                vw, vr = self._views[n]
                self._transfer(vw, vr)
            else:
                self._transfer(self._mwf[: n + 1], self._mrf[: n + 1])
        finally:
            w[n] = 0x80 | (FIFODataReg << 1)
        return n

    def read_fifo(self, n):
        if n <= 0:
            return b""
        n = self._fifo_into(n)
        return bytes(self._mrf[1 : n + 1])

    def set_bits(self, reg, mask):
        self.write_reg(reg, self.read_reg(reg) | mask)

    def clear_bits(self, reg, mask):
        self.write_reg(reg, self.read_reg(reg) & ~mask & 0xFF)

    # --- set-up --------------------------------------------------------------

    def init(self):
        """Soft-reset and configure the chip; returns True when it answers
        with a known version (a chip with another version is configured
        all the same: clones differ). Safe to call again to recover a
        reader. A missing chip costs a few transactions: MISO floating high
        reads CommandReg 0xFF (bits 7..6 of a live chip read 0), pulled low
        it reads version 0x00; either ends init before the configuration."""
        self._idle = False
        self.write_reg(CommandReg, CMD_SOFT_RESET)
        ticks_us = self._ticks_us
        start = ticks_us()
        while True:
            t = ticks_us()
            value = self.read_reg(CommandReg)
            if value == 0xFF:
                return False
            if not value & POWER_DOWN or self._ticks_diff(t, start) >= _RESET_US:
                break
        version = self.version()
        if version == 0x00 or version == 0xFF:
            return False  # MISO stuck low or high: nobody there
        self.write_reg(TxModeReg, 0x00)  # 106 kbit/s, no hardware CRC on send
        self.write_reg(RxModeReg, 0x00)  # 106 kbit/s, no hardware CRC check
        self.write_reg(ModWidthReg, 0x26)
        self.set_timeout(self.timeout_us)
        self.write_reg(TxASKReg, 0x40)  # force 100% ASK modulation
        self.write_reg(ModeReg, 0x3D)  # CRC preset 0x6363 (CRC_A)
        # RxGain in bits 6..4; bits 3..0 keep their reset value 0x8
        self.write_reg(RFCfgReg, (_RX_GAIN_CODE[self.rx_gain_db] << 4) | 0x08)
        self.antenna_on()
        return version in KNOWN_VERSIONS

    def set_timeout(self, timeout_us):
        """Program the timer: TAuto (starts at the end of transmission),
        40 kHz tick, reload = timeout."""
        self.timeout_us = timeout_us
        ticks = (timeout_us * 1000 + _TICK_NS - 1) // _TICK_NS
        if ticks < 1:
            ticks = 1
        if ticks > 0xFFFF:
            ticks = 0xFFFF
        self.write_reg(TModeReg, 0x80 | ((_PRESCALER >> 8) & 0x0F))
        self.write_reg(TPrescalerReg, _PRESCALER & 0xFF)
        self.write_reg(TReloadRegH, ticks >> 8)
        self.write_reg(TReloadRegL, ticks & 0xFF)

    def version(self):
        return self.read_reg(VersionReg)

    def antenna_on(self):
        if self.read_reg(TxControlReg) & 0x03 != 0x03:
            self.set_bits(TxControlReg, 0x03)

    def antenna_off(self):
        self.clear_bits(TxControlReg, 0x03)

    def field(self, on):
        """Switch the RF field (Tx1RFEn, Tx2RFEn) with one write, no read:
        TxControlReg's other bits keep what init() leaves (0x80, InvTx2RFOn).
        The board time-shares the fields (board.py): only the readers being
        read, or about to be, have theirs on."""
        frun = self._frun
        if frun is None:
            self.write_reg(TxControlReg, 0x83 if on else 0x80)
            return
        # the compiled path, written out: the board switches two fields a
        # cell, and on rp2040js each Python call saved is ~10-30 us
        w = self._w2
        w[0] = (TxControlReg << 1) & 0x7E
        w[1] = 0x83 if on else 0x80
        sh = self._shared
        if sh is not None:
            if self._routed:
                sh[0] = self._index
            elif sh[0] != self._index:
                self.cs.value(0)
        p = self._fparams
        p[2] = 0
        frun(p, _ONE_TRANSACTION, w, self._junk)

    def antenna(self):
        return self.read_reg(TxControlReg) & 0x03 == 0x03

    def self_test(self):
        """-> (version register, antenna on, ok): what SELFTEST reports. ok
        also needs the chip's CRC coprocessor to compute CRC_A correctly
        (a live check of the chip's logic, FIFO and SPI data path)."""
        try:
            v = self.version()
            a = self.antenna()
            probe = b"\x93\x70\x88\x04\xa1\xb2\x9f"
            c = crc_a(probe)
            crc_ok = self.calc_crc(probe) == (c & 0xFF, c >> 8)
        except OSError:
            return (0, False, False)
        return (v, a, v in KNOWN_VERSIONS and a and crc_ok)

    # --- chip coprocessor and RF exchange -------------------------------------

    def _poll(self, reg, mask, limit_us):
        """Read reg until one of mask's bits is set or limit_us have passed
        -> the last value read (mask bits clear: the chip never finished)."""
        w = self._w2
        w[0] = 0x80 | ((reg << 1) & 0x7E)
        w[1] = 0
        return self._poll_into(w, self._r2, mask, limit_us)

    def _poll_into(self, w, r, mask, limit_us):
        """The poll loop: transfer w/r until r[1] has one of mask's bits, or
        until a poll that began limit_us or more after the first -> r[1].
        The time is read before each transfer, so the poll that ends the wait
        saw the chip after the deadline: a slow loop still sees an answer
        that came in time, a fast one polls more often. This loop is where a
        cell read spends most of its SPI transactions."""
        ticks_us = self._ticks_us
        polls = 0
        start = ticks_us()
        while True:
            t = ticks_us()
            polls += 1
            self._transfer(w, r)
            value = r[1]
            if value & mask or self._ticks_diff(t, start) >= limit_us:
                break
        self.polls = polls
        return value

    def _start(self, fifo_write, clear_reg, clear_bits):
        """Set up an exchange: stop the running command (unless the chip is
        known to be idle), clear the IRQ bits the wait will look at, flush
        the FIFO and load the frame (fifo_write: the FIFO write transaction,
        address byte included, see _fifo_write)."""
        if not self._idle:
            self.write_reg(CommandReg, CMD_IDLE)
        self.write_reg(clear_reg, clear_bits)
        self.write_reg(FIFOLevelReg, 0x80)  # flush the FIFO
        self._transfer(fifo_write)

    def _stop(self):
        self.write_reg(CommandReg, CMD_IDLE)
        self._idle = True

    def calc_crc(self, data):
        """CRC_A of data computed by the chip's CalcCRC command
        -> (low, high), or None when the chip does not finish."""
        self._start(_fifo_write(data), DivIrqReg, DIV_CRC)  # clear CRCIRq (Set2 = 0)
        self.write_reg(CommandReg, CMD_CALC_CRC)
        done = self._poll(DivIrqReg, DIV_CRC, _CRC_US) & DIV_CRC
        self._stop()  # CalcCRC does not end by itself
        if not done:
            return None
        return (self.read_reg(CRCResultRegL), self.read_reg(CRCResultRegH))

    def transceive(self, data, tx_last_bits=0):
        """Send data, wait for an answer. -> (status, answer bytes) where
        status is 0 (answer), -1 (timer expired: nobody answered) or ERR_*."""
        st = self._exchange(_fifo_write(data), tx_last_bits)
        if st != _OK:
            return st, b""
        return _OK, bytes(self._mrf[1 : self._n + 1])

    def _exchange(self, fifo_write, tx_last_bits):
        """transceive() without allocating: fifo_write is the FIFO write
        transaction already built (a cell read sends the same few frames
        every time: module constants, select()'s memo) and the answer is
        left in self._rf[1 : self._n + 1] -> the status. MicroPython's
        allocator slows down as garbage piles up between collections: with
        ~5 KiB of garbage per half-tagged 16-cell sweep, the sweep grew from
        101 to 274 ms before each collection (rp2040js figures)."""
        self._n = 0
        frun = self._frun
        if frun is not None and (tx_last_bits == 0 or tx_last_bits == 7):
            irq = self._compiled_exchange(frun, fifo_write, tx_last_bits)
            return self._outcome(irq, False)  # run() has read the answer
        self._start(fifo_write, ComIrqReg, 0x7F)  # clear all IRQ bits (Set1 = 0)
        self.write_reg(CommandReg, CMD_TRANSCEIVE)
        # StartSend, with the number of bits of the last byte (7 for REQA/WUPA)
        self.write_reg(BitFramingReg, 0x80 | (tx_last_bits & 0x07))
        # Each poll reads ErrorReg and FIFOLevelReg too, after ComIrqReg in
        # the same transaction (datasheet 8.1.2.1): when that ComIrqReg says
        # the exchange ended, the two bytes read after it are its final
        # status, and the separate status read (one transaction, ~0.1 ms on
        # rp2040js, 7 % of an empty cell) is saved. Reading them has no side
        # effect; a poll that is not the last just ignores them.
        # The deadline: the frame's airtime, then the timer, then the longest
        # answer begun just before the timer would have fired, and a margin.
        limit = airtime_us(len(fifo_write) - 1, tx_last_bits) + self.timeout_us + _LONGEST_ANSWER_US + _MARGIN_US
        irq = self._poll_into(self._ws, self._rs, IRQ_RX | IRQ_IDLE | IRQ_TIMER, limit)
        return self._outcome(irq, True)

    def _compiled_exchange(self, frun, fifo_write, tx_last_bits):
        """_exchange()'s transactions, the same bytes in the same order, as
        one script for the compiled run() -> the last ComIrqReg polled."""
        sc = _SCRIPTS[(0 if self._idle else 2) + (1 if tx_last_bits else 0)]
        self._idle = False
        sh = self._shared
        if sh is not None:
            if self._routed:
                sh[0] = self._index  # run() routes the address, then drives the enable
            elif sh[0] != self._index:
                self.cs.value(0)  # the decoder's address first; run() drives the enable
        p = self._fparams
        p[2] = IRQ_RX | IRQ_IDLE | IRQ_TIMER
        air = _AIR_SHORT if tx_last_bits else _AIR[len(fifo_write) - 1]
        p[3] = air + self.timeout_us + _LONGEST_ANSWER_US + _MARGIN_US
        self.polls = frun(p, sc, fifo_write, self._rsf)
        return self._rsf[1]

    def _outcome(self, irq, read):
        """The exchange's status from its last poll (irq: ComIrqReg; the
        ErrorReg and FIFOLevelReg read with it in self._rs). read: read the
        answer from the FIFO (False: the compiled run() has, by these same
        rules, into self._rf)."""
        r = self._rs
        # (Transceive keeps running: the next exchange starts with Idle)
        if not irq & (IRQ_RX | IRQ_IDLE | IRQ_TIMER):
            self._stop()
            return ERR_TIMEOUT  # the chip never finished: missing or dead
        err = r[2]
        if err == 0xFF:
            return ERR_TIMEOUT  # MISO floating high: no chip there
        if not irq & (IRQ_RX | IRQ_IDLE):
            return _NO_ANSWER
        if err & ERRREG_COLL:
            return ERR_COLLISION
        if err & (ERRREG_CRC | ERRREG_PARITY):
            return ERR_CRC
        if err & (ERRREG_PROTOCOL | ERRREG_BUFFER_OVFL):
            return ERR_PROTOCOL
        n = r[3] & 0x7F
        if n == 0 and irq & IRQ_TIMER:
            return _NO_ANSWER
        if n:
            if read:
                self._n = self._fifo_into(n)
            else:
                self._n = n if n <= _FIFO_SIZE else _FIFO_SIZE
        return _OK

    # --- ISO 14443-3 -----------------------------------------------------------

    def wake(self):
        """WUPA (wakes idle and halted tags) -> (status, ATQA)."""
        return self.transceive(bytes((PICC_WUPA,)), 7)

    def request(self):
        """REQA (idle tags only) -> (status, ATQA)."""
        return self.transceive(bytes((PICC_REQA,)), 7)

    @staticmethod
    def _with_crc(frame):
        # CRC_A in software: for these 2..7 byte frames it costs less than
        # the ~10 SPI transactions of the chip's CalcCRC (which self_test uses)
        c = crc_a(frame)
        return bytes(frame) + bytes((c & 0xFF, c >> 8))

    def transmit(self, data):
        """Send a frame that gets no answer (Transmit command): waits only for
        the end of transmission (TxIRq), not for the timer. -> True when sent."""
        return self._transmit(_fifo_write(data))

    def _transmit(self, fifo_write):
        frun = self._frun
        if frun is not None:
            sc = _TX_SCRIPTS[0 if self._idle else 1]
            self._idle = False
            sh = self._shared
            if sh is not None:
                if self._routed:
                    sh[0] = self._index
                elif sh[0] != self._index:
                    self.cs.value(0)
            p = self._fparams
            p[2] = IRQ_TX
            p[3] = _AIR[len(fifo_write) - 1] + _MARGIN_US
            self.polls = frun(p, sc, fifo_write, self._rs)
            sent = self._rs[1] & IRQ_TX
        else:
            self._start(fifo_write, ComIrqReg, 0x7F)
            self.write_reg(BitFramingReg, 0)
            self.write_reg(CommandReg, CMD_TRANSMIT)
            sent = self._poll(ComIrqReg, IRQ_TX, _AIR[len(fifo_write) - 1] + _MARGIN_US) & IRQ_TX
        if sent:
            # Transmit ends by itself once the FIFO is sent (datasheet
            # 10.3.1.5): the chip is idle, no Idle write needed (one SPI
            # call of every tag read, ~80 us on rp2040js)
            self._idle = True
        else:
            self._stop()
        return bool(sent)

    def halt(self):
        """HLTA: the tag goes to HALT and by the standard never answers, so
        it is sent with Transmit instead of waiting a timeout for nothing."""
        self._transmit(_HLTA_WRITE)

    def _answer_is(self, known):
        """The last answer (self._rf) starts with the bytes of known (the
        caller has checked its length)."""
        rf = self._rf
        for i in range(len(known)):  # noqa: SIM110 - all(<generator>) would allocate
            if rf[i + 1] != known[i]:
                return False
        return True

    def select(self):
        """Anticollision and select through the cascade levels of the one tag
        that answered WUPA -> UID bytes or an ERR_* int.

        The select frame (with its software CRC_A, ~0.15 ms for 7 bytes on
        rp2040js) and the SAK's CRC check depend only on the anticollision
        and SAK bytes, which a tag lying on the cell repeats read after read:
        each level remembers its last ones (self._memo), and when every level
        of a read repeats them the UID is the last one built (self._uid):
        reading a tag that stays put allocates nothing. Any other byte is
        checked as the first time."""
        rf = self._rf
        memos = self._memo
        same = self._uid is not None
        for level in range(3):
            st = self._exchange(_ANTICOLL_WRITE[level], 0)
            if st == _NO_ANSWER:
                return ERR_PROTOCOL  # the tag answered WUPA, then went away
            if st != _OK:
                return st
            if self._n != 5:
                return ERR_PROTOCOL
            if rf[1] ^ rf[2] ^ rf[3] ^ rf[4] != rf[5]:
                return ERR_CRC  # BCC mismatch
            memo = memos[level]
            if memo is None or not self._answer_is(memo[0]):
                # new bytes: its SAK is unknown (None), which the check
                # below then treats as new too
                ans = bytes(self._mrf[1:6])
                memo = (ans, _fifo_write(self._with_crc(bytes((_SEL[level], 0x70)) + ans)), None)
                memos[level] = memo
            st = self._exchange(memo[1], 0)
            if st == _NO_ANSWER:
                return ERR_PROTOCOL
            if st != _OK:
                return st
            if self._n != 3:
                return ERR_PROTOCOL
            if memo[2] is None or not self._answer_is(memo[2]):
                same = False
                self._uid = None
                c = crc_a(self._mrf[1:2])
                if rf[2] != c & 0xFF or rf[3] != c >> 8:
                    return ERR_CRC
                memos[level] = (memo[0], memo[1], bytes(self._mrf[1:4]))
            if rf[1] & SAK_CASCADE:
                if memo[0][0] != CASCADE_TAG:
                    return ERR_PROTOCOL
                continue
            self._levels = level + 1
            if same:
                return self._uid
            uid = bytearray()
            for k in range(level):
                done = memos[k]
                if done is not None:  # (always: every level before this one answered)
                    uid.extend(done[0][1:4])
            uid.extend(memo[0][0:4])
            self._uid = bytes(uid)
            return self._uid
        return ERR_PROTOCOL  # more than three cascade levels

    def _select_known(self):
        """After a WUPA whose ATQA is the known tag's: SELECT each cascade
        level with the remembered anticollision bytes (no anticollision)
        -> True when every level's SAK is the remembered one, byte for byte
        (its CRC was checked when it was first seen).

        Why no change can hide behind it: a tag answers a SELECT only when
        the frame carries its own UID bytes and BCC under a valid CRC
        (ISO 14443-3), so any other tag, alone on the cell, stays silent,
        however alike (the same ATQA, even the same first cascade level). A
        second tag added on top of the known one does stay silent and is
        found by the full anticollision every full_read_every-th read."""
        memos = self._memo
        rf = self._rf
        for level in range(self._levels):
            memo = memos[level]
            if memo is None or memo[2] is None:
                return False
            if self._exchange(memo[1], 0) != _OK or self._n != 3:
                return False
            sak = memo[2]
            if rf[1] != sak[0] or rf[2] != sak[1] or rf[3] != sak[2]:
                return False
        return True

    def probe(self, off, on):
        """A read's first exchange (WUPA), for a cell that read empty last
        time -> None when nobody answered, or the WUPA's status for finish(),
        which goes on with the read as read_uid() would (no field switched).
        When nobody answered, this reader's field is switched off (off) and
        the field of on (another MFRC522 of the same bus, or None) on: the
        board's time-shared fields (board.py) after an empty cell.

        Why: on a table at rest almost every read is this one exchange. On
        the rp2 port it is one compiled call -- the exchange, the decision
        "empty" by _outcome()'s rules and both field writes -- instead of the
        Python chain read_uid, _exchange, _outcome and two field() calls
        (~0.4 ms a cell on rp2040js). The same transactions in the same
        order as the plain path, which CPython and the wasm port run."""
        frun = self._frun
        if frun is not None and (on is None or (on._frun is not None and on._spi_base == self._spi_base)):
            self._n = 0
            sc = _SCRIPTS[1 if self._idle else 3]
            self._idle = False
            sh = self._shared
            if sh is not None:
                if self._routed:
                    sh[0] = self._index
                elif sh[0] != self._index:
                    self.cs.value(0)
            p = self._fparams
            p[2] = IRQ_RX | IRQ_IDLE | IRQ_TIMER
            p[3] = _AIR_SHORT + self.timeout_us + _LONGEST_ANSWER_US + _MARGIN_US
            if on is None:
                e = 1 if off else 0
            else:
                q = on._fparams
                e = 3 if off else 2
                p[7] = q[1]
                p[8] = q[4]
                p[9] = q[5]
                if not on._routed and on._shared is not None:
                    e = 1 if off else 0  # (a decoder routed by Python: on.field() below)
            p[6] = e
            self.polls = frun(p, sc, _WUPA_WRITE, self._rsf)
            p[6] = 0
            if e and p[10]:
                if on is not None:
                    if e & 2:
                        sh = on._shared
                        if sh is not None:
                            sh[0] = on._index  # run() left on's address on the decoder
                    else:
                        on.field(True)
                return None
            st = self._outcome(self._rsf[1], False)
            if st != _NO_ANSWER:
                return st
        else:
            try:
                st = self._exchange(_WUPA_WRITE, 7)
            except OSError:
                return ERR_TIMEOUT
            if st != _NO_ANSWER:
                return st
        try:
            if off:
                self.field(False)
            if on is not None:
                on.field(True)
        except OSError:
            return ERR_TIMEOUT
        return None

    def quiet_route(self):
        """What the board's compiled quiet run (compiled_quiet(), board.py
        _scan_quiet) needs to read this reader -> (quiet(), SPI base,
        chip-select mask, address pins to set, to clear, the WUPA's wait
        limit in us, the transfer buffer its answer lands in, the WUPA's
        script), or None when
        it cannot (not compiled, or a decoder Python routes)."""
        if self._frun is None or (not self._routed and self._shared is not None):
            return None
        fn = compiled_quiet()
        if fn is None:
            return None
        p = self._fparams
        limit = _AIR_SHORT + self.timeout_us + _LONGEST_ANSWER_US + _MARGIN_US
        return (fn, self._spi_base, self._cs_mask, p[4], p[5], limit, self._rsf, _QUIET_SCRIPT)

    def quiet_answered(self):
        """The board's quiet run stopped at this reader's cell: its WUPA was
        answered (or failed), its last poll and answer in the transfer
        buffer, as probe() leaves them -> the status for finish()."""
        self._idle = False
        self._n = 0
        sh = self._shared
        if sh is not None:
            sh[0] = self._index
        return self._outcome(self._rsf[1], False)

    def read_uid(self):
        """One read of the cell -> None (no tag), UID bytes, or ERR_* int.
        The tag is halted afterwards; the next WUPA wakes it again.

        The known-tag path: when the ATQA is the one of the tag read last
        time, the tag is selected by its remembered UID (_select_known),
        which saves the anticollision exchanges (two for an NTAG: 1.3 ms of
        airtime and SPI). Anything different -- another ATQA, a collision,
        a CRC or protocol error, a select nobody answers -- and every
        full_read_every-th read take the full anticollision."""
        try:
            st = self._exchange(_WUPA_WRITE, 7)
        except OSError:
            self._known_left = 0
            return ERR_TIMEOUT
        if st == _NO_ANSWER:
            return None
        return self.finish(st)

    def finish(self, st):
        """The rest of read_uid() after its WUPA, whose status is st (from
        probe(), or read_uid() itself) -> what read_uid() returns."""
        try:
            if st == _NO_ANSWER:
                return None
            rf = self._rf
            if st == ERR_TIMEOUT:
                self._known_left = 0
                return st  # the chip never finished: nothing to halt
            if st != _OK or self._n != 2:
                self._known_left = 0
                self.halt()  # a garbled ATQA still left a tag in READY
                return st if st != _OK else ERR_PROTOCOL
            atqa = rf[1] | (rf[2] << 8)
            if self._known_left > 0 and self._uid is not None and atqa == self._atqa:
                self._known_left -= 1
                if self._select_known():
                    self.halt()
                    self.known_reads += 1
                    return self._uid
                return self._reread()
            return self._full(atqa)
        except OSError:
            self._known_left = 0
            return ERR_TIMEOUT

    def _reread(self):
        """The known tag did not answer its SELECT (another tag, or a
        garbled answer): park whatever answered, wake the cell again and
        read it in full -> what read_uid() returns."""
        self.halt()
        st = self._exchange(_WUPA_WRITE, 7)
        if st == _NO_ANSWER:
            return None
        if st != _OK or self._n != 2:
            self._known_left = 0
            self.halt()
            return st if st != _OK else ERR_PROTOCOL
        rf = self._rf
        return self._full(rf[1] | (rf[2] << 8))

    def _full(self, atqa):
        """A full read after a WUPA answered with atqa: anticollision and
        select, then HLTA -> what read_uid() returns."""
        uid = self.select()
        # HLTA in every case: after a good select it parks the tag in
        # HALT (WUPA wakes it next time); after a failed one it sends a
        # tag stuck in READY/ACTIVE back to IDLE/HALT, so the next WUPA
        # is answered instead of silently resetting it (which would read
        # as an empty cell).
        self.halt()
        if isinstance(uid, int):
            self._known_left = 0
        else:
            self._atqa = atqa
            self._known_left = self.full_read_every - 1
        return uid

    # --- two readers on the air at once (read_pair) ---------------------------

    def known(self):
        """Whether this reader's next read, if the ATQA repeats, is a
        known-tag read (select by the remembered UID)."""
        return self._known_left > 0 and self._uid is not None

    def tagged(self):
        """Whether this reader's last read found a tag: its next read is
        worth overlapping with another's (read_pair)."""
        return self._uid is not None

    def _begin(self, fifo_write, tx_last_bits, transmit):
        """The first half of an exchange: its set-up writes, the FIFO write
        and the start (Transceive and StartSend, or Transmit), the same
        transactions as _exchange() and _transmit() make before their wait,
        without the wait; _end() waits. tx_last_bits 0 or 7."""
        self._n = 0
        frun = self._frun
        if transmit:
            self._limit = _AIR[len(fifo_write) - 1] + _MARGIN_US
        elif tx_last_bits:
            self._limit = _AIR_SHORT + self.timeout_us + _LONGEST_ANSWER_US + _MARGIN_US
        else:
            self._limit = _AIR[len(fifo_write) - 1] + self.timeout_us + _LONGEST_ANSWER_US + _MARGIN_US
        if frun is not None:
            if transmit:
                sc = _TX_SCRIPTS[0 if self._idle else 1]
            else:
                sc = _SCRIPTS[(0 if self._idle else 2) + (1 if tx_last_bits else 0)]
            self._idle = False
            sh = self._shared
            if sh is not None:
                if self._routed:
                    sh[0] = self._index
                elif sh[0] != self._index:
                    self.cs.value(0)
            p = self._fparams
            p[2] = 0  # no poll: the script's writes end the call
            frun(p, sc, fifo_write, self._junk)
            return
        self._start(fifo_write, ComIrqReg, 0x7F)
        if transmit:
            self.write_reg(BitFramingReg, 0)
            self.write_reg(CommandReg, CMD_TRANSMIT)
        else:
            self.write_reg(CommandReg, CMD_TRANSCEIVE)
            self.write_reg(BitFramingReg, 0x80 | tx_last_bits)

    def _end(self):
        """The wait of an exchange _begin() started (a Transceive) -> its
        status, the answer in self._rf, as _exchange() returns them. The
        deadline counts from the first poll: a wait begun later than the
        exchange (the other reader's turn came first) only waits longer.
        After the compiled pair() stopped at this reader's answer, the wait
        is done and its poll and answer are in the transfer buffer."""
        if self._polled:
            self._polled = False
            return self._outcome(self._rsf[1], False)
        frun = self._frun
        if frun is not None:
            sh = self._shared
            if sh is not None:
                if self._routed:
                    sh[0] = self._index
                elif sh[0] != self._index:
                    self.cs.value(0)
            p = self._fparams
            p[2] = IRQ_RX | IRQ_IDLE | IRQ_TIMER
            p[3] = self._limit
            self.polls = frun(p, _POLL_SCRIPT, _NO_WRITE, self._rsf)
            return self._outcome(self._rsf[1], False)
        irq = self._poll_into(self._ws, self._rs, IRQ_RX | IRQ_IDLE | IRQ_TIMER, self._limit)
        return self._outcome(irq, True)

    def _end_transmit(self):
        """The wait of a Transmit _begin() started (HLTA): as _transmit()."""
        frun = self._frun
        if frun is not None:
            sh = self._shared
            if sh is not None:
                if self._routed:
                    sh[0] = self._index
                elif sh[0] != self._index:
                    self.cs.value(0)
            p = self._fparams
            p[2] = IRQ_TX
            p[3] = self._limit
            self.polls = frun(p, _POLL_SCRIPT, _NO_WRITE, self._rs)
            sent = self._rs[1] & IRQ_TX
        else:
            sent = self._poll(ComIrqReg, IRQ_TX, self._limit) & IRQ_TX
        if sent:
            self._idle = True
        else:
            self._stop()

    def _known_atqa(self, st):
        """After a WUPA whose status is st: whether its answer is the known
        tag's ATQA (the known-tag path goes on; finish()'s own test)."""
        if st != _OK or self._n != 2 or self._known_left <= 0 or self._uid is None:
            return False
        rf = self._rf
        return rf[1] | (rf[2] << 8) == self._atqa

    def _sak_is_known(self, st, level):
        """After a SELECT of the remembered level: the SAK repeats, byte
        for byte (_select_known()'s test)."""
        if st != _OK or self._n != 3:
            return False
        memo = self._memo[level]
        if memo is None or memo[2] is None:
            return False  # (never after known(): every level's SAK is kept)
        sak = memo[2]
        rf = self._rf
        return rf[1] == sak[0] and rf[2] == sak[1] and rf[3] == sak[2]

    def _level_write(self, level):
        """The remembered SELECT frame of a cascade level (known() holds
        every level's; without one the read is abandoned as an I/O fault)."""
        memo = self._memo[level]
        if memo is None:
            raise OSError(5)
        return memo[1]

    def read_pair(self, other):
        """read_uid() of this reader and of other (another reader of the
        bus whose field can reach none of this one's cells) with their
        airtime overlapped -> this reader's reading; other's is left in
        other.pair_reading. The frames each reader sends, and what each
        returns, are those of its own read_uid(). Each reader's exchanges
        (WUPA; the SELECT of each cascade level, or on a full read the
        anticollision and SELECT of each; HLTA) follow one another as in
        read_uid(), and the two readers take turns: a reader's answer is
        collected and checked and its next frame started, then the other's,
        so one reader's SPI work runs while the other's frame or its tag's
        answer is on the air. A known-tag read that fails (a SAK that
        differs, a garbled answer), an empty cell and an error finish
        right there, alone, as read_uid() would, while the other's answer
        waits in its FIFO. On the rp2 port the turns of two reads of the
        tags the readers know run as one compiled call (_pair_compiled),
        up to the first answer that is not the expected one."""
        a = self
        b = other
        ra = rb = None
        try:
            # the stage in flight: 0 WUPA, 1..levels the SELECTs, levels + 1
            # HLTA; -1 when the read is over
            stopped = a._pair_compiled(b)
            if stopped < 0:
                a._begin(_WUPA_WRITE, 7, False)
                b._begin(_WUPA_WRITE, 7, False)
                sa = sb = 0
            else:
                # (compiled: both reads, as far as pair() took them)
                sa = a._pair_left
                sb = b._pair_left
                if sa < 0:
                    ra = a.pair_reading
                if sb < 0:
                    rb = b.pair_reading
                if stopped == 2:
                    # B's answer stopped it: B's turn goes on, then A's
                    sb = b._pair_stage(sb)
                    if sb < 0:
                        rb = b.pair_reading
            while sa >= 0 or sb >= 0:
                if sa >= 0:
                    sa = a._pair_stage(sa)
                    if sa < 0:
                        ra = a.pair_reading
                if sb >= 0:
                    sb = b._pair_stage(sb)
                    if sb < 0:
                        rb = b.pair_reading
        except OSError:
            a._known_left = 0
            b._known_left = 0
            a._polled = b._polled = False  # (a wait pair() did is not the next read's)
            if ra is None:
                ra = ERR_TIMEOUT
            if rb is None:
                rb = ERR_TIMEOUT
        other.pair_reading = rb
        return ra

    def _pair_program(self, full):
        """This reader's read of the tag it knows as a program of the
        compiled pair() -> a bytearray, made again only when the remembered
        tag changed; None when a level's SAK is not known. full 0: the
        known-tag read (WUPA expecting the known ATQA, each level's
        remembered SELECT expecting its SAK, HLTA); 1: the full read
        (read_pair()'s _full_stage turns) of that same tag: WUPA, then per
        level the anticollision expecting the remembered answer and the
        SELECT expecting the SAK, then HLTA -- the periodic full read of a
        tag that stayed put, every full_read_every-th read."""
        memo = self._memo
        levels = self._levels
        kf = self._kfor[full]
        if (
            kf[0] is memo[0]
            and kf[1] is memo[1]
            and kf[2] is memo[2]
            and kf[3] == self._atqa
            and kf[4] == levels
        ):
            return self._kprog[full]
        for level in range(levels):
            m = memo[level]
            if m is None or m[2] is None:
                return None
        out = self._kprog[full]
        if out is None:
            out = bytearray(_PAIR_PROGRAM_SIZE)
            self._kprog[full] = out
        extra = self.timeout_us + _LONGEST_ANSWER_US + _MARGIN_US
        atqa = self._atqa
        answer = IRQ_RX | IRQ_IDLE | IRQ_TIMER
        k = _pair_exchange(
            out, 0, _SCRIPTS[3], _WUPA_WRITE, answer, _AIR_SHORT + extra, bytes((atqa & 0xFF, atqa >> 8))
        )
        for level in range(levels):
            m = memo[level]
            if m is None or m[2] is None:
                return None  # (never: checked above)
            if full:
                w = _ANTICOLL_WRITE[level]
                k = _pair_exchange(out, k, _SCRIPTS[2], w, answer, _AIR[len(w) - 1] + extra, m[0])
            k = _pair_exchange(out, k, _SCRIPTS[2], m[1], answer, _AIR[len(m[1]) - 1] + extra, m[2])
        _pair_exchange(
            out, k, _TX_SCRIPTS[1], _HLTA_WRITE, IRQ_TX, _AIR[len(_HLTA_WRITE) - 1] + _MARGIN_US, b""
        )
        kf[0] = memo[0]
        kf[1] = memo[1]
        kf[2] = memo[2]
        kf[3] = atqa
        kf[4] = levels
        return out

    def _pair_compiled(self, other):
        """read_pair()'s turns as one compiled pair() call, when both reads
        are known-tag reads of compiled readers of one bus and one transfer
        buffer -> -1 when it cannot (read_pair() takes the turns in
        Python), else 0 (both reads done), 1 or 2 (A's or B's answer was
        not the expected one: read_pair() goes on from each reader's
        _pair_left stage, that reader's wait already done)."""
        a = self
        b = other
        if a._uid is None or b._uid is None:
            return -1
        fn = compiled_pair()
        if fn is None:
            return -1
        q = a._kq
        if q is None or a._kq_with is not b:
            # what does not change between two reads of this pair (set up
            # once: a board pairs each reader with one other, every sweep)
            if (
                a._frun is None
                or b._frun is None
                or a._spi_base != b._spi_base
                or a._rsf is not b._rsf
            ):
                return -1
            if (not a._routed and a._shared is not None) or (not b._routed and b._shared is not None):
                return -1  # (a decoder routed by Python)
            if q is None:
                from array import array

                q = array("i", [0] * 24)
                a._kq = q
            q[0] = a._spi_base
            ka = a._fparams
            kb = b._fparams
            q[8] = ka[1]
            q[9] = ka[4]
            q[10] = ka[5]
            q[16] = kb[1]
            q[17] = kb[4]
            q[18] = kb[5]
            a._kq_with = b
        fa = 0 if a._known_left > 0 else 1  # (a known-tag read: known(), the UID is there)
        fb = 0 if b._known_left > 0 else 1
        pa = a._pair_program(fa)
        pb = b._pair_program(fb)
        if pa is None or pb is None:
            return -1
        q[11] = 1 if a._idle else 0
        q[19] = 1 if b._idle else 0
        a._idle = b._idle = False
        a._n = b._n = 0
        stopped = fn(q, pa, pb, a._rsf)
        last = b if q[2] else a
        sh = last._shared
        if sh is not None:
            sh[0] = last._index
        a._paired(q[12], q[13], stopped == 1, fa)
        b._paired(q[20], q[21], stopped == 2, fb)
        return stopped

    def _paired(self, exchange, polls, polled, full):
        """After the compiled pair(): this reader's state as read_pair()'s
        Python turns would have left it with the program's exchange in
        flight (-1: done), and the stage read_pair() goes on from."""
        self.polls = polls
        self._polled = polled
        if exchange < 0:
            self._idle = True
            self.pair_reading = self._uid
            if full:
                self._known_left = self.full_read_every - 1  # (_FULL_HALT; the ATQA is the same)
            else:
                self._known_left -= 1
                self.known_reads += 1
            self._pair_left = -1
            return
        extra = self.timeout_us + _LONGEST_ANSWER_US + _MARGIN_US
        levels = self._levels
        if exchange == 0:
            self._limit = _AIR_SHORT + extra
            self._pair_left = 0
            return
        if not full:
            # (its WUPA found the known ATQA)
            self._known_left -= 1
            self._pair_left = exchange
            if exchange <= levels:
                self._limit = _AIR[len(self._memo[exchange - 1][1]) - 1] + extra
            else:
                self._limit = _AIR[len(_HLTA_WRITE) - 1] + _MARGIN_US
            return
        # the full read's stages (_pair_stage(0) began them: the same ATQA,
        # every level the same so far)
        self._patqa = self._atqa
        self._same = True
        if exchange > 2 * levels:
            self._pair_left = _FULL_HALT
            self._limit = _AIR[len(_HLTA_WRITE) - 1] + _MARGIN_US
            return
        level = (exchange - 1) >> 1
        if exchange & 1:
            self._pair_left = _FULL + 2 * level
            self._limit = _AIR[len(_ANTICOLL_WRITE[level]) - 1] + extra
        else:
            self._pair_left = _FULL + 2 * level + 1
            self._limit = _AIR[len(self._memo[level][1]) - 1] + extra

    def _pair_stage(self, stage):
        """read_pair(): wait for this reader's exchange of the stage in
        flight, check it and start the next one -> the next stage, or -1
        with the reading in self.pair_reading."""
        if stage >= _FULL:
            return self._full_stage(stage)
        levels = self._levels
        if stage == 0:
            st = self._end()
            if not self._known_atqa(st):
                if st != _OK or self._n != 2:
                    self.pair_reading = self.finish(st)  # empty, or an error
                    return -1
                # a full read (another ATQA, or its periodic turn): select()
                # and _full() as stages
                rf = self._rf
                self._patqa = rf[1] | (rf[2] << 8)
                self._same = self._uid is not None
                self._begin(_ANTICOLL_WRITE[0], 0, False)
                return _FULL
            self._known_left -= 1
        elif stage <= levels:
            if not self._sak_is_known(self._end(), stage - 1):
                self.pair_reading = self._reread()
                return -1
        else:
            self._end_transmit()
            self.known_reads += 1
            self.pair_reading = self._uid
            return -1
        if stage < levels:
            self._begin(self._level_write(stage), 0, False)
        else:
            self._begin(_HLTA_WRITE, 0, True)
        return stage + 1

    def _pair_fail(self, err):
        """A full read in read_pair() failed: as select() failing in
        _full() (HLTA, no known tag) -> -1 with the error as the reading."""
        self.halt()
        self._known_left = 0
        self.pair_reading = err
        return -1

    def _full_stage(self, stage):
        """read_pair()'s full read, one exchange at a time: select()'s
        anticollision and select of each cascade level, then _full()'s HLTA,
        the same frames and the same checks (stage _FULL + 2 * level: the
        level's anticollision in flight, + 1 its select; _FULL_HALT: HLTA)."""
        if stage == _FULL_HALT:
            self._end_transmit()
            self._atqa = self._patqa
            self._known_left = self.full_read_every - 1
            self.pair_reading = self._uid
            return -1
        level = (stage - _FULL) >> 1
        rf = self._rf
        memos = self._memo
        st = self._end()
        if st == _NO_ANSWER:
            return self._pair_fail(ERR_PROTOCOL)  # the tag answered WUPA, then went away
        if st != _OK:
            return self._pair_fail(st)
        if not (stage - _FULL) & 1:
            # the anticollision's answer: 4 UID bytes and BCC
            if self._n != 5:
                return self._pair_fail(ERR_PROTOCOL)
            if rf[1] ^ rf[2] ^ rf[3] ^ rf[4] != rf[5]:
                return self._pair_fail(ERR_CRC)
            memo = memos[level]
            if memo is None or not self._answer_is(memo[0]):
                ans = bytes(self._mrf[1:6])
                memo = (ans, _fifo_write(self._with_crc(bytes((_SEL[level], 0x70)) + ans)), None)
                memos[level] = memo
            self._begin(memo[1], 0, False)
            return stage + 1
        # the select's answer: SAK and CRC_A
        memo = memos[level]
        if memo is None:
            return self._pair_fail(ERR_PROTOCOL)  # (never: its anticollision set it)
        if self._n != 3:
            return self._pair_fail(ERR_PROTOCOL)
        if memo[2] is None or not self._answer_is(memo[2]):
            self._same = False
            self._uid = None
            c = crc_a(self._mrf[1:2])
            if rf[2] != c & 0xFF or rf[3] != c >> 8:
                return self._pair_fail(ERR_CRC)
            memos[level] = (memo[0], memo[1], bytes(self._mrf[1:4]))
        if rf[1] & SAK_CASCADE:
            if memo[0][0] != CASCADE_TAG or level == 2:
                return self._pair_fail(ERR_PROTOCOL)
            self._begin(_ANTICOLL_WRITE[level + 1], 0, False)
            return stage + 1
        self._levels = level + 1
        if not self._same:
            uid = bytearray()
            for k in range(level):
                done = memos[k]
                if done is not None:
                    uid.extend(done[0][1:4])
            uid.extend(memo[0][0:4])
            self._uid = bytes(uid)
        self._begin(_HLTA_WRITE, 0, True)
        return _FULL_HALT
