"""Referee follow-ups: the finished hand's line (winning tile included) on the
display, no rejection while a new deal is laid out, incomplete table states
set aside, Kems rounds called rounds."""

from __future__ import annotations

import random
from typing import Any

from tablekit import Hands, kinds, make_referee, perform

from tablesense.games.dominoes_players import GreedyPlayer
from tablesense.referee.demo import DemoConfig, run_demo
from tablesense.table.state import EMPTY, Reading, TableState, Tag

# --------------------------------------------------------------------------- last_line


def _line_tiles(line: dict[str, Any]) -> list[str]:
    center = [line["center"]["tile"]] if line.get("center") else []
    return sorted(center + [t["tile"] for t in line["left"] + line["right"]])


def _play_out(ref: Any, h: Hands) -> None:
    bot = GreedyPlayer()
    rng = random.Random(0)
    start = ref.state.hand_no
    while ref.state.hand_no == start:
        perform(h, bot.choose(ref.hand, ref.hand.to_play, rng))


def test_the_finished_hand_line_with_its_winning_tile_reaches_the_display() -> None:
    ref, events, _ = make_referee(seed=3)
    h = Hands(ref)
    h.settle()
    _play_out(ref, h)
    done = ref.finished_hands()[-1]
    plays = sorted(str(lp.tile) for lp in done.line)
    last_play = next(m for m in reversed(done.moves) if type(m).__name__ == "Play")
    ended = next(i for i, (k, _) in enumerate(events) if k == "hand_ended")
    after = [d for k, d in events[ended:] if k == "view"]
    assert after, "a view follows hand_ended"
    # the view published when the hand ends holds the whole final line
    first = after[0]
    assert first["last_line"] is not None
    assert _line_tiles(first["last_line"]) == plays
    assert str(last_play.tile) in _line_tiles(first["last_line"])
    assert first["last_line"]["hand_no"] == 1
    assert first["last_line"]["ends"] == {"left": done.left_end, "right": done.right_end}
    # the new hand's views keep it while its own line is empty
    new = kinds(events, "view")[-1]
    assert new["hand_no"] == 2 and new["line"]["center"] is None
    assert _line_tiles(new["last_line"]) == plays and new["last_line"]["hand_no"] == 1
    # a view before any hand finished has none
    assert kinds(events, "view")[0]["last_line"] is None


# --------------------------------------------------------------------------- incomplete states


def _state(ref: Any, h: Hands, *, syncing: frozenset[int] = frozenset()) -> TableState:
    cells: dict[str, Reading] = {c: EMPTY for c in ref.geometry.cells}
    for cell, piece in h.cells.items():
        cells[cell] = Tag(ref.registry.uid_of(piece))
    online = {b.id: True for b in ref.geometry.boards}
    return TableState(cells, online, 0.0, syncing=syncing)


def test_an_incomplete_state_is_neither_judged_nor_rejected() -> None:
    ref, events, _ = make_referee(seed=1)
    h = Hands(ref)
    ref.update(_state(ref, h), 0.0)
    ref.tick(5.0)
    assert ref.state.sensed is not None and ref.rules.layout().matches(ref.state.sensed)
    line = ref.geometry.line
    assert line is not None
    # a board resyncs: its stale cells show a tile on a wrong line cell and
    # another lifted; none of it is judged however long it lasts
    h.lift(str(ref.hand.hands[1][0]))
    bad = str(ref.hand.hands[0][0])
    h.drop(bad, line.left[3])
    board = ref.geometry.cells[line.left[3]].board
    for t in (5.0, 6.0, 20.0, 40.0):
        ref.update(_state(ref, h, syncing=frozenset({board})), t)
    assert kinds(events, "move_rejected") == [] and ref.state.accepted == 0
    assert ref.state.correction is None
    # the same table, complete: judged as usual (after its own wait)
    ref.update(_state(ref, h), 41.0)
    assert kinds(events, "move_rejected") == []
    ref.update(_state(ref, h), 41.0 + ref.timing.missing + 0.1)
    assert kinds(events, "move_rejected")
    # and a complete legal move is still taken
    h.reset()
    ref.update(_state(ref, h), 60.0)
    ref.tick(70.0)
    move = ref.hand.legal_moves()[-1]
    h.lift(str(move.tile))
    h.drop(str(move.tile), line.center)
    ref.update(_state(ref, h, syncing=frozenset({1})), 71.0)
    ref.tick(80.0)
    assert ref.state.accepted == 0
    ref.update(_state(ref, h), 81.0)
    ref.tick(82.0)
    assert ref.state.accepted == 1


# --------------------------------------------------------------------------- new deal


def test_a_new_deal_being_laid_out_is_not_rejected() -> None:
    """The host dealt: pieces travel between racks (which looks like a direct
    swap between partners); nothing is judged until the deal is laid out or
    the table stops moving for the long wait."""
    ref, events, _ = make_referee("kems", "classic", "kems-4", seed=2)
    h = Hands(ref)
    # the cards lie as dealt, but two partners' cards are exchanged
    a, b = h.ref.geometry.seats[0].rack[0], h.ref.geometry.seats[2].rack[0]
    h.cells[a], h.cells[b] = h.cells[b], h.cells[a]
    h.show(ref.timing.error + 0.5)
    assert kinds(events, "move_rejected") == [] and ref.state.accepted == 0
    # left that way, the deal is guided back
    h.show(ref.timing.missing)
    assert kinds(events, "move_rejected")
    h.reset()
    h.settle()
    assert ref.state.correction is None and not ref.state.laying_out
    # once laid out, the same mistake is explained at the usual pace
    n = len(kinds(events, "move_rejected"))
    h.cells[a], h.cells[b] = h.cells[b], h.cells[a]
    h.show(ref.timing.error + 0.5)
    assert len(kinds(events, "move_rejected")) == n + 1


def test_the_next_round_waits_from_its_deal_not_from_the_old_table() -> None:
    """The old round's table stood still for long; when the next round is
    dealt its cards are still there. That is a deal to lay out, not a table
    that has been wrong for ages."""
    for s in range(2, 40):
        ref, events, _ = make_referee("kems", "classic", "kems-4", s)
        if not ref.match.results:
            break
    else:
        raise AssertionError("no seed whose first Kems round is still open")
    h = Hands(ref)
    h.settle()
    h.show(60.0)
    ref.press(1, "main", h.now)
    h.show(ref.timing.double_window + 0.1)
    assert ref.state.hand_no == 2
    h.show(ref.timing.error + 0.5)
    assert [r for r in kinds(events, "move_rejected") if r["hand_no"] == 2] == []
    assert ref.state.laying_out


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, text: str, **kwargs: Any) -> None:
        self.lines.append(str(text))


def test_kems_demo_deals_new_rounds_without_a_false_rejection() -> None:
    """Three Kems rounds on the demo's table for seeds 1-3: every
    ``move_rejected`` is printed as a ✗ line, and none may appear."""
    for seed in (1, 2, 3):
        log = _Lines()
        result = run_demo(
            DemoConfig(game="kems", hands=3, seed=seed, web=False, link="direct", timeout=60),
            log=log,
        )
        assert result.hands_played == 3, result.errors
        rejected = [line for line in log.lines if "✗" in line]
        assert rejected == [], (seed, rejected)
        rounds = [line for line in log.lines if "round 2" in line]
        assert rounds, "Kems rounds are called rounds"
        assert not any(line.startswith("[bold]hand ") for line in log.lines)


def test_kems_messages_say_round() -> None:
    for s in range(2, 40):
        ref, events, _ = make_referee("kems", "classic", "kems-4", s)
        if not ref.match.results:
            break
    else:
        raise AssertionError("no seed whose first Kems round is still open")
    h = Hands(ref)
    h.settle()
    ref.press(1, "main", h.now)
    h.show(ref.timing.double_window + 0.1)
    texts = [m["text"] for m in kinds(events, "message")]
    assert any(t.startswith("round 1: ") for t in texts), texts
    assert not any(t.startswith("hand 1: ") for t in texts)
    assert ref.state.hand_no == 2
    ref.referee_press(h.now)
    # nothing to undo yet: said at once, never "undo the last move (nothing to undo)?"
    assert kinds(events, "message")[-1]["text"] == "referee: nothing to undo yet in this round"
    assert ref.buttons.menu is None
    assert not any("(nothing to undo)" in m["text"] for m in kinds(events, "message"))
