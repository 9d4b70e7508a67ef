"""Layout tests written to kill mutants of referee/layout.py
(benchmarks/mutation.py, docs/mutation-testing.md): each query and move of a layout on
small hand-made tables, with the order of every answer checked."""

from __future__ import annotations

from tablesense.referee.layout import (
    Group,
    Layout,
    Misplaced,
    Place,
    Problem,
    Sensed,
    cells_of,
    free_cells,
)

RACK = Group("rack:0", "seat 0's rack", ("r0", "r1", "r2"))
BONE = Group("boneyard", "the boneyard", ("b0", "b1"))


def layout() -> Layout:
    return Layout(
        exact={"c0": "6-6", "c1": "6-3", "c2": None},
        groups={"rack:0": (RACK, frozenset({"1-2", "4-4"})), "boneyard": (BONE, frozenset({"0-0"}))},
    )


def test_place_holds_and_label() -> None:
    assert Place(cell="c0").holds("c0") and not Place(cell="c0").holds("c1")
    assert Place(group=RACK).holds("r2") and not Place(group=RACK).holds("b0")
    assert not Place().holds("c0")
    assert Place(cell="c0").label() == "cell c0"
    assert Place(cell="c0").label(lambda c: f"<{c}>") == "<c0>"
    assert Place(group=RACK).label() == "seat 0's rack"
    assert Place(group=RACK).label(lambda c: "x") == "seat 0's rack"


def test_sensed_where_key_and_of() -> None:
    s = Sensed(pieces={"r1": "1-2", "c0": "1-2", "c1": "6-3"})
    assert s.where() == {"1-2": "c0", "6-3": "c1"}  # a duplicate keeps its first cell
    base = dict(s.pieces)
    t = Sensed.of(base)
    base["c9"] = "0-0"
    assert "c9" not in t.pieces  # a copy
    k = Sensed(pieces={"b": "2", "a": "1"}).key()
    assert k == ((("a", "1"), ("b", "2")), (), ())
    p1 = Sensed(problems=[Problem("read_error", ("c0",), "crc", board=1)], boards_offline=(2,))
    assert p1.key() == ((), (("read_error", ("c0",), "crc"),), (2,))
    p2 = Sensed(problems=[Problem("read_error", ("c0",), "timeout", board=1)], boards_offline=(2,))
    assert p1.key() != p2.key()
    p3 = Sensed(problems=[Problem("read_error", ("c0",), "crc", board=5)], boards_offline=(2,))
    assert p1.key() == p3.key()


def test_layout_queries() -> None:
    lay = layout()
    assert lay.place_of("6-3") == Place(cell="c1")
    assert lay.place_of("4-4") == Place(group=RACK)
    assert lay.place_of("0-0") == Place(group=BONE)
    assert lay.place_of("5-5") is None
    assert lay.pieces_in("rack:0") == frozenset({"1-2", "4-4"})
    assert lay.group("boneyard") == BONE
    assert lay.in_play() == {"6-6", "6-3", "1-2", "4-4", "0-0"}
    c = lay.copy()
    c.exact["c2"] = "0-0"
    assert lay.exact["c2"] is None


def test_matches_and_diff_in_order() -> None:
    lay = layout()
    good = Sensed.of({"c0": "6-6", "c1": "6-3", "r2": "1-2", "r0": "4-4", "b1": "0-0"})
    assert lay.matches(good) and lay.diff(good) == []
    assert not lay.matches(Sensed(pieces=dict(good.pieces), problems=[Problem("unknown_tag", ("x",))]))
    extra = Sensed.of({**good.pieces, "c2": "5-5"})
    assert not lay.matches(extra)
    assert lay.diff(extra) == [Misplaced("5-5", "c2", None)]
    bad = Sensed.of({"c1": "6-6", "c0": "6-3", "r0": "0-0", "b0": "1-2", "b1": "1-2"})
    assert lay.diff(bad) == [
        Misplaced("1-2", "b0", Place(group=RACK)),  # b1 holds a duplicate: not listed again
        Misplaced("6-3", "c0", Place(cell="c1")),
        Misplaced("6-6", "c1", Place(cell="c0")),
        Misplaced("0-0", "r0", Place(group=BONE)),
        Misplaced("4-4", None, Place(group=RACK)),
    ]


def test_move_builds_a_new_layout() -> None:
    lay = layout()
    m = lay.move("4-4", to_cell="c2")
    assert m.exact == {"c0": "6-6", "c1": "6-3", "c2": "4-4"}
    assert m.pieces_in("rack:0") == frozenset({"1-2"})
    assert lay.exact["c2"] is None and lay.pieces_in("rack:0") == frozenset({"1-2", "4-4"})
    m = lay.move("6-3", to_group="boneyard")
    assert m.exact["c1"] is None and m.pieces_in("boneyard") == frozenset({"0-0", "6-3"})
    m = lay.move("0-0")
    assert "0-0" not in m.in_play() and m.pieces_in("boneyard") == frozenset()
    m = lay.move("6-6", to_cell="c9", to_group="boneyard")  # an exact cell wins
    assert m.exact["c9"] == "6-6" and "6-6" not in m.pieces_in("boneyard")


def test_free_cells_and_led_cells() -> None:
    s = Sensed(pieces={"r0": "1-2"}, problems=[Problem("read_error", ("r2",))])
    assert free_cells(RACK, s) == ["r1"]
    assert free_cells(BONE, s) == ["b0", "b1"]
    assert cells_of([None, Place(cell="c5"), Place(group=BONE)], s) == ["c5", "b0"]
    assert cells_of([Place(group=BONE)], s, limit=2) == ["b0", "b1"]
    assert cells_of([Place(group=BONE)], s, limit=0) == []
    assert cells_of([Place()], s) == []
    assert cells_of([], s) == []


def test_groups_and_places_are_immutable_values() -> None:
    """Every copy of a layout shares its Group and Place objects (copy() is
    shallow), and a diff is handed to the explanations: none of them may
    change in place, and they work as keys."""
    import dataclasses

    import pytest

    for value, attr in ((RACK, "label"), (Place(cell="c0"), "cell"),
                        (Misplaced("1-2", "c0", None), "at")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, attr, "x")
    assert len({Place(cell="c0"), Place(cell="c0"), Place(group=RACK)}) == 2
    assert len({RACK, Group("rack:0", "seat 0's rack", ("r0", "r1", "r2"))}) == 1
    assert len({Misplaced("1-2", "c0", None), Misplaced("1-2", "c0", None)}) == 1


class _Hand:
    """Just what the table rules read of a dominoes hand: the line and its arms."""

    def __init__(self, left: int, right: int) -> None:
        self.arms = {"left": [object()] * left, "right": [object()] * right}
        self.line = [object()] * (1 + left + right)

    def arm(self, end: str) -> list[object]:
        return self.arms[end]


class _Match:
    def __init__(self, hand: _Hand | None) -> None:
        self.current = hand


def _rules(hand: _Hand | None = None):
    from tablesense.referee.rules import DominoRules
    from tablesense.table.geometry import TableGeometry

    return DominoRules(TableGeometry.load("dominoes-4"), ["Ana", "", "Cy"], _Match(hand))


def test_seats_without_a_name_are_numbered_from_one() -> None:
    rules = _rules()
    # (the word's case is the wording's business; the number is checked here)
    labels = [rules.seat_label(s) for s in range(5)]
    assert [x.lower() for x in labels] == ["ana", "seat 2", "cy", "seat 4", "seat 5"]
    assert rules.seat_label(9).lower() == "seat 10"
    assert rules.seat_label(-1).lower() == "seat 0"


def test_the_next_cell_of_an_arm_folds_back_and_ends() -> None:
    rules = _rules()
    left, right = rules.line.arm("left"), rules.line.arm("right")
    assert rules.target_cell("left", _Hand(0, 0)) == left[0]
    assert rules.target_cell("left", _Hand(len(left), 0)) == right[-1]  # folded onto the far right
    total = len(left) + len(right)
    assert rules.target_cell("left", _Hand(total - 1, 0)) == right[0]
    assert rules.target_cell("left", _Hand(total, 0)) is None  # no cell left at all
    assert rules.target_cell("left", _Hand(total + 5, 0)) is None
    assert rules.target_cell(None, _Hand(1, 0)) is None
    empty = _Hand(0, 0)
    empty.line = []
    assert rules.target_cell("left", empty) == rules.line.center


def test_a_folded_cell_belongs_to_the_arm_that_reached_it() -> None:
    left = len(_rules().line.arm("left"))
    rules = _rules(_Hand(left, 0))
    far_right = rules.line.arm("right")[-1]
    assert rules._arm_of(far_right) == "left"  # the long left arm's next cell
    assert rules._arm_of(rules.line.arm("right")[0]) == "right"
    assert rules._arm_of(rules.line.arm("left")[3]) == "left"
    assert rules._arm_of("center") is None
    short = _rules(_Hand(2, 0))
    assert short._arm_of(short.line.arm("left")[2]) == "left"
    assert short._arm_of(short.line.arm("right")[-1]) == "right"


def test_why_a_draw_is_refused_names_the_right_reason() -> None:
    """The seat to play may draw, but not that tile; any other seat is told by
    the engine whose turn it is."""
    from tablekit import Hands
    from test_referee_dominoes import make_referee, play_until

    from tablesense.games.dominoes import Draw

    for seed in range(1, 40):
        ref, _events, _stored = make_referee("dominoes", "pips-two-player", "dominoes-2", seed)
        h = Hands(ref)
        h.settle()
        if play_until(ref, h, Draw, seed):
            break
    else:
        raise AssertionError("no seed reached a draw")
    from tablesense.referee.rules import DominoRules

    rules = ref.rules
    assert isinstance(rules, DominoRules)
    seat = ref.hand.to_play
    draw = next(m for m in ref.hand.legal_moves() if isinstance(m, Draw))
    piece = str(draw.tile)
    assert rules._why_no_draw(seat, piece) == f"{piece} is not the tile to draw now"
    other = rules._why_no_draw(1 - seat, piece)
    assert other != f"{piece} is not the tile to draw now"
    assert ref.rules.seat_label(seat) in other or "turn" in other


def test_a_refresh_with_discard_lays_the_next_stock_cards() -> None:
    """With ``refresh: discard`` the next four stock cards are laid too, as
    long as four are left (the default ``bottom`` never runs out)."""
    from tablekit import Hands, make_referee

    from tablesense.games.kems import Refresh

    for s in range(2, 52):
        ref, _events, _stored = make_referee("kems", "classic", "kems-4", s, {"refresh": "discard"})
        if not ref.match.results:
            break
    else:
        raise AssertionError("no seed whose first Kems round is still open")
    h = Hands(ref)
    h.settle()
    assert len(ref.hand.stock) >= 4
    coming = [str(c) for c in ref.hand.stock[:4]]
    for cell in ref.geometry.kems_slots:
        h.lift(h.cells[cell])
    h.show(0.3)
    for cell, card in zip(ref.geometry.kems_slots, coming, strict=True):
        h.drop(card, cell)
    h.settle()
    assert ref.hand.events[-1] == Refresh()
    assert [str(c) for c in ref.hand.board] == coming


def test_a_rack_of_three_with_a_board_card_is_not_a_fifth_card() -> None:
    """Seat 0 holds two of its cards in the air and has taken a board card:
    three cards on its rack is a swap under way, never "holds five cards"."""
    from tablekit import kinds
    from test_referee_kems import kems

    ref, events, _stored, h = kems()
    own = [str(c) for c in ref.hand.hands[0]]
    h.lift(own[0])
    h.lift(own[1])
    board_card = h.cells[ref.geometry.kems_slots[0]]
    h.lift(board_card)
    h.to_rack(board_card, 0)
    h.settle()
    assert all(r["reason"] != "fifth_card" for r in kinds(events, "move_rejected"))


def test_board_slots_are_numbered_from_one() -> None:
    from test_referee_kems import kems

    ref = kems()[0]
    slots = ref.geometry.kems_slots
    assert ref.rules.slot_label(0).lower() == f"board slot 1 ({slots[0]})"
    assert ref.rules.slot_label(3).lower() == f"board slot 4 ({slots[3]})"


def test_a_card_on_an_opponents_rack_is_misplaced_not_out_of_play() -> None:
    from tablekit import kinds
    from test_referee_kems import kems

    ref, events, _stored, h = kems()
    card = str(ref.hand.hands[0][0])
    h.lift(card)
    h.to_rack(card, 1)
    h.settle()
    rej = kinds(events, "move_rejected")
    assert rej and rej[-1]["reason"] != "not_in_play"


def test_a_tile_on_another_rack_is_not_a_refused_draw() -> None:
    """Four seats, no boneyard: a tile put on another seat's rack is a
    misplaced tile, never "a draw not allowed"."""
    from tablekit import Hands, kinds, make_referee

    ref, events, _stored = make_referee("dominoes", "pairs-pips", "dominoes-4", 1)
    h = Hands(ref)
    h.settle()
    tile = str(ref.hand.hands[0][0])
    h.lift(str(ref.hand.hands[1][0]))  # seat 1 holds one of its tiles: a free cell
    h.lift(tile)
    h.to_rack(tile, 1)
    h.settle()
    rej = kinds(events, "move_rejected")
    assert rej and rej[-1]["reason"] != "draw_not_allowed"


def test_two_board_cards_swapped_are_misplaced_not_out_of_play() -> None:
    from tablekit import kinds
    from test_referee_kems import kems

    ref, events, _stored, h = kems()
    s0, s1 = ref.geometry.kems_slots[0], ref.geometry.kems_slots[1]
    a, b = h.cells[s0], h.cells[s1]
    h.lift(a)
    h.lift(b)
    h.drop(a, s1)
    h.drop(b, s0)
    h.settle()
    rej = kinds(events, "move_rejected")
    assert rej and rej[-1]["reason"] == "misplaced"
