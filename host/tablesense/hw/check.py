"""Cross-checks of the hardware pack: geometry, board configs, BOM, pin maps.

A table is built from several files written at different times by different
people; this is where they are held against each other, so a maker finds the
mismatch on the bench and not at the first game. Every check returns
:class:`Finding` objects with one plain sentence each; ``error`` findings make
``tablesense hw check`` exit non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tablesense.firmware import config as board_config_module
from tablesense.hw.pack import (
    PackError,
    bom_for,
    load_bom,
    power_budget,
    rule_quantities,
)
from tablesense.table.geometry import TableGeometry


@dataclass(frozen=True)
class Finding:
    level: Literal["error", "warning"]
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.where}: {self.message}"


def check_board_configs(geometry: TableGeometry) -> list[Finding]:
    """Every board's config (what ``tablesense flash`` writes) must pass the
    firmware's own parser, so a flashed board never refuses its config."""
    out: list[Finding] = []
    for board in geometry.boards:
        try:
            board_config_module.parse(geometry.board_config(board.id))
        except board_config_module.ConfigError as exc:
            out.append(Finding("error", f"{geometry.name} board {board.id}", f"firmware rejects its config: {exc}"))
    return out


def check_rp2040_pins(pinmap: dict[str, Any]) -> list[Finding]:
    """The pin map's RP2040 pins must be the firmware's defaults, or the
    wiring document describes a board the firmware does not drive."""
    rp = pinmap.get("rp2040", {})
    spi = board_config_module.DEFAULT_SPI
    cs = board_config_module.DEFAULT_CS
    expected = {
        "spi_id": spi["id"],
        "spi_sck": spi["sck"],
        "spi_mosi": spi["mosi"],
        "spi_miso": spi["miso"],
        "rfid_reset": board_config_module.DEFAULT_RFID["reset_pin"],
        "decoder_address": list(cs["address"]),
        "decoder_enables": list(cs["enables"]),
        "led_data": board_config_module.DEFAULT_LED_PIN,
    }
    out: list[Finding] = []
    for key, want in expected.items():
        have = rp.get(key)
        if have != want:
            out.append(Finding("error", f"pinmap.toml [rp2040] {key}", f"is {have!r}, the firmware uses {want!r}"))
    used: dict[int, str] = {}
    for key, value in rp.items():
        for pin in value if isinstance(value, list) else [value]:
            if isinstance(pin, int) and key != "spi_id":
                if pin in used:
                    out.append(Finding("error", "pinmap.toml [rp2040]", f"GP{pin} is both {used[pin]} and {key}"))
                used[pin] = key
    return out


def check_pi_pins(geometry: TableGeometry, pinmap: dict[str, Any]) -> list[Finding]:
    """Seat and referee pins on the Pi: no pin twice, none reserved, and a
    warning for pins that take over a bus (I2C, SPI, UART)."""
    pi = pinmap.get("pi", {})
    reserved = set(pi.get("reserved", []))
    shared = {int(k): v for k, v in pi.get("shared", {}).items()}
    uses: list[tuple[int, str]] = []
    for seat in geometry.seats:
        for label, pin in (
            ("turn LED", seat.turn_led_pin),
            ("seat button", seat.button_pin),
            ("call button", seat.call_button_pin),
        ):
            if pin is not None:
                uses.append((pin, f"seat {seat.index} ({seat.name}) {label}"))
    out: list[Finding] = []
    if geometry.referee_button_pin is not None:
        uses.append((geometry.referee_button_pin, "referee button"))
        if pi.get("referee_button") not in (None, geometry.referee_button_pin):
            out.append(
                Finding(
                    "error",
                    f"{geometry.name} referee_button_pin",
                    f"is GPIO{geometry.referee_button_pin}, pinmap.toml says GPIO{pi.get('referee_button')}",
                )
            )
    seen: dict[int, str] = {}
    for pin, what in uses:
        if pin in seen:
            out.append(Finding("error", geometry.name, f"GPIO{pin} is wired to both {seen[pin]} and {what}"))
        seen[pin] = what
        if pin in reserved:
            out.append(Finding("error", geometry.name, f"{what} uses GPIO{pin}, which is reserved (HAT ID EEPROM)"))
        elif pin in shared:
            out.append(Finding("warning", geometry.name, f"{what} uses GPIO{pin} ({shared[pin]}): that bus is then unavailable"))
    return out


def check_bom(geometry: TableGeometry, bom_path: Path) -> list[Finding]:
    """Every BOM quantity must follow from the layout by its rule."""
    where = bom_path.name
    try:
        lines = load_bom(bom_path)
    except (OSError, PackError) as exc:
        return [Finding("error", where, str(exc))]
    rules = rule_quantities(geometry)
    out: list[Finding] = []
    for line in lines:
        if line.qty_rule not in rules:
            out.append(Finding("error", f"{where} {line.part}", f"unknown quantity rule {line.qty_rule!r} (known: {', '.join(sorted(rules))})"))
            continue
        want = rules[line.qty_rule]
        if line.quantity != want:
            out.append(Finding("error", f"{where} {line.part}", f"quantity {line.quantity}, but {geometry.name} needs {want} ({line.qty_rule})"))
        if line.unit_cost_eur < 0:
            out.append(Finding("error", f"{where} {line.part}", "negative unit cost"))
    parts = {line.part for line in lines}
    for needed in ("pico", "mfrc522", "ws2812", "seat-button"):
        if needed not in parts:
            out.append(Finding("error", where, f"no {needed!r} line"))
    return out


def check_power(geometry: TableGeometry, pinmap: dict[str, Any]) -> list[Finding]:
    total, _rows = power_budget(geometry, pinmap)
    supply = int(pinmap.get("power", {}).get("supply_ma", 0))
    if total > supply:
        return [Finding("error", geometry.name, f"worst-case current {total} mA exceeds the {supply} mA supply")]
    if total > 0.8 * supply:
        return [Finding("warning", geometry.name, f"worst-case current {total} mA is over 80% of the {supply} mA supply")]
    return []


def check_table(geometry: TableGeometry, pinmap: dict[str, Any]) -> list[Finding]:
    """All checks of one table layout (its BOM only if it has one)."""
    findings = check_board_configs(geometry) + check_pi_pins(geometry, pinmap) + check_power(geometry, pinmap)
    bom = bom_for(geometry.name)
    if bom.exists():
        findings += check_bom(geometry, bom)
    return findings
