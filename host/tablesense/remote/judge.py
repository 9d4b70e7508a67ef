"""A table of a remote match judges its own sensors against its view.

:class:`TableJudge` knows only the table's :class:`~tablesense.remote.view.TableView`
(its seats' hands, the public line, the piece to place) and its geometry.
From them it says where every piece of the table's set should lie: the
line's tiles on their cells, each local hand on its seat's rack, everything
else (remote hands, the boneyard) anywhere on the stock, face down. Given
what the sensors read (cell -> piece) it answers one :class:`Verdict`:

- ``dealt``: the local hands that lit for their seats lie on their racks;
- ``placed``: the remote piece to place lies where the authority said;
- ``claim``: a local seat laid one tile from its rack on the next cell of an
  arm, and that is one of the legal moves the authority sent (the authority
  still judges it);
- ``steady``: everything is where it should be, nothing to say;
- ``waiting``: pieces are not where they should be; the lights show them.

It also says which cells light: at the deal, the stock cells of each local
seat's pieces in the seat's colour; for a remote play, the piece in the
stock and its target cell; after a hand, every piece still out of the stock.

This is the judge of games played on a *line* (dominoes, every variant: a
draw lights the drawn tile's stock cell for its seat). Games played on a
*board* of face-up slots (Kems) have theirs in :mod:`.board_judge`, a
subclass answering the same questions; the table's side picks one by the
game's ``play_area`` (:func:`tablesense.remote.match.judge_for`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tablesense.remote.view import TableView
from tablesense.table.geometry import CellId, TableGeometry

RGB = tuple[int, int, int]
#: A seat's colour at the deal (its pieces in the stock light in it).
SEAT_COLOURS: tuple[RGB, ...] = ((0, 0, 90), (90, 0, 0), (0, 60, 0), (60, 40, 0))
#: The remote piece to move, and the cell it goes to.
PLACE: RGB = (40, 40, 40)
TARGET: RGB = (0, 60, 60)
#: A piece that lies where it should not (it goes back to the stock, or to the lit cell).
WRONG: RGB = (90, 20, 0)


@dataclass
class Verdict:
    """What the table's sensors say now, against the view."""

    kind: str
    """``dealt``, ``placed``, ``claim``, ``steady`` or ``waiting``."""
    move: dict[str, Any] | None = None
    lights: dict[CellId, RGB] = field(default_factory=dict)
    misplaced: list[str] = field(default_factory=list)


def tile_key(text: str) -> str:
    """A tile whichever way it is written (``5-3`` is ``3-5``)."""
    a, b = text.split("-")
    return f"{min(a, b)}-{max(a, b)}"


class TableJudge:
    """See the module docstring."""

    def __init__(self, geometry: TableGeometry, view: TableView, pieces: Sequence[str]) -> None:
        self._check_geometry(geometry)
        if len(geometry.stock) < len(pieces):
            raise ValueError(f"table {geometry.name!r} has {len(geometry.stock)} stock cells for {len(pieces)} pieces")
        self.geometry = geometry
        self.view = view
        self.pieces = [self.key(p) for p in pieces]
        self.dealt_hand = 0
        """The hand whose deal this table reported laid out."""
        self.placed_no = -1
        """The last frame whose remote piece this table reported placed."""

    def _check_geometry(self, geometry: TableGeometry) -> None:
        if geometry.line is None or not geometry.stock:
            raise ValueError(
                f"table {geometry.name!r} has no line and stock: a remote dominoes match needs a -remote layout"
            )
        self.line = geometry.line

    @staticmethod
    def key(text: str) -> str:
        """A piece however it is written (a tile's two halves in either order)."""
        return tile_key(text)

    # -- where pieces belong ----------------------------------------------------

    def arm_cells(self, end: str) -> list[CellId]:
        other = "right" if end == "left" else "left"
        return [*self.line.arm(end), *reversed(self.line.arm(other))]

    def target(self, end: str | None, line: Sequence[tuple[str, str | None]] | None = None) -> CellId | None:
        """The cell the next tile on ``end`` goes to (the centre for the first)."""
        line = self.view.line if line is None else line
        if not line:
            return self.line.center
        if end is None:
            return None
        cells = self.arm_cells(end)
        k = sum(1 for _, e in line[1:] if e == end)
        return cells[k] if k < len(cells) else None

    def exact(self) -> dict[CellId, str]:
        """The line's tiles on their cells."""
        out: dict[CellId, str] = {}
        for k, (tile, end) in enumerate(self.view.line):
            cell = self.target(end, self.view.line[:k])
            if cell is not None:
                out[cell] = tile_key(tile)
        return out

    def home(self) -> dict[str, tuple[CellId, ...]]:
        """Piece -> the cells it may lie on (one cell on the line, a rack, the stock)."""
        hand_over = self.hand_over
        out: dict[str, tuple[CellId, ...]] = {}
        stock = tuple(self.geometry.stock)
        if not hand_over:
            for cell, tile in self.exact().items():
                out[tile] = (cell,)
            for seat, tiles in self.view.hands.items():
                rack = tuple(self.geometry.seats[seat].rack)
                for t in tiles:
                    out[tile_key(t)] = rack
        for p in self.pieces:
            out.setdefault(p, stock)
        return out

    @property
    def hand_over(self) -> bool:
        """Between hands: the last hand is scored and the next not dealt yet,
        or the match is over; every piece goes back to the stock."""
        return self.view.hand == 0 or len(self.view.records) >= self.view.hand

    # -- judging ------------------------------------------------------------------

    def judge(self, sensed: Mapping[CellId, str], legal: Sequence[Mapping[str, Any]] = ()) -> Verdict:
        """Compare the sensed pieces with the view; see the module docstring."""
        where = {self.key(p): c for c, p in sensed.items()}
        home = self.home()
        misplaced = sorted(p for p in self.pieces if where.get(p) not in home[p])
        lights: dict[CellId, RGB] = {}
        if not misplaced:
            if not self.hand_over and self.dealt_hand < self.view.hand:
                return Verdict("dealt")
            if self.pending_place() is not None:
                return Verdict("placed")
            return Verdict("steady")
        claim = self._claim(misplaced, where, legal)
        if claim is not None:
            return Verdict("claim", claim, misplaced=misplaced)
        wrong: list[CellId] = []
        for p in misplaced:
            at, want = where.get(p), home[p]
            if len(want) == 1:  # a line cell or a slot: this piece, from wherever it is
                if at is not None:
                    lights[at] = PLACE
                lights[want[0]] = TARGET
            elif at is not None and at in self.geometry.stock:
                seat = self._seat_of_rack(want)
                lights[at] = SEAT_COLOURS[seat % len(SEAT_COLOURS)] if seat is not None else PLACE
            elif at is not None:
                wrong.append(at)
        for at in wrong:  # a target still taken by a piece that must go shows that piece first
            lights[at] = WRONG
        return Verdict("waiting", lights=lights, misplaced=misplaced)

    def pending_place(self) -> dict[str, Any] | None:
        """The remote piece of the last frame, until this table confirmed it."""
        place = self.view.place
        if place is None or self.view.last <= self.placed_no or self.hand_over:
            return None
        return place

    def _seat_of_rack(self, cells: tuple[CellId, ...]) -> int | None:
        return self.geometry.cells[cells[0]].seat if cells else None

    def _claim(self, misplaced: list[str], where: Mapping[str, CellId], legal: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """One local tile from its rack on the next cell of an arm, legal: the move."""
        if len(misplaced) != 1 or self.hand_over or self.dealt_hand < self.view.hand:
            return None
        tile = misplaced[0]
        at = where.get(tile)
        seat = next((s for s, h in self.view.hands.items() if tile in (tile_key(t) for t in h)), None)
        if at is None or seat is None:
            return None
        for move in legal:
            if move.get("seat") != seat or "tile" not in move or tile_key(str(move["tile"])) != tile:
                continue
            if self.target(move.get("end")) == at:
                return dict(move)
        return None

    def bot_move(self, seat: int, legal: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """A computer seat's choice among its legal moves: the heaviest tile it
        may lay, else a draw, else a pass (None: the seat has no move now)."""
        mine = [dict(m) for m in legal if m.get("seat") == seat]
        plays = [m for m in mine if "tile" in m]
        if plays:
            return max(plays, key=lambda m: (sum(int(x) for x in tile_key(m["tile"]).split("-")), str(m.get("end"))))
        return next((m for m in mine if m.get("draw")), None) or next((m for m in mine if m.get("pass")), None)

    def button_move(self, seat: int, legal: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """What a person's seat button claims now: a pass, or a draw (the
        authority draws the tile; its stock cell lights for the seat)."""
        return next((dict(m) for m in legal if m.get("seat") == seat and (m.get("pass") or m.get("draw"))), None)

    def idle_move(self, legal: Sequence[Mapping[str, Any]], idle_s: float) -> dict[str, Any] | None:
        """A move nobody's seat makes, once the table's computer seats have all
        waited ``idle_s`` seconds since the last change (dominoes: none)."""
        return None

    def route(self, move: Mapping[str, Any], sensed: Mapping[CellId, str]) -> tuple[CellId, CellId] | None:
        """From which cell to which a hand moves the tile of a play."""
        if "tile" not in move:
            return None
        tile = tile_key(str(move["tile"]))
        at = next((c for c, p in sensed.items() if tile_key(p) == tile), None)
        to = self.target(move.get("end"))
        return (at, to) if at is not None and to is not None else None

    def routes(self, move: Mapping[str, Any], sensed: Mapping[CellId, str]) -> list[tuple[CellId, CellId]]:
        """The hand moves that make ``move`` on the table, in order (none: the
        move is a button's, a pass or a draw)."""
        route = self.route(move, sensed)
        return [route] if route is not None else []
