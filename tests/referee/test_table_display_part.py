"""The public display state is a part composed into the referee
(``referee.display``), not a mixin: it reads the referee only through its
protocol and changes nothing, so it is tested here over a stand-in referee."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tablesense.games.dominoes import Pass, Play, Tile
from tablesense.referee.core import MatchSpec, Referee
from tablesense.referee.rules import DELAY_NOW, Rejection
from tablesense.referee.state import Banner, MatchState, Phase
from tablesense.referee.view import TableDisplay
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


class StandIn:
    """What the display reads of a referee: two pairs, a hand in play."""

    def __init__(self) -> None:
        self.emitted: list[tuple[str, dict[str, Any]]] = []
        self.spec = SimpleNamespace(game="dominoes", variant="pairs-pips", seat_names=["S", "W", "N", "E"],
                                    seat_kinds=["human"] * 4)
        self.geometry = SimpleNamespace(name="t", boards=[SimpleNamespace(id=1), SimpleNamespace(id=2)],
                                        boneyard=[])
        self.rules = SimpleNamespace(seat_label=lambda seat: self.spec.seat_names[seat])
        self.match = SimpleNamespace(score=[3.0, 0.5], is_over=False, winner=None, team_of=lambda seat: seat % 2,
                                     to_record=lambda: {"hands": [{}, {}]})
        self.game = SimpleNamespace(pieces_view=lambda *a, **k: {"line": "pieces"}, page_facts=lambda: {"deal_word": "hand"})
        self.hand: Any = SimpleNamespace(hands=[[1, 2], [3], [], [4]], moves=[Pass(1), Play(2, Tile.parse("6-6"))])
        self.state = MatchState(
            sensed=SimpleNamespace(boards_offline={2}),  # type: ignore[arg-type]  # only what the view reads
            phase=Phase.PLAY,
            paused=True,
            message=Banner("hello", "info"),
            hand_no=2,
            accepted=5,
            last_move={"seat": 2, "tile": "6-6"},
            last_result={"hand_no": 1, "outcome": "blocked", "winner": 0, "points": [3]},
            last_hand_no=1,
            correction=Rejection("wrong_cell", "move it back", ("c1",), DELAY_NOW, seat=0),
        )
        self.coaching = SimpleNamespace(annotate=lambda rec: {**rec, "x": 1}, review_view=lambda: None)

    def _emit(self, kind: str, /, **data: Any) -> None:
        self.emitted.append((kind, data))

    def _finished(self) -> list[Any]:
        return []

    def _to_play(self) -> int | None:
        return 3

    def _target(self) -> Any:
        return 100

    def _rejection_data(self, rejection: Rejection) -> dict[str, Any]:
        return {"instruction": rejection.instruction, "private": {"seat": rejection.seat}}


def test_the_view_reads_the_referee_and_never_carries_a_private_part() -> None:
    ref = StandIn()
    display = TableDisplay(ref)  # type: ignore[arg-type]  # the stand-in has what the display reads
    view = display.view()
    assert view["phase"] == "play" and view["to_play"] == 3 and view["target"] == 100
    assert [s["count"] for s in view["seats"]] == [2, 1, 0, 1]
    assert [s["is_turn"] for s in view["seats"]] == [False, False, False, True]
    assert view["scores"] == [3, 0.5] and isinstance(view["scores"][0], int)
    assert view["boards"] == [{"id": 1, "online": True}, {"id": 2, "online": False}]
    assert view["correction"] == {"instruction": "move it back"}, "a seat's private fix never reaches the display"
    assert view["result"] is not None and view["result"]["how"] == "blocked"
    assert view["line"] == "pieces"
    assert ref.emitted == [], "reading the view publishes nothing"
    display.publish()
    assert ref.emitted == [("view", view)]


def test_the_words_for_moves_teams_and_the_record() -> None:
    ref = StandIn()
    display = TableDisplay(ref)  # type: ignore[arg-type]
    assert display.team_names() == ["S & N", "W & E"]
    assert display.move_text(Pass(1)) == "W passes"
    assert display.last_move_text() == "N plays 6-6"
    assert display.accepted_in_hand() == 2
    assert display.record(limit=1) == {"hands": [{}], "x": 1}, "the coach annotates, the limit cuts"
    ref.hand = None
    assert display.last_move_text() is None and display.accepted_in_hand() == 0


def test_the_referee_composes_its_display() -> None:
    ref = Referee(MatchSpec("dominoes", "pairs-pips", seed=7), TableGeometry.load("dominoes-4"),
                  TagRegistry.virtual(0))
    assert isinstance(ref.display, TableDisplay) and ref.display.ref is ref
    ref.start(0.0)
    assert ref.view() == ref.display.view() and ref.view()["phase"] == "play"
    assert ref.record() == ref.display.record()
    for stub in ("_view", "_move_text", "team_names", "last_move_text", "_rack_counts"):
        assert not hasattr(ref, stub), f"no stub left for the display: {stub}"
