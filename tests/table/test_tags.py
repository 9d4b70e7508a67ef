"""The tag registry (CONTRACTS section 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablesense.table.tags import (
    FORMAT,
    Piece,
    TagRegistry,
    TagRegistryError,
    UnknownTag,
    all_cards,
    all_tiles,
)


def test_piece_parsing_is_canonical() -> None:
    assert str(Piece.parse("5-3")) == "3-5"
    assert Piece.parse("3-5") == Piece.parse("5-3")
    assert Piece.parse("th").text == "TH" and Piece.parse("TH").kind == "card"
    assert Piece.parse("badge:Alice") == Piece("badge", "badge:Alice")
    assert eval(repr(Piece.parse("2-6")), {"Piece": Piece}) == Piece.parse("6-2")
    for bad in ("7-1", "1-2-3", "XX", "1H", "badge:", "", "10H"):
        with pytest.raises(ValueError):
            Piece.parse(bad)


def test_lookup_and_unknown_tags() -> None:
    reg = TagRegistry()
    reg.add(bytes.fromhex("04a1b2c3d4e5f6"), "5-3")
    reg.add("0411223344", "TH")
    assert reg.piece(bytes.fromhex("04a1b2c3d4e5f6")) == Piece.parse("3-5")
    assert reg.uid_of("3-5") == bytes.fromhex("04a1b2c3d4e5f6")
    unknown = reg.piece(b"\x01\x02\x03\x04")
    assert isinstance(unknown, UnknownTag) and unknown.uid == b"\x01\x02\x03\x04"
    assert "TH" in reg and "9H" not in reg and len(reg) == 2


def test_duplicates_are_refused() -> None:
    reg = TagRegistry()
    reg.add("04aa", "3-5")
    with pytest.raises(TagRegistryError, match="already enrolled as 3-5"):
        reg.add("04AA", "TH")
    with pytest.raises(TagRegistryError, match="3-5 is already enrolled"):
        reg.add("04bb", "5-3")
    with pytest.raises(TagRegistryError, match="hexadecimal"):
        reg.add("zz", "TH")


def test_missing_pieces_of_a_set() -> None:
    reg = TagRegistry()
    assert reg.missing("tiles") == all_tiles() and len(all_tiles()) == 28
    reg.add("04aa", "0-0")
    assert "0-0" not in reg.missing("tiles") and len(reg.missing("tiles")) == 27
    assert len(reg.missing("cards32")) == 32 and len(reg.missing("cards52")) == 52
    assert set(all_cards(32)) <= set(all_cards(52))
    with pytest.raises(ValueError):
        reg.missing("chess")  # type: ignore[arg-type]


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    reg = TagRegistry({"04a1b2c3d4e5f6": "3-5", "0411223344": "TH", "04aabbccdd": "badge:Alice"})
    path = tmp_path / "tags.json"
    reg.save(path)
    data = json.loads(path.read_text())
    assert data == {
        "format": FORMAT,
        "tags": {"0411223344": "TH", "04a1b2c3d4e5f6": "3-5", "04aabbccdd": "badge:Alice"},
    }
    again = TagRegistry.load(path)
    assert list(again) == list(reg)


def test_save_makes_the_registry_folder(tmp_path: Path) -> None:
    """A fresh Pi has no /var/lib/tablesense/... until something makes it:
    enrolling the first set must not fail on the missing folder."""
    path = tmp_path / "state" / "tablesense" / "tags.json"
    TagRegistry({"04a1b2c3d4e5f6": "3-5"}).save(path)
    assert list(TagRegistry.load(path)) == list(TagRegistry({"04a1b2c3d4e5f6": "3-5"}))


def test_bad_files_list_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "tags.json"
    path.write_text(
        json.dumps(
            {"format": FORMAT, "tags": {"04aa": "3-5", "04bb": "5-3", "04cc": "ZZ"}, "extra": 1}
        )
    )
    with pytest.raises(TagRegistryError) as info:
        TagRegistry.load(path)
    text = str(info.value)
    assert "unknown field 'extra'" in text and "04bb" in text and "04cc" in text
    path.write_text("{not json")
    with pytest.raises(TagRegistryError, match="not valid JSON"):
        TagRegistry.load(path)
    path.write_text(json.dumps({"format": "other/1", "tags": {}}))
    with pytest.raises(TagRegistryError, match="format"):
        TagRegistry.load(path)
    with pytest.raises(TagRegistryError, match="cannot read"):
        TagRegistry.load(tmp_path / "nope.json")


def test_virtual_registry_is_deterministic_and_complete() -> None:
    a, b, c = TagRegistry.virtual(1), TagRegistry.virtual(1), TagRegistry.virtual(2)
    assert list(a) == list(b) and list(a) != list(c)
    assert a.missing("tiles") == [] and a.missing("cards52") == []
    uids = [uid for uid, _ in a]
    assert all(len(u) == 7 and u[0] == 0x04 for u in uids) and len(set(uids)) == len(uids)
