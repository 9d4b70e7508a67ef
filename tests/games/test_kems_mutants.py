"""Kems tests written to kill mutants of games/kems.py
(benchmarks/mutation.py, docs/testing.md)."""

from __future__ import annotations

import pytest

from tablesense.games.common import OptionError
from tablesense.games.kems import BOARD_SIZE, HAND_SIZE, KemsOptions


def test_a_deck_too_small_says_how_many_cards_are_needed() -> None:
    assert (HAND_SIZE, BOARD_SIZE) == (4, 4)
    with pytest.raises(OptionError, match=r"^8 seats need 36 cards for the hands and the board: use deck 52$"):
        KemsOptions.from_dict({"deck": 32}, seats=8)
    assert KemsOptions.from_dict({"deck": 52}, seats=8).deck == 52
    assert KemsOptions.from_dict({"deck": 32}, seats=6).deck == 32  # 28 cards fit
