"""Cross-checks of the hardware pack: geometry, board configs, BOM, pin maps.

A table is built from several files written at different times by different
people; this is where they are held against each other, so a maker finds the
mismatch on the bench and not at the first game. Every check returns
:class:`Finding` objects with one plain sentence each; ``error`` findings make
``tablesense hw check`` exit non-zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tablesense.firmware import config as board_config_module
from tablesense.hw.cabling import (
    GROUP_SIZE,
    MAX_ROUTE_MM,
    clock_edge_ns,
    edge_ns,
    group_of,
    reach_mm,
    route_mm,
    segment_pf,
)
from tablesense.hw.pack import (
    PackError,
    board_power,
    bom_for,
    cells_per_board,
    load_bom,
    pi_budget,
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
    """Every supply, regulator, fuse and the USB hub against its rating with
    the pin map's margin: the 5 V rail's PSU, the Pi's supply, each board's
    3.3 V regulator (and an LDO's heat), each board's 5 V input fuse, each
    board's LED strip fuse, and the USB ports the boards need."""
    power = pinmap.get("power", {})
    margin = float(power.get("margin", 1.0))
    out: list[Finding] = []
    name = geometry.name

    def over(where: str, what: str, load: float, rating: float, part: str) -> None:
        if load > rating * margin:
            out.append(
                Finding(
                    "error",
                    where,
                    f"{what} needs {load:.0f} mA worst case, more than {margin:.0%} of the "
                    f"{rating:.0f} mA of its {part}",
                )
            )

    rail = power.get("rail", {})
    total, _rows = power_budget(geometry, pinmap)
    over(name, "the 5 V rail (sensor boards and LED strips)", total, float(rail.get("supply_ma", 0)), str(rail.get("part", "PSU")))
    pi = power.get("pi", {})
    pi_total, _pi_rows = pi_budget(geometry, pinmap)
    over(name, "the Pi's supply (Pi, display, seat lights)", pi_total, float(pi.get("supply_ma", 0)), str(pi.get("part", "PSU")))
    reg = power.get("regulator", {})
    led = power.get("led", {})
    sensor_board = power.get("board", {})
    for b in board_power(geometry, pinmap):
        where = f"{name} board {b.board} ({geometry.board(b.board).name})"
        over(where, f"its 3.3 V rail ({b.readers} readers)", b.reader_ma, float(reg.get("rating_ma", 0)), str(reg.get("part", "regulator")))
        if "input_fuse_hold_ma" in sensor_board:
            over(
                where,
                "its 5 V input (buck, Pico, LED data buffer)",
                b.rail_ma,
                float(sensor_board["input_fuse_hold_ma"]),
                str(sensor_board.get("input_fuse_part", "input fuse")),
            )
        if reg.get("kind") == "ldo":
            watts = (float(reg.get("vin", 5.0)) - float(reg.get("vout", 3.3))) * b.reader_ma / 1000
            rise = watts * float(reg.get("theta_ja_c_per_w", 90.0))
            if rise > float(power.get("max_rise_c", 30.0)):
                out.append(
                    Finding(
                        "error",
                        where,
                        f"its LDO burns {watts:.2f} W for {b.readers} readers, {rise:.0f} degC above the air "
                        f"(at most {float(power.get('max_rise_c', 30.0)):.0f}): use a buck regulator",
                    )
                )
        over(
            where,
            f"its LED strip at led_max_level {geometry.build.led_max_level}",
            b.led_ma,
            float(led.get("fuse_hold_ma", 0)),
            str(led.get("fuse_part", "fuse")),
        )
    usb = power.get("usb", {})
    boards = len(geometry.boards)
    if boards > int(usb.get("pi_free_ports", boards)):
        ports = int(usb.get("hub_ports", 0))
        if boards > ports:
            out.append(Finding("error", name, f"{boards} boards need more USB ports than the Pi's and the hub's {ports}"))
        over(name, f"the USB hub ({boards} boards)", boards * float(usb.get("board_ma", 0)), float(usb.get("hub_supply_ma", 0)), str(usb.get("hub_part", "hub")))
    if not out and total > 0.8 * float(rail.get("supply_ma", 0)):
        out.append(Finding("warning", name, f"the 5 V rail's worst case {total} mA is over 80% of its supply"))
    return out


def check_decoders(geometry: TableGeometry, pinmap: dict[str, Any]) -> list[Finding]:
    """A board carries at most the readers its chip-select decoders address
    (8 outputs per 74LVC138A, one decoder per enable pin of the pin map)."""
    rp = pinmap.get("rp2040", {})
    per_decoder = 1 << len(rp.get("decoder_address", [0, 0, 0]))
    addressable = per_decoder * len(rp.get("decoder_enables", []))
    out: list[Finding] = []
    for board_id, n in sorted(cells_per_board(geometry).items()):
        channels = max(n, geometry.board(board_id).channels)
        if channels > addressable:
            out.append(
                Finding(
                    "error",
                    f"{geometry.name} board {board_id} ({geometry.board(board_id).name})",
                    f"has {channels} reader channels; its {len(rp.get('decoder_enables', []))} decoders address {addressable}",
                )
            )
    return out


def check_cables(geometry: TableGeometry) -> list[Finding]:
    """Every reader within its group's cable reach at the layout's SPI clock
    (hw/cabling.py: each buffered group of 8 readers as a lumped RC, the
    reader's MISO pad the weakest driver)."""
    baud = geometry.build.spi_baudrate
    out: list[Finding] = []
    for board in geometry.boards:
        where = f"{geometry.name} board {board.id} ({board.name})"
        if board.position is None:
            out.append(Finding("warning", where, "has no position (x, y): its readers' cable lengths are unchecked"))
            continue
        groups: dict[int, list[tuple[float, str]]] = {}
        for c in geometry.cells_of_board(board.id):
            groups.setdefault(group_of(c.channel), []).append((route_mm(board.position, (c.x, c.y)), c.id))
        for group, readers in sorted(groups.items()):
            reach = reach_mm(len(readers), baud)
            far = sorted(((r, cid) for r, cid in readers if r > reach), reverse=True)
            if not far:
                continue
            pf = segment_pf([r for r, _ in readers])
            listed = ", ".join(f"{cid} ({r:.0f} mm)" for r, cid in far[:6])
            more = f" and {len(far) - 6} more" if len(far) > 6 else ""
            out.append(
                Finding(
                    "error",
                    where,
                    f"readers beyond the cable reach of {reach:.0f} mm of group {group} (channels "
                    f"{GROUP_SIZE * group}-{GROUP_SIZE * group + GROUP_SIZE - 1}: {len(readers)} readers at {baud / 1e6:g} MHz, at most "
                    f"{MAX_ROUTE_MM:.0f} mm; line {pf:.0f} pF, MISO edge {edge_ns(pf):.0f} ns, SCK edge "
                    f"{clock_edge_ns(pf):.0f} ns, quarter period {1e9 / (4 * baud):.0f} ns): {listed}{more}; "
                    "move the board, split it or lower build.spi_baudrate",
                )
            )
    return out


def check_spacing(geometry: TableGeometry) -> list[Finding]:
    """No two antennas closer than the antenna and tag sizes allow
    (table/antenna.py: the antennas keep their gap, and a tag pushed 5 mm
    off its cell towards a neighbour does not answer the neighbour, in any
    direction)."""
    model = geometry.build.field_model()
    minimum = model.min_pitch_mm()
    cells = sorted(geometry.cells.values(), key=lambda c: c.id)
    out: list[Finding] = []
    for i, a in enumerate(cells):
        for b in cells[i + 1 :]:
            distance = math.hypot(b.x - a.x, b.y - a.y)
            if distance < minimum - 1e-6:
                out.append(
                    Finding(
                        "error",
                        f"{geometry.name} cells {a.id} and {b.id}",
                        f"antennas {distance:.0f} mm apart, at least {minimum:.0f} mm needed: with "
                        f"{model.antenna_mm:g} mm antennas and {model.tag_mm:g} mm tags "
                        f"{model.tag_height_mm:g} mm above them a tag can answer the neighbour's reader",
                    )
                )
    return out


def check_table(geometry: TableGeometry, pinmap: dict[str, Any]) -> list[Finding]:
    """All checks of one table layout (its BOM only if it has one)."""
    findings = (
        check_board_configs(geometry)
        + check_pi_pins(geometry, pinmap)
        + check_power(geometry, pinmap)
        + check_decoders(geometry, pinmap)
        + check_cables(geometry)
        + check_spacing(geometry)
    )
    bom = bom_for(geometry.name)
    if bom.exists():
        findings += check_bom(geometry, bom)
    return findings
