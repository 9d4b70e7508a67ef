"""Issue 13: layout (geometry) and tag files written by someone hostile or careless:
deep nesting, numbers of thousands of digits and tags enrolled twice give one
clear error each, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablesense.table.geometry import GeometryError, TableGeometry, shipped_tables
from tablesense.table.tags import TagRegistry, TagRegistryError


def _layout(tmp_path: Path, old: str, new: str) -> Path:
    raw = shipped_tables()[0].read_text()
    assert old in raw
    p = tmp_path / "table.toml"
    p.write_text(raw.replace(old, new, 1))
    return p


@pytest.mark.parametrize(("old", "new", "message"), [
    ("channels = 14", "channels = 1" + "0" * 5000, "not a usable number: Exceeds the limit (4300 digits)"),
    ("channels = 14", "channels = 1" + "0" * 4000, "a number of about 4001 digits"),
    ("channels = 14", "channels = 10000000000000000000000", "a number of about 23 digits"),
    ("leds = 14", "leds = " + "[" * 3000 + "]" * 3000, "nested too deeply"),
    ("id = 1", "id = 1.0e999", "must be an integer, not inf"),
])
def test_layout_with_deep_nesting_or_huge_numbers_gives_a_clear_error(tmp_path: Path, old: str, new: str, message: str) -> None:
    with pytest.raises(GeometryError) as exc:
        TableGeometry.load(_layout(tmp_path, old, new))
    assert message in str(exc.value)
    assert len(str(exc.value).splitlines()[1]) < 200


def _registry(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "tags.json"
    p.write_text(text)
    return p


def test_tag_file_with_a_tag_id_twice_is_refused(tmp_path: Path) -> None:
    p = _registry(tmp_path, '{"format": "tablesense.tags/1", "tags": {"04a1b2c3": "6-6", "04a1b2c3": "5-5"}}')
    with pytest.raises(TagRegistryError, match="'04a1b2c3' appears twice"):
        TagRegistry.load(p)


@pytest.mark.parametrize(("text", "message"), [
    ('{"format": "tablesense.tags/1", "tags": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"format": "tablesense.tags/1", "tags": {"04a1": ' + "9" * 5000 + "}}", "digits"),
    ('{"format": "tablesense.tags/1", "tags": {"04a1": ' + "[" * 500 + "]" * 500 + "}}", "piece must be a string, got list"),
])
def test_tag_file_with_deep_nesting_or_huge_numbers_gives_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(TagRegistryError, match=message):
        TagRegistry.load(_registry(tmp_path, text))
