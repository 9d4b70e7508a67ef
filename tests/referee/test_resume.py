"""Resume: the journal's state against the table as found after a restart."""

from __future__ import annotations

import random
from typing import Any

from tablekit import Hands, kinds, make_referee, perform

from tablesense.games.dominoes_players import GreedyPlayer
from tablesense.referee.core import MatchSpec, Referee
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


def played(moves: int) -> tuple[Referee, list[dict[str, Any]], Hands]:
    ref, events, stored = make_referee(seed=8)
    h = Hands(ref)
    h.settle()
    bot = GreedyPlayer()
    rng = random.Random(1)
    for _ in range(moves):
        perform(h, bot.choose(ref.hand, ref.hand.to_play, rng))
    return ref, stored, h


def restarted(stored: list[dict[str, Any]]) -> tuple[Referee, list[tuple[str, dict[str, Any]]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    ref = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=8),
        TableGeometry.load("dominoes-4"),
        TagRegistry.virtual(0),
        emit=lambda k, **d: events.append((k, d)),
        store=stored.append,
    )
    ref.replay(list(stored), 100.0)
    return ref, events


def test_a_move_finished_while_the_host_was_down_is_taken() -> None:
    old, stored, h = played(5)
    move = GreedyPlayer().choose(old.hand, old.hand.to_play, random.Random(0))
    perform(h, move)  # the old referee sees it too; rebuild from the journal before it
    before = stored[:-1]
    new, events = restarted(before)
    assert new.state.accepted == old.state.accepted - 1
    h.ref = new
    h.now = 100.0
    h.settle()
    assert new.state.accepted == old.state.accepted
    assert new.hand.moves == old.hand.moves
    assert "resumed from the journal" in kinds(events, "message")[0]["text"]


def test_differences_found_after_a_restart_are_corrected_one_at_a_time() -> None:
    old, stored, h = played(6)
    new, events = restarted(stored)
    h.ref = new
    h.now = 100.0
    seat = new.hand.to_play
    tile = str(new.hand.hands[seat][0])
    h.lift(tile)  # knocked off the table during the power cut
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    # a tile from a rack: the public event does not name it; the seat's own
    # devices (and the demo's hands) get the fix under "private"
    assert rej["reason"] == "missing" and rej["fix"] is None and rej["piece"] is None
    assert tile not in rej["instruction"]
    fix = rej["private"]["fix"]
    assert fix["piece"] == tile
    h.drop(tile, fix["to"])
    h.settle()
    assert kinds(events, "correction_cleared")
    assert new.state.accepted == old.state.accepted
