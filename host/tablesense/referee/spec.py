"""What a referee is told before play: the match (:class:`MatchSpec`, the
journal's first entry), its waits (:class:`Timing`), and its error.

Kept apart from the referee itself so that the commands, the demo and the
journal's readers can describe a match without loading the rules engines.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from tablesense.referee.rules import DELAY_ERROR, DELAY_MISSING, DELAY_NOW, DELAY_PROBLEM


class RefereeError(RuntimeError):
    """A referee that cannot go on (a journal that refuses a write, a match
    description that does not fit the table)."""


class Emit(Protocol):
    def __call__(self, kind: str, /, **data: Any) -> Any: ...


@dataclass(frozen=True)
class Timing:
    """Waits of the referee, in seconds (``scaled`` for the demo's pace).

    ``settle``: a snapshot that shows a legal move must stay unchanged this
    long before the move is accepted; ``slide``: the same when the piece could
    still slide on to the next cell of an arm; ``error``: a piece on a wrong
    cell is explained after this; ``missing``: a piece merely lifted (in a
    player's hand, maybe on its way) is asked back after this; ``problem``:
    unknown tags and read errors; ``double_window``: after a Kems call, how
    long the partner has to say double; ``confirm``: the referee button's
    question waits this long for a seat button; ``notice``: how long a
    rejected button press stays on the display.
    """

    settle: float = 0.3
    slide: float = 0.6
    error: float = 1.5
    missing: float = 8.0
    problem: float = 1.0
    double_window: float = 3.0
    contre_window: float = 6.0
    confirm: float = 10.0
    notice: float = 5.0
    between_hands: float = 0.0
    """Host-dealt games: how long the finished hand stays on the display
    before the next deal is asked for (the demo sets it so people can read
    the score)."""

    def scaled(self, factor: float) -> Timing:
        """Every wait multiplied by ``factor`` (0.1 = ten times faster)."""
        return Timing(**{k: v * factor for k, v in self.__dict__.items()})

    def delay(self, kind: str) -> float:
        return {
            DELAY_NOW: 0.0,
            DELAY_PROBLEM: self.problem,
            DELAY_ERROR: self.error,
            DELAY_MISSING: self.missing,
        }.get(kind, self.error)


@dataclass
class MatchSpec:
    """What is being played, by whom: the journal's first entry."""

    game: str
    variant: str
    options: dict[str, Any] = field(default_factory=dict)
    seat_names: list[str] = field(default_factory=list)
    seat_kinds: list[str] = field(default_factory=list)
    """``"human"`` or ``"bot"`` per seat."""
    seed: int | None = None
    table: str = ""
    lang: str = "en"
    """The table's language (``--lang``): every text the referee publishes is
    in it; kept in the journal so a resumed match speaks it again."""

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "variant": self.variant,
            "options": dict(self.options),
            "seat_names": list(self.seat_names),
            "seat_kinds": list(self.seat_kinds),
            "seed": self.seed,
            "table": self.table,
            "lang": self.lang,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> MatchSpec:
        return cls(
            game=str(obj["game"]),
            variant=str(obj["variant"]),
            options=dict(obj.get("options") or {}),
            seat_names=list(obj.get("seat_names") or []),
            seat_kinds=list(obj.get("seat_kinds") or []),
            seed=obj.get("seed"),
            table=str(obj.get("table") or ""),
            lang=str(obj.get("lang") or "en"),
        )


# --------------------------------------------------------------------------- sensing
