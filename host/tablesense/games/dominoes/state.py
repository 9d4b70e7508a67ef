"""The state of one hand of dominoes and the moves on it: the deal, the line
of play, whose turn, legality.

:class:`HandState` follows python-chess: :meth:`~HandState.check` only
answers (raising :class:`IllegalPlayError` with a sentence a player
understands), :meth:`~HandState.play` checks and applies,
:meth:`~HandState.apply` does not check, and :meth:`~HandState.undo` takes
back. It is what scoring (:mod:`.scoring`) and the random playouts
(:mod:`.playout`) read and move; :class:`~.hand.DominoHand` adds them on top,
so that neither needs the hand that uses it (no import circle).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Self

from tablesense.games.common import IllegalPlayError, Points, Seat, Team, say
from tablesense.games.dominoes.deal import DealError, _deal_masks
from tablesense.games.dominoes.options import DominoOptions, Opening, _first_hand_opening
from tablesense.games.dominoes.tiles import (
    _ANNOUNCES,
    _BIT,
    _DOUBLES_MASK,
    _DRAWS,
    _END_CODE,
    _HAS,
    _PASSES,
    ALL_TILES,
    LEFT,
    RIGHT,
    Announce,
    DominoMove,
    Draw,
    End,
    LinePlay,
    Pass,
    Play,
    Tile,
    _bits,
    _line_play,
    _mask_pips,
    _mask_tiles,
    _play,
)

_IN_PLAY, _DOMINO, _BLOCKED, _LOCOMOTIVA, _SEVEN_DOUBLES = 0, 1, 2, 3, 4
"""A hand's state: in play, or how it ended."""
_OUTCOME_NAMES = {
    _DOMINO: "domino",
    _BLOCKED: "blocked",
    _LOCOMOTIVA: "locomotiva",
    _SEVEN_DOUBLES: "seven-doubles",
}


class HandState:
    """One hand: the deal, the line of play, whose turn, the moves so far.

    Build it with :meth:`DominoMatch.new_hand` (which applies the match's
    opening rule), or directly with an :class:`Opening`. Seats are in playing
    order; after a seat plays or passes, seat ``(s + 1) % seats`` is next.
    """

    __slots__ = (
        "options",
        "seats",
        "deal",
        "opening",
        "to_play",
        "_held",
        "_bone",
        "_drawn",
        "_line",
        "_left",
        "_right",
        "_moves",
        "_state",
        "_special_seat",
        "_announced",
        "_score_before",
        "_forbid_forced",
        "_opener",
        "_free_draw",
        "_rule",
    )

    def __init__(
        self,
        options: DominoOptions,
        deal: Sequence[Sequence[Tile]],
        boneyard: Sequence[Tile] = (),
        opening: Opening | None = None,
        score_before: Sequence[Points] | None = None,
        free_draw: bool = False,
    ) -> None:
        """Raises :class:`DealError` when the deal does not fit the variant.

        ``free_draw``: a draw may take any tile still in the boneyard, which
        then becomes the next one in the boneyard's order (a physical table
        does not know the face-down order; the record written afterwards
        lists the tiles in the order they were drawn). Records are replayed
        with the order fixed.
        """
        self.options = options
        self.seats = len(deal)
        self.deal: tuple[tuple[Tile, ...], ...] = tuple(map(tuple, deal))
        self._bone: tuple[Tile, ...] = tuple(boneyard)
        self._held: list[int] = _deal_masks(options.variant, self.deal, self._bone)
        self._drawn = 0
        self._line: list[LinePlay] = []
        self._left = -1
        self._right = -1
        self._moves: list[DominoMove] = []
        self._state = _IN_PLAY
        self._special_seat = -1
        self._announced: dict[int, Tile] | None = None
        self._score_before: tuple[Points, ...] | None = (
            tuple(score_before) if score_before is not None else None
        )
        self._forbid_forced = options.forced_block == "forbidden"
        self._free_draw = free_draw
        self._rule = opening or _first_hand_opening(options.variant, self.seats)
        self._opener, self.opening = self._resolve_opening(self._rule)
        self.to_play: Seat = self._opener
        if options.variant == "brazilian-points" and options.deal_specials:
            self._check_deal_specials()

    # -- construction helpers

    def _resolve_opening(self, opening: Opening) -> tuple[int, Opening]:
        seat = opening.seat
        if seat is not None:
            if not 0 <= seat < self.seats:
                raise DealError(f"seat {seat} does not exist")
            held = self._held[seat]
            if opening.tile is not None and not held & _BIT[opening.tile.index]:
                raise DealError(f"seat {seat} does not hold {opening.tile}")
            for other in opening.others:
                if not 0 <= other < self.seats:
                    raise DealError(f"seat {other} does not exist")
            return seat, opening
        assert opening.tile is not None
        bit = _BIT[opening.tile.index]
        for seat, m in enumerate(self._held):
            if m & bit:
                return seat, opening
        if not opening.fallback:
            raise DealError(f"nobody holds {opening.tile}, which must open this hand")
        # two players, 6-6 in the boneyard: highest double held, else heaviest tile
        in_hands = 0
        for m in self._held:
            in_hands |= m
        doubles = in_hands & _DOUBLES_MASK
        pool = doubles if doubles else in_hands
        best = max(_mask_tiles(pool), key=lambda t: (t.pips, t.high))
        seat = self.holder(best)
        assert seat is not None
        return seat, Opening(
            None,
            best,
            reason=say("6-6 is in the boneyard, so the highest {kind} held ({best}) opens",
                       kind=say("double") if doubles else say("tile"), best=best),
            fallback=True,
        )

    def _check_deal_specials(self) -> None:
        for seat, mask in enumerate(self._held):
            if mask & _DOUBLES_MASK == _DOUBLES_MASK:
                self._state, self._special_seat = _SEVEN_DOUBLES, seat
                return
        for seat, mask in enumerate(self._held):
            for n in range(7):
                if mask & _HAS[n] == _HAS[n]:
                    self._state, self._special_seat = _LOCOMOTIVA, seat
                    return

    def clone(
        self,
        hands: Sequence[Iterable[Tile]] | None = None,
        boneyard: Sequence[Tile] | None = None,
    ) -> Self:
        """A copy sharing the immutable parts.

        With ``hands`` (and ``boneyard``, the tiles still to draw, next first)
        the seats hold those tiles instead: a guessed world for search. The
        line, the moves and whose turn stay; the caller keeps the counts
        consistent.
        """
        other = object.__new__(type(self))
        other.options = self.options
        other.seats = self.seats
        other.deal = self.deal
        other.opening = self.opening
        other._rule = self._rule
        other.to_play = self.to_play
        other._held = (
            [sum(_BIT[t.index] for t in h) for h in hands]
            if hands is not None
            else self._held.copy()
        )
        other._bone = (
            self._bone if boneyard is None else self._bone[: self._drawn] + tuple(boneyard)
        )
        other._drawn = self._drawn
        other._line = self._line.copy()
        other._left = self._left
        other._right = self._right
        other._moves = self._moves.copy()
        other._state = self._state
        other._special_seat = self._special_seat
        other._announced = dict(self._announced) if self._announced else None
        other._score_before = self._score_before
        other._forbid_forced = self._forbid_forced
        other._opener = self._opener
        other._free_draw = self._free_draw
        return other

    # -- public state

    @property
    def hands(self) -> list[list[Tile]]:
        """The tiles each seat holds now, per seat, in set order."""
        return [_mask_tiles(m) for m in self._held]

    def hand_of(self, seat: Seat) -> list[Tile]:
        return _mask_tiles(self._held[seat])

    def count(self, seat: Seat) -> int:
        """How many tiles ``seat`` holds (public knowledge at the table)."""
        return self._held[seat].bit_count()

    def holder(self, tile: Tile) -> Seat | None:
        bit = _BIT[tile.index]
        for seat, m in enumerate(self._held):
            if m & bit:
                return seat
        return None

    @property
    def boneyard(self) -> list[Tile]:
        """The tiles still to draw, next first."""
        return list(self._bone[self._drawn :])

    @property
    def boneyard_count(self) -> int:
        return len(self._bone) - self._drawn

    @property
    def dealt_boneyard(self) -> tuple[Tile, ...]:
        """The boneyard as dealt (the record's ``boneyard``)."""
        return self._bone

    @property
    def line(self) -> list[LinePlay]:
        """The tiles on the table in the order they were played."""
        return list(self._line)

    def arm(self, end: End) -> list[LinePlay]:
        """The tiles on one side of the opening tile, in order outward."""
        return [lp for lp in self._line if lp.end == end]

    def line_view(self) -> dict[str, Any]:
        """The line as a display draws it: ``{"left": [...], "center": ...,
        "right": [...]}``, each arm in order outward from the centre, every
        tile written as it reads left to right on the table (``"5-3"`` on the
        left arm means 5 faces left). ``center`` is ``None`` before the opening."""
        if not self._line:
            return {"left": [], "center": None, "right": []}
        first = self._line[0]
        return {
            "left": [f"{lp.outer}-{lp.inner}" for lp in self._line if lp.end == LEFT],
            "center": f"{first.outer}-{first.inner}",
            "right": [f"{lp.inner}-{lp.outer}" for lp in self._line if lp.end == RIGHT],
        }

    @property
    def left_end(self) -> int | None:
        return None if self._left < 0 else self._left

    @property
    def right_end(self) -> int | None:
        return None if self._right < 0 else self._right

    @property
    def moves(self) -> list[DominoMove]:
        return list(self._moves)

    @property
    def opener(self) -> Seat:
        """The seat that opened this hand (before the opening play: the seat
        that opens unless a seat of :attr:`openers` does)."""
        return self._line[0].seat if self._line else self._opener

    @property
    def openers(self) -> tuple[Seat, ...]:
        """The seats that may make the opening play (usually one; after a
        blocked ``brazilian-points`` hand, either partner of the winning pair)."""
        return (self._opener, *self.opening.others)

    @property
    def opening_rule(self) -> Opening:
        """The opening rule this hand was dealt under, before it was resolved
        against the deal (a replayed hand follows the rule, not its outcome)."""
        return self._rule

    @property
    def announced(self) -> dict[Seat, Tile]:
        """Announced doubles (``brazilian-points``), per seat."""
        return dict(self._announced) if self._announced else {}

    @property
    def score_before(self) -> tuple[Points, ...] | None:
        """Each team's match score before this hand (``None`` for a hand
        built outside a match). Public at the table; a computer player needs
        it to play for the match rather than the hand (near the target a
        safe domino beats a risky special win; in ``brazilian-points`` a side
        that ends on 0 carries the lambreta)."""
        return self._score_before

    @property
    def is_over(self) -> bool:
        return self._state != _IN_PLAY

    @property
    def outcome(self) -> str | None:
        """``domino``, ``blocked``, ``locomotiva``, ``seven-doubles``, or ``None``
        while the hand is in play."""
        return _OUTCOME_NAMES.get(self._state)

    @property
    def teams(self) -> int:
        return 2 if self.seats in (2, 4) else self.seats

    def team_of(self, seat: Seat) -> Team:
        return seat % 2 if self.seats == 4 else seat

    def pips_in_hand(self, seat: Seat) -> int:
        return _mask_pips(self._held[seat])

    def team_pips(self) -> list[int]:
        """Pips each team holds now."""
        return self._team_pips([_mask_pips(m) for m in self._held])

    @property
    def last_player(self) -> Seat | None:
        """The seat that made the last play (the one that "locked" a blocked hand)."""
        return self._line[-1].seat if self._line else None

    @property
    def winner_seat(self) -> Seat | None:
        """The seat that went out (or was dealt a locomotiva / seven doubles)."""
        if self._state == _DOMINO:
            return self._line[-1].seat
        if self._state in (_LOCOMOTIVA, _SEVEN_DOUBLES):
            return self._special_seat
        return None

    def __repr__(self) -> str:
        state = self.outcome or f"seat {self.to_play} to play"
        return (
            f"<DominoHand {self.options.variant} ends={self.left_end},{self.right_end} "
            f"tiles={[self.count(s) for s in range(self.seats)]} {state}>"
        )

    # -- legality

    def playable(self, seat: Seat) -> list[Tile]:
        """The tiles ``seat`` holds that fit an end now (any tile before the opening)."""
        if self._left < 0:
            return _mask_tiles(self._held[seat])
        return _mask_tiles(self._held[seat] & (_HAS[self._left] | _HAS[self._right]))

    def legal_moves(self, seat: Seat | None = None) -> list[DominoMove]:
        """Every legal move of ``seat`` (default: the seat to play).

        Plays name their end whenever the line has ends (both plays are listed
        when a tile fits both ends). A seat that is not to play may only
        announce (``brazilian-points``, before the opening play).
        """
        if self._state:
            return []
        if seat is None:
            seat = self.to_play
        out: list[DominoMove] = []
        held = self._held[seat]
        left = self._left
        if left < 0:
            if (
                self.options.announce
                and self.options.variant == "brazilian-points"
                and not (self._announced and seat in self._announced)
            ):
                forced = self.opening.tile
                for i in _bits(held & _DOUBLES_MASK):
                    if forced is None or forced.index != i:
                        out.append(_ANNOUNCES[(seat, i)])
            if seat != self.to_play and seat not in self.openers:
                return out
            out.extend(_play(seat, i, 0) for i in _bits(self._opening_mask(seat)))
            return out
        if seat != self.to_play:
            return out
        right = self._right
        fit = held & (_HAS[left] | _HAS[right])
        if not fit:
            if self._drawn < len(self._bone):
                if self._free_draw:
                    out.extend(_DRAWS[seat * 28 + t.index] for t in self._bone[self._drawn :])
                else:
                    out.append(_DRAWS[seat * 28 + self._bone[self._drawn].index])
            else:
                out.append(_PASSES[seat])
            return out
        plays: list[Play] = []
        for i in _bits(fit):
            bit = 1 << i
            if _HAS[left] & bit:
                plays.append(_play(seat, i, 1))
            if _HAS[right] & bit:
                plays.append(_play(seat, i, 2))
        if self._forbid_forced and len(plays) > 1:
            keep = [m for m in plays if not self._would_block(m)]
            if keep:
                plays = keep
        out.extend(plays)
        return out

    def _opening_mask(self, seat: Seat) -> int:
        """The tiles ``seat`` may open with (0 when it may not open): the rule's
        tile, or any tile but a double after a blocked ``brazilian-points``
        hand (any tile when the seat holds only doubles)."""
        op = self.opening
        held = self._held[seat]
        if seat != self._opener and seat not in op.others:
            return 0
        if op.tile is not None:
            return held & _BIT[op.tile.index]
        if op.no_double and held & ~_DOUBLES_MASK:
            return held & ~_DOUBLES_MASK
        return held

    def _rest(self) -> int:
        """Every tile not on the line: in a seat's hand or still in the boneyard."""
        rest = 0
        for h in self._held:
            rest |= h
        for t in self._bone[self._drawn :]:
            rest |= _BIT[t.index]
        return rest

    def _would_block(self, m: Play) -> bool:
        """Whether playing ``m`` (a non-opening play) leaves no tile, in any hand
        or in the boneyard, that fits either end, while the mover still holds
        tiles (a going-out play is not a block)."""
        bit = _BIT[m.tile.index]
        seat = m.seat
        if self._held[seat] == bit:
            return False
        t = m.tile
        if m.end == LEFT:
            left, right = t.other(self._left), self._right
        else:
            left, right = self._left, t.other(self._right)
        rest = self._rest() & ~bit
        return not rest & (_HAS[left] | _HAS[right])

    def is_legal(self, m: DominoMove) -> bool:
        try:
            self.check(m)
        except IllegalPlayError:
            return False
        return True

    def check(self, m: DominoMove) -> DominoMove:
        """Raise :class:`IllegalPlayError` (one sentence) if ``m`` is illegal now.

        Returns the move as it will be applied: a play that fits exactly one
        end and names none gets that end.
        """
        if not isinstance(m, Play | Pass | Draw | Announce):
            raise IllegalPlayError(say("{m!r} is not a dominoes move", m=m))
        if not 0 <= m.seat < self.seats:
            raise IllegalPlayError(say("there is no seat {seat}: seats are 0..{seats}", seat=m.seat, seats=self.seats - 1))
        if self._state:
            raise IllegalPlayError(say("the hand is over ({over_text}): no move may follow", over_text=self._over_text()))
        seat = m.seat
        held = self._held[seat]
        if isinstance(m, Announce):
            return self._check_announce(m, held)
        opening = self._left < 0
        if seat != self.to_play and not (opening and seat in self.openers):
            if opening and self.opening.others:
                who = say("seat {seats}", seats=" / ".join(str(s) for s in self.openers))
                raise IllegalPlayError(
                    say("{who} opens this hand ({reason}), not seat {seat}", who=who, reason=self.opening.reason, seat=seat)
                )
            raise IllegalPlayError(say("it is seat {to_play}'s turn, not seat {seat}'s", to_play=self.to_play, seat=seat))
        if isinstance(m, Play):
            t = m.tile
            if not held & _BIT[t.index]:
                raise IllegalPlayError(say("seat {seat} does not hold {t}", seat=seat, t=t))
            if opening:
                return self._check_opening(m)
            return self._check_play(m)
        if opening:
            raise IllegalPlayError(say("seat {seat} must open the hand: it may not {verb_m}", seat=seat, verb_m=_verb(m)))
        fit = held & (_HAS[self._left] | _HAS[self._right])
        if fit:
            t = ALL_TILES[(fit & -fit).bit_length() - 1]
            raise IllegalPlayError(
                say("seat {seat} holds {t}, which fits {fits_text}: it may not {verb_m}", seat=seat, t=t, fits_text=self._fits_text(t), verb_m=_verb(m))
            )
        left_in_bone = len(self._bone) - self._drawn
        if isinstance(m, Pass):
            if left_in_bone:
                raise IllegalPlayError(
                    say("seat {seat} must draw from the boneyard ({left_in_bone} tiles left) before passing", seat=seat, left_in_bone=left_in_bone)
                )
            return m
        # Draw
        if not self._bone:
            raise IllegalPlayError(say("{variant} has no boneyard: seat {seat} passes", variant=self.options.variant, seat=seat))
        if not left_in_bone:
            raise IllegalPlayError(say("the boneyard is empty: seat {seat} passes", seat=seat))
        nxt = self._bone[self._drawn]
        if self._free_draw:
            if m.tile not in self._bone[self._drawn :]:
                raise IllegalPlayError(say("{tile} is not in the boneyard", tile=m.tile))
            return m
        if m.tile != nxt:
            raise IllegalPlayError(say("the next boneyard tile is {nxt}, not {tile}", nxt=nxt, tile=m.tile))
        return m

    def _check_announce(self, m: Announce, held: int) -> DominoMove:
        if self.options.variant != "brazilian-points":
            raise IllegalPlayError(say("announcing a double belongs to brazilian-points only"))
        if not self.options.announce:
            raise IllegalPlayError(say("announcing a double is switched off for this match"))
        if self._left >= 0:
            raise IllegalPlayError(
                say("seat {seat} may announce a double only before the opening play", seat=m.seat)
            )
        if not m.tile.is_double:
            raise IllegalPlayError(say("{tile} is not a double: only a double can be announced", tile=m.tile))
        if self._announced and m.seat in self._announced:
            raise IllegalPlayError(say("seat {seat} has already announced {announced_m}", seat=m.seat, announced_m=self._announced[m.seat]))
        if not held & _BIT[m.tile.index]:
            raise IllegalPlayError(
                say("seat {seat} does not hold {tile}, so it cannot announce it", seat=m.seat, tile=m.tile)
            )
        if m.tile == self.opening.tile:
            raise IllegalPlayError(
                say("{tile} must open this hand ({reason}), so it cannot be the last tile: it may not be announced", tile=m.tile, reason=self.opening.reason)
            )
        return m

    def _check_opening(self, m: Play) -> DominoMove:
        if m.end is not None:
            raise IllegalPlayError(say("the opening play goes in the middle: it has no end"))
        op = self.opening
        if op.tile is not None and m.tile != op.tile:
            raise IllegalPlayError(say("this hand opens with {tile} ({reason}), not {tile2}", tile=op.tile, reason=op.reason, tile2=m.tile))
        if not self._opening_mask(m.seat) & _BIT[m.tile.index]:
            raise IllegalPlayError(say("{tile} may not open this hand: {reason}", tile=m.tile, reason=op.reason))
        return m

    def _check_play(self, m: Play) -> DominoMove:
        t, left, right = m.tile, self._left, self._right
        on_left, on_right = t.has(left), t.has(right)
        if not (on_left or on_right):
            raise IllegalPlayError(say("{t} fits neither end (left {left}, right {right})", t=t, left=left, right=right))
        end = m.end
        if end is None:
            if on_left and on_right:
                raise IllegalPlayError(
                    say("{t} fits both ends (left {left}, right {right}): say which end", t=t, left=left, right=right)
                )
            m = _play(m.seat, t.index, 1 if on_left else 2)
        elif end == LEFT and not on_left:
            raise IllegalPlayError(say("{t} does not fit the left end, which shows {left}", t=t, left=left))
        elif end == RIGHT and not on_right:
            raise IllegalPlayError(say("{t} does not fit the right end, which shows {right}", t=t, right=right))
        if self._forbid_forced and self._would_block(m):
            for other in self.legal_moves(m.seat):
                if isinstance(other, Play) and not self._would_block(other):
                    raise IllegalPlayError(
                        say("{t} on the {end} would block the game while seat {seat} can play {tile} on the {end2}: with a choice the game must stay open", t=t, end=m.end, seat=m.seat, tile=other.tile, end2=other.end)
                    )
        return _play(m.seat, t.index, _END_CODE[m.end])  # interned, without ``first``

    def _fits_text(self, t: Tile) -> str:
        on_left, on_right = t.has(self._left), t.has(self._right)
        if on_left and on_right:
            return say("both ends")
        return say("the left end") if on_left else say("the right end")

    def _over_text(self) -> str:
        if self._state == _DOMINO:
            return say("seat {seat} went out", seat=self._line[-1].seat)
        if self._state == _BLOCKED:
            return say("it is blocked")
        if self._state == _LOCOMOTIVA:
            return say("seat {seat} was dealt a locomotiva", seat=self._special_seat)
        return say("seat {seat} was dealt seven doubles", seat=self._special_seat)

    # -- doing

    def play(self, m: DominoMove) -> DominoMove:
        """Check ``m`` and apply it; returns the move as applied."""
        m = self.check(m)
        self.apply(m)
        return m

    def apply(self, m: DominoMove) -> None:
        """Apply ``m`` WITHOUT checking it (search and replay of trusted moves).

        An illegal move leaves the hand in a state the rules cannot reach.
        """
        seat = m.seat
        held = self._held
        if type(m) is Play:
            t = m.tile
            held[seat] &= ~_BIT[t.index]
            if self._left < 0:
                first = t.low if m.first is None else m.first
                self._left = first
                self._right = t.low + t.high - first
                self._line.append(_line_play(t, None, seat, first))
            else:
                end = m.end
                if end is None:
                    end = LEFT if t.has(self._left) else RIGHT
                    m = _play(seat, t.index, _END_CODE[end])
                if end == LEFT:
                    outer = t.low + t.high - self._left
                    self._left = outer
                else:
                    outer = t.low + t.high - self._right
                    self._right = outer
                self._line.append(_line_play(t, end, seat, outer))
            self._moves.append(m)
            if not held[seat]:
                self._state = _DOMINO
            elif not self._rest() & (_HAS[self._left] | _HAS[self._right]):
                # no tile in any hand or in the boneyard fits: nobody draws
                # for a tile that cannot exist (the record format, 2026-12-01)
                self._state = _BLOCKED
            self.to_play = (seat + 1) % self.seats
        elif type(m) is Pass:
            self._moves.append(m)
            self.to_play = (seat + 1) % self.seats
        elif type(m) is Draw:
            held[seat] |= _BIT[m.tile.index]
            if self._free_draw and self._bone[self._drawn] != m.tile:
                rest = [t for t in self._bone[self._drawn :] if t != m.tile]
                self._bone = (*self._bone[: self._drawn], m.tile, *rest)
            self._drawn += 1
            self._moves.append(m)
            # A draw moves a tile from the boneyard to a hand: the tiles off
            # the line stay the same, so a draw never blocks the hand (the
            # play before it would have).
        else:
            assert isinstance(m, Announce)
            if self._announced is None:
                self._announced = {}
            self._announced[seat] = m.tile
            self._moves.append(m)

    def undo(self) -> DominoMove:
        """Take back the last move and return it."""
        if not self._moves:
            raise IndexError("no move to undo")
        m = self._moves.pop()
        if self._state in (_DOMINO, _BLOCKED):
            self._state = _IN_PLAY
        if isinstance(m, Play):
            self._line.pop()
            self._held[m.seat] |= _BIT[m.tile.index]
            if not self._line:
                self._left = self._right = -1
            else:
                self._left = self._right = -2
                for lp in reversed(self._line):
                    if lp.end is None:
                        if self._left == -2:
                            self._left = lp.outer
                        if self._right == -2:
                            self._right = lp.inner
                        break
                    if lp.end == LEFT and self._left == -2:
                        self._left = lp.outer
                    elif lp.end == RIGHT and self._right == -2:
                        self._right = lp.outer
            # an opening by another of the openers gives the turn back to the
            # seat the rule names first, as before the opening
            self.to_play = m.seat if self._line else self._opener
        elif isinstance(m, Pass):
            self.to_play = m.seat
        elif isinstance(m, Draw):
            self._drawn -= 1
            self._held[m.seat] &= ~_BIT[m.tile.index]
            self.to_play = m.seat
        else:
            assert self._announced is not None
            del self._announced[m.seat]
            if not self._announced:
                self._announced = None
        return m

    def _team_pips(self, seat_pips: list[int]) -> list[int]:
        if self.seats == 4:
            return [seat_pips[0] + seat_pips[2], seat_pips[1] + seat_pips[3]]
        return list(seat_pips)


def _verb(m: DominoMove) -> str:
    return say("pass") if isinstance(m, Pass) else say("draw")
