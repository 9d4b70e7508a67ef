"""The dominoes rules engine: ``pairs-pips``, ``pips-two-player``, ``brazilian-points``.

Pure: no I/O, no clock, randomness only through an injected ``random.Random``.
The referee, the computer players, the tournament director and ``replay`` all
ask this module the same questions, so they can never disagree.

The model follows python-chess: small frozen value types (:class:`Tile`,
:class:`Play`, :class:`Pass`, :class:`Draw`, :class:`Announce`), a
:class:`DominoHand` whose :meth:`~DominoHand.check` only answers (raising
:class:`IllegalPlayError` with a sentence a player understands),
:meth:`~DominoHand.play` that checks and applies, :meth:`~DominoHand.apply`
that does not check, and :meth:`~DominoHand.undo`. :class:`DominoMatch`
chains hands into a match (who opens, with what, the score, the target) and
writes the game record of ``/work/shared/spec/game-record.md``.

Inside a hand the tiles a seat holds are a 28-bit mask (one bit per tile of
:data:`ALL_TILES`), so the questions a playout asks most ("which of my tiles fit
an end?", "can anybody still play?") are a few integer operations, and a hand
state stays well under 2 KB. Every rule sentence this module implements is
quoted in ``docs/rules/`` with the option that controls it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from operator import itemgetter
from typing import Any, Literal, NamedTuple, TypeAlias

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
)

__all__ = [
    "ALL_TILES",
    "VARIANTS",
    "Announce",
    "DealError",
    "DominoHand",
    "DominoMatch",
    "DominoMove",
    "DominoOptions",
    "Draw",
    "End",
    "LinePlay",
    "Opening",
    "Pass",
    "Play",
    "PlayoutTrace",
    "Tile",
    "move_from_json",
    "move_to_json",
    "deal_tiles",
    "describe_move",
    "replay_record",
    "simulate_deal",
]

End: TypeAlias = Literal["left", "right"]
LEFT: End = "left"
RIGHT: End = "right"

VARIANTS: tuple[str, ...] = ("pairs-pips", "pips-two-player", "brazilian-points")
"""The dominoes variants of the record format."""

RECORD_FORMAT = "tablesense.record/1"


class DealError(ValueError):
    """A deal (or boneyard) that is not a shuffle of the double-six set in the
    shape the variant deals."""


# --------------------------------------------------------------------------- tiles


@dataclass(frozen=True, slots=True, order=True)
class Tile:
    """One tile of the double-six set; ``low <= high``, both in 0..6.

    >>> Tile.parse("5-3")
    Tile(3, 5)
    >>> str(Tile(3, 5))
    '3-5'
    """

    low: int
    high: int
    index: int = field(init=False, repr=False, compare=False)
    """Position in :data:`ALL_TILES` (0-0, 0-1, ..., 6-6)."""
    bit: int = field(init=False, repr=False, compare=False)
    """``1 << index``: the tile's bit in the engine's hand masks."""

    def __post_init__(self) -> None:
        if not (
            isinstance(self.low, int)
            and isinstance(self.high, int)
            and 0 <= self.low <= self.high <= 6
        ):
            raise ValueError(
                f"a tile needs two numbers 0..6, low first: got {self.low!r}, {self.high!r}"
            )
        object.__setattr__(self, "index", _tile_index(self.low, self.high))
        object.__setattr__(self, "bit", 1 << self.index)

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Read ``"a-b"`` (either order), as the record format writes tiles."""
        if not isinstance(text, str):
            raise ValueError(f"a tile is written 'a-b', got {text!r}")
        parts = text.strip().split("-")
        if len(parts) != 2 or not all(len(p) == 1 and p in "0123456789" for p in parts):
            raise ValueError(f"a tile is written 'a-b' with numbers 0..6, got {text!r}")
        a, b = int(parts[0]), int(parts[1])
        if a > 6 or b > 6:
            raise ValueError(f"a tile's numbers are 0..6, got {text!r}")
        return ALL_TILES[_tile_index(min(a, b), max(a, b))]

    @property
    def pips(self) -> int:
        """The tile's value in pips (3-4 is worth 7)."""
        return self.low + self.high

    @property
    def is_double(self) -> bool:
        return self.low == self.high

    def has(self, n: int) -> bool:
        """Whether one half of the tile shows ``n``."""
        return self.low == n or self.high == n

    def other(self, n: int) -> int:
        """The number on the other half from ``n`` (``n`` itself for a double)."""
        if not self.has(n):
            raise ValueError(f"{self} has no {n}")
        return self.low + self.high - n

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"

    def __repr__(self) -> str:
        return f"Tile({self.low}, {self.high})"


def _tile_index(low: int, high: int) -> int:
    # rows: 0-0..0-6 (7), 1-1..1-6 (6), ...
    return low * 7 - (low * (low - 1)) // 2 + (high - low)


ALL_TILES: tuple[Tile, ...] = tuple(Tile(a, b) for a in range(7) for b in range(a, 7))
"""The 28 tiles of the double-six set, in mask-bit order."""

DOUBLE_SIX = ALL_TILES[27]
DOUBLE_BLANK = ALL_TILES[0]
assert str(DOUBLE_SIX) == "6-6" and DOUBLE_SIX.index == 27

_BIT: tuple[int, ...] = tuple(1 << t.index for t in ALL_TILES)
_HAS: tuple[int, ...] = tuple(sum(_BIT[t.index] for t in ALL_TILES if t.has(n)) for n in range(7))
"""``_HAS[n]``: mask of the seven tiles that show ``n``."""
_DOUBLES_MASK = sum(_BIT[t.index] for t in ALL_TILES if t.is_double)
_ALL_MASK = (1 << 28) - 1


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _mask_pips(mask: int) -> int:
    total = 0
    while mask:
        low = mask & -mask
        t = ALL_TILES[low.bit_length() - 1]
        total += t.low + t.high
        mask ^= low
    return total


def _mask_tiles(mask: int) -> list[Tile]:
    return [ALL_TILES[i] for i in _bits(mask)]


# --------------------------------------------------------------------------- moves


@dataclass(frozen=True, slots=True)
class Play:
    """``seat`` lays ``tile`` on ``end`` of the line (``None`` for the opening
    play, or when the tile fits exactly one end).

    ``first`` matters only for the opening play: the number laid towards the
    left end (the record's "first number of the opening tile as written").
    ``None`` means the low number, which is how writers emit tiles.
    """

    seat: Seat
    tile: Tile
    end: End | None = None
    first: int | None = None

    def __post_init__(self) -> None:
        if self.end not in (None, LEFT, RIGHT):
            raise ValueError(f"an end is 'left' or 'right', got {self.end!r}")
        if self.first is not None:
            if not self.tile.has(self.first):
                raise ValueError(f"{self.tile} has no {self.first}")
            if self.first == self.tile.low:
                object.__setattr__(self, "first", None)


@dataclass(frozen=True, slots=True)
class Pass:
    """``seat`` passes: it holds no playable tile (and the boneyard is empty)."""

    seat: Seat


@dataclass(frozen=True, slots=True)
class Draw:
    """``seat`` takes ``tile``, the next tile of the boneyard."""

    seat: Seat
    tile: Tile


@dataclass(frozen=True, slots=True)
class Announce:
    """``brazilian-points``: before the opening play, ``seat`` names the double
    it means to go out with."""

    seat: Seat
    tile: Tile


DominoMove: TypeAlias = Play | Pass | Draw | Announce


@dataclass(frozen=True, slots=True)
class LinePlay:
    """One tile on the line of play.

    ``end`` is ``"left"``/``"right"`` for the arm it extends, ``None`` for the
    opening tile. ``outer`` is the number the tile exposes after it; for the
    opening tile it is the number on the left (the other one faces right).
    """

    tile: Tile
    end: End | None
    seat: Seat
    outer: int

    @property
    def inner(self) -> int:
        """The number that touches the line (for the opening: the right number)."""
        return self.tile.other(self.outer)


# Interned move and line values: a playout allocates nothing per move, and a
# hand state holds pointers to shared objects only.
_MAX_SEATS = 4
_END_CODE: dict[End | None, int] = {None: 0, LEFT: 1, RIGHT: 2}
_ENDS: tuple[End | None, ...] = (None, LEFT, RIGHT)
_PLAYS: tuple[Play, ...] = tuple(
    Play(s, t, e) for s in range(_MAX_SEATS) for t in ALL_TILES for e in _ENDS
)
_PASSES: tuple[Pass, ...] = tuple(Pass(s) for s in range(_MAX_SEATS))
_DRAWS: tuple[Draw, ...] = tuple(Draw(s, t) for s in range(_MAX_SEATS) for t in ALL_TILES)
_ANNOUNCES: dict[tuple[int, int], Announce] = {
    (s, t.index): Announce(s, t) for s in range(_MAX_SEATS) for t in ALL_TILES if t.is_double
}
_LINE_PLAYS: list[LinePlay | None] = [None] * (28 * 3 * _MAX_SEATS * 7)
_SUM: tuple[int, ...] = tuple(t.low + t.high for t in ALL_TILES)
_POP7: tuple[int, ...] = tuple(m.bit_count() for m in range(128))
_KTH7: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i in range(7) if m >> i & 1) for m in range(128)
)
"""``_KTH7[m][k]``: the k-th set bit of the 7-bit mask ``m``."""
_BITS7: tuple[int, ...] = tuple(1 << i for i in range(7))
_DOUBLED_PIPS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(2 * (v + o) if o == v else v + o for o in range(7) if r >> o & 1) for r in range(128))
    for v in range(7)
)
"""``_DOUBLED_PIPS[v][row]``: twice the pips of the tiles ``v-o`` in ``row``
counted from the ``v`` side (a plain tile is seen from both of its numbers)."""
_NEXT_SEAT: dict[int, tuple[int, ...]] = {
    n: tuple((s + 1) % n for s in range(n)) for n in (2, 3, 4)
}


def _subsets(mask: int) -> list[int]:
    out = [0]
    for i in range(28):
        if mask >> i & 1:
            out += [x | 1 << i for x in out]
    return out


_ROW_OF: tuple[dict[int, int], ...] = tuple(
    {
        sub: sum(1 << ALL_TILES[i].other(v) for i in range(28) if sub >> i & 1)
        for sub in _subsets(_HAS[v])
    }
    for v in range(7)
)
"""``_ROW_OF[v][mask & _HAS[v]]``: the other halves of the held tiles that show ``v``."""


def _play(seat: int, tile_index: int, end_code: int) -> Play:
    return _PLAYS[(seat * 28 + tile_index) * 3 + end_code]


def _line_play(tile: Tile, end: End | None, seat: int, outer: int) -> LinePlay:
    key = ((tile.index * 3 + _END_CODE[end]) * _MAX_SEATS + seat) * 7 + outer
    lp = _LINE_PLAYS[key]
    if lp is None:
        lp = _LINE_PLAYS[key] = LinePlay(tile, end, seat, outer)
    return lp


def move_to_json(m: DominoMove) -> dict[str, Any]:
    """A move as the record format writes it."""
    if isinstance(m, Play):
        text = str(m.tile) if m.first is None else f"{m.first}-{m.tile.other(m.first)}"
        out: dict[str, Any] = {"seat": m.seat, "tile": text}
        if m.end is not None:
            out["end"] = m.end
        return out
    if isinstance(m, Pass):
        return {"seat": m.seat, "pass": True}
    if isinstance(m, Draw):
        return {"seat": m.seat, "draw": str(m.tile)}
    return {"seat": m.seat, "announce": str(m.tile)}


def move_from_json(d: Any) -> DominoMove:
    """Read a record move; raises :class:`RecordFormatError` when it does not fit
    the format (whether it is *legal* is the hand's business)."""
    if not isinstance(d, dict):
        raise RecordFormatError(f"a move is a JSON object, got {d!r}")
    keys = {k for k in d if not (isinstance(k, str) and k.startswith("x-"))}
    seat = d.get("seat")
    if not isinstance(seat, int) or isinstance(seat, bool) or seat < 0:
        raise RecordFormatError(f"a move needs a seat number, got {d!r}")
    try:
        if "tile" in keys:
            if keys - {"seat", "tile", "end"}:
                raise RecordFormatError(f"unexpected fields in a play: {sorted(keys)}")
            text = d["tile"]
            tile = Tile.parse(text)
            end = d.get("end")
            if "end" in keys and end not in (LEFT, RIGHT):
                raise RecordFormatError(f"'end' is 'left' or 'right', got {end!r}")
            first = int(text.strip()[0])
            return Play(seat, tile, end, first)
        if "pass" in keys:
            if keys != {"seat", "pass"} or d["pass"] is not True:
                raise RecordFormatError(f"a pass is {{'seat': s, 'pass': true}}, got {d!r}")
            return Pass(seat)
        if "draw" in keys:
            if keys != {"seat", "draw"}:
                raise RecordFormatError(f"unexpected fields in a draw: {sorted(keys)}")
            return Draw(seat, Tile.parse(d["draw"]))
        if "announce" in keys:
            if keys != {"seat", "announce"}:
                raise RecordFormatError(f"unexpected fields in an announcement: {sorted(keys)}")
            return Announce(seat, Tile.parse(d["announce"]))
    except RecordFormatError:
        raise
    except ValueError as exc:
        raise RecordFormatError(str(exc)) from None
    raise RecordFormatError(f"a move is a play, a pass, a draw or an announcement, got {d!r}")


def describe_move(m: DominoMove) -> str:
    """A short human sentence for logs and displays."""
    if isinstance(m, Play):
        where = f" on the {m.end}" if m.end else ""
        return f"seat {m.seat} plays {m.tile}{where}"
    if isinstance(m, Pass):
        return f"seat {m.seat} passes"
    if isinstance(m, Draw):
        return f"seat {m.seat} draws {m.tile}"
    return f"seat {m.seat} announces {m.tile}"


# --------------------------------------------------------------------------- options


def _choice(*values: str) -> Any:
    def check(name: str, value: Any) -> Any:
        if value not in values:
            raise OptionError(f"option {name!r} is one of {', '.join(values)}; got {value!r}")
        return value

    return check


def _positive_number(name: str, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise OptionError(f"option {name!r} is a positive number; got {value!r}")
    return value


def _number(name: str, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptionError(f"option {name!r} is a number; got {value!r}")
    return value


def _boolean(name: str, value: Any) -> Any:
    if not isinstance(value, bool):
        raise OptionError(f"option {name!r} is true or false; got {value!r}")
    return value


def _score_list(name: str, value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        raise OptionError(f"option {name!r} is a list of numbers, one per team; got {value!r}")
    return tuple(value)


_PIPS_OPTIONS: dict[str, tuple[Any, Any]] = {
    "target": (50, _positive_number),
    "opening": ("double-six", _choice("double-six", "rotation")),
    "rotation": ("next", _choice("next", "previous")),
    "score_all_pips": (False, _boolean),
    "blocked_tie": ("locker-loses", _choice("locker-loses", "nobody", "replay")),
    "forced_block": ("forbidden", _choice("forbidden", "allowed")),
}

_BRAZILIAN_OPTIONS: dict[str, tuple[Any, Any]] = {
    "target": (4, _positive_number),
    "forced_block": ("forbidden", _choice("forbidden", "allowed")),
    "simple_domino": (1, _number),
    "blocked_opener": ("fewest-pips", _choice("fewest-pips", "after-locker")),
    "announce": (True, _boolean),
    "cegonha_doubles": ("announcer", _choice("announcer", "anyone")),
    "deal_specials": (True, _boolean),
    "lambreta": (-1, _number),
    "start_score": (None, _score_list),
}

_OPTION_TABLES: dict[str, dict[str, tuple[Any, Any]]] = {
    "pairs-pips": _PIPS_OPTIONS,
    "pips-two-player": _PIPS_OPTIONS,
    "brazilian-points": _BRAZILIAN_OPTIONS,
}

_SEATS: dict[str, tuple[int, ...]] = {
    "pairs-pips": (4,),
    "pips-two-player": (2,),
    "brazilian-points": (4, 3),
}


@dataclass(frozen=True, slots=True)
class DominoOptions:
    """The options of one variant, every one with the seed text's default.

    ``docs/rules/<variant>.md`` quotes the sentence each option rests on.
    Options that a variant does not have keep their defaults and are not
    written to records.
    """

    variant: str
    target: Points = 50
    opening: str = "double-six"
    """Pips variants: who opens hands after the first: ``double-six`` (the
    holder of 6-6, every hand) or ``rotation``."""
    rotation: str = "next"
    """With ``opening="rotation"``: the next opener is the ``next`` seat in
    playing order after the last opener, or the ``previous`` one."""
    score_all_pips: bool = False
    """Pips variants: the winner scores all pips left on the table, not only
    the opponents' (a regional alternative)."""
    blocked_tie: str = "locker-loses"
    """Pips variants, a blocked hand with equal pips: ``locker-loses``,
    ``nobody`` scores, or the hand is ``replay``-ed."""
    forced_block: str = "forbidden"
    """``forbidden``: a play that blocks the game is illegal while the seat has
    another play (only "natural" blocks); ``allowed``."""
    simple_domino: Points = 1
    blocked_opener: str = "fewest-pips"
    announce: bool = True
    cegonha_doubles: str = "announcer"
    deal_specials: bool = True
    lambreta: Points = -1
    start_score: tuple[Points, ...] | None = None

    @classmethod
    def from_dict(cls, variant: str, options: Mapping[str, Any] | None = None) -> DominoOptions:
        """Options of ``variant`` from a record's ``options`` object.

        Raises :class:`OptionError` on an unknown variant, an unknown option or
        a value outside what the option allows. Missing options take defaults.
        """
        if variant not in _OPTION_TABLES:
            raise OptionError(f"unknown dominoes variant {variant!r}; known: {', '.join(VARIANTS)}")
        table = _OPTION_TABLES[variant]
        values: dict[str, Any] = {name: default for name, (default, _) in table.items()}
        if options is not None:
            if not isinstance(options, Mapping):
                raise OptionError(f"options are a JSON object, got {options!r}")
            for name, value in options.items():
                if isinstance(name, str) and name.startswith("x-"):
                    continue
                if name not in table:
                    raise OptionError(
                        f"unknown option {name!r} for {variant}; known: {', '.join(table)}"
                    )
                values[name] = table[name][1](name, value)
        return cls(variant=variant, **values)

    def to_dict(self) -> dict[str, Any]:
        """Every option of the variant, as a record writes them."""
        out: dict[str, Any] = {}
        for name in _OPTION_TABLES[self.variant]:
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


# --------------------------------------------------------------------------- opening rule


@dataclass(frozen=True, slots=True)
class Opening:
    """Who opens a hand and with what.

    ``seat`` ``None`` means "the holder of ``tile``". ``no_double`` forbids a
    double as the opening tile (``brazilian-points`` after a blocked hand).
    ``reason`` is the rule, in words, for error messages.
    """

    seat: Seat | None = None
    tile: Tile | None = None
    no_double: bool = False
    reason: str = ""
    fallback: bool = False
    """When nobody holds ``tile`` (two players: it is in the boneyard), the
    holder of the highest double opens with it, or without doubles the holder
    of the heaviest tile."""


_FIRST_OPENINGS = {
    False: Opening(
        None, DOUBLE_SIX, reason="the first hand of a match opens with 6-6 by its holder"
    ),
    True: Opening(
        None,
        DOUBLE_SIX,
        reason="the first hand of a match opens with 6-6 by its holder",
        fallback=True,
    ),
}
_THREE_SEAT_OPENING = Opening(
    None, DOUBLE_BLANK, reason="in the 3-seat game the first hand opens with 0-0"
)


def _first_hand_opening(variant: str, seats: int) -> Opening:
    if variant == "brazilian-points" and seats == 3:
        return _THREE_SEAT_OPENING
    return _FIRST_OPENINGS[variant == "pips-two-player"]


# --------------------------------------------------------------------------- a hand

_IN_PLAY, _DOMINO, _BLOCKED, _LOCOMOTIVA, _SEVEN_DOUBLES = 0, 1, 2, 3, 4
_OUTCOME_NAMES = {
    _DOMINO: "domino",
    _BLOCKED: "blocked",
    _LOCOMOTIVA: "locomotiva",
    _SEVEN_DOUBLES: "seven-doubles",
}


class DominoHand:
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
        self.opening = opening or _first_hand_opening(options.variant, self.seats)
        self._opener, self.opening = self._resolve_opening(self.opening)
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
            if opening.no_double and not held & ~_DOUBLES_MASK:
                # only doubles in hand: the restriction cannot apply
                opening = Opening(seat, opening.tile, False, opening.reason)
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
        kind = "double" if doubles else "tile"
        seat = self.holder(best)
        assert seat is not None
        return seat, Opening(
            None,
            best,
            reason=f"6-6 is in the boneyard, so the highest {kind} held ({best}) opens",
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
    ) -> DominoHand:
        """A copy sharing the immutable parts.

        With ``hands`` (and ``boneyard``, the tiles still to draw, next first)
        the seats hold those tiles instead: a guessed world for search. The
        line, the moves and whose turn stay; the caller keeps the counts
        consistent.
        """
        other = object.__new__(DominoHand)
        other.options = self.options
        other.seats = self.seats
        other.deal = self.deal
        other.opening = self.opening
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
        """The seat that opens (or opened) this hand."""
        return self._opener

    @property
    def announced(self) -> dict[Seat, Tile]:
        """Announced doubles (``brazilian-points``), per seat."""
        return dict(self._announced) if self._announced else {}

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
                for i in _bits(held & _DOUBLES_MASK):
                    out.append(_ANNOUNCES[(seat, i)])
            if seat != self.to_play:
                return out
            opening = self.opening
            if opening.tile is not None:
                out.append(_play(seat, opening.tile.index, 0))
            else:
                mask = held & ~_DOUBLES_MASK if opening.no_double else held
                out.extend(_play(seat, i, 0) for i in _bits(mask))
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
        if self._forbid_forced and len(plays) > 1 and self._drawn == len(self._bone):
            keep = [m for m in plays if not self._would_block(m)]
            if keep:
                plays = keep
        out.extend(plays)
        return out

    def _would_block(self, m: Play) -> bool:
        """Whether playing ``m`` (a non-opening play) leaves nobody able to play
        while the mover still holds tiles (a going-out play is not a block)."""
        if self._drawn < len(self._bone):
            return False
        bit = _BIT[m.tile.index]
        seat = m.seat
        if self._held[seat] == bit:
            return False
        t = m.tile
        if m.end == LEFT:
            left, right = t.other(self._left), self._right
        else:
            left, right = self._left, t.other(self._right)
        rest = 0
        for s in self._held:
            rest |= s
        rest &= ~bit
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
            raise IllegalPlayError(f"{m!r} is not a dominoes move")
        if not 0 <= m.seat < self.seats:
            raise IllegalPlayError(f"there is no seat {m.seat}: seats are 0..{self.seats - 1}")
        if self._state:
            raise IllegalPlayError(f"the hand is over ({self._over_text()}): no move may follow")
        seat = m.seat
        held = self._held[seat]
        if isinstance(m, Announce):
            return self._check_announce(m, held)
        if seat != self.to_play:
            raise IllegalPlayError(f"it is seat {self.to_play}'s turn, not seat {seat}'s")
        opening = self._left < 0
        if isinstance(m, Play):
            t = m.tile
            if not held & _BIT[t.index]:
                raise IllegalPlayError(f"seat {seat} does not hold {t}")
            if opening:
                return self._check_opening(m)
            return self._check_play(m)
        if opening:
            raise IllegalPlayError(f"seat {seat} must open the hand: it may not {_verb(m)}")
        fit = held & (_HAS[self._left] | _HAS[self._right])
        if fit:
            t = ALL_TILES[(fit & -fit).bit_length() - 1]
            raise IllegalPlayError(
                f"seat {seat} holds {t}, which fits {self._fits_text(t)}: it may not {_verb(m)}"
            )
        left_in_bone = len(self._bone) - self._drawn
        if isinstance(m, Pass):
            if left_in_bone:
                raise IllegalPlayError(
                    f"seat {seat} must draw from the boneyard ({left_in_bone} tiles left) "
                    "before passing"
                )
            return m
        # Draw
        if not self._bone:
            raise IllegalPlayError(f"{self.options.variant} has no boneyard: seat {seat} passes")
        if not left_in_bone:
            raise IllegalPlayError(f"the boneyard is empty: seat {seat} passes")
        nxt = self._bone[self._drawn]
        if self._free_draw:
            if m.tile not in self._bone[self._drawn :]:
                raise IllegalPlayError(f"{m.tile} is not in the boneyard")
            return m
        if m.tile != nxt:
            raise IllegalPlayError(f"the next boneyard tile is {nxt}, not {m.tile}")
        return m

    def _check_announce(self, m: Announce, held: int) -> DominoMove:
        if self.options.variant != "brazilian-points":
            raise IllegalPlayError("announcing a double belongs to brazilian-points only")
        if not self.options.announce:
            raise IllegalPlayError("announcing a double is switched off for this match")
        if self._left >= 0:
            raise IllegalPlayError(
                f"seat {m.seat} may announce a double only before the opening play"
            )
        if not m.tile.is_double:
            raise IllegalPlayError(f"{m.tile} is not a double: only a double can be announced")
        if self._announced and m.seat in self._announced:
            raise IllegalPlayError(f"seat {m.seat} has already announced {self._announced[m.seat]}")
        if not held & _BIT[m.tile.index]:
            raise IllegalPlayError(
                f"seat {m.seat} does not hold {m.tile}, so it cannot announce it"
            )
        return m

    def _check_opening(self, m: Play) -> DominoMove:
        if m.end is not None:
            raise IllegalPlayError("the opening play goes in the middle: it has no end")
        op = self.opening
        if op.tile is not None and m.tile != op.tile:
            raise IllegalPlayError(f"this hand opens with {op.tile} ({op.reason}), not {m.tile}")
        if op.no_double and m.tile.is_double:
            raise IllegalPlayError(f"{m.tile} may not open this hand: {op.reason}")
        return m

    def _check_play(self, m: Play) -> DominoMove:
        t, left, right = m.tile, self._left, self._right
        on_left, on_right = t.has(left), t.has(right)
        if not (on_left or on_right):
            raise IllegalPlayError(f"{t} fits neither end (left {left}, right {right})")
        end = m.end
        if end is None:
            if on_left and on_right:
                raise IllegalPlayError(
                    f"{t} fits both ends (left {left}, right {right}): say which end"
                )
            m = _play(m.seat, t.index, 1 if on_left else 2)
        elif end == LEFT and not on_left:
            raise IllegalPlayError(f"{t} does not fit the left end, which shows {left}")
        elif end == RIGHT and not on_right:
            raise IllegalPlayError(f"{t} does not fit the right end, which shows {right}")
        if self._forbid_forced and self._would_block(m):
            for other in self.legal_moves(m.seat):
                if isinstance(other, Play) and not self._would_block(other):
                    raise IllegalPlayError(
                        f"{t} on the {m.end} would block the game while seat {m.seat} "
                        f"can play {other.tile} on the {other.end}: "
                        "with a choice the game must stay open"
                    )
        return _play(m.seat, t.index, _END_CODE[m.end])  # interned, without ``first``

    def _fits_text(self, t: Tile) -> str:
        on_left, on_right = t.has(self._left), t.has(self._right)
        if on_left and on_right:
            return "both ends"
        return "the left end" if on_left else "the right end"

    def _over_text(self) -> str:
        if self._state == _DOMINO:
            return f"seat {self._line[-1].seat} went out"
        if self._state == _BLOCKED:
            return "it is blocked"
        if self._state == _LOCOMOTIVA:
            return f"seat {self._special_seat} was dealt a locomotiva"
        return f"seat {self._special_seat} was dealt seven doubles"

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
            elif self._drawn == len(self._bone):
                rest = 0
                for h in held:
                    rest |= h
                if not rest & (_HAS[self._left] | _HAS[self._right]):
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
            if self._drawn == len(self._bone) and self._left >= 0:
                rest = 0
                for h in held:
                    rest |= h
                if not rest & (_HAS[self._left] | _HAS[self._right]):
                    self._state = _BLOCKED
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
            self.to_play = m.seat
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

    def playout(self, rng: random.Random) -> None:
        """Play uniformly random legal moves until the hand is over.

        The same moves :meth:`legal_moves` offers (announcements aside), applied
        as :meth:`apply` would, in one tight loop over the tile masks: the
        computer players' simulations and ``benchmarks/engine.py`` use it.
        """
        if self._state:
            return
        rand = rng.random
        if self._left < 0:
            if self.opening.tile is not None:
                self.apply(_play(self.to_play, self.opening.tile.index, 0))
            else:
                plays = [m for m in self.legal_moves(self.to_play) if type(m) is Play]
                self.apply(plays[int(rand() * len(plays))])
            if self._state:
                return
        held, bone, moves, line = self._held, self._bone, self._moves, self._line
        n, nb, drawn = self.seats, len(self._bone), self._drawn
        has, sum_, lps, plays_all = _HAS, _SUM, _LINE_PLAYS, _PLAYS
        forbid = self._forbid_forced
        left, right, s = self._left, self._right, self.to_play
        allm = 0
        for h in held:
            allm |= h
        state = _IN_PLAY
        while True:
            h = held[s]
            hl, hr = has[left], has[right]
            a, b = h & hl, h & hr
            if not (a | b):
                if drawn < nb:
                    t = bone[drawn]
                    drawn += 1
                    bit = 1 << t.index
                    held[s] = h | bit
                    allm |= bit
                    moves.append(_DRAWS[s * 28 + t.index])
                    if drawn == nb and not allm & (hl | hr):
                        state = _BLOCKED
                        break
                    continue
                moves.append(_PASSES[s])
                s = s + 1 if s + 1 < n else 0
                continue
            na = a.bit_count()
            k = int(rand() * (na + b.bit_count()))
            if k < na:
                mask, e = a, 1
            else:
                mask, e = b, 2
                k -= na
            while k:
                mask &= mask - 1
                k -= 1
            bit = mask & -mask
            i = bit.bit_length() - 1
            if e == 1:
                nl, nr = sum_[i] - left, right
            else:
                nl, nr = left, sum_[i] - right
            if forbid and h != bit and drawn == nb and not (allm ^ bit) & (has[nl] | has[nr]):
                # this play blocks the game: legal only if every play does
                keep = []
                for ee, mm in ((1, a), (2, b)):
                    while mm:
                        bb = mm & -mm
                        mm ^= bb
                        ii = bb.bit_length() - 1
                        ll, rr = (sum_[ii] - left, right) if ee == 1 else (left, sum_[ii] - right)
                        if (allm ^ bb) & (has[ll] | has[rr]):
                            keep.append((bb, ii, ee, ll, rr))
                if keep:
                    bit, i, e, nl, nr = keep[int(rand() * len(keep))]
            h ^= bit
            held[s] = h
            allm ^= bit
            if e == 1:
                line.append(
                    lps[((i * 3 + 1) * 4 + s) * 7 + nl] or _line_play(ALL_TILES[i], LEFT, s, nl)
                )
            else:
                line.append(
                    lps[((i * 3 + 2) * 4 + s) * 7 + nr] or _line_play(ALL_TILES[i], RIGHT, s, nr)
                )
            moves.append(plays_all[(s * 28 + i) * 3 + e])
            left, right = nl, nr
            s = s + 1 if s + 1 < n else 0
            if not h:
                state = _DOMINO
                break
            if drawn == nb and not allm & (has[left] | has[right]):
                state = _BLOCKED
                break
        self._left, self._right, self._drawn = left, right, drawn
        self._state = state
        self.to_play = s

    def simulate(self, rng: random.Random) -> HandResult:
        """The result of one uniformly random playout from here, leaving this
        hand untouched: what :meth:`playout` then :meth:`result` give on a
        clone (the same random draws, the same moves), without recording the
        line. The computer players' simulations and ``benchmarks/engine.py``
        use it.

        It works on a per-number view of the hands: ``rows[s][v]`` has bit
        ``o`` set when seat ``s`` holds the tile ``v-o``, so the plays on an
        end showing ``v`` are the bits of one small integer, and ``cnt[v]``
        says whether anybody can still play on ``v``.
        """
        if self._state or self._announced:
            other = self.clone()
            other.playout(rng)
            return other.result()
        rand = rng.random
        n = self.seats
        held = self._held
        r0, r1, r2, r3, r4, r5, r6 = _ROW_OF
        h0, h1, h2, h3, h4, h5, h6 = _HAS
        # rows[s][v] for v in 0..6, and rows[s][7] = how many tiles s holds
        rows = [
            [r0[m & h0], r1[m & h1], r2[m & h2], r3[m & h3], r4[m & h4], r5[m & h5], r6[m & h6]]
            + [m.bit_count()]
            for m in held
        ]
        allm = 0
        for m in held:
            allm |= m
        cnt = [(allm & h).bit_count() for h in _HAS]
        bone = self._bone
        nb, drawn = len(bone), self._drawn
        forbid = self._forbid_forced
        pop, kth, bits = _POP7, _KTH7, _BITS7
        nxt = _NEXT_SEAT[n]
        left, right, s = self._left, self._right, self.to_play
        if left < 0:
            if self.opening.tile is not None:
                t = self.opening.tile
            else:
                plays = [m for m in self.legal_moves(s) if type(m) is Play]
                t = plays[int(rand() * len(plays))].tile
            lo, hi = t.low, t.high
            row = rows[s]
            row[lo] ^= bits[hi]
            cnt[lo] -= 1
            if lo != hi:
                row[hi] ^= bits[lo]
                cnt[hi] -= 1
            row[7] -= 1
            left, right = lo, hi
            last_seat = s
            s = nxt[s]
        else:
            last_seat = self._line[-1].seat
        x = o = nl = nr = -1
        state = _BLOCKED
        while True:
            row = rows[s]
            a = row[left]
            b = row[right]
            if a or b:
                pa = pop[a]
                k = int(rand() * (pa + pop[b]))
                if k < pa:
                    x = left
                    o = nl = kth[a][k]
                    nr = right
                else:
                    x = right
                    o = nr = kth[b][k - pa]
                    nl = left
                row[x] ^= bits[o]
                cnt[x] -= 1
                if x != o:
                    row[o] ^= bits[x]
                    cnt[o] -= 1
                c = row[7] - 1
                row[7] = c
                last_seat = s
                if not c:
                    state = _DOMINO
                    break
                if not (cnt[nl] or cnt[nr]) and drawn == nb:
                    if not forbid:
                        break
                    # a block: legal only if every play blocks (take it back, look)
                    row[x] ^= bits[o]
                    cnt[x] += 1
                    if x != o:
                        row[o] ^= bits[x]
                        cnt[o] += 1
                    keep = []
                    for on_left, xx, mm in ((True, left, a), (False, right, b)):
                        for oo in kth[mm]:
                            ll, rr = (oo, right) if on_left else (left, oo)
                            after_l = cnt[ll] - (ll == xx) - (ll == oo and oo != xx)
                            after_r = cnt[rr] - (rr == xx) - (rr == oo and oo != xx)
                            if after_l or after_r:
                                keep.append((xx, oo, ll, rr))
                    if keep:
                        x, o, nl, nr = keep[int(rand() * len(keep))]
                    row[x] ^= bits[o]
                    cnt[x] -= 1
                    if x != o:
                        row[o] ^= bits[x]
                        cnt[o] -= 1
                    if not keep:
                        break
                left = nl
                right = nr
                s = nxt[s]
            elif drawn < nb:
                t = bone[drawn]
                drawn += 1
                lo, hi = t.low, t.high
                row[lo] |= bits[hi]
                cnt[lo] += 1
                if lo != hi:
                    row[hi] |= bits[lo]
                    cnt[hi] += 1
                row[7] += 1
                if drawn == nb and not (cnt[left] or cnt[right]):
                    x = -1  # blocked by a draw: the last play is on the line
                    break
            else:
                s = nxt[s]
        d0, d1, d2, d3, d4, d5, d6 = _DOUBLED_PIPS
        pips = [
            (d0[r[0]] + d1[r[1]] + d2[r[2]] + d3[r[3]] + d4[r[4]] + d5[r[5]] + d6[r[6]]) >> 1
            for r in rows
        ]
        if self.options.variant == "brazilian-points":
            if x < 0:
                last = self._line[-1]
                return self._brazilian_result(pips, state, last_seat, last.tile, -1, -1)
            lo, hi = (x, o) if x <= o else (o, x)
            return self._brazilian_result(
                pips, state, last_seat, ALL_TILES[_tile_index(lo, hi)], left, right
            )
        return self._pips_result(pips, state, last_seat)

    # -- scoring

    def result(self) -> HandResult:
        """How the hand ended and what each team earned (raises if in play)."""
        if not self._state:
            raise ValueError("the hand is still in play")
        last = self._line[-1] if self._line else None
        seat_pips = [_mask_pips(m) for m in self._held]
        if self.options.variant == "brazilian-points":
            if last is None:
                return self._brazilian_result(seat_pips, self._state, -1, DOUBLE_BLANK, 0, 0)
            if last.end == LEFT:
                before_l, before_r = last.inner, self._right
            elif last.end == RIGHT:
                before_l, before_r = self._left, last.inner
            else:
                before_l = before_r = -1
            return self._brazilian_result(
                seat_pips, self._state, last.seat, last.tile, before_l, before_r
            )
        return self._pips_result(seat_pips, self._state, last.seat if last else -1)

    def _team_pips(self, seat_pips: list[int]) -> list[int]:
        if self.seats == 4:
            return [seat_pips[0] + seat_pips[2], seat_pips[1] + seat_pips[3]]
        return list(seat_pips)

    def _pips_result(self, seat_pips: list[int], state: int, last_seat: int) -> HandResult:
        """Score a finished pips hand (two sides: pairs of 4 seats, or 2 seats)."""
        if self.seats == 4:
            p0, p1 = seat_pips[0] + seat_pips[2], seat_pips[1] + seat_pips[3]
            locker = last_seat & 1
        else:
            p0, p1 = seat_pips
            locker = last_seat
        return _score_pips(self.options, p0, p1, state, locker)

    def _brazilian_result(
        self, seat_pips: list[int], state: int, seat: int, t: Tile, before_l: int, before_r: int
    ) -> HandResult:
        """Score a finished hand; ``seat`` laid ``t`` last, on ends ``before_l``/``before_r``."""
        opts = self.options
        teams = self.teams
        points: list[Points] = [0.0] * teams
        if state in (_SEVEN_DOUBLES, _LOCOMOTIVA):
            team = self.team_of(self._special_seat)
            if state == _LOCOMOTIVA:
                points[team] = 32
                return HandResult("locomotiva", team, tuple(points), "locomotiva")
            before = self._score_before[team] if self._score_before else 0
            points[team] = max(opts.target - before, 0)
            return HandResult("seven-doubles", team, tuple(points), "sete buchas")
        announced = self._announced or {}
        if state == _DOMINO:
            team = self.team_of(seat)
            both = t.has(before_l) and t.has(before_r) and (t.is_double or before_l != before_r)
            if announced.get(seat) == t:
                if both:
                    doubles = sum(
                        1
                        for lp in self._line[:-1]
                        if lp.tile.is_double
                        and (opts.cegonha_doubles == "anyone" or lp.seat == seat)
                    )
                    value, label = (16, "cegonha") if doubles >= 3 else (8, "4x4")
                else:
                    value, label = 4, "quadriciclo"
            elif t.is_double:
                value, label = (3, "cruzada") if both else (2, "batida de bucha")
            elif both:
                value, label = 2, "lá-e-lô"
            else:
                value, label = opts.simple_domino, "batida"
            points[team] += value
            for s, d in announced.items():
                if not (s == seat and d == t):
                    points[self.team_of(s)] -= 1
            return HandResult("domino", team, tuple(points), label)
        # blocked: the side with fewer pips
        pips = self._team_pips(seat_pips)
        low = min(pips)
        best = [k for k in range(teams) if pips[k] == low]
        for s in announced:
            points[self.team_of(s)] -= 1
        if len(best) == 1:
            points[best[0]] += 0.5
            return HandResult("blocked", best[0], tuple(points), "fechada")
        for k in best:
            points[k] += 0.25
        return HandResult("blocked", None, tuple(points), "empate")

    def next_opening(self, result: HandResult) -> Opening:
        """Who opens the next hand of the match, after this one ended with ``result``."""
        opts = self.options
        variant = opts.variant
        if variant != "brazilian-points":
            if result.winner is None and opts.blocked_tie == "replay" and self._state == _BLOCKED:
                return (
                    self.opening
                    if self.opening.seat is not None
                    else Opening(
                        None,
                        self.opening.tile,
                        reason=self.opening.reason,
                        fallback=self.opening.fallback,
                    )
                )
            if opts.opening == "double-six":
                return Opening(
                    None,
                    DOUBLE_SIX,
                    reason="every hand opens with 6-6 by its holder",
                    fallback=variant == "pips-two-player",
                )
            step = 1 if opts.rotation == "next" else -1
            seat = (self._opener + step) % self.seats
            return Opening(seat, None, reason=f"the opening passes to seat {seat} in rotation")
        if self._state in (_DOMINO, _LOCOMOTIVA, _SEVEN_DOUBLES):
            seat = self.winner_seat
            assert seat is not None
            return Opening(seat, None, reason=f"seat {seat} went out, so it opens")
        if result.winner is None:
            return Opening(
                None, DOUBLE_SIX, reason="after a tied count the next hand opens with 6-6"
            )
        team = result.winner
        members = [s for s in range(self.seats) if self.team_of(s) == team]
        if opts.blocked_opener == "fewest-pips":
            locker = self._line[-1].seat
            order = sorted(
                members,
                key=lambda s: (self.pips_in_hand(s), (s - locker - 1) % self.seats),
            )
            seat = order[0]
        else:
            locker = self._line[-1].seat
            seat = min(members, key=lambda s: (s - locker - 1) % self.seats)
        return Opening(
            seat,
            None,
            no_double=True,
            reason="after a blocked hand the winning side opens with a tile that is not a double",
        )


def _score_pips(opts: DominoOptions, p0: int, p1: int, state: int, locker: int) -> HandResult:
    """Score a finished pips hand: ``p0``/``p1`` are the pips left to each side,
    ``locker`` the side that made the last play."""
    every = opts.score_all_pips
    if state == _DOMINO:
        if locker == 0:
            return HandResult("domino", 0, (p0 + p1 if every else p1, 0))
        return HandResult("domino", 1, (0, p0 + p1 if every else p0))
    if p0 != p1:
        if p0 < p1:
            return HandResult("blocked", 0, (p0 + p1 if every else p1, 0))
        return HandResult("blocked", 1, (0, p0 + p1 if every else p0))
    # equal pips: ``locker`` is the side that made the last play
    if opts.blocked_tie == "locker-loses":
        won = p0 + p1 if every else p0  # p0 == p1: the locking side's pips
        points = (won, 0) if locker == 1 else (0, won)
        return HandResult("blocked", 1 - locker, points, "tie: the locking side loses")
    if opts.blocked_tie == "nobody":
        return HandResult("blocked", None, (0, 0), "tie: nobody scores")
    return HandResult("blocked", None, (0, 0), "tie: hand replayed")


def _verb(m: DominoMove) -> str:
    return "pass" if isinstance(m, Pass) else "draw"


def _deal_masks(
    variant: str, deal: tuple[tuple[Tile, ...], ...], bone: tuple[Tile, ...]
) -> list[int]:
    """The held mask of each seat; raises :class:`DealError` (via
    :func:`_check_deal`, which words the problem) unless the deal fits."""
    # 28 tiles whose bits add up to all 28 bits: each tile exactly once
    # (a repeated tile would carry into another bit or leave one unset)
    try:
        masks = [sum([t.bit for t in hand]) for hand in deal]
        seen = sum(masks) + sum([t.bit for t in bone])
        count = sum(map(len, deal)) + len(bone)
    except (AttributeError, TypeError, IndexError):
        masks, seen, count = [], -1, -1
    ok = count == 28 and len(deal) in _SEATS[variant]
    if ok and seen == _ALL_MASK:
        sizes = [len(h) for h in deal]
        if variant == "pips-two-player":
            ok = sizes == [7, 7] and len(bone) == 14
        elif bone:
            ok = False
        elif len(deal) == 4:
            ok = sizes == [7, 7, 7, 7]
        else:
            ok = all(len(h) == (10 if m & 1 else 9) for h, m in zip(deal, masks, strict=True))
        if ok:
            return masks
    _check_deal(variant, deal, bone)
    raise DealError("the deal does not fit the variant")  # pragma: no cover


def _check_deal(variant: str, deal: tuple[tuple[Tile, ...], ...], bone: tuple[Tile, ...]) -> None:
    n = len(deal)
    if n not in _SEATS[variant]:
        allowed = " or ".join(str(s) for s in _SEATS[variant])
        raise DealError(f"{variant} is played by {allowed} seats, the deal has {n}")
    seen: dict[Tile, str] = {}
    for seat, hand in enumerate(deal):
        for t in hand:
            if not isinstance(t, Tile):
                raise DealError(f"seat {seat} was dealt {t!r}, which is not a tile")
            if t in seen:
                raise DealError(f"{t} is dealt twice ({seen[t]} and seat {seat})")
            seen[t] = f"seat {seat}"
    for t in bone:
        if not isinstance(t, Tile):
            raise DealError(f"the boneyard holds {t!r}, which is not a tile")
        if t in seen:
            raise DealError(f"{t} is dealt twice ({seen[t]} and the boneyard)")
        seen[t] = "the boneyard"
    if len(seen) != 28:
        missing = ", ".join(str(t) for t in ALL_TILES if t not in seen)
        raise DealError(f"the deal and boneyard must hold all 28 tiles; missing: {missing}")
    sizes = [len(h) for h in deal]
    if variant == "pips-two-player":
        if sizes != [7, 7] or len(bone) != 14:
            raise DealError(
                f"pips-two-player deals 7 tiles to each seat and leaves 14 in the boneyard; "
                f"got {sizes} and {len(bone)}"
            )
        return
    if bone:
        raise DealError(f"{variant} has no boneyard; got {len(bone)} tiles")
    if n == 4:
        if sizes != [7, 7, 7, 7]:
            raise DealError(f"every seat is dealt 7 tiles; got {sizes}")
        return
    # 3 seats: 9 each, the holder of 0-0 has 10
    for seat, hand in enumerate(deal):
        want = 10 if DOUBLE_BLANK in hand else 9
        if len(hand) != want:
            raise DealError(
                "in the 3-seat game each seat is dealt 9 tiles and the holder of 0-0 keeps "
                f"a tenth; seat {seat} has {len(hand)}"
            )


def deal_tiles(variant: str, seats: int, rng: random.Random) -> tuple[list[list[Tile]], list[Tile]]:
    """Shuffle and deal for ``variant``: (hands per seat, boneyard in draw order)."""
    if seats not in _SEATS[variant]:
        raise OptionError(f"{variant} is played by {_SEATS[variant]} seats, not {seats}")
    if seats == 3:
        # 9 tiles each; whoever picks up 0-0 keeps a tenth tile
        rest = list(ALL_TILES[1:])
        rng.shuffle(rest)
        hands = [rest[0:9], rest[9:18], rest[18:27]]
        holder = rng.randrange(3)
        hands[holder].insert(rng.randrange(10), DOUBLE_BLANK)
        return hands, []
    tiles = list(ALL_TILES)
    rand = rng.random
    for i in range(27, 0, -1):  # Fisher-Yates
        j = int(rand() * (i + 1))
        tiles[i], tiles[j] = tiles[j], tiles[i]
    hands = [tiles[7 * s : 7 * s + 7] for s in range(seats)]
    return hands, tiles[7 * seats :]


# --------------------------------------------------------------------------- fast random hands

# A lean view for :func:`simulate_deal`: a seat's tiles as one 49-bit integer
# whose bit ``7 * v + o`` is set when it holds the tile ``v-o`` (a plain tile
# sets two bits, a double one), so ``h >> 7 * v & 127`` is the row of plays on
# an end showing ``v``, and the tiles of a deal are disjoint bit patterns that
# add up.
_PAIR_AT: tuple[int, ...] = tuple(
    1 << 7 * x + o | 1 << 7 * o + x for x in range(7) for o in range(7)
)
"""``_PAIR_AT[7 * x + o]``: the pattern of the tile ``x-o``."""
_PAIR: tuple[int, ...] = tuple(_PAIR_AT[7 * t.low + t.high] for t in ALL_TILES)
_PAIR_INDEX: dict[int, int] = {p: i for i, p in enumerate(_PAIR)}
_PAIR_ALL = sum(_PAIR)
_PAIR_66 = _PAIR[27]
_Play3: TypeAlias = tuple[int, int, int]


class _FastTables(NamedTuple):
    picks: tuple[tuple[tuple[int, tuple[_Play3, ...]], ...], ...]
    """``picks[a][b]``: (count, plays) for the rows ``a`` (left end) and ``b``
    (right end) of the seat to play; a play is (1 for the left end else 0, the
    new end ``o``, ``7 * o``)."""
    pairs: tuple[tuple[tuple[int, int], ...], ...]
    """For pools of 28, 26, ..., 16 tiles: ``k < n (n - 1)`` as the two
    positions ``(k // (n - 1), k % (n - 1))`` to remove one after the other."""
    halves: tuple[Callable[[Sequence[int]], tuple[int, ...]], ...]
    """The C(14, 7) = 3432 ways to take 7 of 14 tiles."""
    dpips: tuple[tuple[int, ...], ...]
    """Twice the pips of rows 0-1, 2-3, 4-5 (14-bit chunks) and row 6."""


_FAST: _FastTables | None = None


def _fast_tables() -> _FastTables:
    """Built on the first :func:`simulate_deal` (about 4 MB, 50 ms), so that
    importing the engine stays cheap for the referee and the web display."""
    global _FAST
    if _FAST is None:
        lefts = [tuple((1, o, 7 * o) for o in _KTH7[a]) for a in range(128)]
        rights = [tuple((0, o, 7 * o) for o in _KTH7[b]) for b in range(128)]
        picks = tuple(tuple((len(la) + len(rb), la + rb) for rb in rights) for la in lefts)
        shared = {(i, j): (i, j) for i in range(28) for j in range(27)}
        pairs = tuple(
            tuple(shared[k // (n - 1), k % (n - 1)] for k in range(n * (n - 1)))
            for n in range(28, 15, -2)
        )
        halves = tuple(itemgetter(*c) for c in combinations(range(14), 7))
        rows = [
            tuple(
                sum(2 * (v + o) if o == v else v + o for o in range(7) if r >> o & 1)
                for r in range(128)
            )
            for v in range(7)
        ]
        dpips = (
            *(tuple(x + y for y in rows[v + 1] for x in rows[v]) for v in (0, 2, 4)),
            rows[6],
        )
        _FAST = _FastTables(picks, pairs, halves, dpips)
    return _FAST


def _fast_move(seat: int, t: int, side: int) -> Play:
    """The interned :class:`Play` of ``seat`` laying the tile of pattern ``t``
    on the left end (``side`` 1) or the right one (0), for traces."""
    return _PLAYS[((seat & 3) * 28 + _PAIR_INDEX[t]) * 3 + 2 - side]


def _fast_unblock(
    h: int,
    allm: int,
    sl: int,
    sr: int,
    side: int,
    o: int,
    t: int,
    plays: tuple[_Play3, ...],
    g: Callable[[int], int],
) -> tuple[int, int, int, int] | None:
    """The play (tile, left shift, right shift, side) that replaces a blocking
    one when ``forced_block`` is ``forbidden``: uniform over the seat's plays
    that do not block (or go out), None when every play blocks. ``h``,
    ``allm`` are the state before the blocking play, ``sl``/``sr`` after it."""
    tile = ALL_TILES[_PAIR_INDEX[t]]
    if side:
        sl = 7 * (tile.low + tile.high - o)
    else:
        sr = 7 * (tile.low + tile.high - o)
    keep: list[tuple[int, int, int, int]] = []
    for s2, o2, o72 in plays:
        if s2:
            t2, l2, r2 = _PAIR_AT[sl + o2], o72, sr
        else:
            t2, l2, r2 = _PAIR_AT[sr + o2], sl, o72
        rest = allm ^ t2
        if h == t2 or rest >> l2 & 127 or rest >> r2 & 127:
            keep.append((t2, l2, r2, s2))
    if not keep:
        return None
    return keep[g(32) * len(keep) >> 32]


@dataclass(slots=True)
class PlayoutTrace:
    """What :func:`simulate_deal` dealt and played, to check it against
    :class:`DominoHand` or to look at it."""

    deal: list[list[Tile]] = field(default_factory=list)
    boneyard: list[Tile] = field(default_factory=list)
    """``pips-two-player``: the tiles left to draw, next first."""
    moves: list[DominoMove] = field(default_factory=list)


def simulate_deal(
    options: DominoOptions, rng: random.Random, trace: PlayoutTrace | None = None
) -> HandResult:
    """Deal a fresh first hand of a match and play uniformly random legal moves
    to its end; its result, as :meth:`DominoHand.result` scores it.

    The Monte Carlo question "what does a random hand give?" and
    ``benchmarks/engine.py`` ask it. For ``pairs-pips`` it never builds a
    :class:`DominoHand`: the deal goes straight into 49-bit seat patterns and
    the playout loop is unrolled over the four seats. The moves are the ones
    :meth:`DominoHand.legal_moves` offers (``forced_block`` included), each
    chosen uniformly. Random numbers are ``rng.getrandbits(k)`` scaled to
    ``n`` choices (``x * n >> k``): the deal uses ``k = 32`` (``n`` up to
    3432, relative bias below 1e-6), a play ``k = 26``, which keeps the
    product in one machine digit (``n <= 14``: bias below ``14 / 2**26``,
    2e-7); both are far below anything a playout can measure. With
    ``trace``, the deal and the moves are written to it (tests replay them
    through :class:`DominoHand`). Other variants take the general path
    (:meth:`DominoHand.simulate`).
    """
    variant = options.variant
    if variant != "pairs-pips":
        hands, bone = deal_tiles(variant, _SEATS[variant][0], rng)
        hand = DominoHand(options, hands, bone)
        if trace is None:
            return hand.simulate(rng)
        trace.deal = [list(h) for h in hand.deal]
        trace.boneyard = list(bone)
        hand.playout(rng)
        trace.moves = hand.moves
        return hand.result()
    picks, pairs, halves, (d01, d23, d45, d6) = _FAST or _fast_tables()
    p = list(_PAIR)
    g = rng.getrandbits
    pop = p.pop
    # A uniform deal: seats 0 and 1 take 7 tiles each, removed one by one at
    # uniform positions (two per draw, through the position pairs); seat 2
    # takes a uniform 7 of the 14 left, seat 3 the rest.
    t28, t26, t24, t22, t20, t18, t16 = pairs
    a, b = t28[g(32) * 756 >> 32]
    c, d = t26[g(32) * 650 >> 32]
    e, f = t24[g(32) * 552 >> 32]
    i, j = t22[g(32) * 462 >> 32]
    k, m = t20[g(32) * 380 >> 32]
    q, r = t18[g(32) * 306 >> 32]
    u, w = t16[g(32) * 240 >> 32]
    h0 = pop(a) + pop(b) + pop(c) + pop(d) + pop(e) + pop(f) + pop(i)
    h1 = pop(j) + pop(k) + pop(m) + pop(q) + pop(r) + pop(u) + pop(w)
    h2 = sum(halves[g(32) * 3432 >> 32](p))
    h3 = _PAIR_ALL - h0 - h1 - h2
    moves: list[DominoMove] = []
    rec = trace is not None
    if trace is not None:
        trace.deal = [[t for t in ALL_TILES if h & _PAIR[t.index]] for h in (h0, h1, h2, h3)]
        trace.moves = moves
    # The holder of 6-6 opens with it; slot k is then seat (op + 1 + k) % 4.
    if h0 >> 48:
        op, h0, h1, h2, h3 = 0, h1, h2, h3, h0
    elif h1 >> 48:
        op, h0, h1, h2, h3 = 1, h2, h3, h0, h1
    elif h2 >> 48:
        op, h0, h1, h2, h3 = 2, h3, h0, h1, h2
    else:
        op = 3
    h3 ^= _PAIR_66
    if rec:
        moves.append(_PLAYS[(op * 28 + 27) * 3])
    allm = _PAIR_ALL ^ _PAIR_66
    sl = sr = 42  # 7 * the number on each end
    pair_at = _PAIR_AT
    forbid = options.forced_block == "forbidden"
    t = side = last = 0
    state = _BLOCKED
    while True:
        n, c = picks[h0 >> sl & 127][h0 >> sr & 127]
        if n:
            side, o, o7 = c[g(26) * n >> 26] if n > 1 else c[0]
            if side:
                t = pair_at[sl + o]
                sl = o7
            else:
                t = pair_at[sr + o]
                sr = o7
            h0 ^= t
            allm ^= t
            if not h0:
                last, state = 0, _DOMINO
                break
            if not (allm >> sl & 127 or allm >> sr & 127):
                last, state = 0, _BLOCKED
                if not forbid or n == 1:
                    break
                pick = _fast_unblock(h0 ^ t, allm ^ t, sl, sr, side, o, t, c, g)
                if pick is None:
                    break
                h0 ^= t
                allm ^= t
                t, sl, sr, side = pick
                h0 ^= t
                allm ^= t
                if not h0:
                    state = _DOMINO
                    break
            if rec:
                moves.append(_fast_move(op + 1, t, side))
        elif rec:
            moves.append(_PASSES[(op + 1) & 3])
        n, c = picks[h1 >> sl & 127][h1 >> sr & 127]
        if n:
            side, o, o7 = c[g(26) * n >> 26] if n > 1 else c[0]
            if side:
                t = pair_at[sl + o]
                sl = o7
            else:
                t = pair_at[sr + o]
                sr = o7
            h1 ^= t
            allm ^= t
            if not h1:
                last, state = 1, _DOMINO
                break
            if not (allm >> sl & 127 or allm >> sr & 127):
                last, state = 1, _BLOCKED
                if not forbid or n == 1:
                    break
                pick = _fast_unblock(h1 ^ t, allm ^ t, sl, sr, side, o, t, c, g)
                if pick is None:
                    break
                h1 ^= t
                allm ^= t
                t, sl, sr, side = pick
                h1 ^= t
                allm ^= t
                if not h1:
                    state = _DOMINO
                    break
            if rec:
                moves.append(_fast_move(op + 2, t, side))
        elif rec:
            moves.append(_PASSES[(op + 2) & 3])
        n, c = picks[h2 >> sl & 127][h2 >> sr & 127]
        if n:
            side, o, o7 = c[g(26) * n >> 26] if n > 1 else c[0]
            if side:
                t = pair_at[sl + o]
                sl = o7
            else:
                t = pair_at[sr + o]
                sr = o7
            h2 ^= t
            allm ^= t
            if not h2:
                last, state = 2, _DOMINO
                break
            if not (allm >> sl & 127 or allm >> sr & 127):
                last, state = 2, _BLOCKED
                if not forbid or n == 1:
                    break
                pick = _fast_unblock(h2 ^ t, allm ^ t, sl, sr, side, o, t, c, g)
                if pick is None:
                    break
                h2 ^= t
                allm ^= t
                t, sl, sr, side = pick
                h2 ^= t
                allm ^= t
                if not h2:
                    state = _DOMINO
                    break
            if rec:
                moves.append(_fast_move(op + 3, t, side))
        elif rec:
            moves.append(_PASSES[(op + 3) & 3])
        n, c = picks[h3 >> sl & 127][h3 >> sr & 127]
        if n:
            side, o, o7 = c[g(26) * n >> 26] if n > 1 else c[0]
            if side:
                t = pair_at[sl + o]
                sl = o7
            else:
                t = pair_at[sr + o]
                sr = o7
            h3 ^= t
            allm ^= t
            if not h3:
                last, state = 3, _DOMINO
                break
            if not (allm >> sl & 127 or allm >> sr & 127):
                last, state = 3, _BLOCKED
                if not forbid or n == 1:
                    break
                pick = _fast_unblock(h3 ^ t, allm ^ t, sl, sr, side, o, t, c, g)
                if pick is None:
                    break
                h3 ^= t
                allm ^= t
                t, sl, sr, side = pick
                h3 ^= t
                allm ^= t
                if not h3:
                    state = _DOMINO
                    break
            if rec:
                moves.append(_fast_move(op + 4, t, side))
        elif rec:
            moves.append(_PASSES[(op + 4) & 3])

    if rec:
        moves.append(_fast_move(op + 1 + last, t, side))
    m = h0 | h2
    pa = (d01[m & 16383] + d23[m >> 14 & 16383] + d45[m >> 28 & 16383] + d6[m >> 42]) >> 1
    m = h1 | h3
    pb = (d01[m & 16383] + d23[m >> 14 & 16383] + d45[m >> 28 & 16383] + d6[m >> 42]) >> 1
    if op & 1:  # slot 0 is seat op + 1, of side 0
        return _score_pips(options, pa, pb, state, last & 1)
    return _score_pips(options, pb, pa, state, (last & 1) ^ 1)


# --------------------------------------------------------------------------- a match


class DominoMatch:
    """Hands played in order as one match: openings, score, target, record."""

    def __init__(
        self,
        variant: str,
        options: DominoOptions | Mapping[str, Any] | None = None,
        seats: int | None = None,
    ) -> None:
        if variant not in VARIANTS:
            raise OptionError(f"unknown dominoes variant {variant!r}; known: {', '.join(VARIANTS)}")
        if isinstance(options, DominoOptions):
            if options.variant != variant:
                raise OptionError(f"options of {options.variant} given to a {variant} match")
            self.options = options
        else:
            self.options = DominoOptions.from_dict(variant, options)
        self.variant = variant
        self.seats = seats if seats is not None else _SEATS[variant][0]
        if self.seats not in _SEATS[variant]:
            allowed = " or ".join(str(s) for s in _SEATS[variant])
            raise OptionError(f"{variant} is played by {allowed} seats, not {self.seats}")
        self.teams = 2 if self.seats in (2, 4) else self.seats
        start = self.options.start_score
        if start is not None and len(start) != self.teams:
            raise OptionError(
                f"option 'start_score' has one number per team ({self.teams}), got {list(start)}"
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
        """``brazilian-points``: what each team starts the next match with —
        the winner's bonus above the target, the lambreta penalty of a side
        that lost without points. Zeros while the match runs."""
        out: list[Points] = [0] * self.teams
        if self._winner is None or self.variant != "brazilian-points":
            return out
        for team, s in enumerate(self.score):
            if team == self._winner:
                out[team] = max(s - self.target, 0)
            elif s <= 0:
                out[team] = self.options.lambreta
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


# --------------------------------------------------------------------------- replay


def _tiles(value: Any, where: str) -> list[Tile]:
    if not isinstance(value, list):
        raise RecordFormatError(f"{where} is a list of tiles, got {value!r}")
    out = []
    for v in value:
        try:
            out.append(Tile.parse(v))
        except ValueError as exc:
            raise RecordFormatError(f"{where}: {exc}") from None
    return out


def replay_record(obj: Mapping[str, Any]) -> ReplayResult:
    """Check a dominoes game record move by move and score it.

    Raises :class:`RecordFormatError` when the record does not fit the format
    and :class:`IllegalStepError` (hand and move index, a player's sentence)
    at the first illegal step.
    """
    if not isinstance(obj, Mapping):
        raise RecordFormatError("a game record is a JSON object")
    variant = obj.get("variant")
    if obj.get("game") != "dominoes":
        raise RecordFormatError(f"not a dominoes record (game {obj.get('game')!r})")
    if variant not in VARIANTS:
        raise RecordFormatError(
            f"unknown dominoes variant {variant!r}; known: {', '.join(VARIANTS)}"
        )
    options = obj.get("options", {})
    try:
        opts = DominoOptions.from_dict(variant, options)
    except OptionError as exc:
        raise RecordFormatError(str(exc)) from None
    hands = obj.get("hands")
    if not isinstance(hands, list):
        raise RecordFormatError("'hands' is a list of hand objects")
    if not hands:
        raise RecordFormatError("a record holds at least one hand")
    first = hands[0]
    if not isinstance(first, dict) or not isinstance(first.get("deal"), list):
        raise RecordFormatError("hand 0: 'deal' is a list, one list of tiles per seat")
    seats = len(first["deal"])
    try:
        match = DominoMatch(variant, opts, seats)
    except OptionError as exc:
        raise RecordFormatError(f"hand 0: {exc}") from None
    for hi, h in enumerate(hands):
        if not isinstance(h, dict):
            raise RecordFormatError(f"hand {hi} is not a JSON object")
        unknown = [
            k for k in h if k not in ("deal", "boneyard", "moves") and not k.startswith("x-")
        ]
        if unknown:
            raise RecordFormatError(f"hand {hi}: unknown fields {unknown}")
        if "deal" not in h or "moves" not in h:
            raise RecordFormatError(f"hand {hi}: 'deal' and 'moves' are required")
        deal_raw = h["deal"]
        if not isinstance(deal_raw, list) or len(deal_raw) != seats:
            raise RecordFormatError(f"hand {hi}: 'deal' has one list of tiles per seat ({seats})")
        deal = [_tiles(d, f"hand {hi}, deal of seat {s}") for s, d in enumerate(deal_raw)]
        bone = _tiles(h.get("boneyard", []), f"hand {hi}, boneyard")
        moves = h["moves"]
        if not isinstance(moves, list):
            raise RecordFormatError(f"hand {hi}: 'moves' is a list")
        parsed: list[DominoMove] = []
        for mi, mv in enumerate(moves):
            try:
                m = move_from_json(mv)
            except RecordFormatError as exc:
                raise RecordFormatError(f"hand {hi}, move {mi}: {exc}") from None
            if m.seat >= seats:
                raise RecordFormatError(
                    f"hand {hi}, move {mi}: there is no seat {m.seat} (seats 0..{seats - 1})"
                )
            parsed.append(m)
        if match.is_over:
            raise IllegalStepError(
                hi, 0, f"the match was already over (team {match.winner} won): no hand may follow"
            )
        try:
            hand = match.new_hand(deal=deal, boneyard=bone)
        except DealError as exc:
            raise RecordFormatError(f"hand {hi}: {exc}") from None
        for mi, m in enumerate(parsed):
            try:
                hand.play(m)
            except IllegalPlayError as exc:
                raise IllegalStepError(hi, mi, str(exc)) from None
        if not hand.is_over:
            who = (
                f"seat {hand.to_play} must open with {hand.opening.tile}"
                if hand.left_end is None and hand.opening.tile is not None
                else f"seat {hand.to_play} is to play"
            )
            raise IllegalStepError(hi, len(parsed), f"the hand stops before it ends: {who}")
        match.finish_hand()
    extra: dict[str, Any] = {}
    if variant == "brazilian-points":
        extra["carry"] = [_num(p) for p in match.carry]
    return ReplayResult(tuple(match.results), tuple(match.score), match.winner, extra)


def _num(p: Points) -> int | float:
    return int(p) if float(p).is_integer() else float(p)
