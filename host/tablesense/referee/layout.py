"""What the table shows, and what it should show.

Two small value types carry the referee's whole view of the table:

- :class:`Sensed` is a table snapshot translated through the tag registry:
  which piece lies on which cell, plus every cell the referee cannot trust
  (an unknown tag, the same piece on two cells, a read error, an offline
  board). A read error is its own state, never "empty".
- :class:`Layout` is where the pieces *should* be for a game state: exact
  cells for the line of play and the Kems board slots (the order matters),
  and unordered groups for racks and the boneyard (a tile may lie on any cell
  of its seat's rack).

Recognising a move is then comparing a :class:`Sensed` with the layout each
legal move would produce (:meth:`Layout.matches`); explaining a bad move is
:meth:`Layout.diff`, the list of pieces that are not where they belong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

CellId = str


@dataclass(frozen=True)
class Group:
    """An unordered zone: a seat's rack or the boneyard."""

    key: str
    """``"rack:2"`` or ``"boneyard"``."""
    label: str
    """How players call it: ``"seat 2's rack"``, ``"the boneyard"``."""
    cells: tuple[CellId, ...]


@dataclass(frozen=True)
class Place:
    """Where a piece belongs: one exact cell, or anywhere in a group."""

    cell: CellId | None = None
    group: Group | None = None

    def holds(self, cell: CellId) -> bool:
        if self.cell is not None:
            return cell == self.cell
        return self.group is not None and cell in self.group.cells

    def label(self, cell_label: Any = None) -> str:
        if self.cell is not None:
            return f"cell {self.cell}" if cell_label is None else str(cell_label(self.cell))
        assert self.group is not None
        return self.group.label


@dataclass(frozen=True)
class Problem:
    """A cell the referee cannot trust."""

    kind: str
    """``unknown_tag``, ``duplicate_tag``, ``cross_read`` (one UID on two
    cells: a hardware fault), ``read_error`` or ``board_offline``."""
    cells: tuple[CellId, ...]
    detail: str = ""
    board: int | None = None


@dataclass
class Sensed:
    """A snapshot in the referee's terms."""

    pieces: dict[CellId, str] = field(default_factory=dict)
    """Cell -> piece text (``"3-5"``, ``"TH"``) for cells holding a known piece."""
    problems: list[Problem] = field(default_factory=list)
    boards_offline: tuple[int, ...] = ()

    def where(self) -> dict[str, CellId]:
        """Piece -> the cell it lies on (a duplicate keeps its first cell)."""
        out: dict[str, CellId] = {}
        for cell, piece in sorted(self.pieces.items()):
            out.setdefault(piece, cell)
        return out

    def key(self) -> tuple[Any, ...]:
        """A hashable summary, to tell when the table has changed."""
        return (
            tuple(sorted(self.pieces.items())),
            tuple((p.kind, p.cells, p.detail) for p in self.problems),
            self.boards_offline,
        )

    @classmethod
    def of(cls, pieces: Mapping[CellId, str]) -> Sensed:
        """A clean snapshot from a cell -> piece mapping (tests, the demo)."""
        return cls(pieces=dict(pieces))


@dataclass(frozen=True)
class Misplaced:
    """One piece that is not where the layout wants it.

    ``at`` is the cell where the table sees it (None: not on the table, e.g.
    in a player's hand); ``want`` where it belongs (None: it is not in play
    and must leave the table).
    """

    piece: str
    at: CellId | None
    want: Place | None


@dataclass
class Layout:
    """Where every piece in play belongs."""

    exact: dict[CellId, str | None] = field(default_factory=dict)
    """Ordered cells (line of play, Kems slots) -> the piece that must lie
    there, or None when the cell must be empty."""
    groups: dict[str, tuple[Group, frozenset[str]]] = field(default_factory=dict)
    """Group key -> (group, the pieces that must lie somewhere on it)."""

    def copy(self) -> Layout:
        return Layout(dict(self.exact), dict(self.groups))

    # -- queries ----------------------------------------------------------
    def place_of(self, piece: str) -> Place | None:
        for cell, want in self.exact.items():
            if want == piece:
                return Place(cell=cell)
        for group, pieces in self.groups.values():
            if piece in pieces:
                return Place(group=group)
        return None

    def pieces_in(self, key: str) -> frozenset[str]:
        return self.groups[key][1]

    def group(self, key: str) -> Group:
        return self.groups[key][0]

    def in_play(self) -> set[str]:
        out = {p for p in self.exact.values() if p is not None}
        for _, pieces in self.groups.values():
            out |= pieces
        return out

    def matches(self, sensed: Sensed) -> bool:
        """True when the table shows exactly this layout (no problems, every
        piece in its place, no piece out of play on the table)."""
        return not sensed.problems and not self.diff(sensed)

    def diff(self, sensed: Sensed) -> list[Misplaced]:
        """Every piece out of place, in a stable order: pieces on the wrong
        cell first (in cell order), then pieces missing from the table."""
        where = sensed.where()
        wrong: list[Misplaced] = []
        for cell, piece in sorted(sensed.pieces.items()):
            if where.get(piece) != cell:
                continue  # a duplicate: reported as a problem, not here
            place = self.place_of(piece)
            if place is None or not place.holds(cell):
                wrong.append(Misplaced(piece, cell, place))
        missing = [
            Misplaced(piece, None, self.place_of(piece))
            for piece in sorted(self.in_play())
            if piece not in where
        ]
        return wrong + missing

    # -- building moves ----------------------------------------------------
    def move(
        self, piece: str, to_cell: CellId | None = None, to_group: str | None = None
    ) -> Layout:
        """A copy with ``piece`` moved to an exact cell or a group (or out of
        play when both are None)."""
        out = self.copy()
        for cell, want in out.exact.items():
            if want == piece:
                out.exact[cell] = None
        for key, (group, pieces) in out.groups.items():
            if piece in pieces:
                out.groups[key] = (group, pieces - {piece})
        if to_cell is not None:
            out.exact[to_cell] = piece
        elif to_group is not None:
            group, pieces = out.groups[to_group]
            out.groups[to_group] = (group, pieces | {piece})
        return out


def free_cells(group: Group, sensed: Sensed) -> list[CellId]:
    """Cells of a group with nothing on them (where a piece should go back)."""
    taken = set(sensed.pieces) | {c for p in sensed.problems for c in p.cells}
    return [c for c in group.cells if c not in taken]


def cells_of(places: Iterable[Place | None], sensed: Sensed, limit: int = 1) -> list[CellId]:
    """LED cells for destinations: an exact cell, or the first free cells of a group."""
    out: list[CellId] = []
    for place in places:
        if place is None:
            continue
        if place.cell is not None:
            out.append(place.cell)
        elif place.group is not None:
            out.extend(free_cells(place.group, sensed)[:limit])
    return out
