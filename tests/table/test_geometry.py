"""Table geometry: the shipped layouts, validation messages, and the board
config the flasher writes (cross-checked with the firmware's own parser)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tablesense.firmware import config as fw_config
from tablesense.table.geometry import GeometryError, TableGeometry, shipped_tables

NAMES = [
    "dominoes-4", "dominoes-3", "dominoes-2", "kems-4", "kems-6", "kems-8",
    "dominoes-4-remote", "dominoes-3-remote", "dominoes-2-remote", "kems-4-remote",
]


def test_every_layout_is_shipped() -> None:
    assert sorted(p.stem for p in shipped_tables()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_shipped_layout_is_consistent(name: str) -> None:
    g = TableGeometry.load(name)
    assert g.name == name
    for b in g.boards:
        # a board scans exactly its readers, at most what its 4 decoders address
        assert b.channels == len(g.cells_of_board(b.id)) <= 32
        assert b.position is not None
    # every cell is on a real channel, channel -> cell round-trips
    for c in g.cells.values():
        assert g.cell_at(c.board, c.channel) == c
    assert len({(c.board, c.channel) for c in g.cells.values()}) == len(g.cells)
    pins = [p for s in g.seats for p in (s.turn_led_pin, s.button_pin, s.call_button_pin)]
    pins.append(g.referee_button_pin)
    assert None not in pins and len(set(pins)) == len(pins)
    assert all(2 <= p <= 27 for p in pins if p is not None)
    for s in g.seats:
        assert all(g.seat_of(c) == s.index for c in s.rack)


@pytest.mark.parametrize(
    ("name", "seats", "rack"),
    [("dominoes-4", 4, 7), ("dominoes-3", 3, 10), ("dominoes-2", 2, 14)],
)
def test_dominoes_layouts(name: str, seats: int, rack: int) -> None:
    g = TableGeometry.load(name)
    assert g.games == ["dominoes"]
    assert len(g.seats) == seats
    assert all(len(s.rack) == rack for s in g.seats)
    assert g.line is not None
    # the line holds a whole set: centre + both arms
    assert 1 + len(g.line.left) + len(g.line.right) >= 28
    assert g.line.cells[len(g.line.left)] == g.line.center
    assert g.line.arm("left") == g.line.left
    with pytest.raises(ValueError):
        g.line.arm("up")
    assert len(g.boneyard) == (14 if seats == 2 else 0)


@pytest.mark.parametrize("seats", [4, 6, 8])
def test_kems_layouts(seats: int) -> None:
    g = TableGeometry.load(f"kems-{seats}")
    assert g.games == ["kems"]
    assert len(g.kems_slots) == 4
    assert len(g.seats) == seats
    assert all(len(s.rack) == 5 for s in g.seats)  # 4 cards + the give-then-take moment


@pytest.mark.parametrize("name", NAMES)
def test_board_config_matches_firmware_parser_and_hash(name: str) -> None:
    g = TableGeometry.load(name)
    for b in g.boards:
        cfg = g.board_config(b.id)
        parsed = fw_config.parse(copy.deepcopy(cfg))
        assert parsed["board"] == b.id
        assert parsed["cells"] == b.channels
        assert parsed["hash"] == g.config_hash(b.id)
        assert fw_config.canonical_json(cfg) == g.board_config_bytes(b.id)
        for c in g.cells_of_board(b.id):
            assert parsed["channel_leds"][c.channel] == c.led
        # what the builder tuned reaches the board; the receiver gain stays the chip's
        assert parsed["spi"]["baudrate"] == g.build.spi_baudrate == 2_000_000
        assert parsed["led_max_level"] == g.build.led_max_level == 85
        assert "rfid" not in cfg


def _base() -> dict:
    return {
        "name": "t",
        "games": ["dominoes"],
        "boards": [{"id": 1, "name": "a", "channels": 8, "leds": 8}],
        "seats": [{"index": 0, "rack": ["r1"]}],
        "line": {"center": "c", "left": ["l1"], "right": ["x1"]},
        "cells": {
            "c": {"board": 1, "channel": 0, "led": 0, "x": 0, "y": 0, "zone": "line"},
            "l1": {"board": 1, "channel": 1, "led": 1, "x": 0, "y": 0, "zone": "line"},
            "x1": {"board": 1, "channel": 2, "led": 2, "x": 0, "y": 0, "zone": "line"},
            "r1": {"board": 1, "channel": 3, "led": 3, "x": 0, "y": 0, "zone": "rack"},
        },
    }


def test_build_settings_reach_the_board_config() -> None:
    """The table file sets the SPI clock, the LED cap and (only when set) the
    receiver gain; without a [build] table the documented defaults apply."""
    plain = TableGeometry.from_dict(_base())
    assert plain.board_config(1)["spi"] == {"baudrate": 2_000_000}
    assert plain.board_config(1)["led_max_level"] == 85
    assert "rfid" not in plain.board_config(1)
    tuned = TableGeometry.from_dict(
        {**_base(), "build": {"spi_baudrate": 1_000_000, "led_max_level": 40, "rx_gain_db": 43, "antenna_mm": 50}}
    )
    cfg = tuned.board_config(1)
    assert cfg["spi"] == {"baudrate": 1_000_000} and cfg["led_max_level"] == 40
    assert cfg["rfid"] == {"rx_gain_db": 43}
    assert tuned.build.field_model().antenna_mm == 50.0
    assert tuned.config_hash(1) != plain.config_hash(1)


def test_bad_build_settings_are_listed_at_once() -> None:
    bad = {
        **_base(),
        "build": {"spi_baudrate": 50_000_000, "rx_gain_db": 30, "tag_mm": "big", "read_range_mm": 3.0, "colour": 1},
    }
    with pytest.raises(GeometryError) as exc:
        TableGeometry.from_dict(bad)
    text = str(exc.value)
    assert "build.spi_baudrate = 50000000 is outside 100000..10000000" in text
    assert "build.rx_gain_db = 30 is not a gain the MFRC522 offers (18, 23, 33, 38, 43, 48)" in text
    assert "build.tag_mm must be a number (mm), not 'big'" in text
    assert "build.read_range_mm = 3 must exceed build.tag_height_mm = 4" in text
    assert "build: unknown key(s) colour" in text


def test_a_board_position_needs_both_coordinates() -> None:
    data = _base()
    data["boards"] = [{"id": 1, "name": "a", "channels": 8, "leds": 8, "x": 100.0}]
    with pytest.raises(GeometryError, match="a board's position needs both x and y"):
        TableGeometry.from_dict(data)
    data["boards"][0]["y"] = 50
    assert TableGeometry.from_dict(data).board(1).position == (100.0, 50.0)


def test_minimal_dict_is_valid() -> None:
    g = TableGeometry.from_dict(_base())
    assert g.cell_at(1, 3) is not None and g.cell_at(1, 3).id == "r1"  # type: ignore[union-attr]
    assert g.cell_at(1, 7) is None


def test_display_rotation_and_output() -> None:
    """The table's screen, for the installer's display settings: upright on
    DSI-1 unless the file says otherwise; a turn a compositor cannot make is refused."""
    g = TableGeometry.from_dict(_base())
    assert (g.display_rotation, g.display_output) == (0, "DSI-1")
    d = _base() | {"display_rotation": 270, "display_output": "HDMI-A-1"}
    g = TableGeometry.from_dict(d)
    assert (g.display_rotation, g.display_output) == (270, "HDMI-A-1")
    for bad in (45, "90", True, -90):
        with pytest.raises(GeometryError, match="display_rotation must be one of 0, 90, 180, 270"):
            TableGeometry.from_dict(_base() | {"display_rotation": bad})
    with pytest.raises(GeometryError, match="display_output must be a non-empty string"):
        TableGeometry.from_dict(_base() | {"display_output": ""})


def test_every_problem_is_listed_at_once() -> None:
    d = _base()
    d["cells"]["l1"]["board"] = 9  # unknown board
    d["cells"]["x1"]["led"] = 0  # duplicate LED index
    d["cells"]["r1"]["channel"] = 8  # beyond the board's channels
    d["seats"].append({"index": 1, "rack": []})  # a seat without a rack
    d["seats"][0]["button_pin"] = 5
    d["seats"][1]["turn_led_pin"] = 5  # a pin used twice
    d["games"] = ["dominoes", ""]  # a game is a name (which names exist is the games room's)
    with pytest.raises(GeometryError) as info:
        TableGeometry.from_dict(d, source="bad.toml")
    text = str(info.value)
    problems = info.value.problems
    assert "bad.toml" in text
    assert any("unknown board 9" in p for p in problems)
    assert any("duplicate LED index 0" in p for p in problems)
    assert any("channel 8" in p for p in problems)
    assert any("seat 1 has no rack" in p for p in problems)
    assert any("GPIO 5" in p for p in problems)
    assert any("a game is named by a string, not ''" in p for p in problems)
    assert len(problems) >= 6


def test_track_and_zone_checks() -> None:
    d = _base()
    d["line"]["right"] = ["l1"]  # a cell in both arms
    with pytest.raises(GeometryError, match="in both"):
        TableGeometry.from_dict(d)
    d = _base()
    d["cells"]["r1"]["zone"] = "line"
    with pytest.raises(GeometryError, match="zone"):
        TableGeometry.from_dict(d)
    d = _base()
    d["games"] = ["kems", 3]
    with pytest.raises(GeometryError, match="a game is named by a string, not 3"):
        TableGeometry.from_dict(d)
    d = _base()
    d["cells"]["spare"] = {"board": 1, "channel": 5, "x": 0, "y": 0, "zone": "rack"}
    with pytest.raises(GeometryError, match="in no rack or track"):
        TableGeometry.from_dict(d)
    d = _base()
    d["boards"].append({"id": 1, "channels": 16, "leds": 0})
    with pytest.raises(GeometryError, match="duplicate board id 1"):
        TableGeometry.from_dict(d)
    d = _base()
    d["seats"][0]["rack"] = ["nowhere"]
    with pytest.raises(GeometryError, match="unknown cell 'nowhere'"):
        TableGeometry.from_dict(d)


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no table geometry"):
        TableGeometry.load(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [unclosed\n")
    with pytest.raises(GeometryError, match="not valid TOML"):
        TableGeometry.load(bad)
    typo = tmp_path / "typo.toml"
    typo.write_text('name = "x"\ngames = ["dominoes"]\nboardz = []\n')
    with pytest.raises(GeometryError) as info:
        TableGeometry.load(typo)
    assert any("boardz" in p for p in info.value.problems)
    assert any("boards must be" in p for p in info.value.problems)
