"""Small synthetic table layouts for tests and benchmarks.

The shipped layouts (hardware/tables/) have 24-70 cells on two to six
boards; tests of the link want something smaller (quick sweeps) and the
benchmark wants many boards. :func:`bench_geometry` builds a valid
:class:`TableGeometry` of ``boards`` boards with ``channels`` cells each: a
line of play on the first half of every board and one rack per board on
the rest.
"""

from __future__ import annotations

from typing import Any

from tablesense.table.geometry import TableGeometry


def bench_geometry(boards: int = 2, channels: int = 8, leds: bool = True) -> TableGeometry:
    """``boards`` boards of ``channels`` cells: cells ``b<board>-<channel>``."""
    if boards < 1 or channels < 4:
        raise ValueError("need at least one board of four channels")
    cells: dict[str, dict[str, Any]] = {}
    line: list[str] = []
    seats: list[dict[str, Any]] = []
    half = channels // 2
    for b in range(1, boards + 1):
        rack: list[str] = []
        for ch in range(channels):
            cid = f"b{b}-{ch}"
            zone = "line" if ch < half else "rack"
            # 50 mm apart, rows 100 mm apart: a physical spacing, so the
            # emulator's space (sim/space.py) hears no neighbour's tag
            cells[cid] = {"board": b, "channel": ch, "x": 50.0 * ch, "y": 100.0 * b, "zone": zone}
            if leds:
                cells[cid]["led"] = ch
            (line if zone == "line" else rack).append(cid)
        seats.append({"index": b - 1, "name": f"Seat {b}", "rack": rack})
    center, rest = line[0], line[1:]
    left, right = rest[: len(rest) // 2], rest[len(rest) // 2 :]
    return TableGeometry.from_dict(
        {
            "name": f"bench-{boards}x{channels}",
            "games": ["dominoes"],
            "boards": [
                {
                    "id": b,
                    "name": f"board-{b}",
                    "channels": channels,
                    "leds": channels if leds else 0,
                }
                for b in range(1, boards + 1)
            ],
            "seats": seats,
            "line": {
                "center": center,
                "left": left or [right[0]],
                "right": right if left else right[1:],
            },
            "cells": cells,
        },
        source=f"<bench {boards}x{channels}>",
    )
