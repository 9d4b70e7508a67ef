"""What every Kems computer player shares: the protocol the table calls, the
view-only base class, and answering the partner's sign.

A player answers ``choose(round, seat, rng) -> Swap | Call | None`` (None:
wait) and reads only ``round.view(seat)``; :class:`ViewPlayer` enforces that
by handing its subclasses nothing but the :class:`~tablesense.games.kems.SeatView`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from tablesense.games.kems import Call, Card, KemsRound, SeatView, Swap

__all__ = ["KemsPlayer", "ViewPlayer", "signal_call", "holds_four", "best_count"]


class KemsPlayer(Protocol):
    """What the table and the demo ask of a computer player."""

    name: str

    def choose(self, round: KemsRound, seat: int, rng: random.Random) -> Swap | Call | None: ...


class ViewPlayer:
    """A player that decides from one seat's view alone, so it can never peek
    at hidden hands; a table can build the view with its own source of the
    partner's sign (``round.view(seat, signal=...)``)."""

    def choose(self, round: KemsRound, seat: int, rng: random.Random) -> Swap | Call | None:
        return self.decide(round.view(seat), rng)

    def decide(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        """Kems or double on the partner's sign first (every player answers a
        sign the same way); otherwise the player's own choice of swap."""
        call = signal_call(view)
        if call is not None or view.is_over:
            return call
        return self._play(view, rng)

    def _play(self, view: SeatView, rng: random.Random) -> Swap | Call | None:
        """A swap, a contre or None (wait), once no sign asks for a call."""
        raise NotImplementedError


def signal_call(view: SeatView) -> Call | None:
    """kems on the partner's signal; double right after the partner's kems
    when this seat's partner (the caller) also signals four."""
    if view.awaiting_double:
        kems = view.events[-1]
        mine = isinstance(kems, Call) and kems.seat == view.partner
        return Call(view.seat, "double") if mine and view.signal else None
    if view.is_over:
        return None
    if view.signal:
        return Call(view.seat, "kems")
    return None


def holds_four(hand: Sequence[Card]) -> bool:
    return len({c.rank for c in hand}) == 1


def best_count(hand: Sequence[Card]) -> int:
    """How many cards of its most-held rank ``hand`` holds."""
    return Counter(c.rank for c in hand).most_common(1)[0][1]
