"""The hardware build pack as data: bills of materials and the pin map.

``hardware/bom/<table>.csv`` lists every part of one table layout. Besides the
quantity, each row names the rule its quantity follows (``cells``, ``boards``,
``leds`` ...), so that :mod:`tablesense.hw.check` can recompute the quantity
from the table's geometry file and catch a BOM that drifted from the layout.
``hardware/pinmap.toml`` holds the RP2040 and Raspberry Pi pin assignments and
the power budget.
"""

from __future__ import annotations

import csv
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablesense.hw.cabling import group_of, route_mm
from tablesense.table.geometry import TABLES_DIR, TableGeometry

HARDWARE_DIR = TABLES_DIR.parent
BOM_DIR = HARDWARE_DIR / "bom"
PINMAP_PATH = HARDWARE_DIR / "pinmap.toml"

BOM_COLUMNS = (
    "part",
    "description",
    "qty_rule",
    "quantity",
    "example_part_number",
    "unit_cost_eur",
    "notes",
)


class PackError(ValueError):
    """A BOM or pin map file that cannot be read as the pack format says."""


@dataclass(frozen=True)
class BomLine:
    """One part of a bill of materials."""

    part: str
    description: str
    qty_rule: str
    quantity: int
    example_part_number: str
    unit_cost_eur: float
    notes: str

    @property
    def total_eur(self) -> float:
        return self.quantity * self.unit_cost_eur


def load_bom(path: Path) -> list[BomLine]:
    """Read a BOM CSV; raises :class:`PackError` naming the line at fault."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != BOM_COLUMNS:
            raise PackError(f"{path}: the columns must be {', '.join(BOM_COLUMNS)}")
        lines: list[BomLine] = []
        for n, row in enumerate(reader, start=2):
            try:
                lines.append(
                    BomLine(
                        part=row["part"],
                        description=row["description"],
                        qty_rule=row["qty_rule"],
                        quantity=int(row["quantity"]),
                        example_part_number=row["example_part_number"],
                        unit_cost_eur=float(row["unit_cost_eur"]),
                        notes=row["notes"] or "",
                    )
                )
            except (TypeError, ValueError) as exc:
                raise PackError(f"{path}:{n}: {exc}") from None
    return lines


def bom_for(table: str) -> Path:
    """The BOM file of a table layout by name (``dominoes-4``)."""
    return BOM_DIR / f"{table}.csv"


def cells_per_board(geometry: TableGeometry) -> dict[int, int]:
    """How many cells each board serves."""
    counts = {b.id: 0 for b in geometry.boards}
    for cell in geometry.cells.values():
        counts[cell.board] = counts.get(cell.board, 0) + 1
    return counts


def rule_quantities(geometry: TableGeometry) -> dict[str, int]:
    """What each BOM quantity rule evaluates to for a table layout.

    ``groups`` counts the populated groups of the sensor boards (a
    74LVC138A decoder, a 74LVC125A buffer and a MISO pull-up for each 8
    reader channels in use; ``groups2`` two per group: the 33 ohm SCK and
    MOSI resistors, the two 100 nF); ``boards2`` and ``boards4`` two and four
    per board (the buck's output capacitors; the standoffs); ``seat_buttons`` two per seat (seat
    button and call button); ``cells2`` two per reader (the 1 x 8 housings
    at both ends of its cable); ``reader_pins`` the crimp contacts of the
    reader cables (8 at each end); ``ribbon_m`` the ribbon the cables need,
    in whole metres with 10 % for cutting (cable routes from hw/cabling.py;
    0.5 m a reader of a board without a position).
    """
    groups = len({(c.board, group_of(c.channel)) for c in geometry.cells.values()})
    ribbon_mm = 0.0
    for cell in geometry.cells.values():
        at = geometry.board(cell.board).position
        ribbon_mm += route_mm(at, (cell.x, cell.y)) if at is not None else 500.0
    return {
        "1": 1,
        "boards": len(geometry.boards),
        "cells": len(geometry.cells),
        "leds": sum(1 for c in geometry.cells.values() if c.led is not None),
        "seats": len(geometry.seats),
        "seat_buttons": sum(
            (s.button_pin is not None) + (s.call_button_pin is not None) for s in geometry.seats
        ),
        "groups": groups,
        "groups2": 2 * groups,
        "boards2": 2 * len(geometry.boards),
        "boards4": 4 * len(geometry.boards),
        "cells2": 2 * len(geometry.cells),
        "reader_pins": 16 * len(geometry.cells),
        "ribbon_m": math.ceil(1.1 * ribbon_mm / 1000),
        "tiles": 28,
        "cards32": 32,
        "cards52": 52,
    }


def load_pinmap(path: Path = PINMAP_PATH) -> dict[str, Any]:
    """Read ``hardware/pinmap.toml``."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PackError(f"{path}: {exc}") from None


@dataclass(frozen=True)
class BoardPower:
    """One board's worst case: its readers and logic on its 3.3 V regulator,
    what the board's 5 V input draws from the rail (that regulator, the Pico
    and the LED data buffer), and its LED strip at the LED cap (fed from the
    rail beside the board, not through it)."""

    board: int
    readers: int
    reader_ma: float
    rail_ma: float
    led_ma: float


def board_power(geometry: TableGeometry, pinmap: dict[str, Any]) -> list[BoardPower]:
    """Every board's worst case from ``pinmap.toml [power]`` (see wiring.md)."""
    power = pinmap.get("power", {})
    reader = power.get("reader", {})
    reg = power.get("regulator", {})
    led = power.get("led", {})
    logic = power.get("board", {})
    per_board = cells_per_board(geometry)
    leds_per_board = {b.id: 0 for b in geometry.boards}
    for cell in geometry.cells.values():
        if cell.led is not None:
            leds_per_board[cell.board] = leds_per_board.get(cell.board, 0) + 1
    led_ma = float(led.get("full_white_ma", 60)) * geometry.build.led_max_level / 255
    out: list[BoardPower] = []
    for b in geometry.boards:
        n = per_board.get(b.id, 0)
        fields = min(n, int(reader.get("fields_on", 1)))
        reader_ma = n * float(reader.get("idle_ma", 0)) + fields * float(reader.get("field_ma", 0))
        reader_ma += float(logic.get("logic_3v3_ma", 0))  # decoders, buffers, pull-ups on the same rail
        vin, vout = float(reg.get("vin", 5.0)), float(reg.get("vout", 3.3))
        if reg.get("kind", "buck") == "ldo":
            rail_ma = reader_ma  # an LDO passes its load current through
        else:
            rail_ma = reader_ma * vout / (vin * float(reg.get("efficiency", 0.85)))
        rail_ma += float(logic.get("pico_5v_ma", 0))  # the Pico's VSYS through D2, the LED buffer
        out.append(BoardPower(b.id, n, reader_ma, rail_ma, leds_per_board.get(b.id, 0) * led_ma))
    return out


def power_budget(geometry: TableGeometry, pinmap: dict[str, Any]) -> tuple[int, list[tuple[str, int, int]]]:
    """Worst-case current of the table's 5 V rail: (total mA, [(load, count, mA)])."""
    boards = board_power(geometry, pinmap)
    level = geometry.build.led_max_level
    rows = [
        ("sensor boards' 5 V inputs (buck for readers and logic, Pico)", len(boards), round(sum(b.rail_ma for b in boards))),
        (f"WS2812 LEDs at led_max_level {level}", rule_quantities(geometry)["leds"], round(sum(b.led_ma for b in boards))),
    ]
    return sum(r[2] for r in rows), rows


def pi_budget(geometry: TableGeometry, pinmap: dict[str, Any]) -> tuple[int, list[tuple[str, int, int]]]:
    """Worst-case current of the Pi's own supply: (total mA, [(load, count, mA)])."""
    counts = rule_quantities(geometry)
    per = {"table": 1, "board": counts["boards"], "seat": counts["seats"]}
    rows: list[tuple[str, int, int]] = []
    for load in pinmap.get("power", {}).get("pi", {}).get("loads", []):
        n = per.get(str(load.get("per")), 0)
        rows.append((str(load["name"]), n, int(load["ma"]) * n))
    return sum(r[2] for r in rows), rows
