"""Tiles and moves of the double-six set, and their record form.

Small frozen value types (:class:`Tile`, :class:`Play`, :class:`Pass`,
:class:`Draw`, :class:`Announce`) and the tables the engine works with: inside
a hand the tiles a seat holds are a 28-bit mask (one bit per tile of
:data:`ALL_TILES`), so "which of my tiles fit an end?" is a few integer
operations. Moves and line entries are interned, so a playout allocates
nothing per move.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from tablesense.games.common import RecordFormatError, Seat, message_of, say

End: TypeAlias = Literal["left", "right"]
LEFT: End = "left"
RIGHT: End = "right"


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
        if type(text) is str:
            known = _BY_TEXT.get(text)  # the 49 ways a record writes a tile, looked up (replays parse thousands)
            if known is not None:
                return known
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
#: ``"a-b"`` in either order -> its tile (what :meth:`Tile.parse` reads without splitting).
_BY_TEXT: dict[str, Tile] = {f"{a}-{b}": ALL_TILES[_tile_index(min(a, b), max(a, b))] for a in range(7) for b in range(7)}
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
        raise RecordFormatError(say("a move is a JSON object, got {d!r}", d=d))
    keys = {k for k in d if not (isinstance(k, str) and k.startswith("x-"))}
    seat = d.get("seat")
    if not isinstance(seat, int) or isinstance(seat, bool) or seat < 0:
        raise RecordFormatError(say("a move needs a seat number, got {d!r}", d=d))
    try:
        if "tile" in keys:
            if keys - {"seat", "tile", "end"}:
                raise RecordFormatError(say("unexpected fields in a play: {keys}", keys=sorted(keys)))
            text = d["tile"]
            tile = Tile.parse(text)
            end = d.get("end")
            if "end" in keys and end not in (LEFT, RIGHT):
                raise RecordFormatError(say("'end' is 'left' or 'right', got {end!r}", end=end))
            first = int(text.strip()[0])
            return Play(seat, tile, end, first)
        if "pass" in keys:
            if keys != {"seat", "pass"} or d["pass"] is not True:
                raise RecordFormatError(say("a pass is {{'seat': s, 'pass': true}}, got {d!r}", d=d))
            return Pass(seat)
        if "draw" in keys:
            if keys != {"seat", "draw"}:
                raise RecordFormatError(say("unexpected fields in a draw: {keys}", keys=sorted(keys)))
            return Draw(seat, Tile.parse(d["draw"]))
        if "announce" in keys:
            if keys != {"seat", "announce"}:
                raise RecordFormatError(say("unexpected fields in an announcement: {keys}", keys=sorted(keys)))
            return Announce(seat, Tile.parse(d["announce"]))
    except RecordFormatError:
        raise
    except ValueError as exc:
        raise RecordFormatError(message_of(exc)) from None
    raise RecordFormatError(say("a move is a play, a pass, a draw or an announcement, got {d!r}", d=d))


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
