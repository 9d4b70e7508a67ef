"""The referee's hint to the boards: the cells a legal move can touch."""

from __future__ import annotations

from typing import Any

from tablekit import Hands, make_referee, perform

from tablesense.referee.hot import hot_cells


def test_hot_cells_are_the_line_ends_and_the_rack_of_the_seat_to_play() -> None:
    ref, _events, _stored = make_referee("dominoes", "pairs-pips", "dominoes-4", 1)
    h = Hands(ref)
    h.settle()
    seat = ref.hand.to_play
    rules: Any = ref.rules  # dominoes rules: the line's target_cell
    before = hot_cells(ref)
    center = rules.target_cell(None)
    assert before[0] == center  # the opening goes on the centre
    assert before[1:] == list(ref.geometry.seats[seat].rack)
    perform(h, ref.hand.legal_moves()[-1])
    after = hot_cells(ref)
    ends = [rules.target_cell(end) for end in ("left", "right")]
    assert after[:2] == [c for c in ends if c is not None]
    assert center not in after  # the opening tile lies there now
    assert after[2:] == list(ref.geometry.seats[ref.hand.to_play].rack)
    assert ref.hand.to_play != seat


def test_no_hot_cells_for_a_game_without_a_line() -> None:
    ref, _events, _stored = make_referee("kems", "classic", "kems-4", 1)
    assert hot_cells(ref) == []
