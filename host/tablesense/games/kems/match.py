"""A match: rounds played in order until a team reaches the target (:class:`KemsMatch`)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from tablesense.games.common import (
    HandResult,
    IllegalPlayError,
    OptionError,
    Points,
    Seat,
    Team,
    say,
)
from tablesense.games.kems.cards import BOARD_SIZE, HAND_SIZE, SEAT_COUNTS, Card, deck, team_of
from tablesense.games.kems.options import KemsOptions
from tablesense.games.kems.round import DealError, KemsRound, deal_cards


class KemsMatch:
    """A match: rounds played in order until a team reaches the target.

    ``score[t]`` is team ``t``'s total. A misdeal is a round too (it scores
    nothing and stays in the record, as the format says).
    """

    def __init__(
        self, options: KemsOptions | Mapping[str, Any] | None = None, seats: int = 4
    ) -> None:
        if seats not in SEAT_COUNTS:
            raise OptionError(say("Kems is played by 4, 6 or 8 seats, not {seats!r}", seats=seats))
        if not isinstance(options, KemsOptions):
            options = KemsOptions.from_dict(options, seats)
        elif HAND_SIZE * seats + BOARD_SIZE > options.deck:
            raise OptionError(say("{seats} seats do not fit a {deck}-card deck: use deck 52", seats=seats, deck=options.deck))
        self.options: KemsOptions = options
        self.variant = "classic"
        self.seats: int = seats
        self.score: list[Points] = [0.0] * (seats // 2)
        self.hands: list[KemsRound] = []
        self.results: list[HandResult] = []
        self.current: KemsRound | None = None

    @property
    def target(self) -> int | None:
        return self.options.target

    def team_of(self, seat: Seat) -> Team:
        return team_of(seat, self.seats)

    @property
    def dealer(self) -> Seat:
        """Who deals the next (or current) round: seat 0 first, then clockwise."""
        return len(self.hands) % self.seats

    @property
    def winner(self) -> Team | None:
        """The team that reached the target with the highest score (a tie at
        the top means play goes on)."""
        if self.target is None:
            return None
        best = max(self.score)
        if best < self.target or self.score.count(best) != 1:
            return None
        return self.score.index(best)

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def new_hand(
        self,
        rng: random.Random | None = None,
        deal: Sequence[Sequence[Card]] | None = None,
        board: Sequence[Card] | None = None,
        stock: Sequence[Card] | None = None,
    ) -> KemsRound:
        """Start the next round: shuffle and deal with ``rng``, or use the given
        ``deal``, ``board`` and ``stock`` (all three).

        :raises IllegalPlayError: the match is over or a round is in progress.
        :raises DealError: the given cards are not a deal.
        """
        if self.is_over:
            raise IllegalPlayError(say("the match is over: team {winner} reached {target}", winner=self.winner, target=self.target))
        if self.current is not None:
            raise IllegalPlayError(say("the current round is not finished yet"))
        if deal is None:
            if board is not None or stock is not None:
                raise DealError("give the deal, the board and the stock together, or none")
            if rng is None:
                raise ValueError("dealing needs an rng (random.Random) or an explicit deal")
            cards = deck(self.options.deck)
            rng.shuffle(cards)
            hands, b, s = deal_cards(cards, self.seats, self.dealer)
            rnd = KemsRound(hands, b, s, self.options)
        else:
            if board is None or stock is None:
                raise DealError("give the deal, the board and the stock together, or none")
            if len(deal) != self.seats:
                raise DealError(
                    f"this match has {self.seats} seats; the deal has {len(deal)} hands"
                )
            rnd = KemsRound(deal, board, stock, self.options)
        self.current = rnd
        return rnd

    def finish_hand(self) -> HandResult:
        """Score the current round (it must be over) and close it."""
        rnd = self.current
        if rnd is None:
            raise IllegalPlayError(say("there is no round in progress"))
        if not rnd.is_over:
            raise IllegalPlayError(say("the round is not over: nobody has called yet"))
        result = rnd.result()
        for t, p in enumerate(result.points):
            self.score[t] += p
        self.hands.append(rnd)
        self.results.append(result)
        self.current = None
        return result

    def abandon_hand(self) -> KemsRound:
        """Drop the current round without scoring it (the players agree to
        deal again, for instance when nobody makes a Kems for too long). An
        abandoned round leaves no trace in the record: it has no call, so the
        format has no way to write it."""
        rnd = self.current
        if rnd is None:
            raise IllegalPlayError(say("there is no round in progress"))
        self.current = None
        return rnd

    def to_record(self) -> dict[str, Any]:
        """The game record of the finished rounds (format ``tablesense.record/1``)."""
        return {
            "format": "tablesense.record/1",
            "game": "kems",
            "variant": "classic",
            "options": self.options.to_dict(),
            "hands": [r.to_json() for r in self.hands],
        }
