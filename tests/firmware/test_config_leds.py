"""Board config parsing and the LED strip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablesense.firmware import config
from tablesense.firmware.leds import LedError, NoLeds, Strip
from tablesense.sim.fake_machine import NeoPixel
from tablesense.sim.mfrc522_emu import EmulatedPin

REPO = Path(__file__).resolve().parents[2]


def test_minimal_config_gets_defaults() -> None:
    cfg = config.parse({"board": 1, "cells": 8})
    assert cfg["spi"] == config.DEFAULT_SPI
    assert cfg["cs"] == config.DEFAULT_CS
    assert cfg["debounce"] == config.DEFAULT_DEBOUNCE
    assert cfg["rfid"]["timeout_us"] == 200
    assert cfg["leds"] == 0 and cfg["channel_leds"] == [-1] * 8
    assert len(cfg["hash"]) == 4
    assert config.parse(cfg) is cfg  # idempotent


def test_every_problem_is_listed() -> None:
    with pytest.raises(config.ConfigError) as exc:
        config.parse(
            {
                "board": 0,
                "cells": 3,
                "spi": {"sck": 40, "speed": 1},
                "cs": {"kind": "gpio", "pins": [1, 1]},
                "debounce": {"tag": 0, "later": 2},
                "rfid": {"timeout_us": 5},
            }
        )
    msg = str(exc.value)
    for part in ("board = 0", "spi.sck = 40", "spi.speed", "cs.pins", "debounce.tag", "debounce.later",
                 "rfid.timeout_us"):
        assert part in msg, part


def test_bad_json_and_missing_file_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(config.ConfigError, match="not valid JSON"):
        config.loads("{nope")
    with pytest.raises(config.ConfigError, match="cannot read"):
        config.load(str(tmp_path / "absent.json"))
    with pytest.raises(config.ConfigError, match="JSON object"):
        config.loads("[1, 2]")


def test_decoder_needs_enough_outputs_and_led_indices_are_unique() -> None:
    with pytest.raises(config.ConfigError, match="decoder"):
        config.parse({"board": 1, "cells": 20, "cs": {"kind": "decoder", "address": [1, 2, 3], "enables": [4, 5]}})
    with pytest.raises(config.ConfigError, match="LED 1 serves channels 0 and 1"):
        config.parse({"board": 1, "cells": 2, "leds": 4, "channel_leds": [1, 1]})


def test_shipped_table_board_configs_parse_and_hash_like_the_host() -> None:
    from tablesense.table.geometry import TableGeometry

    for path in sorted((REPO / "hardware" / "tables").glob("*.toml")):
        geo = TableGeometry.load(path)
        for b in geo.boards:
            raw = json.loads(geo.board_config_bytes(b.id))
            cfg = config.parse(raw)
            assert cfg["board"] == b.id
            assert cfg["hash"] == geo.config_hash(b.id), path.name


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(deadline=None)
@given(json_values)
def test_canonical_json_matches_cpython(obj: object) -> None:
    assert config.canonical_json(obj) == json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def test_make_selects_for_each_wiring() -> None:
    pins: dict[int, EmulatedPin] = {}

    def factory(n: int) -> EmulatedPin:
        return pins.setdefault(n, EmulatedPin(n, value=1))

    gpio = config.make_selects(config.parse({"board": 1, "cells": 2, "cs": {"kind": "gpio", "pins": [20, 21]}}),
                               factory)
    assert gpio == [pins[20], pins[21]]
    dec = config.make_selects(config.parse({"board": 1, "cells": 10}), factory)
    assert isinstance(dec[9], config.DecoderSelect) and dec[9].index == 1 and dec[9].enable_pin is pins[10]
    dec[9].value(0)
    assert [pins[6].value(), pins[7].value(), pins[8].value(), pins[10].value()] == [1, 0, 0, 0]
    dec[9].value(1)
    assert pins[10].value() == 1
    with pytest.raises(config.ConfigError, match="I2C"):
        config.make_selects(config.parse({"board": 1, "cells": 2, "cs": {"kind": "mcp23017"}}), factory)


def test_select_routes_put_each_cells_decoder_address_on_the_pins() -> None:
    """The masks the compiled transfer writes to SIO GPIO_OUT_SET/CLR are
    the levels DecoderSelect.value(0) leaves on the address pins, cell for
    cell (on the RP2040 both drive the same pins)."""
    cfg = config.parse({"board": 1, "cells": 20, "cs": {"kind": "decoder", "address": [13, 6, 27],
                                                         "enables": [9, 10, 11]}})
    routes = config.select_routes(cfg)
    assert routes is not None and len(routes) == 20
    pins: dict[int, EmulatedPin] = {}
    selects = config.make_selects(cfg, lambda n: pins.setdefault(n, EmulatedPin(n, value=1)))
    every = (1 << 13) | (1 << 6) | (1 << 27)
    for ch, (on, off) in enumerate(routes):
        selects[ch].value(0)
        levels = {n: pins[n].value() for n in (13, 6, 27)}
        selects[ch].value(1)
        assert on | off == every and not on & off
        assert {n: (on >> n) & 1 for n in (13, 6, 27)} == levels
    assert config.select_routes(config.parse({"board": 1, "cells": 2, "cs": {"kind": "gpio", "pins": [20, 21]}})) is None


# --- LEDs ------------------------------------------------------------------------


def test_strip_applies_whole_frames_with_one_write() -> None:
    np = NeoPixel(None, 4)
    s = Strip(np)
    s.apply([(1, 2, 3), (4, 5, 6)])
    assert np.written == [[(1, 2, 3), (4, 5, 6), (0, 0, 0), (0, 0, 0)]]
    assert s.frames == 1


def test_bad_frame_changes_nothing() -> None:
    np = NeoPixel(None, 3)
    s = Strip(np)
    s.apply([(9, 9, 9)] * 3)
    for bad in ([(1, 1, 1)] * 4, [(1, 1, 1), (300, 0, 0)], [(1, 1)]):
        with pytest.raises(LedError):
            s.apply(bad)  # type: ignore[arg-type]
    assert np.written == [[(9, 9, 9)] * 3]
    assert np.buf == [(9, 9, 9)] * 3


def test_max_level_caps_brightness() -> None:
    np = NeoPixel(None, 1)
    Strip(np, max_level=51).apply([(255, 100, 0)])
    assert np.written[-1] == [(51, 20, 0)]


def test_no_leds_variant() -> None:
    n = NoLeds()
    assert n.count == 0 and not n.has_leds
    with pytest.raises(LedError):
        n.apply([(1, 1, 1)])


def test_rfid_keys_new_and_legacy() -> None:
    """rx_gain_db takes the MFRC522's RxGain steps only; field_lead_us and
    full_read_every are bounded; an old config's max_polls is accepted and
    ignored (the driver's waits are deadlines in time now)."""
    cfg = config.parse({"board": 1, "cells": 2})
    assert cfg["rfid"]["rx_gain_db"] == 33 and cfg["rfid"]["field_lead_us"] == 5000
    assert cfg["rfid"]["full_read_every"] == 8
    for db in config.RX_GAINS_DB:
        assert config.parse({"board": 1, "cells": 2, "rfid": {"rx_gain_db": db}})["rfid"]["rx_gain_db"] == db
    old = config.parse({"board": 1, "cells": 2, "rfid": {"timeout_us": 400, "max_polls": 200}})
    assert "max_polls" not in old["rfid"] and old["rfid"]["timeout_us"] == 400
    with pytest.raises(config.ConfigError) as exc:
        config.parse({"board": 1, "cells": 2,
                      "rfid": {"rx_gain_db": 40, "field_lead_us": -1, "full_read_every": 0, "polls": 3}})
    msg = str(exc.value)
    for part in ("rfid.rx_gain_db = 40 is not one of 18, 23, 33, 38, 43, 48", "rfid.field_lead_us",
                 "rfid.full_read_every", "rfid.polls is not a known key"):
        assert part in msg, part
    with pytest.raises(config.ConfigError, match="rx_gain_db"):
        config.parse({"board": 1, "cells": 2, "rfid": {"rx_gain_db": True}})
