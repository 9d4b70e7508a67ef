"""The referee's state, typed: :class:`MatchState` (everything about one
match that changes as it is played, in one dataclass the referee's parts
read through their protocols) and its small types: the :class:`Phase` of a
match, the :class:`DealMode`, the :class:`Banner` on the display, the
windows a press or a rejection stays open for, the memoised
:class:`Recognition` of a snapshot. A leaf every part of the referee may
import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from tablesense.referee.layout import Sensed
from tablesense.referee.rules import Rejection, TableMove

#: Where a table's boards are (see ``Referee.boards_kind``).
BoardsKind = Literal["usb", "sim", "built-in"]


class DealMode(StrEnum):
    """Who deals. A string too: the journal's ``match`` entry writes it as
    ``"deal": "engine"`` as it always did."""

    ENGINE = "engine"
    """The host deals (its lights show each seat's pieces)."""
    TABLE = "table"
    """Each deal is read from the racks; the face-down boneyard or stock order
    is learnt as it shows."""


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



@dataclass(frozen=True)
class Banner:
    """The display's one-line message: ``text`` (public already) at ``level``
    (``info``, ``warning``, ``error``); ``about="result"`` marks the banner
    announcing a hand's result, which the display page then shows only once."""

    text: str
    level: str = "info"
    about: str | None = None

    def to_json(self) -> dict[str, Any]:
        """As the ``view`` event carries it (``about`` only when set)."""
        out: dict[str, Any] = {"text": self.text, "level": self.level}
        if self.about is not None:
            out["about"] = self.about
        return out


#: A snapshot's hashable summary (:meth:`~tablesense.referee.layout.Sensed.key`).
SensedKey = tuple[Any, ...]


@dataclass(frozen=True)
class Recognition:
    """What one snapshot was judged to be, memoised: recognition depends only
    on the snapshot and the game state, which ``key`` summarises (snapshot
    number, journal length, whether the table is held, whether a deal is
    being laid out)."""

    key: tuple[int, int, bool, bool]
    moves: list[TableMove]
    rejection: Rejection | None


@dataclass
class MatchState:
    """Everything about one refereed match that changes as it is played.

    The referee and its journal write it; the other parts read it (through
    ``RefereeFacts.state``). What a press leaves open lives with the buttons
    (:class:`~tablesense.referee.buttons.TableButtons`), the coach's reviews
    with the coach, the journal's entries with the journal.
    """

    deal_mode: DealMode = DealMode.ENGINE
    phase: Phase = Phase.IDLE
    hand_no: int = 0
    """The number of the hand (round) dealt last, from 1."""
    last_hand_no: int | None = None
    """The number of the last hand finished (not voided): ``last_line``."""
    accepted: int = 0
    """Moves (or Kems events) accepted in the match, undone ones taken off."""
    now: float = 0.0
    """The time last passed in (the referee never reads a clock)."""
    sensed: Sensed | None = None
    """The last complete snapshot, in the referee's terms."""
    sensed_no: int = 0
    """How many different snapshots were seen (the memo's key)."""
    changed_at: float = 0.0
    """When the table last changed: every wait counts from here."""
    paused: bool = False
    """A board is offline: nothing is judged until it is back."""
    waiting_sync: bool = False
    """The last table state was incomplete (a board resyncing): nothing is
    judged until a complete one arrives."""
    laying_out: bool = False
    """A host-dealt hand whose deal the table has not shown yet: pieces are
    being gathered and dealt, so nothing on the table is a mistake until it
    matches the deal or stays unchanged ``missing``, and a move is taken
    only once it has stood ``error``."""
    resumed: bool = False
    """Replayed from the journal and the table not yet seen to agree."""
    correction: Rejection | None = None
    """The table's pending mistake and its instruction."""
    notice: Notice | None = None
    """A refused button press, shown for a while."""
    message: Banner | None = None
    """What the display's banner says."""
    last_move: dict[str, Any] | None = None
    """The last accepted move as the display shows it (a drawn tile unnamed)."""
    last_result: dict[str, Any] | None = None
    """The last hand's result (``hand_no``, outcome, winner, points)."""
    finish_at: float | None = None
    """The hand is over and ends at this time (a Kems call waiting for the
    partner's double)."""
    next_hand_at: float | None = None
    """Host-dealt, between hands: when the next one is dealt."""
    hold: SensedKey | None = None
    """After an undo: the table as it was, from which no move is taken."""
    memo: Recognition | None = None
    """The last snapshot's recognition."""
    shown: set[str] = field(default_factory=lambda: set[str]())
    """Kems: the cards that lay face up on the board during this round."""
