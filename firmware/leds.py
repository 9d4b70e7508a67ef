# Cell LEDs: one WS2812 strip driven through MicroPython's neopixel module.
# Runs on MicroPython and CPython (give it any object with the NeoPixel API:
# n, __setitem__, write()).
#
# The host always sends the whole strip (LEDS frame); a frame is checked
# completely before a single pixel changes, then written with one write(), so
# the strip never shows half of one frame and half of the next, and a bad frame
# leaves the previous one lit. The frames are idempotent: resending is safe.


class LedError(ValueError):
    """A LED frame the strip cannot show (too many pixels, bad colour)."""


class Strip:
    """A WS2812 strip of `count` pixels. `max_level` (0..255) caps every
    channel so a full-white frame stays inside the USB power budget."""

    has_leds = True

    def __init__(self, np, count=None, max_level=255):
        self.np = np
        self.count = count if count is not None else np.n
        self.max_level = max_level
        self.frames = 0
        self.frame = [(0, 0, 0)] * self.count

    def apply(self, colors):
        """Show a whole frame: a list of (r, g, b). Fewer colours than pixels
        turn the rest off; more raise LedError and change nothing."""
        n = len(colors)
        if n > self.count:
            raise LedError("frame of %d colours for a strip of %d" % (n, self.count))
        cap = self.max_level
        frame = []
        for c in colors:
            if len(c) != 3:
                raise LedError("a colour is (r, g, b), not %r" % (c,))
            r, g, b = c[0], c[1], c[2]
            if not (0 <= r <= 255 and 0 <= g <= 255 and 0 <= b <= 255):
                raise LedError("colour %r is outside 0..255" % (c,))
            if cap < 255:
                r = r * cap // 255
                g = g * cap // 255
                b = b * cap // 255
            frame.append((r, g, b))
        for _ in range(self.count - n):
            frame.append((0, 0, 0))
        np = self.np
        for i in range(self.count):
            np[i] = frame[i]
        np.write()
        self.frame = frame
        self.frames += 1

    def off(self):
        self.apply([])


class NoLeds:
    """The board has no strip: IDENTITY says so (no CAP_LEDS) and LEDS
    frames are refused with NAK unsupported instead of being half-obeyed."""

    has_leds = False
    count = 0
    frames = 0

    def apply(self, colors):
        raise LedError("this board has no LEDs")

    def off(self):
        pass


def make_strip(pin_number, count, max_level=255):
    """The real strip (imports machine and neopixel, so MicroPython only)."""
    if not count:
        return NoLeds()
    import machine
    import neopixel

    np = neopixel.NeoPixel(machine.Pin(pin_number, machine.Pin.OUT), count)
    strip = Strip(np, count, max_level)
    strip.off()
    return strip
