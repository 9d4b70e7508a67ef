"""The remote-play layouts: a stock that holds the whole set, beside the same
racks and tracks as their local twins, and passing every `hw check`."""

from __future__ import annotations

import copy
import tomllib
from typing import Any

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.games.dominoes import ALL_TILES
from tablesense.games.kems import KemsOptions
from tablesense.hw.check import check_table
from tablesense.hw.pack import load_pinmap
from tablesense.table.geometry import TABLES_DIR, GeometryError, TableGeometry

runner = CliRunner()
REMOTE = {
    "dominoes-4-remote": ("dominoes-4", len(ALL_TILES)),
    "dominoes-3-remote": ("dominoes-3", len(ALL_TILES)),
    "dominoes-2-remote": ("dominoes-2", len(ALL_TILES)),
    "kems-4-remote": ("kems-4", KemsOptions.defaults(4).deck),
}


@pytest.mark.parametrize("name", sorted(REMOTE))
def test_stock_holds_the_whole_set_beside_the_local_twin(name: str) -> None:
    twin_name, pieces = REMOTE[name]
    g, twin = TableGeometry.load(name), TableGeometry.load(twin_name)
    assert len(g.stock) == pieces
    assert {g.cells[c].zone for c in g.stock} == {"stock"}
    assert g.zone_cells("stock") == g.stock
    # the racks, line and slots are the twin's: a player moves between them alike
    assert [s.rack for s in g.seats] == [s.rack for s in twin.seats]
    assert g.line == twin.line and g.kems_slots == twin.kems_slots
    # every stock cell has a LED: dealing by lights shows each piece's owner on it
    assert all(g.cells[c].led is not None for c in g.stock)
    assert not twin.stock


@pytest.mark.parametrize("name", sorted(REMOTE))
def test_remote_layout_passes_hw_check(name: str) -> None:
    errors = [f for f in check_table(TableGeometry.load(name), load_pinmap()) if f.level == "error"]
    assert errors == []
    result = runner.invoke(app, ["hw", "check", "--table", str(TABLES_DIR / f"{name}.toml")])
    assert result.exit_code == 0, result.output


def _raw(name: str) -> dict[str, Any]:
    return tomllib.loads((TABLES_DIR / f"{name}.toml").read_text())


def test_stock_cell_with_another_zone_is_refused() -> None:
    raw = copy.deepcopy(_raw("dominoes-4-remote"))
    raw["cells"]["stock-3"]["zone"] = "boneyard"
    with pytest.raises(GeometryError) as err:
        TableGeometry.from_dict(raw)
    assert "cell 'stock-3' is in the stock but its zone is 'boneyard', expected 'stock'" in err.value.problems


def test_stock_cell_claimed_twice_is_refused() -> None:
    raw = copy.deepcopy(_raw("kems-4-remote"))
    raw["stock"].append(raw["kems_slots"][0])
    with pytest.raises(GeometryError) as err:
        TableGeometry.from_dict(raw)
    assert any("is in both the kems slots and the stock" in p for p in err.value.problems)


def test_stock_packed_too_tight_fails_hw_check(tmp_path: Any) -> None:
    """The spacing check reaches the stock: cells 15 mm apart cross-read."""
    text = (TABLES_DIR / "dominoes-4-remote.toml").read_text()
    raw = _raw("dominoes-4-remote")
    first = raw["cells"]["stock-1"]
    moved = f'"stock-2" = {{ board = {first["board"]}, channel = 1, led = 1, x = {first["x"] + 15.0}, y = {first["y"]}, zone = "stock" }}'
    lines = [moved if line.startswith('"stock-2" =') else line for line in text.splitlines()]
    bad = tmp_path / "tight.toml"
    bad.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["hw", "check", "--table", str(bad)])
    assert result.exit_code == 1
    assert "stock-1" in result.output and "stock-2" in result.output
