"""Record reader tests written to kill mutants of games/record.py
(benchmarks/mutation.py, docs/mutation-testing.md): the exact limits (nesting, number
size), every format error's message, and the writer's bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablesense.games import record
from tablesense.games.common import MAX_NUMBER, RecordFormatError


def _nested(levels: int) -> str:
    return '{"x":' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


def test_nesting_limit_is_exactly_32_levels() -> None:
    assert record.MAX_DEPTH == 32
    assert record.loads(_nested(32))
    with pytest.raises(RecordFormatError, match="nested more than 32 levels deep"):
        record.loads(_nested(33))
    deep: object = []
    for _ in range(31):
        deep = [deep]
    assert record._depth_ok(deep) is True  # 32 levels
    assert record._depth_ok([deep]) is False
    assert record._depth_ok({"a": {"b": deep}}) is False
    assert record._depth_ok({"a": deep[0]}) is True  # type: ignore[index]
    assert record._depth_ok(5) is True
    with pytest.raises(RecordFormatError, match="nested more than 32 levels"):
        record.replay({"format": record.FORMAT, "x-deep": [deep]})
    with pytest.raises(RecordFormatError, match="nested more than 32 levels"):
        record.loads("[" * 100000 + "]" * 100000)


def test_integer_limit_is_exactly_max_number() -> None:
    assert record.loads(f'{{"n": {MAX_NUMBER}}}')["n"] == MAX_NUMBER
    assert record.loads(f'{{"n": -{MAX_NUMBER}}}')["n"] == -MAX_NUMBER
    with pytest.raises(RecordFormatError, match=r"^the integer 9007199254740993 \(16 digits\) is too large"):
        record.loads(f'{{"n": {MAX_NUMBER + 1}}}')
    with pytest.raises(RecordFormatError, match=r"^the integer -9007199254740993 \(16 digits\)"):
        record.loads(f'{{"n": -{MAX_NUMBER + 1}}}')
    big = "1" * 25
    with pytest.raises(RecordFormatError, match=r"^the integer 11111111111111111111\.\.\. \(25 digits\)"):
        record.loads(f'{{"n": {big}}}')
    twenty = "9" * 20
    with pytest.raises(RecordFormatError, match=r"^the integer 99999999999999999999 \(20 digits\)"):
        record.loads(f'{{"n": {twenty}}}')
    assert record._int("-0") == 0
    with pytest.raises(RecordFormatError, match=f"at most {MAX_NUMBER} in size"):
        record._int("9" * 16)


def test_float_limits() -> None:
    assert record.loads('{"n": 1.5e3}')["n"] == 1500.0
    assert record.loads(f'{{"n": {float(MAX_NUMBER)}}}')["n"] == float(MAX_NUMBER)
    with pytest.raises(RecordFormatError, match=r"^the number 1e400 is out of range"):
        record.loads('{"n": 1e400}')
    with pytest.raises(RecordFormatError, match=r"^the number -1e300 is out of range"):
        record.loads('{"n": -1e300}')
    long = "1." + "0" * 30 + "e300"
    with pytest.raises(RecordFormatError, match=r"^the number 1\.0000000000000000000\.\.\. is out"):
        record.loads(f'{{"n": {long}}}')
    shown = "1.00000000000000000e300"  # 23 characters: shown whole
    with pytest.raises(RecordFormatError, match=r"^the number 1\.00000000000000000e300 is out"):
        record.loads(f'{{"n": {shown}}}')
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(RecordFormatError, match=f"^{constant} is not a JSON number$"):
            record.loads(f'{{"n": {constant}}}')


def test_text_errors() -> None:
    with pytest.raises(RecordFormatError, match="^the key 'a' appears twice in one object$"):
        record.loads('{"a": 1, "b": {"a": 2}, "a": 3}')
    assert record.loads('{"a": 1, "b": {"a": 2}}') == {"a": 1, "b": {"a": 2}}
    with pytest.raises(RecordFormatError, match="^a record is UTF-8 text: "):
        record.loads(b'{"a": "\xff"}')
    assert record.loads('{"a": "é"}'.encode()) == {"a": "é"}
    assert record.loads(bytearray(b'{"a": 1}')) == {"a": 1}  # type: ignore[arg-type]
    with pytest.raises(RecordFormatError, match=r"^not valid JSON: Expecting value at line 2, column 11$"):
        record.loads('{"a":\n  1, "b": }')
    with pytest.raises(RecordFormatError, match="^a game record is one JSON object$"):
        record.loads("[1]")


def test_load_and_write(tmp_path: Path) -> None:
    with pytest.raises(RecordFormatError, match=r"^cannot read .*nope\.json: No such file"):
        record.load(tmp_path / "nope.json")
    rec = {"format": record.FORMAT, "game": "kems", "x-name": "é", "hands": [[1, 2]]}
    path = tmp_path / "r.json"
    record.write(rec, path)
    assert path.read_text(encoding="utf-8") == json.dumps(rec, ensure_ascii=False, indent=1) + "\n"
    assert "é" in path.read_text(encoding="utf-8")
    assert list(tmp_path.iterdir()) == [path]  # the temporary file is gone
    assert record.load(path) == rec
    assert record.dumps({"a": [1]}) == '{\n "a": [\n  1\n ]\n}\n'


BASE = {"format": "tablesense.record/1", "game": "dominoes", "variant": "pairs-pips", "hands": []}


@pytest.mark.parametrize(("change", "message"), [
    ({"extra": 1}, r"^unknown fields \['extra'\] \(writer fields start with 'x-'\)$"),
    ({"hands": None}, r"^'hands' is a list$"),
    ({"format": "tablesense.record/2"},
     r"^'format' must be 'tablesense.record/1', got 'tablesense.record/2'$"),
    ({"game": "chess"}, r"^'game' is one of dominoes, kems; got 'chess'$"),
    ({"variant": 3}, r"^'variant' is a string, got 3$"),
    ({"options": []}, r"^'options' is a JSON object$"),
])
def test_common_field_errors(change: dict[str, object], message: str) -> None:
    with pytest.raises(RecordFormatError, match=message):
        record.check_common({**BASE, **change})


def test_missing_fields_are_named_and_options_may_be_left_out() -> None:
    for key in ("format", "game", "variant", "hands"):
        obj = {k: v for k, v in BASE.items() if k != key}
        with pytest.raises(RecordFormatError, match=rf"^missing fields \['{key}'\]$"):
            record.check_common(obj)
    record.check_common(BASE)
    record.check_common({**BASE, "options": {}, "x-writer": "t"})
    with pytest.raises(RecordFormatError, match="^a game record is one JSON object$"):
        record.check_common([])  # type: ignore[arg-type]


