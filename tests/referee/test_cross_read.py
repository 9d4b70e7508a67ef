"""One tag read on two cells is a hardware fault (a reader reaches its
neighbour's tag), not a player's extra piece: the referee names both cells
and says what to repair."""

from __future__ import annotations

from referee.test_referee_dominoes import kinds, opened
from tablesense.referee.layout import Problem
from tablesense.referee.sensing import sense
from tablesense.table.state import EMPTY, TableState, Tag
from tablesense.table.tags import TagRegistry


def test_one_uid_on_two_cells_is_a_cross_read_naming_both_cells() -> None:
    registry = TagRegistry.virtual(0)
    uid = registry.uid_of("3-5")
    other = registry.uid_of("6-6")
    state = TableState(
        {"seat0-1": Tag(uid), "seat0-2": Tag(uid), "seat0-3": Tag(other), "seat0-4": EMPTY},
        {1: True},
        0.0,
    )
    sensed = sense(state, registry)
    assert sensed.problems == [Problem("cross_read", ("seat0-1", "seat0-2"), uid.hex())]
    # the piece is not blamed on the players, the rest is read as usual
    assert sensed.pieces == {"seat0-3": "6-6"}
    assert not any(p.kind == "duplicate_tag" for p in sensed.problems)


def test_the_referee_says_which_cells_and_what_to_repair() -> None:
    ref, events, h = opened()
    h.problems = [Problem("cross_read", ("seat0-1", "seat0-2"), "04a1b2c3d4e5f6")]
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "cross_read" and rej["cells"] == ["seat0-1", "seat0-2"]
    assert "seat0-1, seat0-2" in rej["instruction"] and "04a1b2c3d4e5f6" in rej["instruction"]
    assert "hw check" in rej["instruction"]
    h.problems = []
    h.settle()
    assert ref.state.correction is None


def test_the_referee_reports_a_cross_read_before_the_deal_too() -> None:
    """Bring-up (docs/build-guide.md): `play` with nothing dealt yet names
    the two cells as soon as one test tag is heard on both."""
    from tablekit import Hands, make_referee

    ref, events, _stored = make_referee("dominoes", "pairs-pips", "dominoes-4", 3)
    h = Hands(ref)
    h.problems = [Problem("cross_read", ("left-1", "left-2"), "04a1b2c3d4e5f6")]
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "cross_read" and rej["cells"] == ["left-1", "left-2"]
