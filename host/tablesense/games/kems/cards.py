"""The cards of Kems: ranks, suits, the deck, and who partners whom around the table."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tablesense.games.common import (
    Seat,
    Team,
    say,
)

RANKS = "23456789TJQKA"
"""Ranks in ascending order, as the record format writes them."""
SUITS = "SHDC"
"""Suits as the record format writes them: spades, hearts, diamonds, clubs."""
RANKS_32 = "789TJQKA"
"""The ranks of the 32-card deck (7 to ace)."""
SEAT_COUNTS = (4, 6, 8)
"""Kems is played in teams of two: 4, 6 or 8 seats."""
HAND_SIZE = 4
BOARD_SIZE = 4

_RANK_NAMES: dict[str, str] = {
    "2": say("2s"), "3": say("3s"), "4": say("4s"), "5": say("5s"), "6": say("6s"),
    "7": say("7s"), "8": say("8s"), "9": say("9s"), "T": say("tens"), "J": say("jacks"),
    "Q": say("queens"), "K": say("kings"), "A": say("aces"),
}  # fmt: skip
_COUNT_WORDS: dict[int, str] = {3: say("three"), 4: say("four")}


# --------------------------------------------------------------------------- cards


@dataclass(frozen=True, slots=True)
class Card:
    """A playing card: ``Card.parse("TH")`` is the ten of hearts.

    ``str(card)`` is the record's spelling (rank then suit), ``repr`` can be
    pasted back. Cards compare by value; :func:`deck` gives the deck order.
    """

    rank: str
    suit: str

    def __post_init__(self) -> None:
        if not (isinstance(self.rank, str) and len(self.rank) == 1 and self.rank in RANKS):
            raise ValueError(f"{self.rank!r} is not a card rank (one of {' '.join(RANKS)})")
        if not (isinstance(self.suit, str) and len(self.suit) == 1 and self.suit in SUITS):
            raise ValueError(f"{self.suit!r} is not a card suit (one of {' '.join(SUITS)})")

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read a card written rank then suit (``"TH"``, ``"7S"``); exact case.

        :raises ValueError: when ``text`` is not a card.
        """
        card = _CARDS.get(text) if isinstance(text, str) else None
        if card is None:
            raise ValueError(
                f"{text!r} is not a card: write rank then suit, "
                f"ranks {' '.join(RANKS)}, suits {' '.join(SUITS)} (for example 'TH')"
            )
        return card

    def __str__(self) -> str:
        return self.rank + self.suit

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


_CARDS: dict[str, Card] = {r + s: Card(r, s) for s in SUITS for r in RANKS}


def deck(size: int = 32) -> list[Card]:
    """The cards of a deck, suit by suit, low to high: 32 (7 to ace) or 52 cards.

    :raises ValueError: for any other size.
    """
    if size == 32:
        ranks = RANKS_32
    elif size == 52:
        ranks = RANKS
    else:
        raise ValueError(f"a Kems deck has 32 or 52 cards, not {size!r}")
    return [_CARDS[r + s] for s in SUITS for r in ranks]


def rank_name(rank: str, count: int = 2) -> str:
    """``"nines"``-style plural used in messages (``"three 9s"``)."""
    return _RANK_NAMES[rank] if count != 1 else rank


# --------------------------------------------------------------------------- seats


def partner_of(seat: Seat, seats: int) -> Seat:
    """The partner of ``seat`` at a table of ``seats``: ``(s + n/2) mod n``."""
    return (seat + seats // 2) % seats


def team_of(seat: Seat, seats: int) -> Team:
    """The team of ``seat`` at a table of ``seats``: ``s mod (n/2)``."""
    return seat % (seats // 2)




def iter_cards(text: str | Iterable[str]) -> list[Card]:
    """``iter_cards("9H 9S KD KC")`` -> cards; handy in tests and the REPL."""
    items = text.split() if isinstance(text, str) else list(text)
    return [Card.parse(t) for t in items]
