"""Kems (Quems), variant ``classic``: the rules engine.

Seed 003 (a Malay translation of French rules) is the authority; every
sentence of it, the reading chosen and the option that controls it are in
``docs/rules/kems.md``. The record format is ``docs/record-format.md``.

Kems is played simultaneously: there are no turns. Every seat may swap one of
its cards with a face-up board card at any time (give first, then take), the
board may be refreshed from the stock, and the round ends at its first call:

- ``kems``: the caller says its *partner* holds four of a kind (the partner
  signalled it);
- ``double``: right after its partner's ``kems``, the partner claims that both
  of them hold four of a kind (a double Kems);
- ``contre``: the caller says that an opponent holds four of a kind.

The engine is pure: no I/O, no clock; randomness only through an injected
``random.Random`` (dealing). Like python-chess, :meth:`KemsRound.check` only
answers (raising :class:`IllegalPlayError` with a sentence a player
understands), :meth:`KemsRound.play` checks then applies, :meth:`KemsRound.apply`
applies without checking, and :meth:`KemsRound.undo` restores the state
before the last event.

Seats are numbered around the table; seats alternate teams, the partner of
seat ``s`` is ``(s + n/2) mod n`` and its team is ``s mod (n/2)``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, TypeAlias

from tablesense.games.common import (
    HandResult,
    IllegalPlayError,
    IllegalStepError,
    OptionError,
    Points,
    RecordFormatError,
    ReplayResult,
    Seat,
    Team,
    message_of,
    say,
    short_repr,
)

__all__ = [
    "RANKS",
    "SUITS",
    "SEAT_COUNTS",
    "Card",
    "deck",
    "Swap",
    "Refresh",
    "Call",
    "CallKind",
    "KemsEvent",
    "event_to_json",
    "event_from_json",
    "KemsOptions",
    "DealError",
    "SeatView",
    "KemsRound",
    "KemsMatch",
    "replay_record",
    "deal_cards",
    "partner_of",
    "team_of",
]

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


# --------------------------------------------------------------------------- events

CallKind: TypeAlias = Literal["kems", "double", "contre"]
CALL_KINDS: tuple[str, ...] = ("kems", "double", "contre")


@dataclass(frozen=True, slots=True)
class Swap:
    """``seat`` lays ``give`` on the board and takes ``take`` from it.

    ``give`` takes the board slot that ``take`` leaves. ``take == give`` (a
    take-back) is legal only with the option ``allow_take_back``.
    """

    seat: Seat
    give: Card
    take: Card

    def __str__(self) -> str:
        return f"seat {self.seat} gives {self.give}, takes {self.take}"


@dataclass(frozen=True, slots=True)
class Refresh:
    """The 4 board cards leave the board and the next 4 stock cards are laid
    face up (where the old board goes: option ``refresh``)."""

    def __str__(self) -> str:
        return "refresh"


@dataclass(frozen=True, slots=True)
class Call:
    """A call; the first call ends the round.

    ``kems``: ``seat`` says its partner holds four of a kind. ``double``: right
    after its partner's ``kems``, ``seat`` claims both partners hold four of a
    kind. ``contre``: ``seat`` says opponent ``target`` holds four of a kind.
    """

    seat: Seat
    kind: CallKind
    target: Seat | None = None

    def __post_init__(self) -> None:
        if self.kind not in CALL_KINDS:
            raise ValueError(f"{self.kind!r} is not a call: the calls are kems, double, contre")
        if self.kind == "contre" and self.target is None:
            raise ValueError("a contre names its target: the opponent said to hold four of a kind")
        if self.kind != "contre" and self.target is not None:
            raise ValueError(f"a {self.kind} call has no target; only a contre names one")

    def __str__(self) -> str:
        if self.kind == "contre":
            return f"seat {self.seat} calls contre on seat {self.target}"
        return f"seat {self.seat} calls {self.kind}"


KemsEvent: TypeAlias = Swap | Refresh | Call


def event_to_json(event: KemsEvent) -> dict[str, Any]:
    """An event as the record format writes it."""
    if isinstance(event, Swap):
        return {"seat": event.seat, "swap": {"give": str(event.give), "take": str(event.take)}}
    if isinstance(event, Refresh):
        return {"refresh": True}
    out: dict[str, Any] = {"seat": event.seat, "call": event.kind}
    if event.target is not None:
        out["target"] = event.target
    return out


def _fields(obj: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(k for k in obj if k not in allowed and not str(k).startswith("x-"))
    if extra:
        raise RecordFormatError(
            say("{where}: unknown field {extra!r} (allowed: {allowed}, or writer fields starting with 'x-')", where=where, extra=extra[0], allowed=', '.join(sorted(allowed)))
        )


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordFormatError(say("{where} must be an integer, not {short_value}", where=where, short_value=short_repr(value)))
    return value


def _seat(value: Any, where: str, seats: int | None) -> int:
    seat = _int(value, where)
    if seats is not None and not 0 <= seat < seats:
        raise RecordFormatError(say("{where}: there is no seat {seat} (seats 0..{seats})", where=where, seat=seat, seats=seats - 1))
    return seat


def _card(value: Any, where: str) -> Card:
    try:
        return Card.parse(value)
    except ValueError as exc:
        raise RecordFormatError(say("{where}: {exc}", where=where, exc=message_of(exc))) from None


def event_from_json(obj: Any, where: str = "event", seats: int | None = None) -> KemsEvent:
    """Read one event of a round object.

    With ``seats``, a seat (or a contre's target) outside ``0..seats-1`` does
    not fit the format either: the record names a seat the table does not have
    (whether an *existing* seat may act is the round's question).

    :raises RecordFormatError: when ``obj`` is not an event of the format
        (the message starts with ``where``).
    """
    if not isinstance(obj, dict):
        raise RecordFormatError(say("{where} must be an object, not {obj!r}", where=where, obj=obj))
    if "refresh" in obj:
        _fields(obj, {"refresh"}, where)
        if obj["refresh"] is not True:
            raise RecordFormatError(say('{where}: a refresh is written {{"refresh": true}}', where=where))
        return Refresh()
    if "seat" not in obj:
        raise RecordFormatError(
            say("{where}: an event is a swap, a refresh or a call; this has no seat", where=where)
        )
    seat = _seat(obj["seat"], f"{where}.seat", seats)
    if "swap" in obj:
        _fields(obj, {"seat", "swap"}, where)
        swap = obj["swap"]
        if not isinstance(swap, dict):
            raise RecordFormatError(say('{where}.swap must be {{"give": CARD, "take": CARD}}', where=where))
        _fields(swap, {"give", "take"}, f"{where}.swap")
        for key in ("give", "take"):
            if key not in swap:
                raise RecordFormatError(say("{where}.swap has no {key!r} card", where=where, key=key))
        return Swap(
            seat,
            _card(swap["give"], f"{where}.swap.give"),
            _card(swap["take"], f"{where}.swap.take"),
        )
    if "call" in obj:
        _fields(obj, {"seat", "call", "target"}, where)
        kind = obj["call"]
        if kind not in CALL_KINDS:
            raise RecordFormatError(say("{where}.call: {kind!r} is not a call (kems, double, contre)", where=where, kind=kind))
        target = obj.get("target")
        if kind == "contre":
            if "target" not in obj:
                raise RecordFormatError(say("{where}: a contre names its target seat ('target')", where=where))
            target = _seat(target, f"{where}.target", seats)
        elif "target" in obj:
            raise RecordFormatError(say("{where}: only a contre has a target, not a {kind}", where=where, kind=kind))
        return Call(seat, kind, target)
    raise RecordFormatError(say("{where}: an event has 'swap', 'refresh' or 'call'", where=where))


# --------------------------------------------------------------------------- options

FalseCall: TypeAlias = Literal["caller-minus-one", "opponents-plus-one"]
FalseDouble: TypeAlias = Literal["penalty", "kems-stands"]
DoubleContre: TypeAlias = Literal["both-hands", "never"]
RefreshRule: TypeAlias = Literal["bottom", "discard"]


@dataclass(frozen=True)
class KemsOptions:
    """The options of variant ``classic`` (defaults: docs/rules/kems.md).

    Build it with :meth:`from_dict`, which knows the seat-dependent default of
    ``deck`` and rejects unknown names and values with :class:`OptionError`.
    """

    deck: int = 32
    """32 or 52 cards; default 32 with 4 or 6 seats (six hands and the board
    take 28 cards), 52 with 8 (the record format, changed 2026-12-01)."""
    double_points: int = 2
    """What a double Kems, and a double contre, score: 2 or 3."""
    target: int | None = 10
    """Match points that win the match; ``None``: no target (play until stopped)."""
    false_call: FalseCall = "opponents-plus-one"
    """A false ``kems`` (or ``double``): every other team +1, or the caller's team -1."""
    false_double: FalseDouble = "penalty"
    """A double whose kems is true but the caller lacks four: the whole claim is
    false (``penalty``), or the kems still scores 1 (``kems-stands``)."""
    double_contre: DoubleContre = "both-hands"
    """A right contre scores ``double_points`` when the target's partner also
    holds four of a kind (``both-hands``), or always 1 (``never``)."""
    allow_take_back: bool = False
    """Whether a swap may take back the card it just gave."""
    refresh: RefreshRule = "bottom"
    """Where a refresh puts the old board: under the stock (``bottom``; the
    stock never runs out), or out of play (``discard``; when fewer than 4
    stock cards are left, the refresh ends the round as ``void``)."""
    misdeal_at: int | None = 3
    """A seat dealt this many cards of one rank (or more) makes a misdeal: 3
    (the seed: three or four), 4, or ``None`` (never)."""

    @classmethod
    def defaults(cls, seats: int = 4) -> KemsOptions:
        return cls.from_dict({}, seats)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None, seats: int = 4) -> KemsOptions:
        """Options from a record's ``options`` object (missing names take defaults).

        :raises OptionError: unknown option, a value out of range, or a deck
            too small for the seats.
        """
        if seats not in SEAT_COUNTS:
            raise OptionError(say("Kems is played by 4, 6 or 8 seats, not {seats!r}", seats=seats))
        values = dict(values or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(k for k in values if k not in known)
        if unknown:
            raise OptionError(
                say("unknown Kems option {unknown!r}; the options are {known}", unknown=unknown[0], known=', '.join(sorted(known)))
            )

        def pick(name: str, allowed: Sequence[Any], default: Any) -> Any:
            if name not in values:
                return default
            value = values[name]
            ok = any(value == a and type(value) is type(a) for a in allowed)
            if not ok:
                shown = ", ".join("null" if a is None else repr(a) for a in allowed)
                raise OptionError(say("option {name} must be one of {shown}, not {value!r}", name=name, shown=shown, value=value))
            return value

        deck_size = pick("deck", (32, 52), 32 if seats in (4, 6) else 52)
        if HAND_SIZE * seats + BOARD_SIZE > deck_size:
            raise OptionError(
                say("{seats} seats need {hand_size} cards for the hands and the board: use deck 52", seats=seats, hand_size=HAND_SIZE * seats + BOARD_SIZE)
            )
        target = values.get("target", 10)
        if target is not None and (
            isinstance(target, bool) or not isinstance(target, int) or target < 1
        ):
            raise OptionError(
                say("option target must be a whole number of points >= 1 or null, not {target!r}", target=target)
            )
        allow = values.get("allow_take_back", False)
        if not isinstance(allow, bool):
            raise OptionError(say("option allow_take_back must be true or false, not {allow!r}", allow=allow))
        return cls(
            deck=deck_size,
            double_points=pick("double_points", (2, 3), 2),
            target=target,
            false_call=pick(
                "false_call", ("opponents-plus-one", "caller-minus-one"), "opponents-plus-one"
            ),
            false_double=pick("false_double", ("penalty", "kems-stands"), "penalty"),
            double_contre=pick("double_contre", ("both-hands", "never"), "both-hands"),
            allow_take_back=allow,
            refresh=pick("refresh", ("bottom", "discard"), "bottom"),
            misdeal_at=pick("misdeal_at", (3, 4, None), 3),
        )

    def to_dict(self) -> dict[str, Any]:
        """Every option, as a record's ``options`` object writes it."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


# --------------------------------------------------------------------------- round


class DealError(ValueError):
    """Cards given to a round that are not a Kems deal (wrong counts,
    duplicates, cards outside the deck in use, cards missing)."""


def deal_cards(
    cards: Sequence[Card], seats: int, dealer: Seat = 0
) -> tuple[list[list[Card]], list[Card], list[Card]]:
    """Deal a shuffled deck the way the seed says: one card at a time, clockwise
    (increasing seat numbers) starting left of ``dealer`` and ending with the
    dealer, 4 each; then the next 4 cards are turned face up as the board;
    the rest is the stock, top first."""
    hands: list[list[Card]] = [[] for _ in range(seats)]
    it = iter(cards)
    for _ in range(HAND_SIZE):
        for k in range(1, seats + 1):
            hands[(dealer + k) % seats].append(next(it))
    board = [next(it) for _ in range(BOARD_SIZE)]
    return hands, board, list(it)


@dataclass(frozen=True)
class SeatView:
    """What one seat may know: its own hand, the board, the public history
    (every swap is seen: the given card lands face up, the taken card leaves
    the board), the stock size, and its partner's signal.

    ``signal`` models the team's secret sign through the table's seat
    buttons: it is True exactly when this seat's partner holds four of a kind
    (the partner presses its button; only this seat sees the light), unless
    the table passes the real light (``KemsRound.view(seat, signal=...)``).
    Computer players get only this object's information.
    """

    seat: Seat
    seats: int
    hand: tuple[Card, ...]
    board: tuple[Card, ...]
    events: tuple[KemsEvent, ...]
    stock_count: int
    signal: bool
    options: KemsOptions
    is_over: bool
    awaiting_double: bool
    laid: tuple[tuple[Card, ...], ...] = ()
    """The boards laid face up so far: the initial board, then one per refresh
    (public: everyone saw them turned over)."""

    @property
    def partner(self) -> Seat:
        return partner_of(self.seat, self.seats)

    @property
    def team(self) -> Team:
        return team_of(self.seat, self.seats)

    def opponents(self) -> list[Seat]:
        return [s for s in range(self.seats) if team_of(s, self.seats) != self.team]


class KemsRound:
    """One round: the deal, the board, the stock and the events so far.

    ``hands[s]`` is seat ``s``'s current hand (4 cards), ``board`` the 4
    face-up cards in slot order (a given card takes the slot of the card
    taken), ``stock`` the face-down cards, top first.
    """

    def __init__(
        self,
        deal: Sequence[Sequence[Card]],
        board: Sequence[Card],
        stock: Sequence[Card],
        options: KemsOptions | None = None,
    ) -> None:
        seats = len(deal)
        if seats not in SEAT_COUNTS:
            raise DealError(f"a Kems deal is for 4, 6 or 8 seats, not {seats}")
        self.seats: int = seats
        self.options: KemsOptions = options if options is not None else KemsOptions.defaults(seats)
        self._check_deal(deal, board, stock)
        self.deal: tuple[tuple[Card, ...], ...] = tuple(tuple(h) for h in deal)
        self.initial_board: tuple[Card, ...] = tuple(board)
        self.initial_stock: tuple[Card, ...] = tuple(stock)
        self.hands: list[list[Card]] = [list(h) for h in deal]
        self.board: list[Card] = list(board)
        self.stock: list[Card] = list(stock)
        self.discards: list[Card] = []
        """Board cards taken out of play by refreshes (option ``refresh: discard``)."""
        self.events: list[KemsEvent] = []
        self._undo: list[tuple[Any, ...]] = []
        self._laid: list[tuple[Card, ...]] = []  # boards laid by refreshes
        self._end: int | None = None  # index of the event that ended the round
        self._void = False
        self.misdeal: tuple[Seat, str, int] | None = self._find_misdeal()
        """(seat, rank, count) of the first seat dealt too many of one rank."""

    @classmethod
    def from_text(
        cls,
        deal: Sequence[str],
        board: str,
        stock: str | None = None,
        options: KemsOptions | None = None,
    ) -> KemsRound:
        """A round from card strings: ``KemsRound.from_text(["9S 9H KS KH", ...],
        "9D 9C QD QC")``. Without ``stock``, the rest of the deck is the stock
        in deck order (handy for positions set up by hand, tests, the REPL)."""
        hands = [iter_cards(h) for h in deal]
        if options is None:
            options = KemsOptions.defaults(len(hands)) if len(hands) in SEAT_COUNTS else None
        b = iter_cards(board)
        if stock is None:
            size = options.deck if options is not None else 32
            used = {c for h in hands for c in h} | set(b)
            rest = [c for c in deck(size) if c not in used]
        else:
            rest = iter_cards(stock)
        return cls(hands, b, rest, options)

    # ---------------------------------------------------------------- setup

    def _check_deal(
        self, deal: Sequence[Sequence[Card]], board: Sequence[Card], stock: Sequence[Card]
    ) -> None:
        size = self.options.deck
        in_deck = set(deck(size))
        for s, hand in enumerate(deal):
            if len(hand) != HAND_SIZE:
                raise DealError(f"seat {s} is dealt {len(hand)} cards; each seat gets {HAND_SIZE}")
        if len(board) != BOARD_SIZE:
            raise DealError(f"the board holds {len(board)} card(s), not {BOARD_SIZE}")
        seen: set[Card] = set()
        for card in [c for h in deal for c in h] + list(board) + list(stock):
            if not isinstance(card, Card):
                raise DealError(f"{card!r} is not a Card")
            if card not in in_deck:
                raise DealError(f"{card} is not a card of the {size}-card deck")
            if card in seen:
                raise DealError(f"{card} appears twice in the deal, board and stock")
            seen.add(card)
        if len(seen) != size:
            missing = [str(c) for c in deck(size) if c not in seen]
            raise DealError(
                f"the deal, board and stock hold {len(seen)} cards, not the {size} of the deck "
                f"(missing: {' '.join(missing[:8])}{' ...' if len(missing) > 8 else ''})"
            )

    def _find_misdeal(self) -> tuple[Seat, str, int] | None:
        limit = self.options.misdeal_at
        if limit is None:
            return None
        for s, hand in enumerate(self.hands):
            rank, count = Counter(c.rank for c in hand).most_common(1)[0]
            if count >= limit:
                return s, rank, count
        return None

    @property
    def is_misdeal(self) -> bool:
        """True when a seat was dealt 3 or 4 cards of one rank (option
        ``misdeal_at``): the round is over at once and must be redealt."""
        return self.misdeal is not None

    def misdeal_reason(self) -> str | None:
        if self.misdeal is None:
            return None
        seat, rank, count = self.misdeal
        return say("seat {seat} was dealt {count} {rank}", seat=seat,
                   count=_COUNT_WORDS.get(count, str(count)), rank=rank_name(rank))

    # ---------------------------------------------------------------- seats

    @property
    def teams(self) -> int:
        return self.seats // 2

    def team_of(self, seat: Seat) -> Team:
        return team_of(seat, self.seats)

    def partner_of(self, seat: Seat) -> Seat:
        return partner_of(seat, self.seats)

    def has_four(self, seat: Seat) -> bool:
        """True when ``seat`` holds four cards of one rank (a Kems)."""
        hand = self.hands[seat]
        r = hand[0].rank
        return all(c.rank == r for c in hand)

    def signal(self, seat: Seat) -> bool:
        """The partner signal ``seat`` sees: True exactly when its partner holds
        four of a kind (the table shows it on ``seat``'s button light only)."""
        return self.has_four(self.partner_of(seat))

    def view(self, seat: Seat, signal: bool | None = None) -> SeatView:
        """Everything ``seat`` may know, and nothing more (for computer players).

        ``signal`` overrides the partner signal: at a real table, a computer
        seat whose partner is a person sees the light that person pressed
        (which may be a mistake or a bluff), not the truth.
        """
        self._seat_ok(seat)
        return SeatView(
            seat=seat,
            seats=self.seats,
            hand=tuple(self.hands[seat]),
            board=tuple(self.board),
            events=tuple(self.events),
            stock_count=len(self.stock),
            signal=self.signal(seat) if signal is None else signal,
            options=self.options,
            is_over=self.is_over,
            awaiting_double=self.awaiting_double,
            laid=(self.initial_board, *self._laid),
        )

    # ---------------------------------------------------------------- state

    @property
    def is_over(self) -> bool:
        """True after a misdeal, after the first call, or after a refresh that
        found the stock empty (``refresh: discard``)."""
        return self.misdeal is not None or self._end is not None

    @property
    def is_void(self) -> bool:
        return self._void

    @property
    def ending_call(self) -> Call | None:
        """The call that ended the round, if one did."""
        if self._end is None:
            return None
        e = self.events[self._end]
        return e if isinstance(e, Call) else None

    @property
    def awaiting_double(self) -> bool:
        """True right after a ``kems`` call: the caller's partner may still say
        ``double`` (that call belongs to the kems)."""
        return (
            self._end is not None
            and self._end == len(self.events) - 1
            and isinstance(self.events[-1], Call)
            and self.events[-1].kind == "kems"
        )

    def _last_caller(self) -> Seat | None:
        last = self.events[-1] if self.events else None
        return last.seat if isinstance(last, Call) else None

    def legal_swaps(self, seat: Seat) -> list[Swap]:
        """Every swap ``seat`` may make now (none once the round is over)."""
        if self.is_over:
            return []
        self._seat_ok(seat)
        swaps = [Swap(seat, g, t) for g in self.hands[seat] for t in self.board]
        if self.options.allow_take_back:
            swaps += [Swap(seat, g, g) for g in self.hands[seat]]
        return swaps

    def legal_calls(self, seat: Seat) -> list[Call]:
        """Every call ``seat`` may make now (right or wrong: a wrong call is
        legal and penalised)."""
        self._seat_ok(seat)
        if self.is_over:
            if self.awaiting_double and self._last_caller() == self.partner_of(seat):
                return [Call(seat, "double")]
            return []
        me = self.team_of(seat)
        return [Call(seat, "kems")] + [
            Call(seat, "contre", t) for t in range(self.seats) if self.team_of(t) != me
        ]

    def legal_moves(self, seat: Seat | None = None) -> list[KemsEvent]:
        """Swaps and calls of ``seat`` (of every seat when None), plus the refresh."""
        seats = range(self.seats) if seat is None else [seat]
        out: list[KemsEvent] = []
        for s in seats:
            out += self.legal_swaps(s)
            out += self.legal_calls(s)
        if not self.is_over:
            out.append(Refresh())
        return out

    def _seat_ok(self, seat: Any) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.seats:
            raise IllegalPlayError(say("there is no seat {seat!r} at a {seats}-seat table", seat=seat, seats=self.seats))

    def is_legal(self, event: KemsEvent) -> bool:
        try:
            self.check(event)
        except IllegalPlayError:
            return False
        return True

    def check(self, event: KemsEvent) -> None:
        """Raise :class:`IllegalPlayError` (one sentence for the players) unless
        ``event`` is legal now; change nothing."""
        if self.misdeal is not None:
            raise IllegalPlayError(
                say("this round is a misdeal ({misdeal_reason}): the cards must be dealt again", misdeal_reason=self.misdeal_reason())
            )
        if isinstance(event, Refresh):
            self._check_open(event)
            return
        if not isinstance(event, Swap | Call):
            raise IllegalPlayError(say("{event!r} is not a Kems event", event=event))
        self._seat_ok(event.seat)
        if isinstance(event, Swap):
            self._check_open(event)
            self._check_swap(event)
            return
        self._check_call(event)

    def _check_open(self, event: KemsEvent) -> None:
        if self._end is None:
            return
        if self._void:
            raise IllegalPlayError(say("the round is over: the stock ran out at the last refresh"))
        first = self.events[self._end]
        raise IllegalPlayError(say("the round is over: {first} ended it, nothing may follow", first=first))

    def _check_swap(self, swap: Swap) -> None:
        size = self.options.deck
        for card in (swap.give, swap.take):
            if not isinstance(card, Card):
                raise IllegalPlayError(say("{card!r} is not a card (use Card.parse('TH'))", card=card))
            if size == 32 and card.rank not in RANKS_32:
                raise IllegalPlayError(say("{card} is not a card of the 32-card deck", card=card))
        hand = self.hands[swap.seat]
        if swap.give not in hand:
            # the message may be shown on the table's public display: it
            # never lists a hand
            raise IllegalPlayError(
                say("seat {seat} does not hold {give}: a seat lays a card from its own hand", seat=swap.seat, give=swap.give)
            )
        if swap.take == swap.give:
            if not self.options.allow_take_back:
                raise IllegalPlayError(
                    say("seat {seat} may not take back {give}, the card it just laid down", seat=swap.seat, give=swap.give)
                )
            return
        if swap.take not in self.board:
            partner = self.partner_of(swap.seat)
            board = " ".join(map(str, self.board))
            if swap.take in self.hands[partner]:
                raise IllegalPlayError(say(
                    "{take} is not on the board ({board}); it comes from partner seat "
                    "{partner}'s hand (no direct swap between partners)",
                    take=swap.take, board=board, partner=partner))
            raise IllegalPlayError(
                say("{take} is not on the board ({board})", take=swap.take, board=board)
            )

    def _check_call(self, call: Call) -> None:
        if self._end is not None:
            if (
                call.kind == "double"
                and self.awaiting_double
                and self._last_caller() == self.partner_of(call.seat)
            ):
                return
            self._check_open(call)
        if call.kind == "double":
            raise IllegalPlayError(
                say("seat {seat} may only call double right after its partner's kems (seat {partner_of})", seat=call.seat, partner_of=self.partner_of(call.seat))
            )
        if call.kind == "contre":
            t = call.target
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < self.seats:
                raise IllegalPlayError(say("a contre names an opponent's seat; there is no seat {t!r}", t=t))
            if t == call.seat:
                raise IllegalPlayError(say("seat {seat} may not call contre on itself", seat=call.seat))
            if self.team_of(t) == self.team_of(call.seat):
                raise IllegalPlayError(
                    say("seat {t} is seat {seat}'s partner: a contre names an opponent", t=t, seat=call.seat)
                )

    # ---------------------------------------------------------------- moves

    def play(self, event: KemsEvent) -> None:
        """Check ``event`` (raising :class:`IllegalPlayError`), then apply it."""
        self.check(event)
        self.apply(event)

    def apply(self, event: KemsEvent) -> None:
        """Apply ``event`` WITHOUT checking it (use :meth:`play` unless it was checked)."""
        if isinstance(event, Swap):
            hand = self.hands[event.seat]
            hi = hand.index(event.give)
            if event.take == event.give:
                self._undo.append(("noop",))
            else:
                bi = self.board.index(event.take)
                hand[hi] = event.take
                self.board[bi] = event.give
                self._undo.append(("swap", event.seat, hi, bi))
        elif isinstance(event, Refresh):
            self._undo.append(("refresh", tuple(self.board), tuple(self.stock), len(self.discards)))
            if self.options.refresh == "bottom":
                self.stock.extend(self.board)
                self.board = self.stock[:BOARD_SIZE]
                del self.stock[:BOARD_SIZE]
                self._laid.append(tuple(self.board))
            elif len(self.stock) >= BOARD_SIZE:
                self.discards.extend(self.board)
                self.board = self.stock[:BOARD_SIZE]
                del self.stock[:BOARD_SIZE]
                self._laid.append(tuple(self.board))
            else:
                self._void = True
                self._end = len(self.events)
        else:
            self._undo.append(("call", self._end))
            if self._end is None:
                self._end = len(self.events)
        self.events.append(event)

    def undo(self) -> KemsEvent:
        """Take back the last event and return it.

        :raises IndexError: when there is nothing to take back.
        """
        if not self.events:
            raise IndexError("no event to undo in this round")
        event = self.events.pop()
        info = self._undo.pop()
        if info[0] == "swap":
            _, seat, hi, bi = info
            assert isinstance(event, Swap)
            self.hands[seat][hi] = event.give
            self.board[bi] = event.take
        elif info[0] == "refresh":
            _, board, stock, ndisc = info
            self.board = list(board)
            self.stock = list(stock)
            del self.discards[ndisc:]
            if self._void:
                self._void = False
                self._end = None
            else:
                self._laid.pop()
        elif info[0] == "call":
            self._end = info[1]
        return event

    # ---------------------------------------------------------------- result

    def result(self) -> HandResult:
        """How the round ended and what each team earned.

        :raises IllegalPlayError: when the round is not over yet.
        """
        zeros = tuple(0.0 for _ in range(self.teams))
        if self.misdeal is not None:
            return HandResult("redeal", None, zeros, "misdeal")
        if self._void:
            return HandResult("void", None, zeros, "stock exhausted")
        first = self.ending_call
        if first is None:
            raise IllegalPlayError(say("the round is not over: nobody has called yet"))
        opts = self.options
        points = [0.0] * self.teams
        team = self.team_of(first.seat)

        def penalty() -> None:
            if opts.false_call == "caller-minus-one":
                points[team] -= 1
            else:
                for t in range(self.teams):
                    if t != team:
                        points[t] += 1

        if first.kind == "kems":
            partner = self.partner_of(first.seat)
            doubled = self._end is not None and self._end + 1 < len(self.events)
            if not doubled:
                outcome = "kems"
                if self.has_four(partner):
                    points[team] += 1
                    label = "kems"
                else:
                    penalty()
                    label = "false kems"
            else:
                outcome = "double"
                if self.has_four(partner) and self.has_four(first.seat):
                    points[team] += opts.double_points
                    label = "double kems"
                elif self.has_four(partner) and opts.false_double == "kems-stands":
                    points[team] += 1
                    label = "kems, false double"
                else:
                    penalty()
                    label = "false double" if self.has_four(partner) else "false kems"
        elif first.kind == "contre":
            outcome = "contre"
            target = first.target
            assert target is not None
            if self.has_four(target):
                both = opts.double_contre == "both-hands" and self.has_four(self.partner_of(target))
                points[team] += opts.double_points if both else 1
                label = "double contre" if both else "contre"
            else:
                points[self.team_of(target)] += 1
                label = "failed contre"
        else:  # pragma: no cover - check() never lets a double open a round
            raise IllegalPlayError(say("{first} cannot end a round", first=first))
        best = max(points)
        winner = points.index(best) if points.count(best) == 1 else None
        return HandResult(outcome, winner, tuple(points), label)

    def contre_proof(self) -> tuple[Card, Card] | None:
        """After a failed contre: two cards of different ranks from the
        target's hand, which the seed says the target shows the caller (the
        table displays them). None when the round did not end in a failed contre."""
        first = self.ending_call
        if first is None or first.kind != "contre" or first.target is None:
            return None
        hand = self.hands[first.target]
        if self.has_four(first.target):
            return None
        a = hand[0]
        b = next(c for c in hand if c.rank != a.rank)
        return a, b

    # ---------------------------------------------------------------- record

    def to_json(self) -> dict[str, Any]:
        """The round object of the record format."""
        return {
            "deal": [[str(c) for c in h] for h in self.deal],
            "board": [str(c) for c in self.initial_board],
            "stock": [str(c) for c in self.initial_stock],
            "events": [event_to_json(e) for e in self.events],
        }

    def cards_in_play(self) -> list[Card]:
        """Every card of the deck where it is now (hands, board, stock, discards)."""
        return [c for h in self.hands for c in h] + self.board + self.stock + self.discards

    def __repr__(self) -> str:
        return (
            f"<KemsRound seats={self.seats} board={' '.join(map(str, self.board))} "
            f"events={len(self.events)}{' over' if self.is_over else ''}>"
        )


# --------------------------------------------------------------------------- match


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


# --------------------------------------------------------------------------- replay

_ROUND_FIELDS = {"deal", "board", "stock", "events"}


def _cards(value: Any, where: str) -> list[Card]:
    if not isinstance(value, list):
        raise RecordFormatError(say("{where} must be a list of cards, not {value!r}", where=where, value=value))
    return [_card(v, f"{where}[{i}]") for i, v in enumerate(value)]


def _read_round(
    obj: Any, i: int, seats: int | None
) -> tuple[list[list[Card]], list[Card], list[Card], list[Any]]:
    where = f"hands[{i}]"
    if not isinstance(obj, dict):
        raise RecordFormatError(say("{where} must be a round object, not {obj!r}", where=where, obj=obj))
    _fields(obj, _ROUND_FIELDS, where)
    for key in ("deal", "board", "stock", "events"):
        if key not in obj:
            raise RecordFormatError(say("{where} has no {key!r}", where=where, key=key))
    deal_obj = obj["deal"]
    if not isinstance(deal_obj, list):
        raise RecordFormatError(say("{where}.deal must be a list of 4-card hands, one per seat", where=where))
    if seats is not None and len(deal_obj) != seats:
        raise RecordFormatError(
            say("{where}.deal has {n_deal_obj} hands; this match has {seats} seats", where=where, n_deal_obj=len(deal_obj), seats=seats)
        )
    deal = [_cards(h, f"{where}.deal[{s}]") for s, h in enumerate(deal_obj)]
    board = _cards(obj["board"], f"{where}.board")
    stock = _cards(obj["stock"], f"{where}.stock")
    events = obj["events"]
    if not isinstance(events, list):
        raise RecordFormatError(say("{where}.events must be a list", where=where))
    return deal, board, stock, events


def replay_record(obj: dict[str, Any]) -> ReplayResult:
    """Replay a Kems record (a parsed JSON object) and return its result.

    :raises RecordFormatError: the record does not fit the format (exit 2).
    :raises IllegalStepError: an event is illegal, a misdeal round has
        events, a round stops before its call, or a round follows the end of
        the match (exit 1).
    """
    if not isinstance(obj, dict):
        raise RecordFormatError(say("a game record is a JSON object"))
    _fields(obj, {"format", "game", "variant", "options", "hands"}, "record")
    if obj.get("game", "kems") != "kems":
        raise RecordFormatError(say("not a Kems record (game {obj_get!r})", obj_get=obj.get('game')))
    if obj.get("variant") != "classic":
        raise RecordFormatError(
            say("unknown Kems variant {obj_get!r}: the variant is 'classic'", obj_get=obj.get('variant'))
        )
    options_obj = obj.get("options", {})
    if not isinstance(options_obj, dict):
        raise RecordFormatError(say("options must be an object"))
    hands = obj.get("hands")
    if not isinstance(hands, list):
        raise RecordFormatError(say("hands must be a list of round objects"))
    if not hands:
        raise RecordFormatError(say("a record holds at least one round ('hands' is empty)"))
    seats = 4
    if hands and isinstance(hands[0], dict) and isinstance(hands[0].get("deal"), list):
        seats = len(hands[0]["deal"])
        if seats not in SEAT_COUNTS:
            raise RecordFormatError(
                say("hands[0].deal has {seats} hands; Kems is played by 4, 6 or 8 seats", seats=seats)
            )
    try:
        options = KemsOptions.from_dict(options_obj, seats)
    except OptionError as exc:
        raise RecordFormatError(say("options: {exc}", exc=message_of(exc))) from None
    match = KemsMatch(options, seats)
    # the whole record is read before anything is played: a field that does
    # not fit the format is exit 2 wherever it is, before any illegal step
    parsed = [_read_round(h, i, seats) for i, h in enumerate(hands)]
    parsed = [
        (
            deal,
            board,
            stock,
            [event_from_json(e, f"hands[{i}].events[{j}]", seats) for j, e in enumerate(events)],
        )
        for i, (deal, board, stock, events) in enumerate(parsed)
    ]
    for i, (deal, board, stock, events) in enumerate(parsed):
        if match.is_over:
            raise IllegalStepError(
                i,
                0,
                say("the match was over after round {i} (team {winner} reached {target} points): no round may follow", i=i - 1, winner=match.winner, target=match.target),
            )
        try:
            rnd = match.new_hand(deal=deal, board=board, stock=stock)
        except DealError as exc:
            raise RecordFormatError(say("hands[{i}]: {exc}", i=i, exc=message_of(exc))) from None
        if rnd.is_misdeal and events:
            raise IllegalStepError(
                i,
                0,
                say("this round is a misdeal ({rnd_misdeal}): it is redealt and has no events", rnd_misdeal=rnd.misdeal_reason()),
            )
        for j, event in enumerate(events):
            try:
                rnd.play(event)
            except IllegalPlayError as exc:
                raise IllegalStepError(i, j, message_of(exc)) from None
        if not rnd.is_over:
            raise IllegalStepError(
                i,
                len(events),
                say("the round stops before anyone calls: a round ends at its first call"),
            )
        match.finish_hand()
    return ReplayResult(
        hands=tuple(match.results),
        score=tuple(match.score),
        winner=match.winner,
    )


def iter_cards(text: str | Iterable[str]) -> list[Card]:
    """``iter_cards("9H 9S KD KC")`` -> cards; handy in tests and the REPL."""
    items = text.split() if isinstance(text, str) else list(text)
    return [Card.parse(t) for t in items]
