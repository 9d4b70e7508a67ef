"""Kems as a :class:`~tablesense.games.game.Game`: what the registry answers
about it (the engine is :mod:`tablesense.games.kems`)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, ClassVar, Literal

from tablesense.games.common import ReplayResult, Seat, Team
from tablesense.games.game import Game, Match
from tablesense.games.kems.cards import SEAT_COUNTS, Card, deck
from tablesense.games.kems.events import event_from_json, event_to_json
from tablesense.games.kems.match import KemsMatch
from tablesense.games.kems.replay import replay_record
from tablesense.sentence import Sentence, say

#: A card in a text: ``TH``, ``10H``, ``QS``, not part of a longer word.
CARD_RE = re.compile(r"(?<![\w])(10|[2-9TJQKA])([SHDC])(?![\w])")

SUIT_SIGNS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def _card_key(rank: str, suit: str) -> str:
    return ("T" if rank == "10" else rank) + suit


def pretty_cards(text: str) -> str:
    """Cards as people write them: ``TH`` → ``10♥``, ``QS`` → ``Q♠``."""

    def card(m: re.Match[str]) -> str:
        rank = "10" if m.group(1) in ("T", "10") else m.group(1)
        return rank + SUIT_SIGNS[m.group(2)]

    return CARD_RE.sub(card, text)


class Kems(Game):
    """Kems: no turns, four of a kind signalled to a partner, teams of two."""

    name: ClassVar[str] = "kems"
    title: ClassVar[str] = say("Kems")
    deal_word: ClassVar[Literal["hand", "round"]] = "round"
    piece_word: ClassVar[Literal["tile", "card"]] = "card"
    the_piece: ClassVar[Sentence] = say("the card")
    default_player: ClassVar[str] = "tracking"
    play_area: ClassVar[Literal["line", "board"]] = "board"
    stock_word: ClassVar[Literal["boneyard", "stock"]] = "stock"
    button_words: ClassVar[tuple[Literal["pass", "kems"], Literal["call", "contre"]]] = ("kems", "contre")
    rating_families: ClassVar[dict[str, str]] = {"kems": say("Kems")}

    @property
    def variants(self) -> tuple[str, ...]:
        return ("classic",)

    def variant_title(self, variant: str) -> str:
        return say("classic") if variant == "classic" else variant

    def check_variant(self, variant: str) -> None:
        # journals of the first Kems tables wrote no variant
        if variant != "":
            super().check_variant(variant)

    def seat_counts(self, variant: str) -> tuple[int, ...]:
        self.check_variant(variant)
        return SEAT_COUNTS

    def new_match(self, variant: str, options: Mapping[str, Any] | None = None,
                  seats: int | None = None) -> Match:
        self.check_variant(variant)
        return KemsMatch(options, seats=seats if seats is not None else SEAT_COUNTS[0])

    def replay(self, record: Mapping[str, Any]) -> ReplayResult:
        return replay_record(dict(record))

    def move_to_json(self, move: Any) -> dict[str, Any]:
        return event_to_json(move)

    def move_from_json(self, obj: Mapping[str, Any], *, seats: int | None = None) -> Any:
        return event_from_json(obj, seats=seats)

    def deal_to_json(self, hand: Any) -> dict[str, Any]:
        return {
            "deal": [[str(c) for c in h] for h in hand.deal],
            "board": [str(c) for c in hand.initial_board],
            "stock": [str(c) for c in hand.initial_stock],
        }

    def start_hand(self, match: Any, deal: Mapping[str, Any], *, free_draw: bool = False) -> Any:
        return match.new_hand(
            deal=[[Card.parse(c) for c in h] for h in deal["deal"]],
            board=[Card.parse(c) for c in deal["board"]],
            stock=[Card.parse(c) for c in deal["stock"]],
        )

    def apply_reorder(self, hand: Any, entry: Mapping[str, Any]) -> None:
        hand.stock[:] = [Card.parse(c) for c in entry["stock"]]
        hand.initial_stock = tuple(Card.parse(c) for c in entry["initial"])

    def stock_reorder(self, hand: Any, shown: list[str]) -> dict[str, Any]:
        # the cards already revealed (four per refresh) keep their places; the
        # shown ones come first among the unrevealed, the rest keep their order
        refreshes = sum(1 for e in hand.events if type(e).__name__ == "Refresh")
        initial = [str(c) for c in hand.initial_stock]
        seen = 4 * refreshes
        unrevealed = initial[seen:]
        stock = [str(c) for c in hand.stock]
        if stock[: len(unrevealed)] != unrevealed:
            return {"type": "reorder", "stock": stock, "initial": initial}
        rest = [c for c in unrevealed if c not in shown]
        order = [c for c in shown if c in unrevealed] + rest
        return {
            "type": "reorder",
            "stock": order + stock[len(unrevealed) :],
            "initial": initial[:seen] + order,
        }

    def all_pieces(self, options: Any) -> frozenset[str]:
        return frozenset(str(c) for c in deck(options.deck))

    def face_up(self, hand: Any) -> set[str]:
        return {str(c) for c in hand.board}

    def pieces_view(self, hand: Any, last: Any, last_hand_no: int | None, *, boneyard: bool) -> dict[str, Any]:
        if hand is None:
            return {"board": []}
        return {"board": [str(c) for c in hand.board], "stock": len(hand.stock)}

    def misdeal_reason(self, hand: Any) -> str | None:
        return hand.misdeal_reason() if hand.is_misdeal else None

    def may_call_double(self, hand: Any) -> bool:
        return bool(hand.is_over and hand.awaiting_double)

    def player(self, name: str | None = None, think_ms: float | None = None) -> Any:
        # every Kems player decides within a few milliseconds: no think time
        from tablesense.games.kems_players import make_player

        return make_player(name or self.default_player)

    def coach(self, worlds: int) -> Any:
        from tablesense.games.coach import KemsCoach

        return KemsCoach()

    def piece_names(self, text: str) -> list[str]:
        return [_card_key(r, s) for r, s in CARD_RE.findall(text)]

    def hide_pieces(self, text: str, known: Collection[str]) -> str:
        def card(m: re.Match[str]) -> str:
            return m.group(0) if _card_key(m.group(1), m.group(2)) in known else "the card"

        return CARD_RE.sub(card, text)

    def pretty(self, text: str) -> str:
        return pretty_cards(text)

    def players_per_team(self, variant: str, seats: int) -> int:
        return 2

    def team_of_seat(self, seats: int, seat: Seat) -> Team:
        return seat % (seats // 2)

    def rating_family(self, variant: str, seats: int) -> str:
        return "kems"


__all__ = ["CARD_RE", "SUIT_SIGNS", "Kems", "pretty_cards"]
