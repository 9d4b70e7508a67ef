"""What every dominoes player is, and the moves it may choose from.

A leaf of the package: ``simple`` (random, greedy, Monte Carlo) and
``search`` both build on it, and ``simple`` imports ``search`` for the
players by name, so the shared pieces cannot live in either.
"""

from __future__ import annotations

import random
from typing import Protocol

from tablesense.games.dominoes import Announce, DominoHand, DominoMove


class DominoPlayer(Protocol):
    """A seat's player: one move for ``seat`` from what that seat may know."""

    name: str

    def choose(self, hand: DominoHand, seat: int, rng: random.Random) -> DominoMove: ...


def legal_choices(hand: DominoHand, seat: int) -> list[DominoMove]:
    """The moves a computer seat chooses among: every legal move but an announcement.

    None of the players announces a double (a failed announcement costs a
    point and they do not plan that far); a seat asked out of turn or after
    the hand is over is a caller's mistake and says so.
    """
    if hand.is_over:
        raise ValueError("the hand is over: there is nothing to choose")
    if seat != hand.to_play:
        raise ValueError(f"it is seat {hand.to_play}'s turn, not seat {seat}'s")
    moves: list[DominoMove] = [m for m in hand.legal_moves(seat) if not isinstance(m, Announce)]
    assert moves, "a seat to play always has a play, a draw or a pass"
    return moves
