"""Issue 14, at the table: what the display and the operator are told.

Every banner has a next step (or goes away), the referee button offers only
what can be done, the keyboard stand-in answers every line, and a second
board going offline reaches the display at once.
"""

from __future__ import annotations

import time
from typing import Any

from tablekit import Hands, kinds, make_referee, perform

from tablesense.referee.core import MatchSpec, Referee
from tablesense.referee.keyboard import key_command
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


def table_dealt() -> tuple[Referee, list[tuple[str, dict[str, Any]]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    ref = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=1),
        TableGeometry.load("dominoes-4"),
        TagRegistry.virtual(0),
        emit=lambda kind, **data: events.append((kind, data)),
        deal="table",
    )
    ref.start(0.0)
    return ref, events


def test_a_refused_press_before_the_deal_gives_way_to_the_next_step() -> None:
    ref, events = table_dealt()
    assert ref.state.phase == "dealing"
    ref.press(0, "main", 1.0)
    refused = kinds(events, "message")[-1]["text"]
    assert refused.startswith("no hand is being played yet") and "deal" in refused
    ref.tick(1.0 + ref.timing.notice + 0.1)
    # not the refusal for good: back to what the table must do now
    assert ref.state.message is not None
    assert ref.state.message.text == "shuffle and deal: lay each player's pieces on their rack"
    assert kinds(events, "view")[-1]["message"]["text"].startswith("shuffle and deal")


def test_referee_button_offers_only_what_can_be_done() -> None:
    ref, events, _ = make_referee()
    h = Hands(ref)
    h.settle()
    ref.referee_press(h.now)
    texts = [m["text"] for m in kinds(events, "message")]
    assert not any("nothing to undo" in t and "?" in t for t in texts), texts
    # no move yet: the first press goes straight to voiding the hand
    assert ref.buttons.menu is not None and ref.buttons.menu.action == "void"
    assert texts[-1].startswith("referee: void this hand")
    # the question runs out: the banner goes, nothing changed
    h.show(ref.timing.confirm + 0.1)
    assert ref.buttons.menu is None and ref.state.message is None
    perform(h, ref.hand.legal_moves()[-1])
    ref.referee_press(h.now)
    assert ref.buttons.menu is not None and ref.buttons.menu.action == "undo"
    assert "undo the last move (" in kinds(events, "message")[-1]["text"]


def test_resume_banner_goes_once_the_table_matches() -> None:
    ref, events, stored = make_referee()
    h = Hands(ref)
    h.settle()
    perform(h, ref.hand.legal_moves()[-1])
    new_events: list[tuple[str, dict[str, Any]]] = []
    new = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=1),
        TableGeometry.load("dominoes-4"),
        TagRegistry.virtual(0),
        emit=lambda kind, **data: new_events.append((kind, data)),
    )
    new.replay(stored, h.now)
    assert new.state.message is not None and new.state.message.text.startswith("resumed from the journal")
    h.ref = new
    h.settle()
    assert new.state.message is None, new.state.message
    assert kinds(new_events, "view")[-1]["message"] is None


def test_a_second_board_going_offline_reaches_the_display_at_once() -> None:
    ref, events, _ = make_referee()
    h = Hands(ref)
    h.settle()
    h.offline = (1,)
    h.show(0.05)
    others = [True] * 4  # dominoes-4 has six boards; 3..6 stay up
    assert [b["online"] for b in kinds(events, "view")[-1]["boards"]] == [False, True, *others]
    h.offline = (1, 2)
    h.show(0.05)
    view = kinds(events, "view")[-1]
    assert [b["online"] for b in view["boards"]] == [False, False, *others]
    assert view["message"]["text"].startswith("boards 1, 2 are offline")
    h.offline = (2,)
    h.show(0.05)
    view = kinds(events, "view")[-1]
    assert [b["online"] for b in view["boards"]] == [True, False, *others]
    assert view["message"]["text"].startswith("board 2 is offline")


def test_every_board_unplugged_shows_offline_within_the_keep_alive_time() -> None:
    """Through the real link and the session: the display's view (what
    ``/api/view`` serves) has every board right within the watchdog time."""
    from tablesense.link.board_conn import LinkOptions
    from tablesense.link.manager import TableLink
    from tablesense.outputs.events import EventBus
    from tablesense.referee.session import Session
    from tablesense.sim.virtual_table import VirtualTable

    geometry = TableGeometry.load("dominoes-4")
    bus = EventBus()
    ref = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=1),
        geometry,
        TagRegistry.virtual(0),
        emit=bus.publish,
        deal="table",
    )
    with VirtualTable(geometry, seed=0) as vt:
        paths = vt.start()
        link = TableLink(geometry, ports=list(vt.stable_paths().values()) or list(paths.values()))
        link.start()
        session = Session(ref, link, bus, paint_leds=False)
        try:
            assert link.wait_online(20.0)
            ref.start(session.clock())
            session.attach()
            for _ in range(20):
                session.step(0.02)
            for board in vt.boards:
                vt.unplug(board)
            deadline = time.monotonic() + LinkOptions().watchdog + 1.0
            unplugged = [False] * len(vt.boards)
            boards: list[bool] = [True] * len(vt.boards)
            while time.monotonic() < deadline:
                session.step(0.02)
                view = bus.latest("view")
                assert view is not None
                boards = [b["online"] for b in view.data["boards"]]
                if boards == unplugged:
                    break
            assert boards == unplugged
        finally:
            session.detach()
            link.stop()


class FakeSession:
    def __init__(self, seats: int) -> None:
        self.referee = type("R", (), {"spec": MatchSpec("dominoes", "x", seat_names=["a"] * seats)})()
        self.pressed: list[tuple[int, str]] = []

    def press(self, seat: int, button: str = "main") -> None:
        self.pressed.append((seat, button))

    def referee_press(self) -> None:
        self.pressed.append((-1, "referee"))


def test_keyboard_stand_in_answers_every_line() -> None:
    s = FakeSession(4)
    assert key_command(s, "p 2\n") is None and s.pressed == [(1, "main")]
    assert key_command(s, "c 4") is None and s.pressed[-1] == (3, "call")
    assert key_command(s, "r") is None and s.pressed[-1] == (-1, "referee")
    assert key_command(s, "") is None
    assert key_command(s, "p 9") == "there is no seat 9: the seats are 1 to 4"
    assert key_command(s, "p 0") == "there is no seat 0: the seats are 1 to 4"
    unknown = key_command(s, "x")
    assert unknown is not None and unknown.startswith("unknown key 'x'") and "p N" in unknown
    which = key_command(s, "p")
    assert which is not None and "say which seat, 1 to 4" in which
    assert len(s.pressed) == 3


def test_the_console_names_the_winning_team() -> None:
    from tablesense.outputs.events import EventBus
    from tablesense.referee.console import log_events

    lines: list[str] = []

    class Console:
        def print(self, text: str, **_: Any) -> None:
            lines.append(text)

    bus = EventBus()
    log_events(bus, Console())
    bus.publish("match_ended", winner=0, score=[52, 10], teams=["South & North", "East & West"])
    assert "South & North win" in lines[-1] and "team 0" not in lines[-1]


def test_kems_texts_write_cards_as_people_do() -> None:
    from tablesense.games.kems import Swap

    for s in range(2, 40):
        ref, events, _ = make_referee("kems", "classic", "kems-4", s)
        if not ref.match.results:
            break
    else:
        raise AssertionError("no seed whose first Kems round is still open")
    h = Hands(ref)
    h.settle()
    give, take = str(ref.hand.hands[0][0]), str(ref.hand.board[0])
    rack_cell, slot = h.where(give), ref.geometry.kems_slots[0]
    assert rack_cell is not None
    h.lift(give)
    h.lift(take)
    h.drop(give, slot)
    h.drop(take, rack_cell)
    h.settle()
    assert ref.hand.events[-1] == Swap(0, *(type(ref.hand.board[0]).parse(x) for x in (give, take)))
    text = kinds(events, "move_accepted")[-1]["text"]
    signs = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}

    def written(c: Any) -> str:
        return ("10" if str(c)[0] == "T" else str(c)[0]) + signs[str(c)[1]]

    assert text == f"{ref.rules.seat_label(0)} gives {written(give)}, takes {written(take)}"
