"""What the board's MicroPython says about itself, measured on the board.

The protocol's IDENTITY names the firmware, not the runtime under it, so
:func:`query_runtime` takes the board's raw REPL for a moment (the firmware's
maintenance break, as a deploy does) and asks MicroPython directly:

- ``machine``: ``sys.implementation._machine`` ("Raspberry Pi Pico with RP2040")
- ``micropython``: the version ("1.27.0")
- ``mem_free_boot``: ``gc.mem_free()`` once the firmware's modules are loaded
- ``sweeps``: for the board's own config (and any extra cell counts asked
  for), the firmware's Board built on the real devices, stepped through full
  sweeps, timed with ``time.ticks_us`` by the board itself; with the free heap
  while it sweeps. The timed sweeps are steady ones: the warm-up lasts until
  every cell's reading is confirmed (the longest debounce, plus one sweep),
  so the one-off CELL events of the start (~0.5 ms each on rp2040js) are
  not counted in them.

Then it resets the board and waits until the firmware answers again, so the
board is left running. Every wait allows for an emulated board running slower
than real time.
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass, field

from tablesense.flash.client import BoardClient, BoardError
from tablesense.flash.repl import ReplError, ReplSession

# Runs on the board (MicroPython). CELLS is filled in; None = the board's config.
_CODE = r"""
import sys, gc, time
gc.collect()
_r = {"machine": sys.implementation._machine,
      "micropython": ".".join(str(v) for v in sys.implementation.version[:3])}
import config, main
gc.collect()
_r["mem_free_boot"] = gc.mem_free()
class _Null:
    def read(self):
        return b""
    def write(self, d):
        pass
_cfg0 = config.load()
_out = []
for _n in CELLS:
    if _n is None:
        _cfg = _cfg0
    else:
        _raw = {"board": _cfg0["board"], "cells": _n, "leds": _n}
        _cfg = config.parse(_raw)
    _b = main.build(_cfg, _Null())
    _b.start()
    _d = _cfg["debounce"]
    # whole sweeps, counted by the board (a step may read several cells;
    # a board without cells has no sweep: SWEEPS steps)
    _s = _b.sweeps + max(_d["tag"], _d["empty"], _d["error"]) + 1
    while _cfg["cells"] and _b.sweeps < _s:
        _b.step()
    # the board's own sweep_us of each timed sweep (a list made before the
    # clock starts: the loop allocates nothing)
    _own = [0] * SWEEPS
    gc.collect()
    _t = time.ticks_us()
    _s = _b.sweeps + SWEEPS
    _j = 0
    while _b.sweeps < _s if _cfg["cells"] else _j < SWEEPS:
        _k = _b.sweeps
        _b.step()
        if _b.sweeps != _k:
            _own[SWEEPS - (_s - _b.sweeps) - 1] = _b.sweep_us
        _j += 1
    _dt = time.ticks_diff(time.ticks_us(), _t)
    _during = gc.mem_free()
    gc.collect()
    _own.sort()
    _out.append((_cfg["cells"], _dt // SWEEPS, (_own[(SWEEPS - 1) // 2] + _own[SWEEPS // 2]) // 2,
                 _during, gc.mem_free()))
    _b = None
    gc.collect()
_r["sweeps"] = _out
print(repr(_r))
"""


@dataclass
class Runtime:
    """The board's MicroPython and its own measurements (times in microseconds)."""

    machine: str | None = None
    micropython: str | None = None
    mem_free_boot: int | None = None
    sweeps: list[dict] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict:
        return {"machine": self.machine, "micropython": self.micropython, "mem_free_boot": self.mem_free_boot,
                "sweeps": self.sweeps, "error": self.error}


def code(cells: list[int | None], sweeps: int = 3) -> str:
    """The program :func:`query_runtime` runs on the board."""
    return _CODE.replace("CELLS", repr(list(cells))).replace("SWEEPS", str(int(sweeps)))


def parse(out: bytes) -> Runtime:
    """The board's answer -> Runtime (ReplError when it is not one)."""
    try:
        d = ast.literal_eval(out.decode(errors="replace").strip().splitlines()[-1])
    except (ValueError, SyntaxError, IndexError) as exc:
        raise ReplError(f"unexpected answer {out[-80:]!r} ({exc})") from None
    rt = Runtime(d.get("machine"), d.get("micropython"), d.get("mem_free_boot"))
    for cells, step_us, sweep_us, during, after in d.get("sweeps", []):
        rt.sweeps.append({"cells": cells, "sweep_ms": round(step_us / 1000.0, 2),
                          "board_sweep_ms": round(sweep_us / 1000.0, 2),
                          "mem_free_sweeping": during, "mem_free_live": after})
    return rt


def query_runtime(port: str, cells: list[int | None] | None = None, *, sweeps: int = 3,
                  repl_timeout: float = 8.0, run_timeout: float = 180.0, back_timeout: float = 30.0) -> Runtime:
    """Ask the board's MicroPython (see the module docstring); never raises:
    a board without a REPL (a virtual CPython board) gives ``error``."""
    rt = Runtime()
    try:
        session = ReplSession(port, timeout=repl_timeout)
        session.open()
    except ReplError as exc:
        rt.error = str(exc)
        return rt
    try:
        rt = parse(session.exec(code(cells or [None], sweeps), timeout=run_timeout))
    except ReplError as exc:
        rt.error = str(exc)
    finally:
        session.hard_reset()
    wait_for_firmware(port, back_timeout)
    return rt


def wait_for_firmware(port: str, timeout: float) -> bool:
    """Handshake until the firmware answers again (True) or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with BoardClient(port, timeout=1.0) as c:
                c.hello(retries=0)
            return True
        except BoardError:
            time.sleep(0.3)
    return False
