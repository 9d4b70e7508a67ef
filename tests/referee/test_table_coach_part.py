"""The coach is a part composed into the referee (``referee.coaching``), not a
mixin: it reads the referee only through its protocol, so it is tested here
over a stand-in referee that records what it was asked."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tablesense.games.coach import Mistake
from tablesense.games.dominoes import Play, Tile
from tablesense.referee.coaching import TableCoach
from tablesense.referee.core import MatchSpec, Referee
from tablesense.referee.state import MatchState, Phase
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


class StandIn:
    """What the coach reads of a referee, and what it asks of it."""

    def __init__(self) -> None:
        self.notices: list[Any] = []
        self.committed: list[dict[str, Any]] = []
        self.state = MatchState(phase=Phase.PLAY)
        self.hand = SimpleNamespace(is_over=False, line=[], moves=[])
        self.spec = SimpleNamespace(seed=1, seat_names=["a", "b"])
        self.rules = SimpleNamespace(seat_label=lambda seat: f"seat {seat + 1}")
        self.journal = SimpleNamespace(commit=self.committed.append)
        self.game = SimpleNamespace(has_turns=True, reviews_hands=True, coach=lambda worlds: "engine")
        self.finished: list[Any] = [SimpleNamespace(line=[SimpleNamespace(tile="6-6")], moves=[])]

    def _notice(self, rejection: Any) -> None:
        self.notices.append(rejection)

    def _per_deal(self, hand: str, round: str) -> str:
        return hand

    def _finished(self) -> list[Any]:
        return self.finished

    def engine_text(self, message: object) -> str:
        return str(message)


def test_an_off_coach_refuses_a_press_publicly_and_names_no_piece() -> None:
    ref = StandIn()
    coach = TableCoach(ref)  # type: ignore[arg-type]  # the stand-in has only what these paths read
    assert not coach.on
    coach.press(1, 0.0)
    assert [n.kind for n in ref.notices] == ["coach_unavailable"]
    assert ref.notices[0].seat == 1 and "seat 2: the coach is off at this table" in str(ref.notices[0].instruction)
    coach.turn(True)
    assert coach.on and coach.engine == "engine"
    ref.state.phase = Phase.BETWEEN
    coach.press(0, 0.0)
    assert "while a hand is played" in str(ref.notices[-1].instruction)


def test_a_journaled_review_is_shown_publicly_privately_and_in_the_record() -> None:
    ref = StandIn()
    coach = TableCoach(ref)  # type: ignore[arg-type]
    assert coach.review_view() is None and coach.review_private() == []
    # seat 0 laid 6-6 (the table saw it) where 4-5 (kept in its rack) was worth more
    mistake = Mistake(0, 0, Play(0, Tile.parse("6-6")), Play(0, Tile.parse("4-5")), 3.0)
    coach.apply_review({"type": "review", "hand": 0, "hand_no": 1, "lines": [mistake.to_json()]})
    assert coach.review_hand == (0, 1)
    public = coach.review_view()
    assert public is not None and public["hand_no"] == 1
    assert "6-6" in public["lines"][0] and "4-5" not in public["lines"][0], "a tile never shown is not named"
    private = coach.review_private()
    assert [p["seat"] for p in private] == [0, 1]
    assert "4-5" in private[0]["lines"][0], "seat 0 held it: its own line names it"
    assert private[1]["lines"] == public["lines"]
    record: dict[str, Any] = {"hands": [{}]}
    assert coach.annotate(record)["hands"][0]["x-review"] == [mistake.to_json()]


def test_the_referee_composes_its_coach() -> None:
    ref = Referee(MatchSpec("dominoes", "pairs-pips", seed=7), TableGeometry.load("dominoes-4"),
                  TagRegistry.virtual(0))
    assert isinstance(ref.coaching, TableCoach) and ref.coaching.ref is ref and not ref.coaching.on
    ref.set_coach(True)
    assert ref.coaching.on
    ref.set_coach(False)
    assert not ref.coaching.on
    assert not hasattr(ref, "_coach_press") and not hasattr(ref, "coached_record"), "no stubs left for the coach"
