"""One round: the deal, the board and the stock, swaps, calls, and its result (:class:`KemsRound`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tablesense.games.common import (
    HandResult,
    IllegalPlayError,
    Seat,
    Team,
    say,
)
from tablesense.games.kems.cards import (
    _COUNT_WORDS,
    BOARD_SIZE,
    HAND_SIZE,
    RANKS_32,
    SEAT_COUNTS,
    Card,
    deck,
    iter_cards,
    partner_of,
    rank_name,
    team_of,
)
from tablesense.games.kems.events import Call, KemsEvent, Refresh, Swap, event_to_json
from tablesense.games.kems.options import KemsOptions


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
