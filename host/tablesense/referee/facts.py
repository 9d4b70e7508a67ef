"""What every part of the referee may read of it: the match, the table and
the match's state (where the hand stands, what the display says).

The referee's composed parts (the display in :mod:`.view`, the buttons in
:mod:`.buttons`, the coach in :mod:`.coaching`) each read the referee through a protocol of their own; the
facts they all read are declared once here and extended there, so a part's
protocol lists only what sets it apart.
"""

from __future__ import annotations

from typing import Any, Protocol

from tablesense.games.game import Game, Match
from tablesense.referee.rules import TableRules
from tablesense.referee.spec import MatchSpec, Timing
from tablesense.referee.state import MatchState
from tablesense.table.geometry import TableGeometry


class RefereeFacts(Protocol):
    """The match, its table, the hand in play and the match's state. The
    parts read ``state`` and never assign to it: the referee and its journal
    do."""

    @property
    def spec(self) -> MatchSpec: ...

    @property
    def geometry(self) -> TableGeometry: ...

    @property
    def game(self) -> Game: ...

    @property
    def match(self) -> Match: ...

    @property
    def rules(self) -> TableRules: ...

    @property
    def hand(self) -> Any: ...

    @property
    def timing(self) -> Timing: ...

    @property
    def state(self) -> MatchState: ...
