"""One hand of dominoes: :class:`~.state.HandState` (the deal, the line of
play, whose turn, legality) with its scoring (:mod:`.scoring`) and random
playouts (:mod:`.playout`).

:class:`DominoHand` follows python-chess: :meth:`~DominoHand.check` only
answers (raising :class:`IllegalPlayError` with a sentence a player
understands), :meth:`~DominoHand.play` checks and applies,
:meth:`~DominoHand.apply` does not check, and :meth:`~DominoHand.undo` takes
back.
"""

from __future__ import annotations

import random

from tablesense.games.common import HandResult
from tablesense.games.dominoes.options import Opening
from tablesense.games.dominoes.playout import playout, simulate
from tablesense.games.dominoes.scoring import hand_result, next_opening_after
from tablesense.games.dominoes.state import HandState

__all__ = ["DominoHand"]


class DominoHand(HandState):
    """One hand: the deal, the line of play, whose turn, the moves so far.

    Build it with :meth:`DominoMatch.new_hand` (which applies the match's
    opening rule), or directly with an :class:`Opening`. Seats are in playing
    order; after a seat plays or passes, seat ``(s + 1) % seats`` is next.
    """

    __slots__ = ()

    def playout(self, rng: random.Random) -> None:
        """Play uniformly random legal moves until the hand is over.

        The same moves :meth:`legal_moves` offers (announcements aside), applied
        as :meth:`apply` would (see :func:`~tablesense.games.dominoes.playout.playout`).
        """
        playout(self, rng)

    def simulate(self, rng: random.Random) -> HandResult:
        """The result of one uniformly random playout from here, leaving this
        hand untouched: what :meth:`playout` then :meth:`result` give on a
        clone (see :func:`~tablesense.games.dominoes.playout.simulate`)."""
        return simulate(self, rng)

    # -- scoring

    def result(self) -> HandResult:
        """How the hand ended and what each team earned (raises if in play)."""
        return hand_result(self)

    def next_opening(self, result: HandResult) -> Opening:
        """Who opens the next hand of the match, after this one ended with ``result``."""
        return next_opening_after(self, result)
