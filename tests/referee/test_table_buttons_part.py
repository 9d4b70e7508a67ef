"""The buttons are a part composed into the referee (``referee.buttons``), not a
mixin: they hold what a press leaves open (a contre, an announcement, the
referee's question) and read the referee only through their protocol, so
they are tested here over a stand-in referee that records what it was asked."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tablesense.referee.buttons import TableButtons
from tablesense.referee.core import MatchSpec, Referee
from tablesense.referee.spec import Timing
from tablesense.referee.state import MatchState, Phase, SeatWindow
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


class StandIn:
    """What the buttons read of a referee, and what they ask of it."""

    def __init__(self) -> None:
        self.asked: list[Any] = []
        self.said: list[Any] = []
        self.spec = SimpleNamespace(seat_names=["S", "W", "N", "E"])
        self.state = MatchState(phase=Phase.PLAY)
        self.journal = SimpleNamespace(
            commit=lambda entry: self.asked.append(("commit", entry)),
            next_hand=lambda now: self.asked.append(("next_hand", now)),
        )
        self.hand: Any = SimpleNamespace(moves=["m1"], is_over=False)
        self.game = SimpleNamespace(has_turns=True, can_void=True)
        self.timing = Timing()
        self.display = SimpleNamespace(
            last_move_text=lambda: "S plays 6-6",
            move_text=lambda move: f"text of {move}",
            publish=lambda: self.asked.append("publish"),
        )
        self.coaching = SimpleNamespace(press=lambda seat, now: self.asked.append(("coach", seat, now)))

    def _notice(self, rejection: Any) -> None:
        self.asked.append(("notice", rejection.kind, rejection.seat))

    def _say(self, text: str | None, level: str = "info", about: str | None = None) -> None:
        self.said.append((str(text), level))

    def _restore(self) -> None:
        self.asked.append("restore")

    def _per_deal(self, hand: str, round: str) -> str:
        return hand

    def _hold_table(self) -> None:
        self.asked.append("hold")

    def _emit(self, kind: str, /, **data: Any) -> None:
        self.asked.append(("emit", kind))


def test_the_referee_button_offers_undo_then_void_then_cancels_and_a_seat_confirms() -> None:
    ref = StandIn()
    buttons = TableButtons(ref)  # type: ignore[arg-type]  # the stand-in has only what these paths read
    buttons.referee_press(1.0)
    assert buttons.menu is not None and buttons.menu.action == "undo"
    assert buttons.menu.until == 1.0 + ref.timing.confirm
    assert "undo the last move (S plays 6-6)" in ref.said[-1][0]
    buttons.referee_press(2.0)
    assert buttons.menu is not None and buttons.menu.action == "void"
    buttons.referee_press(3.0)
    assert buttons.menu is None and ref.said[-1] == ("referee: cancelled", "info")
    assert not any(isinstance(a, tuple) and a[0] == "commit" for a in ref.asked), "asking changes nothing"
    buttons.referee_press(4.0)
    buttons.press(2, "main", 4.5)  # any seat button confirms the undo
    assert buttons.menu is None
    assert ("commit", {"type": "undo", "by": 2}) in ref.asked
    assert ref.asked.index("hold") > ref.asked.index(("commit", {"type": "undo", "by": 2}))
    assert ref.asked[-1] == "publish"


def test_a_coach_press_never_confirms_the_question_and_a_press_out_of_play_is_a_notice() -> None:
    ref = StandIn()
    buttons = TableButtons(ref)  # type: ignore[arg-type]
    buttons.referee_press(1.0)
    buttons.press(1, "coach", 1.5)
    assert ("coach", 1, 1.5) in ref.asked and buttons.menu is not None
    buttons.press(9, "main", 1.6)  # no such seat: ignored
    assert buttons.menu is not None
    ref.state.phase = Phase.OVER
    buttons.menu = None
    buttons.press(3, "main", 2.0)
    assert ref.asked[-1] == ("notice", "no_hand", 3)
    buttons.referee_press(2.5)
    assert ref.asked[-1] == ("notice", "no_hand", None) and buttons.menu is None


def test_what_a_press_left_open_runs_out() -> None:
    ref = StandIn()
    buttons = TableButtons(ref)  # type: ignore[arg-type]
    buttons.contre = SeatWindow(1, 5.0)
    buttons.announce = SeatWindow(0, 6.0)
    buttons.expire(4.9)
    assert buttons.contre is not None and buttons.announce is not None and ref.asked == []
    buttons.expire(5.0)
    assert buttons.contre is None and ref.asked == [("notice", "contre_cancelled", 1)]
    buttons.expire(6.0)
    assert buttons.announce is None and ref.asked[-1] == "restore"


def test_the_referee_composes_its_buttons() -> None:
    ref = Referee(MatchSpec("dominoes", "pairs-pips", seed=7), TableGeometry.load("dominoes-4"),
                  TagRegistry.virtual(0))
    assert isinstance(ref.buttons, TableButtons) and ref.buttons.ref is ref
    ref.start(0.0)
    ref.referee_press(now=3.0)
    assert ref.state.now == 3.0 and ref.buttons.menu is not None and ref.buttons.menu.action == "void"
    ref.tick(3.0 + ref.timing.confirm)
    assert ref.buttons.menu is None, "the referee's tick lets the question run out"
    for gone in ("_press_dominoes", "_press_kems", "_confirm_menu", "menu", "contre", "announce", "_try_announce"):
        assert not hasattr(ref, gone), f"the buttons' own: {gone}"
