"""Table snapshots in the referee's terms: tags, read errors, offline boards."""

from __future__ import annotations

from tablesense.referee.core import sense
from tablesense.table.state import EMPTY, OFFLINE, UNSCANNED, ReadError, TableState, Tag
from tablesense.table.tags import TagRegistry


def test_sense_translates_every_reading() -> None:
    reg = TagRegistry.virtual(0)
    a, b = reg.uid_of("3-5"), reg.uid_of("6-6")
    state = TableState(
        {
            "c1": Tag(a),
            "c2": EMPTY,
            "c3": Tag(b"\x04\x00\x00\x01"),
            "c4": ReadError(3),
            "c5": Tag(b),
            "c6": Tag(b),
            "c7": OFFLINE,
            "c8": UNSCANNED,
        },
        {1: True, 2: False},
        0.0,
    )
    s = sense(state, reg)
    assert s.pieces == {"c1": "3-5"}  # c5, c6: one tag on two cells is a hardware fault
    kinds = {(p.kind, p.cells) for p in s.problems}
    assert ("unknown_tag", ("c3",)) in kinds
    assert ("read_error", ("c4",)) in kinds  # never "empty"
    assert ("cross_read", ("c5", "c6")) in kinds
    assert ("unscanned", ("c8",)) in kinds
    assert s.boards_offline == (2,)
    read_error = next(p for p in s.problems if p.kind == "read_error")
    assert read_error.detail == "collision"
