# pyright: reportMissingImports=false
# neopixel for the virtual MicroPython board (sim/mpboard.py): the emulated strip.
from machine import NeoPixel  # noqa: F401
