"""`tablesense hw check` as an engineer's check: each physical rule refuses a
layout made here that breaks it, naming the cells or boards at fault, and
the command exits 1 (docs/build-guide.md, "Checking a layout")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.hw.cabling import reach_mm
from tablesense.hw.check import (
    check_cables,
    check_decoders,
    check_power,
    check_spacing,
    check_table,
)
from tablesense.hw.pack import load_pinmap
from tablesense.table.geometry import TableGeometry

runner = CliRunner()


@pytest.fixture(scope="module")
def pinmap() -> dict:
    return load_pinmap()


def layout(
    cells: dict[str, tuple[float, float]],
    board_at: tuple[float, float] | None = (100.0, 100.0),
    build: dict[str, Any] | None = None,
    channels: int | None = None,
) -> dict[str, Any]:
    """A one-board Kems layout: the first four cells are the slots, the rest
    seat 0's rack."""
    ids = list(cells)
    board: dict[str, Any] = {"id": 1, "name": "test", "channels": channels or len(ids), "leds": len(ids)}
    if board_at is not None:
        board["x"], board["y"] = board_at
    data: dict[str, Any] = {
        "name": "fixture",
        "games": ["kems"],
        "kems_slots": ids[:4],
        "boards": [board],
        "seats": [{"index": 0, "name": "South", "rack": ids[4:]}],
        "cells": {
            cid: {"board": 1, "channel": i, "led": i, "x": x, "y": y, "zone": "kems_slot" if i < 4 else "rack"}
            for i, (cid, (x, y)) in enumerate(cells.items())
        },
    }
    if build is not None:
        data["build"] = build
    return data


def row(n: int, pitch: float) -> dict[str, tuple[float, float]]:
    return {f"c{k}": (50.0 + k * pitch, 100.0) for k in range(n)}


def to_toml(data: dict[str, Any]) -> str:
    """Just enough TOML for these fixtures (JSON strings and numbers are TOML)."""
    def value(v: Any) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return json.dumps(v)

    lines = [f"{k} = {value(v)}" for k, v in data.items() if not isinstance(v, dict | list) or k in ("games", "kems_slots")]
    for key in ("boards", "seats"):
        for item in data[key]:
            lines += [f"[[{key}]]"] + [f"{k} = {value(v)}" for k, v in item.items()]
    for key in ("build", "cells"):
        if key in data:
            lines += [f"[{key}]"] + [f'"{k}" = {value(v)}' if key == "cells" else f"{k} = {value(v)}" for k, v in data[key].items()]
    return "\n".join(lines) + "\n"


def errors(findings: list) -> list:
    return [f for f in findings if f.level == "error"]


def test_a_fixture_at_the_reference_spacing_passes_every_check(pinmap: dict) -> None:
    g = TableGeometry.from_dict(layout(row(9, 50.0)))
    assert errors(check_table(g, pinmap)) == []


def test_antennas_closer_than_the_minimum_are_refused_naming_both_cells() -> None:
    g = TableGeometry.from_dict(layout(row(9, 50.0) | {"close": (75.0, 130.0)}))
    found = errors(check_spacing(g))
    assert found, "a cell 39 mm from two others must be refused"
    assert {f.where for f in found} == {"fixture cells c0 and close", "fixture cells c1 and close"}
    assert all("at least 45 mm needed" in f.message for f in found)


def test_the_minimum_spacing_grows_with_the_tag_and_its_read_range() -> None:
    """50 mm passes 10 mm stickers, not 25 mm tags that read 45 mm away."""
    loose = TableGeometry.from_dict(layout(row(9, 50.0), build={"tag_mm": 25.0, "read_range_mm": 45.0}))
    messages = [f.message for f in errors(check_spacing(loose))]
    assert len(messages) == 8 and "25 mm tags" in messages[0]


def test_a_reader_beyond_its_boards_cable_reach_is_refused(pinmap: dict) -> None:
    cells = row(9, 50.0) | {"far": (1900.0, 1900.0)}
    g = TableGeometry.from_dict(layout(cells, board_at=(100.0, 100.0)))
    found = errors(check_cables(g))
    assert [f.where for f in found] == ["fixture board 1 (test)"]
    assert "group 1 (channels 8-15" in found[0].message
    assert "far (3650 mm)" in found[0].message and "c8" not in found[0].message
    # the reach follows the clock: at 8 MHz a full group (c0-c7) gets 130 mm,
    # too little for the row's far end, while c8, alone behind its own
    # buffer, still fits
    fast = TableGeometry.from_dict(layout(row(9, 50.0), build={"spi_baudrate": 8_000_000}))
    assert round(reach_mm(8, 8_000_000)) == 130 and reach_mm(1, 8_000_000) == 1000
    [finding] = errors(check_cables(fast))
    assert "group 0 " in finding.message and "c7 (350 mm)" in finding.message
    assert "c0 (" not in finding.message and "c8 (" not in finding.message


def test_each_buffered_group_has_its_own_reach() -> None:
    """The board buffers each group of 8: 16 readers on 800 mm cables pass at
    2 MHz (two groups of 8, 490 pF each at 1 m), and fail at 4 MHz, where a
    full group gets 485 mm."""
    cells = {f"c{k}": (300.0 + 10 * k, 400.0) for k in range(16)}  # 750-900 mm of cable each
    slow = TableGeometry.from_dict(layout(cells, board_at=(0.0, 0.0)))
    assert errors(check_cables(slow)) == []
    fast = TableGeometry.from_dict(layout(cells, board_at=(0.0, 0.0), build={"spi_baudrate": 4_000_000}))
    assert [f.message.split(" (channels")[0] for f in errors(check_cables(fast))] == [
        "readers beyond the cable reach of 485 mm of group 0",
        "readers beyond the cable reach of 485 mm of group 1",
    ]


def test_a_board_without_a_position_is_a_warning_not_a_silent_pass() -> None:
    g = TableGeometry.from_dict(layout(row(9, 50.0), board_at=None))
    assert [f.level for f in check_cables(g)] == ["warning"]


def test_a_board_over_its_regulator_rating_is_refused(pinmap: dict) -> None:
    g = TableGeometry.from_dict(layout(row(9, 50.0)))
    power = pinmap["power"]
    weak = {**pinmap, "power": {**power, "regulator": {**power["regulator"], "rating_ma": 300}}}
    found = errors(check_power(g, weak))
    assert [f.where for f in found] == ["fixture board 1 (test)"]
    # 9 idle readers, two fields and the 10 mA of the board's decoders and buffers
    assert "3.3 V rail (9 readers) needs 300 mA" in found[0].message


def test_an_ldo_for_the_readers_is_refused_as_too_hot(pinmap: dict) -> None:
    g = TableGeometry.from_dict(layout(row(9, 50.0)))
    power = pinmap["power"]
    ldo = {"part": "AMS1117-3.3", "kind": "ldo", "rating_ma": 1000, "vin": 5.0, "vout": 3.3, "theta_ja_c_per_w": 90.0}
    found = errors(check_power(g, {**pinmap, "power": {**power, "regulator": ldo}}))
    assert len(found) == 1 and "use a buck regulator" in found[0].message
    assert "0.51 W" in found[0].message  # 1.7 V x 300 mA (readers and the board's logic)


def test_a_psu_below_the_budget_is_refused(pinmap: dict) -> None:
    g = TableGeometry.load("dominoes-4")
    power = pinmap["power"]
    small = {**pinmap, "power": {**power, "rail": {"part": "5 V 2 A wall plug", "supply_ma": 2000}}}
    found = errors(check_power(g, small))
    assert found and "5 V 2 A wall plug" in found[0].message


def test_a_strip_at_full_white_over_its_fuse_is_refused(pinmap: dict) -> None:
    cells = {f"a{k}": (50.0 + 50 * k, 100.0) for k in range(7)} | {f"b{k}": (50.0 + 50 * k, 200.0) for k in range(7)}
    g = TableGeometry.from_dict(layout(cells, build={"led_max_level": 255}))
    assert errors(check_power(TableGeometry.from_dict(layout(cells)), pinmap)) == []
    found = [f for f in errors(check_power(g, pinmap)) if "LED strip" in f.message]
    assert len(found) == 1 and "LED strip at led_max_level 255 needs 840 mA" in found[0].message


def test_more_readers_than_the_decoders_address_is_refused(pinmap: dict) -> None:
    g = TableGeometry.from_dict(layout(row(9, 50.0), channels=40))
    found = errors(check_decoders(g, pinmap))
    assert [f.where for f in found] == ["fixture board 1 (test)"]
    assert "40 reader channels; its 4 decoders address 32" in found[0].message


def test_the_cli_exits_1_and_names_the_cells(tmp_path: Path) -> None:
    ok = tmp_path / "ok.toml"
    ok.write_text(to_toml(layout(row(9, 50.0))), encoding="utf-8")
    result = runner.invoke(app, ["hw", "check", "--table", str(ok)])
    assert result.exit_code == 0, result.output
    tight = tmp_path / "tight.toml"
    tight.write_text(to_toml(layout(row(9, 30.0))), encoding="utf-8")
    result = runner.invoke(app, ["hw", "check", "--table", str(tight)])
    assert result.exit_code == 1
    assert "FAIL  fixture" in result.output and "cells c0 and c1" in result.output.replace("\n", " ")


def test_more_boards_than_usb_ports_is_refused(pinmap: dict) -> None:
    g = TableGeometry.load("dominoes-4")  # six boards: more than the Pi's 3 free ports
    power = pinmap["power"]
    small_hub = {**pinmap, "power": {**power, "usb": {**power["usb"], "hub_ports": 4}}}
    found = errors(check_power(g, small_hub))
    assert [f.message for f in found] == ["6 boards need more USB ports than the Pi's and the hub's 4"]
    assert errors(check_power(TableGeometry.load("kems-4"), small_hub)) == []  # 2 boards: no hub needed


def test_a_board_over_its_input_fuse_is_refused(pinmap: dict) -> None:
    """The board's own polyfuse F1 (1.1 A hold) carries its buck and Pico."""
    g = TableGeometry.from_dict(layout(row(9, 50.0)))
    power = pinmap["power"]
    small = {**pinmap, "power": {**power, "board": {**power["board"], "input_fuse_hold_ma": 300}}}
    found = errors(check_power(g, small))
    assert [f.where for f in found] == ["fixture board 1 (test)"]
    assert "its 5 V input (buck, Pico, LED data buffer) needs 283 mA" in found[0].message


def test_the_cable_figures_the_docs_quote() -> None:
    """docs/kicad.md, docs/build-guide.md and hardware/wiring.md quote the
    buffered board's reach from hw/cabling.py."""
    from tablesense.hw.cabling import bus_budget_pf, clock_edge_ns, edge_ns, segment_pf

    assert round(bus_budget_pf(2_000_000)) == 568 and round(bus_budget_pf(4_000_000)) == 284
    assert [round(reach_mm(n, 2_000_000)) for n in (1, 4, 8)] == [1000, 1000, 1000]
    assert [round(reach_mm(n, 4_000_000)) for n in (4, 6, 8)] == [1000, 714, 485]
    full = segment_pf([1000.0] * 8)
    assert (round(full), round(edge_ns(full)), round(clock_edge_ns(full))) == (490, 108, 63)
    root = Path(__file__).resolve().parents[2]
    wiring = (root / "hardware" / "wiring.md").read_text(encoding="utf-8")
    assert "| **2 MHz** | **568 pF** | **1000** | **1000** | **1000** | **490 pF, 108 ns** |" in wiring
    for doc in ("docs/kicad.md", "docs/build-guide.md"):
        text = (root / doc).read_text(encoding="utf-8")
        assert "at most 1 m at 2 MHz" in text, doc
