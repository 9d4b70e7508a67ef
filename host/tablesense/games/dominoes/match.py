"""A match: hands played in order, openings, score, target, and the record."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from tablesense.games.common import HandResult, OptionError, Points, Seat, Team, say
from tablesense.games.dominoes.deal import deal_tiles
from tablesense.games.dominoes.hand import DominoHand
from tablesense.games.dominoes.options import (
    _SEATS,
    RECORD_FORMAT,
    VARIANTS,
    DominoOptions,
    Opening,
    _first_hand_opening,
)
from tablesense.games.dominoes.tiles import Tile, move_to_json


class DominoMatch:
    """Hands played in order as one match: openings, score, target, record."""

    def __init__(
        self,
        variant: str,
        options: DominoOptions | Mapping[str, Any] | None = None,
        seats: int | None = None,
    ) -> None:
        if variant not in VARIANTS:
            raise OptionError(say("unknown dominoes variant {variant!r}; known: {variants}", variant=variant, variants=', '.join(VARIANTS)))
        if isinstance(options, DominoOptions):
            if options.variant != variant:
                raise OptionError(say("options of {variant} given to a {variant2} match", variant=options.variant, variant2=variant))
            self.options = options
        else:
            self.options = DominoOptions.from_dict(variant, options)
        self.variant = variant
        self.seats = seats if seats is not None else _SEATS[variant][0]
        if self.seats not in _SEATS[variant]:
            allowed = " or ".join(str(s) for s in _SEATS[variant])
            raise OptionError(say("{variant} is played by {allowed} seats, not {seats}", variant=variant, allowed=allowed, seats=self.seats))
        self.teams = 2 if self.seats in (2, 4) else self.seats
        start = self.options.start_score
        if start is not None and len(start) != self.teams:
            raise OptionError(
                say("option 'start_score' has one number per team ({teams}), got {list_start}", teams=self.teams, list_start=list(start))
            )
        self.score: list[Points] = list(start) if start is not None else [0] * self.teams
        self.hands: list[DominoHand] = []
        self.results: list[HandResult] = []
        self.voided: list[tuple[DominoHand, str, int]] = []
        """Voided hands: (hand, reason, number of counted hands before it)."""
        self.current: DominoHand | None = None
        self._next_opening = _first_hand_opening(variant, self.seats)
        self._winner: Team | None = None

    @property
    def target(self) -> Points:
        return self.options.target

    @property
    def is_over(self) -> bool:
        return self._winner is not None

    @property
    def winner(self) -> Team | None:
        return self._winner

    @property
    def next_opening(self) -> Opening:
        """The opening rule the next hand will follow."""
        return self._next_opening

    def team_of(self, seat: Seat) -> Team:
        return seat % 2 if self.seats == 4 else seat

    def new_hand(
        self,
        rng: random.Random | None = None,
        deal: Sequence[Sequence[Tile]] | None = None,
        boneyard: Sequence[Tile] | None = None,
        free_draw: bool = False,
    ) -> DominoHand:
        """Start the next hand with ``deal`` (and ``boneyard``), or deal with ``rng``.

        The hand follows the variant's opening rule in match context. With
        ``free_draw`` a draw may take any boneyard tile (see
        :class:`DominoHand`): what a sensing table needs. Raises
        :class:`DealError` for a deal that does not fit the variant and
        ``ValueError`` when a hand is still running or the match is over.
        """
        if self.current is not None:
            raise ValueError("the current hand is not finished: finish_hand() or void_hand() first")
        if self._winner is not None:
            raise ValueError(f"the match is over: team {self._winner} won")
        if deal is None:
            if rng is None:
                raise ValueError("new_hand needs a deal or a random.Random to deal with")
            hands, bone = deal_tiles(self.variant, self.seats, rng)
            deal, boneyard = hands, bone
        hand = DominoHand(
            self.options,
            deal,
            boneyard or (),
            self._next_opening,
            score_before=tuple(self.score),
            free_draw=free_draw,
        )
        self.current = hand
        return hand

    def finish_hand(self) -> HandResult:
        """Score the current hand (which must be over) and move the match on."""
        hand = self.current
        if hand is None:
            raise ValueError("no hand is running")
        if not hand.is_over:
            raise ValueError("the hand is still in play")
        result = hand.result()
        for team, pts in enumerate(result.points):
            self.score[team] += pts
        self.hands.append(hand)
        self.results.append(result)
        self.current = None
        self._next_opening = hand.next_opening(result)
        if hand.outcome == "seven-doubles" and result.winner is not None:
            self._winner = result.winner
        else:
            best = max(self.score)
            leaders = [t for t, s in enumerate(self.score) if s == best]
            if best >= self.target and len(leaders) == 1:
                self._winner = leaders[0]
        return result

    def void_hand(self, reason: str) -> None:
        """Cancel the current hand (``toques``: the wronged side claims a replay).

        It scores nothing, is kept under ``x-voided`` in the record, and the
        next hand follows the same opening rule.
        """
        if self.current is None:
            raise ValueError("no hand is running")
        self.voided.append((self.current, reason, len(self.hands)))
        self.current = None

    @property
    def carry(self) -> list[Points]:
        """``brazilian-points``: what each team starts the next match with.

        - bonus: "a dupla que terminar fazendo mais que quatro pontos" — every
          side that ends above the target keeps its points above it, the
          losing side too (possible after tied hands);
        - lambreta: a side that lost without making a point *in this match*
          (its final score minus the carried ``start_score``, 0 or less)
          starts with option ``lambreta``; a side that scored and lost is not
          penalised, whatever it carried in.

        Zeros while the match runs.
        """
        out: list[Points] = [0] * self.teams
        if self._winner is None or self.variant != "brazilian-points":
            return out
        start = self.options.start_score or (0,) * self.teams
        for team, s in enumerate(self.score):
            made = s - start[team]
            if team != self._winner and made <= 0:
                out[team] = self.options.lambreta
            elif s > self.target:
                out[team] = s - self.target
        return out

    def to_record(self) -> dict[str, Any]:
        """The match as a game record (finished hands only)."""
        record: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "game": "dominoes",
            "variant": self.variant,
            "options": self.options.to_dict(),
            "hands": [_hand_to_json(h) for h in self.hands],
        }
        if self.voided:
            record["x-voided"] = [
                {"before_hand": before, "reason": reason, **_hand_to_json(h)}
                for h, reason, before in self.voided
            ]
        return record


def _hand_to_json(h: DominoHand) -> dict[str, Any]:
    out: dict[str, Any] = {"deal": [[str(t) for t in hand] for hand in h.deal]}
    if h.dealt_boneyard:
        out["boneyard"] = [str(t) for t in h.dealt_boneyard]
    out["moves"] = [move_to_json(m) for m in h._moves]
    return out
