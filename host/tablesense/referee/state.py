"""The referee's small state types, a leaf every part of the referee may
import (the parts read each other through protocols that name these types):
the phase of a match and the windows a press or a rejection stays open for.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from tablesense.referee.rules import Rejection

#: Where a table's boards are (see ``Referee.boards_kind``).
BoardsKind = Literal["usb", "sim", "built-in"]


class Phase(StrEnum):
    """Where a match stands. A string too, so the display's ``view`` carries it
    as it always did (``"play"``)."""

    IDLE = "idle"
    """Not started."""
    DEALING = "dealing"
    """A table-dealt hand: waiting for the deal to show on the racks."""
    PLAY = "play"
    """A hand is in play."""
    BETWEEN = "between"
    """Host-dealt: the finished hand stays on show before the next deal."""
    OVER = "over"
    """The match is over."""


@dataclass(frozen=True)
class Notice:
    """A refused button press on the display until ``until``."""

    rejection: Rejection
    until: float


@dataclass(frozen=True)
class SeatWindow:
    """A seat's call that waits for another press until ``until``: a contre
    waiting for its target seat, an announcement for its tile to be lifted."""

    seat: int
    until: float


@dataclass(frozen=True)
class MenuQuestion:
    """The referee button's question (``undo`` or ``void``), open until ``until``."""

    action: str
    until: float

