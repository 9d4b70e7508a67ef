"""A tiny physical table for referee tests: pieces on cells, moved by hand.

It starts from the layout the referee wants (every piece where it belongs)
and lets a test move, lift and drop pieces, then hands the referee a
:class:`Sensed` snapshot at a given time.
"""

from __future__ import annotations

from typing import Any

from tablesense.referee.core import Referee
from tablesense.referee.layout import Layout, Problem, Sensed


def lay_out(layout: Layout) -> dict[str, str]:
    """Cell -> piece for a layout: exact cells as they are, group pieces on
    the group's cells in order."""
    out: dict[str, str] = {c: p for c, p in layout.exact.items() if p is not None}
    for group, pieces in layout.groups.values():
        for cell, piece in zip(group.cells, sorted(pieces), strict=False):
            out[cell] = piece
    return out


class Hands:
    """The players' hands on a synthetic table."""

    def __init__(self, referee: Referee, now: float = 0.0) -> None:
        self.ref = referee
        self.now = now
        self.cells: dict[str, str] = lay_out(referee.rules.layout())
        self.problems: list[Problem] = []
        self.offline: tuple[int, ...] = ()
        self.held: set[str] = set()

    def where(self, piece: str) -> str | None:
        return next((c for c, p in self.cells.items() if p == piece), None)

    def lift(self, piece: str) -> None:
        cell = self.where(piece)
        assert cell is not None, f"{piece} is not on the table"
        del self.cells[cell]
        self.held.add(piece)

    def drop(self, piece: str, cell: str) -> None:
        assert cell not in self.cells, f"cell {cell} holds {self.cells[cell]}"
        if piece in self.held:
            self.held.discard(piece)
        else:
            old = self.where(piece)
            if old is not None:
                del self.cells[old]
        self.cells[cell] = piece

    def free(self, cells: Any) -> str:
        return next(c for c in cells if c not in self.cells)

    def to_rack(self, piece: str, seat: int) -> str:
        cell = self.free(self.ref.geometry.seats[seat].rack)
        self.drop(piece, cell)
        return cell

    def reset(self) -> None:
        """Every piece back where the referee wants it."""
        self.cells = lay_out(self.ref.rules.layout())
        self.held.clear()
        self.problems = []

    def sensed(self) -> Sensed:
        return Sensed(dict(self.cells), list(self.problems), self.offline)

    def show(self, dt: float = 0.0) -> None:
        """Let ``dt`` seconds pass with the table as it is now."""
        self.ref.feed(self.sensed(), self.now)
        if dt:
            self.now += dt
            self.ref.feed(self.sensed(), self.now)

    def settle(self) -> None:
        self.show(20.0)


def make_referee(
    game: str = "dominoes",
    variant: str = "pairs-pips",
    table: str = "dominoes-4",
    seed: int = 1,
    options: dict[str, Any] | None = None,
    lang: str = "en",
) -> tuple[Referee, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """A started referee on a shipped layout, its events and its journal entries."""
    from tablesense.referee.core import MatchSpec
    from tablesense.table.geometry import TableGeometry
    from tablesense.table.tags import TagRegistry

    events: list[tuple[str, dict[str, Any]]] = []
    stored: list[dict[str, Any]] = []
    ref = Referee(
        MatchSpec(game, variant, options=dict(options or {}), seed=seed, lang=lang),
        TableGeometry.load(table),
        TagRegistry.virtual(0),
        emit=lambda kind, **data: events.append((kind, data)),
        store=stored.append,
    )
    ref.start(0.0)
    return ref, events, stored


def kinds(events: list[tuple[str, dict[str, Any]]], kind: str) -> list[dict[str, Any]]:
    return [d for k, d in events if k == kind]


def perform(h: Hands, move: Any) -> None:
    """Carry out a dominoes move on the table the way a player does."""
    ref = h.ref
    name = type(move).__name__
    rules: Any = ref.rules
    if name == "Play":
        target = rules.target_cell(rules.end_of(move)) if ref.hand.line else rules.line.center
        h.lift(str(move.tile))
        h.show(0.2)
        h.drop(str(move.tile), target)
    elif name == "Draw":
        h.lift(str(move.tile))
        h.show(0.2)
        h.to_rack(str(move.tile), move.seat)
    elif name == "Pass":
        h.settle()
        ref.press(move.seat, "main", h.now)
    elif name == "Announce":
        ref.press(move.seat, "call", h.now)
        h.lift(str(move.tile))
        h.show(1.0)
        h.to_rack(str(move.tile), move.seat)
    h.settle()
