"""The hardware pack: drawings are current, and the cross-checks catch drift."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.hw.check import (
    check_bom,
    check_pi_pins,
    check_power,
    check_rp2040_pins,
    check_table,
)
from tablesense.hw.draw import table_svg
from tablesense.hw.pack import BOM_DIR, HARDWARE_DIR, load_pinmap, power_budget, rule_quantities
from tablesense.table.geometry import TableGeometry, shipped_tables

runner = CliRunner()


@pytest.fixture(scope="module")
def pinmap() -> dict:
    return load_pinmap()


@pytest.mark.parametrize("path", shipped_tables(), ids=lambda p: p.stem)
def test_shipped_layouts_pass_every_check(path: Path, pinmap: dict) -> None:
    findings = check_table(TableGeometry.load(path), pinmap)
    assert [f for f in findings if f.level == "error"] == []


@pytest.mark.parametrize("path", shipped_tables(), ids=lambda p: p.stem)
def test_committed_drawings_are_current(path: Path) -> None:
    drawn = HARDWARE_DIR / "drawings" / f"{path.stem}.svg"
    assert drawn.read_text(encoding="utf-8") == table_svg(TableGeometry.load(path)), (
        "run `tablesense hw draw` and commit hardware/drawings/"
    )


def test_drawing_shows_every_cell_with_its_led_and_board() -> None:
    g = TableGeometry.load("dominoes-4")
    svg = table_svg(g)
    for cell in g.cells.values():
        assert f'id="cell-{cell.id}"' in svg
        assert f"B{cell.board}:{cell.channel}" in svg
    assert "Seat 0: South" in svg


def test_bom_quantity_that_drifted_from_the_layout_is_an_error(tmp_path: Path) -> None:
    g = TableGeometry.load("dominoes-4")
    text = (BOM_DIR / "dominoes-4.csv").read_text(encoding="utf-8")
    bad = tmp_path / "dominoes-4.csv"
    bad.write_text(text.replace("mfrc522,MFRC522 RFID reader module (13.56 MHz) with PCB antenna,cells,56", "mfrc522,MFRC522 RFID reader module (13.56 MHz) with PCB antenna,cells,50"), encoding="utf-8")
    findings = check_bom(g, bad)
    assert any("quantity 50, but dominoes-4 needs 56 (cells)" in f.message for f in findings)


def test_bom_with_unknown_rule_or_missing_part_is_an_error(tmp_path: Path) -> None:
    g = TableGeometry.load("kems-4")
    bad = tmp_path / "kems-4.csv"
    bad.write_text(
        "part,description,qty_rule,quantity,example_part_number,unit_cost_eur,notes\n"
        "pico,Pico,boardz,1,SC0915,4.00,\n",
        encoding="utf-8",
    )
    messages = [f.message for f in check_bom(g, bad)]
    assert any("unknown quantity rule 'boardz'" in m for m in messages)
    assert any("no 'mfrc522' line" in m for m in messages)


def test_seat_pin_wired_twice_is_an_error(pinmap: dict) -> None:
    g = TableGeometry.load("dominoes-4")
    seats = list(g.seats)
    seats[1] = type(seats[1])(**{**seats[1].__dict__, "button_pin": seats[0].button_pin})
    clash = type(g)(**{**g.__dict__, "seats": seats})
    findings = check_pi_pins(clash, pinmap)
    assert any(f.level == "error" and f"GPIO{seats[0].button_pin} is wired to both" in f.message for f in findings)


def test_reserved_pin_is_an_error(pinmap: dict) -> None:
    g = TableGeometry.load("kems-4")
    seats = list(g.seats)
    seats[0] = type(seats[0])(**{**seats[0].__dict__, "turn_led_pin": 0})
    findings = check_pi_pins(type(g)(**{**g.__dict__, "seats": seats}), pinmap)
    assert any("reserved" in f.message for f in findings)


def test_pinmap_must_match_the_firmware_defaults(pinmap: dict) -> None:
    assert check_rp2040_pins(pinmap) == []
    moved = {**pinmap, "rp2040": {**pinmap["rp2040"], "led_data": 21}}
    assert any("led_data" in f.where for f in check_rp2040_pins(moved))


def test_power_budget_over_the_supply_is_an_error(pinmap: dict) -> None:
    g = TableGeometry.load("dominoes-4")
    total, rows = power_budget(g, pinmap)
    assert total == sum(r[2] for r in rows) and total > 0
    power = pinmap["power"]
    small = {**pinmap, "power": {**power, "rail": {**power["rail"], "supply_ma": total}}}
    findings = check_power(g, small)
    assert [f.where for f in findings] == ["dominoes-4"]
    assert findings[0].level == "error" and "the 5 V rail" in findings[0].message
    assert f"{total} mA" in findings[0].message and "80%" in findings[0].message


def test_rule_quantities_follow_the_layout() -> None:
    q = rule_quantities(TableGeometry.load("dominoes-4"))
    assert q["cells"] == 56 and q["boards"] == 6 and q["seat_buttons"] == 8


def test_cli_check_passes_on_shipped_layouts() -> None:
    result = runner.invoke(app, ["hw", "check"])
    assert result.exit_code == 0, result.output
    assert "ok  dominoes-4" in result.output


def test_cli_check_fails_with_a_clear_message_on_a_bad_file(tmp_path: Path) -> None:
    src = tmp_path / "broken.toml"
    src.write_text('name = "broken"\ngames = ["chess"]\n', encoding="utf-8")
    result = runner.invoke(app, ["hw", "check", "--table", str(src)])
    assert result.exit_code == 1
    # the console folds a long path at its width (a worker's tmp path is long)
    assert "broken.toml" in result.output.replace("\n", "")


def test_cli_draw_writes_svg(tmp_path: Path) -> None:
    result = runner.invoke(app, ["hw", "draw", "--table", str(shipped_tables()[0]), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert list(tmp_path.glob("*.svg"))
