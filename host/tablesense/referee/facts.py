"""What every part of the referee may read of it: the match, the table and
where the hand stands.

The referee's composed parts (the display in :mod:`.view`, the buttons in
:mod:`.buttons`, the coach in :mod:`.coaching`) each read the referee through a protocol of their own; the
facts they all read are declared once here and extended there, so a part's
protocol lists only what sets it apart.
"""

from __future__ import annotations

from typing import Any, Protocol

from tablesense.games.game import Game, Match
from tablesense.referee.layout import Sensed
from tablesense.referee.rules import TableRules
from tablesense.referee.spec import MatchSpec
from tablesense.referee.state import Phase
from tablesense.table.geometry import TableGeometry


class RefereeFacts(Protocol):
    """The match, its table and the hand in play, read-only."""

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
    def sensed(self) -> Sensed | None: ...

    @property
    def phase(self) -> Phase: ...

    @property
    def hand_no(self) -> int: ...
