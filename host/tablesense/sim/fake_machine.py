"""A fake MicroPython ``machine`` module (plus ``neopixel`` and ``micropython``)
for running the unchanged board firmware (firmware/main.py) on CPython, and,
written into its filesystem as ``machine.py``, on the MicroPython WebAssembly
port (which has no ``machine``).

Pins and buses are shared per id, the way the hardware is: ``Pin(17)`` twice
gives the same pin, ``SPI(0)`` the same :class:`EmulatedSPIBus`. A test wires
emulated chips to them before the firmware starts::

    fake_machine.reset_world()
    bus = fake_machine.SPI(0)
    chip = bus.attach(fake_machine.Pin(17), EmulatedMFRC522())

``install()`` puts the fakes into ``sys.modules`` (CPython) so that
``import machine, neopixel, micropython`` inside the firmware finds them.
This file is valid MicroPython as well (no ``__future__``, no dataclasses).
"""

# Absolute import, so the same line works on MicroPython, where the harness
# writes this file as /lib/machine.py next to a /lib/tablesense/sim/ package.
from tablesense.sim.mfrc522_emu import EmulatedI2C, EmulatedPin, EmulatedSPIBus

PWRON_RESET = 1
WDT_RESET = 3
SOFT_RESET = 5

_pins = {}
_spis = {}
_i2cs = {}
calls = []  # ("reset",), ("bootloader",), ("kbd_intr", n), ... in order
strips = []  # every NeoPixel created
state = {"reset_cause": PWRON_RESET, "unique_id": b"\xe6\x60\x58\x38\x83\x2a\x5c\x2b", "kbd_intr": 3}


def reset_world():
    """Forget every pin, bus, strip and recorded call (between tests)."""
    _pins.clear()
    _spis.clear()
    _i2cs.clear()
    del calls[:]
    del strips[:]
    state["reset_cause"] = PWRON_RESET
    state["kbd_intr"] = 3


class Pin(EmulatedPin):
    """machine.Pin: one shared object per pin id."""

    def __new__(cls, id=None, *args, **kwargs):
        p = _pins.get(id)
        if p is None:
            p = object.__new__(cls)
            EmulatedPin.__init__(p, id)
            _pins[id] = p
        return p

    def __init__(self, id=None, mode=-1, pull=-1, value=None, **kwargs):
        self.init(mode, pull, value)


class SPI(EmulatedSPIBus):
    """machine.SPI: one shared emulated bus per id."""

    MSB = 0
    LSB = 1

    def __new__(cls, id=0, *args, **kwargs):
        b = _spis.get(id)
        if b is None:
            b = object.__new__(cls)
            EmulatedSPIBus.__init__(b, id)
            _spis[id] = b
        return b

    def __init__(self, id=0, baudrate=None, miso=None, **kwargs):
        if baudrate:
            self.baudrate = baudrate
        if miso is not None:
            # an RP2040 pad resets with its pull-down on and machine.SPI
            # keeps the pin's pulls: MISO with nothing driving it reads
            # 0xFF only if the firmware pulled it up
            self.absent_miso = 0xFF if miso.pull == Pin.PULL_UP else 0x00


class I2C(EmulatedI2C):
    """machine.I2C: one shared emulated bus per id."""

    def __new__(cls, id=0, *args, **kwargs):
        b = _i2cs.get(id)
        if b is None:
            b = object.__new__(cls)
            EmulatedI2C.__init__(b)
            _i2cs[id] = b
        return b

    def __init__(self, id=0, *args, **kwargs):
        pass


class NeoPixel:
    """neopixel.NeoPixel: keeps the pixel buffer and every written frame."""

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = [(0, 0, 0)] * n
        self.written = []  # frames in the order write() sent them
        strips.append(self)

    def __len__(self):
        return self.n

    def __setitem__(self, i, color):
        self.buf[i] = tuple(color)

    def __getitem__(self, i):
        return self.buf[i]

    def fill(self, color):
        for i in range(self.n):
            self.buf[i] = tuple(color)

    def write(self):
        self.written.append(list(self.buf))


def unique_id():
    return state["unique_id"]


def reset_cause():
    return state["reset_cause"]


def reset():
    calls.append(("reset",))


def soft_reset():
    calls.append(("soft_reset",))


def bootloader(value=None):
    calls.append(("bootloader",))


def freq(hz=None):
    return 125000000


def idle():
    pass


def kbd_intr(chr):
    """micropython.kbd_intr: recorded, and remembered in state."""
    calls.append(("kbd_intr", chr))
    state["kbd_intr"] = chr


def const(expr):
    return expr


def install(modules=None):
    """CPython: register machine, neopixel and micropython fakes in
    sys.modules (or the dict given). Returns this module."""
    import sys
    import types

    this = sys.modules[__name__]
    if modules is None:
        modules = sys.modules
    np_mod = types.ModuleType("neopixel")
    np_mod.NeoPixel = NeoPixel  # type: ignore[attr-defined]
    mp_mod = types.ModuleType("micropython")
    mp_mod.kbd_intr = kbd_intr  # type: ignore[attr-defined]
    mp_mod.const = const  # type: ignore[attr-defined]
    modules["machine"] = this
    modules["neopixel"] = np_mod
    modules["micropython"] = mp_mod
    return this
