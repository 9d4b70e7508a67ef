# The sensor board's program (MicroPython on RP2040): build the real devices
# from /config.json, then `while board.step()`. Everything that decides
# anything lives in board.py, which the tests and the virtual table drive
# directly; this file only wires machine.SPI / machine.Pin / neopixel / USB CDC.
#
# USB CDC carries binary frames, and a 0x03 byte would raise KeyboardInterrupt,
# so the keyboard interrupt is disabled while framing (micropython.kbd_intr(-1))
# and restored when the loop ends. The loop ends on a maintenance break (the
# host sends 0x0D 0x03, as mpremote does, or 0x03 0x03, between frames): the
# program returns and the REPL owns the port, so mpremote can deploy files.
# A soft reset (Ctrl-D) or REBOOT starts framing again.

# Frames may arrive while the board boots and the modules below load (the
# host's HELLO retries after a reset; seen on the real rp2 port, where
# loading the .mpy files takes ~1 s on an emulated board). MicroPython runs
# main.py with Ctrl-C armed, so a 0x03 in them raised KeyboardInterrupt at
# the first import and left the board at the REPL, silent. So the very first
# statement turns Ctrl-C into data (the REPL re-arms it when main.py ends),
# and swallows an interrupt already pending from a 0x03 received earlier --
# as many as come before kbd_intr(-1) takes effect: a host whose HELLO
# retries and maintenance breaks arrive together (a deploy confirming on an
# emulated board) sent two, and the second one, raised inside the handler,
# left the board at the REPL.
# (the imports below come after this loop on purpose)
# ruff: noqa: E402
while True:
    try:
        import micropython

        if __name__ == "__main__":
            micropython.kbd_intr(-1)
        break
    except KeyboardInterrupt:
        pass  # again, until Ctrl-C is data

import sys  # after the Ctrl-C guard above, on purpose
import time

import machine

try:
    import select
except ImportError:  # pragma: no cover
    select = None

import board
import config
import leds
import mfrc522

FILES_DIR = "/"
READ_CHUNK = 64

# the time module is the clock on MicroPython; CPython (tests) has no ticks_*
clock = time if hasattr(time, "ticks_ms") else board.HostClock()


def sleep_ms(ms):
    if hasattr(time, "sleep_ms"):
        time.sleep_ms(ms)
    else:
        time.sleep(ms / 1000)


class UsbTransport:
    """Non-blocking byte transport over the USB CDC stdin/stdout.

    read() returns what is waiting (at most READ_CHUNK bytes) and stops right
    after a 0x03 byte, so that on a maintenance break the bytes that follow
    (mpremote's Ctrl-A) stay in the USB buffer for the REPL."""

    def __init__(self, stdin=None, stdout=None, poller=None):
        self.stdin = stdin if stdin is not None else sys.stdin.buffer
        self.stdout = stdout if stdout is not None else sys.stdout.buffer
        if poller is None and select is not None:
            try:
                poller = select.poll()
                poller.register(sys.stdin, select.POLLIN)
            except Exception:  # noqa: BLE001 - a port whose stdin cannot be polled
                poller = None  # then stdin.read(1) must be non-blocking itself
        self.poller = poller
        self._ipoll_of = None
        self._ipoll = None

    def _waiting(self, poller):
        """Whether stdin has something to read. MicroPython's ipoll() answers
        without allocating; poll() builds a list on every call. read() runs
        once per board step, mostly with nothing waiting: its ~70 bytes of
        garbage per step made the empty 16-cell sweep grow from 26 to 74 ms
        over 40 sweeps before a collection (rp2040js, docs/firmware.md)."""
        if self._ipoll_of is not poller:
            self._ipoll_of = poller
            self._ipoll = getattr(poller, "ipoll", None)
        ipoll = self._ipoll
        if ipoll is None:
            return bool(poller.poll(0))
        for _ in ipoll(0):
            return True
        return False

    def read(self):
        poller = self.poller
        if poller is not None and not self._waiting(poller):
            return b""  # the common case, without allocating
        out = bytearray()
        stdin = self.stdin
        while len(out) < READ_CHUNK:
            if poller is not None and out and not self._waiting(poller):
                break
            b = stdin.read(1)
            if not b:
                break
            out.extend(b)
            if b[0] == 3:
                break
        return bytes(out)

    def write(self, data):
        self.stdout.write(data)


def file_hashes(directory=FILES_DIR):
    """(name, sha256) of every program and config file on the board: what the
    flasher compares to decide what to upload."""
    import hashlib
    import os

    out = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return out
    for name in names:
        if not (name.endswith(".py") or name.endswith(".mpy") or name.endswith(".json")):
            continue
        h = hashlib.sha256()
        try:
            with open(directory.rstrip("/") + "/" + name, "rb") as f:
                while True:
                    chunk = f.read(512)
                    if not chunk:
                        break
                    h.update(chunk)
        except OSError:
            continue
        out.append((name, h.digest()))
    return out


def reset_cause():
    try:
        cause = machine.reset_cause()
    except Exception:  # noqa: BLE001
        return 3
    if cause == getattr(machine, "PWRON_RESET", -100):
        return 0
    if cause == getattr(machine, "WDT_RESET", -100):
        return 1
    if cause == getattr(machine, "SOFT_RESET", -100):
        return 2
    return 3


def select_gpios(cfg):
    """The GPIO each cell's transaction drives low (its own pin, or its
    decoder's enable) -> a list, or None for chip selects on an I2C expander
    (which the compiled transfer cannot drive)."""
    cs = cfg["cs"]
    if cs["kind"] == "gpio":
        return list(cs["pins"])
    if cs["kind"] == "decoder":
        per = 1 << len(cs["address"])
        return [cs["enables"][ch // per] for ch in range(cfg["cells"])]
    return None


def build(cfg, transport=None):
    """The real devices for this config -> a Board."""
    spi_cfg = cfg["spi"]
    Pin = machine.Pin
    spi = machine.SPI(
        spi_cfg["id"],
        baudrate=spi_cfg["baudrate"],
        polarity=0,
        phase=0,
        bits=8,
        firstbit=machine.SPI.MSB,
        sck=Pin(spi_cfg["sck"]),
        mosi=Pin(spi_cfg["mosi"]),
        # MISO pulled up: RP2040 pads reset with the pull-down on, so a reader
        # that is missing or unpowered would read 0x00, a byte a live chip
        # also sends; pulled up it reads 0xFF, which no register of ours
        # holds, and the driver gives up on it at once (docs/firmware.md).
        # machine.SPI only switches the pin's function, not its pulls.
        miso=Pin(spi_cfg["miso"], Pin.IN, Pin.PULL_UP),
    )
    rfid = cfg["rfid"]
    if rfid["reset_pin"] is not None:
        rst = Pin(rfid["reset_pin"], Pin.OUT, value=0)  # hard-reset every reader
        sleep_ms(2)
        rst.value(1)
        sleep_ms(50)  # oscillator start-up

    def out_pin(n):
        return Pin(n, Pin.OUT, value=1)

    def i2c_factory(bus_id, sda, scl, freq):
        return machine.I2C(bus_id, sda=Pin(sda), scl=Pin(scl), freq=freq)

    selects = config.make_selects(cfg, out_pin, i2c_factory)
    buffers = mfrc522.Buffers()  # one set for the bus: the readers take turns
    gpios = select_gpios(cfg)
    fast = mfrc522.compiled_transfer() if gpios is not None else None
    if fast is not None and rfid["overlap"]:
        # compiled now, before main() collects the heap, not at the first
        # pair in the middle of a sweep (its garbage would slow every call)
        mfrc522.compiled_pair()
    routes = config.select_routes(cfg)

    def compiled(ch):
        if fast is None or gpios is None:
            return None
        if routes is None:
            return (fast, spi_cfg["id"], gpios[ch])
        return (fast, spi_cfg["id"], gpios[ch], routes[ch][0], routes[ch][1])

    readers = [
        mfrc522.MFRC522(
            spi,
            selects[ch],
            timeout_us=rfid["timeout_us"],
            buffers=buffers,
            rx_gain_db=rfid["rx_gain_db"],
            full_read_every=rfid["full_read_every"],
            compiled=compiled(ch),
        )
        for ch in range(len(selects))
    ]
    strip = leds.make_strip(cfg["led_pin"], cfg["leds"], cfg["led_max_level"])
    return board.Board(
        cfg,
        readers,
        strip,
        transport if transport is not None else UsbTransport(),
        clock,
        machine.unique_id(),
        files=file_hashes,
        reboot=machine.reset,
        bootloader=machine.bootloader,
        reset_cause=reset_cause(),
    )


def settle_heap():
    """Collect the heap's garbage now. Why it matters for speed, not memory:
    MicroPython puts the frame of a call whose locals and stack need more
    than 11 words (most methods of board.py and mfrc522.py) on the heap,
    allocated at the call and freed at its return, and an allocation of
    more than one block searches from the lowest free block upwards, past
    every block of garbage made since the last collection. After boot ~100
    KiB of the heap is garbage from compiling and importing, and the steady
    loop allocates nothing that stays, so nothing ever collected it: the
    booted 16-cell board swept in 81-93 ms against 31 ms for the same Board
    stepped from the REPL after gc.collect() (rp2040js; a PC profile put ~60 %
    of the time in the allocator's search). gc.threshold() is no cure: it
    counts those frames too, and collected every ~150 calls."""
    try:
        import gc

        gc.collect()
    except Exception:  # noqa: BLE001 - a port without gc: nothing to settle
        pass


def main(config_path=config.CONFIG_PATH, transport=None, max_steps=None):
    """Run the board until a maintenance break (or max_steps, for tests).
    Returns the Board (None when the config is unusable: the message is
    printed as text and the REPL stays available to fix it)."""
    try:
        cfg = config.load(config_path)
    except config.ConfigError as exc:
        print("tablesense: %s" % exc)
        return None
    b = build(cfg, transport)
    settle_heap()
    micropython.kbd_intr(-1)  # 0x03 is data while we speak frames
    try:
        steps = 0
        traffic = 0
        while b.step():
            steps += 1
            if b.next_cell == 0:
                # A sweep ended: if frames went in or out since the last
                # collection (the only garbage a running board makes), collect
                # it before it slows every call (settle_heap).
                seen = b.frames_tx + b.decoder.frames
                if seen != traffic:
                    traffic = seen
                    settle_heap()
            if max_steps is not None and steps >= max_steps:
                break
    finally:
        micropython.kbd_intr(3)  # Ctrl-C works again at the REPL
    return b


if __name__ == "__main__":
    main()
