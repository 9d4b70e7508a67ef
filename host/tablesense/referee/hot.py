"""The referee's hint to the boards: which cells a legal move can touch now.

A board reads those cells between every two cells of its sweep (the HOT
frame, docs/protocol.md), so a tile laid where the game expects one is
reported sooner. Only a hint: every cell is still read every sweep, and a
move anywhere else is seen as before.
"""

from __future__ import annotations

from typing import Any

from tablesense.referee.state import Phase
from tablesense.table.geometry import CellId


def hot_cells(ref: Any) -> list[CellId]:
    """The free cell at each open end of the line (the centre before the
    opening) and the rack of the seat to play, for a game played along a
    line (its rules have ``target_cell``); an empty list otherwise, or
    between hands (every cell ordinary)."""
    target = getattr(ref.rules, "target_cell", None)
    hand = ref.hand
    if target is None or hand is None or ref.state.phase is not Phase.PLAY or getattr(hand, "is_over", False):
        return []
    cells: list[CellId] = []
    for end in ("left", "right"):
        cell = target(end)
        if cell is not None and cell not in cells:
            cells.append(cell)
    for cell in ref.geometry.seats[hand.to_play].rack:
        if cell not in cells:
            cells.append(cell)
    return cells
