"""Issue 21: the referee's geometry checked against an independent model.

The end-to-end referee tests used to lay each tile where the referee's own
layout said, so they confirmed the referee with itself. Here the players'
hands follow a model written from the geometry file and the documented
rule alone (docs/referee.md: the opening on the centre cell; each arm's
tiles on that arm's cells, outward; when a long arm runs out of track it
continues on the far end of the other arm, inward; a drawn tile goes on a
free cell of the drawer's rack), never from ``rules.py``.

The hands are steered so that one arm grows to 14 tiles and more (past the
13 or 14 cells of its own track, into the fold), on every dominoes layout.
After each move the referee must have taken it at once (no waiting for a
time-out: a misplaced tile fails within the move), and every line tile has
a cell of its own.
"""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tablesense.referee.core import MatchSpec, Referee
from tablesense.referee.layout import Sensed
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


def geometry_doc(table: str) -> dict[str, Any]:
    path = Path(__file__).resolve().parents[2] / "hardware" / "tables" / f"{table}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))


class ModelTable:
    """Where a player puts each tile, from the geometry file."""

    def __init__(self, table: str) -> None:
        doc = geometry_doc(table)
        self.center: str = doc["line"]["center"]
        self.arms: dict[str, list[str]] = {
            "left": list(doc["line"]["left"]),
            "right": list(doc["line"]["right"]),
        }
        self.racks: list[list[str]] = [list(s["rack"]) for s in doc["seats"]]
        self.boneyard: list[str] = list(doc.get("boneyard") or [])
        self.cells: dict[str, str] = {}
        self.on_arm = {"left": 0, "right": 0}

    def arm_cell(self, end: str, k: int) -> str:
        """The k-th tile (0-based) of arm ``end``: its own cells outward, then
        the other arm's cells from the far end inward."""
        own = self.arms[end]
        if k < len(own):
            return own[k]
        other = self.arms["right" if end == "left" else "left"]
        return other[len(other) - 1 - (k - len(own))]

    def deal(self, hands: list[list[str]], bone: list[str]) -> None:
        self.cells = {}
        for seat, tiles in enumerate(hands):
            for cell, tile in zip(self.racks[seat], tiles, strict=False):
                self.cells[cell] = tile
        for cell, tile in zip(self.boneyard, bone, strict=False):
            self.cells[cell] = tile
        self.on_arm = {"left": 0, "right": 0}

    def where(self, tile: str) -> str:
        return next(c for c, p in self.cells.items() if p == tile)

    def play(self, tile: str, end: str | None) -> str:
        del self.cells[self.where(tile)]
        if end is None:
            cell = self.center
        else:
            cell = self.arm_cell(end, self.on_arm[end])
            self.on_arm[end] += 1
        assert cell not in self.cells, f"the model's cell {cell} for {tile} is taken"
        self.cells[cell] = tile
        return cell

    def draw(self, tile: str, seat: int) -> None:
        del self.cells[self.where(tile)]
        free = next(c for c in self.racks[seat] if c not in self.cells)
        self.cells[free] = tile

    def line_cells(self) -> dict[str, str]:
        line = {self.center, *self.arms["left"], *self.arms["right"]}
        return {c: p for c, p in self.cells.items() if c in line}


def grown_end(hand: Any, move: Any) -> str | None:
    """Which arm a play lengthens (None: the opening), asked of the engine."""
    if not hand.line:
        return None
    after = hand.clone()
    after.apply(move)
    for end in ("left", "right"):
        if len(after.arm(end)) > len(hand.arm(end)):
            return end
    raise AssertionError(f"{move} lengthens no arm")


LAYOUTS = [
    ("pairs-pips", "dominoes-4", 186, "left"),
    ("pairs-pips", "dominoes-4", 186, "right"),
    ("pips-two-player", "dominoes-2", 7, "left"),
    ("pips-two-player", "dominoes-2", 7, "right"),
    ("brazilian-points", "dominoes-3", 70, "left"),
    ("brazilian-points", "dominoes-3", 70, "right"),
]


@pytest.mark.parametrize(("variant", "table", "seed", "prefer"), LAYOUTS)
def test_long_arms_fold_back_where_the_geometry_says(
    variant: str, table: str, seed: int, prefer: str
) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    ref = Referee(
        MatchSpec("dominoes", variant, seed=seed),
        TableGeometry.load(table),
        TagRegistry.virtual(0),
        emit=lambda kind, **data: events.append((kind, data)),
        store=lambda entry: None,
    )
    ref.start(0.0)
    hand = ref.hand
    model = ModelTable(table)
    model.deal([[str(t) for t in h] for h in hand.hands], [str(t) for t in hand.boneyard])
    now = 0.0

    def show(dt: float) -> None:
        nonlocal now
        ref.feed(Sensed(dict(model.cells), [], ()), now)
        now += dt
        ref.feed(Sensed(dict(model.cells), [], ()), now)

    show(20.0)
    rng = random.Random(seed)
    longest = 0
    while not hand.is_over:
        moves = hand.legal_moves()
        plays = [m for m in moves if type(m).__name__ == "Play"]
        steer = [m for m in plays if grown_end(hand, m) == prefer]
        move = steer[0] if steer else rng.choice(moves)
        name = type(move).__name__
        before = ref.state.accepted
        if name == "Play":
            model.play(str(move.tile), grown_end(hand, move))
        elif name == "Draw":
            model.draw(str(move.tile), move.seat)
        elif name == "Pass":
            ref.press(move.seat, "main", now)
        elif name == "Announce":
            ref.press(move.seat, "call", now)
            rack = model.where(str(move.tile))
            del model.cells[rack]
            show(1.0)
            model.cells[rack] = str(move.tile)
        show(ref.timing.slide + ref.timing.error + 0.1)
        rejected = [d["instruction"] for k, d in events if k == "move_rejected"]
        assert ref.state.accepted == before + 1, (
            f"{move} laid where the geometry says was not taken: {rejected[-1:]}"
        )
        if hand.is_over:
            break
        longest = max(longest, len(hand.arm(prefer)))
        # every line tile has a cell of its own, and it is the model's cell
        expected = {c: p for c, p in ref.rules.layout().exact.items() if p is not None}
        assert expected == model.line_cells()
        assert len(set(expected)) == len(hand.line)
    assert longest >= 14, f"the {prefer} arm only reached {longest} tiles"
    assert not [d for k, d in events if k == "move_rejected"]


def test_the_model_itself_uses_every_track_cell_once() -> None:
    """28 tiles fit a 27+1-cell track: both arms growing meet only at the end."""
    model = ModelTable("dominoes-4")
    cells = {model.center}
    for k in range(20):
        cells.add(model.arm_cell("left", k))
    for k in range(7):
        cells.add(model.arm_cell("right", k))
    assert len(cells) == 28
