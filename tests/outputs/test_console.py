"""The console output prints decisions, not views, without slowing the bus."""

from __future__ import annotations

import io

from rich.console import Console

from tablesense.outputs.console import ConsoleOutput, describe
from tablesense.outputs.events import EventBus, TableEvent


def test_console_prints_each_decision_in_order() -> None:
    buf = io.StringIO()
    bus = EventBus()
    with ConsoleOutput(bus, Console(file=buf, width=200, color_system=None)):
        bus.publish("move_accepted", text="Bruno plays 3-5 on the left end", seat=1)
        bus.publish("view", hand_no=1)
        bus.publish("move_rejected", instruction="put 3-5 back on seat 2's rack", cells=["left-3"])
        bus.publish("board_status", board=2, online=False, message="no answer")
        bus.publish("hand_ended", hand_no=1, result={"outcome": "domino"}, score=[0, 23])
    out = buf.getvalue().splitlines()
    assert len(out) == 4
    assert "Bruno plays 3-5 on the left end" in out[0]
    assert "put 3-5 back on seat 2's rack" in out[1]
    assert "board 2 OFFLINE: no answer" in out[2]
    assert "hand 1 over: domino, score [0, 23]" in out[3]


def test_describe_covers_suggestions_and_calls() -> None:
    ev = TableEvent(
        "suggestion",
        {"seat": 2, "kind": "play", "piece": "6-6", "from_cell": "seat2-1", "to_cell": "center"},
        1,
        0.0,
    )
    # seats counted from 1 in every line (events number them from 0)
    assert describe(ev) == "seat 3 suggests play 6-6 seat2-1 -> center"
    assert (
        describe(TableEvent("call", {"seat": 1, "call": "contre", "target": 2}, 2, 0.0))
        == "seat 2 calls contre on seat 3"
    )
    ended = TableEvent("match_ended", {"winner": 1, "score": [3, 52], "teams": ["A & C", "B & D"]}, 4, 0.0)
    assert describe(ended) == "match over: B & D win, score [3, 52]"
    assert describe(TableEvent("custom", {"a": 1, "record": {}}, 3, 0.0)) == "a=1"
