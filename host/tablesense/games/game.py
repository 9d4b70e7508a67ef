"""One interface for every game: :class:`Game`, and the :class:`Match` it makes.

Like python-chess's variant boards (one ``Board`` interface, a subclass per
variant, found by name), every game the table plays is a :class:`Game`
subclass with the same questions and the same verbs, found by name in
:mod:`tablesense.games.registry`. The referee, the journal, the director,
the pages and the record code ask it; none of them branches on a game's name.

A game answers:

- what it is: ``name``, ``title``, its ``variants`` and their seat counts,
  what one deal is called (``deal_word``: a dominoes *hand*, a Kems *round*)
  and one piece (``piece_word``);
- how to play it: :meth:`Game.new_match` (a :class:`Match`: ``new_hand``,
  ``finish_hand``, ``current``, ``hands``, ``score``, ``winner``...), moves
  to and from JSON, a deal to and from the journal's ``hand`` entry, record
  replay, the computer players and the coach;
- what it shows: the pieces a text names, which are face up, how people write
  them (``10♥``), the pips left on the racks;
- how a club seats it: players per team, the team of a seat, the rating family.

Nothing here reads the table: how a game's pieces lie on cells is the
referee's (``referee/rules.py``), which the table's layouts feed.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from typing import Any, ClassVar, Literal, Protocol

from tablesense.games.common import HandResult, OptionError, Points, ReplayResult, Seat, Team
from tablesense.sentence import Sentence, say

__all__ = ["Game", "Hand", "Match"]


class Hand(Protocol):
    """One deal being played: a dominoes hand, a Kems round."""

    @property
    def is_over(self) -> bool: ...

    @property
    def seats(self) -> int: ...

    def legal_moves(self, seat: Seat | None = None) -> list[Any]: ...

    def play(self, move: Any) -> Any: ...

    def undo(self) -> Any: ...

    def result(self) -> HandResult: ...


class Match(Protocol):
    """Deals played in order until a side reaches the target: the same verbs
    for every game (``new_hand``, ``finish_hand``), so that the referee, the
    director's tables and the players' loops drive any of them alike."""

    variant: str
    seats: int
    options: Any
    score: list[Points]
    results: list[HandResult]

    current: Any
    """The deal in play (a :class:`Hand`), or None between deals."""

    @property
    def hands(self) -> list[Any]:
        """The finished deals, in order."""
        ...

    @property
    def target(self) -> Any: ...

    @property
    def winner(self) -> Team | None: ...

    @property
    def is_over(self) -> bool: ...

    def new_hand(self, rng: random.Random | None = None) -> Any:
        """Deal the next hand with ``rng`` (each game also takes a given deal)."""
        ...

    def finish_hand(self) -> HandResult:
        """Score the current hand (it must be over) and move the match on."""
        ...

    def team_of(self, seat: Seat) -> Team: ...

    def to_record(self) -> dict[str, Any]: ...


class Game(ABC):
    """A game the table plays; one instance per game, in the registry."""

    name: ClassVar[str]
    """The record format's name: ``dominoes``, ``kems``."""
    title: ClassVar[str]
    """The name people read (translated where it is shown)."""
    deal_word: ClassVar[Literal["hand", "round"]]
    """What the game calls one deal; the texts that name it come in both."""
    piece_word: ClassVar[Literal["tile", "card"]]
    the_piece: ClassVar[Sentence]
    """A hidden piece in a public text: "the tile", "the card"."""
    default_player: ClassVar[str]
    """The computer player a seat gets when none is named."""
    play_area: ClassVar[Literal["line", "board"]]
    """Where played pieces go, which is how pages draw a game: a ``line`` of
    tiles matched end to end (dominoes), or a ``board`` of face-up slots that
    pieces are swapped with (Kems)."""
    can_void: ClassVar[bool] = False
    """A hand may be voided (scores nothing, dealt again, kept in the record)."""
    has_turns: ClassVar[bool] = False
    """Seats play in turn (dominoes: a seat button passes or draws); without
    turns every seat may act at any time (Kems: a seat button calls)."""
    reviews_hands: ClassVar[bool] = False
    """The coach reviews each finished hand (its costliest moves)."""
    stock_word: ClassVar[Literal["boneyard", "stock"]]
    """What the pieces left to draw from are called."""
    button_words: ClassVar[tuple[Literal["pass", "kems"], Literal["call", "contre"]]]
    """What a seat's two buttons say: the main one (dominoes: pass; Kems:
    Kems!) and the call one (dominoes: announce a double; Kems: contre)."""

    def page_facts(self) -> dict[str, Any]:
        """What the pages (the display, the table top) draw differently per
        game, served to them with the game's name so that their JavaScript
        never branches on that name: a new game or variant sets these and
        needs no page edit. ``title`` is a Sentence (translated where it is
        published); the ``*_word`` fields pick the page's own label keys."""
        main, call = self.button_words
        return {
            "name": self.name,
            "title": self.title,
            "deal_word": self.deal_word,
            "piece_word": self.piece_word,
            "stock_word": self.stock_word,
            "play_area": self.play_area,
            "has_turns": self.has_turns,
            "buttons": {"pass": main, "call": call},
        }

    # ------------------------------------------------------------------ what
    @property
    @abstractmethod
    def variants(self) -> tuple[str, ...]:
        """The record format's variant names; the first is the default."""

    @property
    def default_variant(self) -> str:
        return self.variants[0]

    @abstractmethod
    def variant_title(self, variant: str) -> str:
        """A variant as people name it (translated where it is shown)."""

    @abstractmethod
    def seat_counts(self, variant: str) -> tuple[int, ...]:
        """How many seats may play ``variant``; the first is its usual table."""

    def default_seats(self, variant: str) -> int:
        return self.seat_counts(variant)[0]

    def variant_for_seats(self, seats: int) -> str:
        """The variant a table of ``seats`` plays when none is named."""
        for variant in self.variants:
            if seats == self.default_seats(variant):
                return variant
        for variant in self.variants:
            if seats in self.seat_counts(variant):
                return variant
        return self.default_variant

    def check_variant(self, variant: str) -> None:
        """Raise :class:`OptionError` for a variant this game does not have."""
        if variant not in self.variants:
            raise OptionError(say("{game} has no variant {variant!r}; variants: {variants}", game=self.name,
                                  variant=variant, variants=", ".join(self.variants)))

    def per_deal(self, hand: str, round: str) -> str:
        """Of two texts that differ only by the deal's name, the one this
        game says (both are written out whole, so that each is translated as
        a sentence: "no hand is being played" / "no round is being played")."""
        return round if self.deal_word == "round" else hand

    def layout_name(self, seats: int) -> str:
        """The shipped table layout for ``seats`` (``hardware/tables/<name>.json``)."""
        return f"{self.name}-{seats}"

    # ------------------------------------------------------------------ play
    @abstractmethod
    def new_match(self, variant: str, options: Mapping[str, Any] | None = None,
                  seats: int | None = None) -> Match:
        """A match; raises :class:`OptionError` for options, a variant or a
        seat count the game refuses."""

    @abstractmethod
    def replay(self, record: Mapping[str, Any]) -> ReplayResult:
        """Check a game record of this game and score it."""

    @abstractmethod
    def move_to_json(self, move: Any) -> dict[str, Any]: ...

    @abstractmethod
    def move_from_json(self, obj: Mapping[str, Any], *, seats: int | None = None) -> Any:
        """Read one record move; raises :class:`~tablesense.games.common.RecordFormatError` when it does
        not fit the format. ``seats``: the table's seat count, so that a move
        naming another seat than its mover's (a Kems contre's target) outside
        ``0..seats-1`` is refused here, as a format error, and never reaches
        the engine (a remote table's claim may name anything); a move that
        names only its mover leaves that seat to the hand's own check."""

    @abstractmethod
    def deal_to_json(self, hand: Any) -> dict[str, Any]:
        """The deal of ``hand`` as the journal's ``hand`` entry writes it
        (the record's deal fields)."""

    @abstractmethod
    def start_hand(self, match: Any, deal: Mapping[str, Any], *, free_draw: bool = False) -> Any:
        """Start ``match``'s next hand with the given deal (fields as
        :meth:`deal_to_json` writes them). ``free_draw``: the face-down pieces'
        order is not known (a table-dealt hand), a draw may take any of them."""

    def void_hand(self, match: Any, reason: str) -> None:
        """Void ``match``'s current hand (only where :attr:`can_void`)."""
        raise ValueError(f"a {self.name} {self.deal_word} cannot be voided")

    def apply_reorder(self, hand: Any, entry: Mapping[str, Any]) -> None:
        """Apply a journal's ``reorder`` entry to ``hand``: the face-down
        pieces' order as a table-dealt hand showed it. ValueError when the
        entry does not fit the hand (nothing changed)."""
        raise ValueError(f"a {self.name} {self.deal_word} has no face-down order to reorder")

    def stock_reorder(self, hand: Any, shown: list[str]) -> dict[str, Any]:
        """The ``reorder`` entry that puts ``shown`` (pieces the table showed
        coming out of the face-down pile, in order) first in ``hand``'s pile."""
        raise ValueError(f"a {self.name} {self.deal_word} has no face-down pile the table shows")

    @abstractmethod
    def all_pieces(self, options: Any) -> frozenset[str]:
        """Every piece of the set a match with ``options`` plays with."""

    @abstractmethod
    def face_up(self, hand: Any) -> set[str]:
        """The pieces of ``hand`` the whole table sees (played, announced,
        lying on the board)."""

    @abstractmethod
    def pieces_view(self, hand: Any, last: Any, last_hand_no: int | None, *, boneyard: bool) -> dict[str, Any]:
        """The display's view of the pieces in play (``hand``: the hand in play
        or just finished, or None; ``last``: the last finished hand, numbered
        ``last_hand_no``; ``boneyard``: the table has a boneyard to count)."""

    def to_play(self, hand: Any) -> Seat | None:
        """The seat whose turn it is; None when there are no turns or the hand is over."""
        return None

    def rack_pips(self, hand: Any) -> list[int] | None:
        """The pips left on each rack of a finished hand (what its score is
        counted from); None when the game does not count them."""
        return None

    def misdeal_reason(self, hand: Any) -> str | None:
        """Why a deal must be dealt again at once (None: it stands)."""
        return None

    def may_call_double(self, hand: Any) -> bool:
        """The hand is over but a partner may still answer (a Kems call waits
        for a double)."""
        return False

    @abstractmethod
    def player(self, name: str | None = None, think_ms: float | None = None) -> Any:
        """A computer player by name (:attr:`default_player` when None)."""

    @abstractmethod
    def coach(self, worlds: int) -> Any:
        """The coach of this game (``worlds``: how many deals it imagines)."""

    # ------------------------------------------------------------------ words
    @abstractmethod
    def piece_names(self, text: str) -> list[str]:
        """The pieces ``text`` names, normalised (``5-6``, ``TH``)."""

    @abstractmethod
    def hide_pieces(self, text: str, known: Collection[str]) -> str:
        """``text`` with every piece not in ``known`` (normalised names)
        replaced by :attr:`the_piece` in English."""

    def pretty(self, text: str) -> str:
        """Pieces as people write them (``10♥`` for ``TH``)."""
        return text

    # ------------------------------------------------------------------ clubs
    @abstractmethod
    def players_per_team(self, variant: str, seats: int) -> int:
        """Players in one entrant of a club event (a pair or one person)."""

    def teams_at_table(self, variant: str, seats: int) -> int:
        """Entrants at one table."""
        return max(2, seats // self.players_per_team(variant, seats))

    @abstractmethod
    def team_of_seat(self, seats: int, seat: Seat) -> Team:
        """The team a seat plays for at a table of ``seats``."""

    rating_families: ClassVar[dict[str, str]]
    """The ratings' families of this game (one rating per family), with the
    name people read."""

    @abstractmethod
    def rating_family(self, variant: str, seats: int) -> str:
        """The ratings' family (of :attr:`rating_families`) of an event of this game."""
