"""Kems tests written to kill mutants of games/kems.py
(benchmarks/mutation.py, docs/mutation-testing.md)."""

from __future__ import annotations

import pytest

from tablesense.games.common import OptionError
from tablesense.games.kems import BOARD_SIZE, HAND_SIZE, Card, KemsOptions


def test_a_deck_too_small_says_how_many_cards_are_needed() -> None:
    assert (HAND_SIZE, BOARD_SIZE) == (4, 4)
    with pytest.raises(OptionError, match=r"^8 seats need 36 cards for the hands and the board: use deck 52$"):
        KemsOptions.from_dict({"deck": 32}, seats=8)
    assert KemsOptions.from_dict({"deck": 52}, seats=8).deck == 52
    assert KemsOptions.from_dict({"deck": 32}, seats=6).deck == 32  # 28 cards fit


def _deal32() -> tuple[list[list[Card]], list[Card], list[Card]]:
    from tablesense.games.kems import deck

    cards = list(deck(32))
    return [cards[4 * s:4 * s + 4] for s in range(4)], cards[16:20], cards[20:]


def test_a_match_checks_ready_made_options_against_its_seats() -> None:
    from tablesense.games.kems import KemsMatch

    six = KemsOptions.from_dict({"deck": 32}, seats=6)
    KemsMatch(six, seats=6)
    with pytest.raises(OptionError, match=r"^8 seats do not fit a 32-card deck: use deck 52$"):
        KemsMatch(six, seats=8)


def test_a_round_read_from_a_record_has_one_hand_per_seat() -> None:
    from tablesense.games.common import RecordFormatError
    from tablesense.games.kems.replay import _read_round

    deal, board, stock = _deal32()
    obj = {"deal": [[str(c) for c in h] for h in deal], "board": [str(c) for c in board],
           "stock": [str(c) for c in stock], "events": []}
    assert len(_read_round(obj, 0, 4)[0]) == 4
    assert len(_read_round(obj, 0, None)[0]) == 4  # the seat count not known yet: not checked
    with pytest.raises(RecordFormatError, match=r"^hands\[2\]\.deal has 4 hands; this match has 6 seats$"):
        _read_round(obj, 2, 6)


def test_a_deal_with_cards_missing_names_at_most_eight() -> None:
    from tablesense.games.kems import DealError, KemsRound

    deal, board, stock = _deal32()
    few = stock[:-2]
    with pytest.raises(DealError, match=r"hold 30 cards, not the 32 of the deck \(missing: \S+ \S+\)$"):
        KemsRound(deal, board, few)
    with pytest.raises(DealError, match=r"hold 22 cards, not the 32 of the deck \(missing: (\S+ ){7}\S+ \.\.\.\)$"):
        KemsRound(deal, board, stock[:2])
    with pytest.raises(DealError, match=r"hold 24 cards, not the 32 of the deck \(missing: (\S+ ){7}\S+\)$"):
        KemsRound(deal, board, stock[:4])
