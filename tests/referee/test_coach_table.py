"""Issue 19, the coach at the table: a suggestion on request for one seat
(private: its devices only), a review of the costliest moves after each hand
(public, naming only tiles the table saw), journaled and kept in the record
as ``x-review``."""

from __future__ import annotations

import json
import random
from typing import Any

from tablekit import Hands, kinds, make_referee, perform
from typer.testing import CliRunner

from tablesense.games.dominoes import move_to_json
from tablesense.games.dominoes_players import GreedyPlayer, RandomPlayer
from tablesense.games.record import replay
from tablesense.outputs.events import TableEvent, public_event
from tablesense.referee.core import MatchSpec, Referee
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry


def public(kind: str, data: dict[str, Any]) -> dict[str, Any] | None:
    out = public_event(TableEvent(kind, data, 1, 0.0))
    return None if out is None else out.data


def test_the_coach_is_off_unless_the_table_turns_it_on() -> None:
    ref, events, _ = make_referee()
    h = Hands(ref)
    h.settle()
    seat = ref.hand.to_play
    ref.press(seat, "coach", h.now)
    assert not kinds(events, "coach")
    refused = kinds(events, "move_rejected")[-1]
    assert refused["reason"] == "coach_unavailable" and "the coach is off" in refused["instruction"]
    assert ref.state.accepted == 0  # a long press never passes


def test_a_suggestion_reaches_only_its_seat_and_lights_only_its_rack() -> None:
    ref, events, _ = make_referee(seed=4)
    ref.set_coach(True)
    h = Hands(ref)
    h.settle()
    rng = random.Random(2)
    asked = 0
    while ref.state.phase == "play" and asked < 12:
        hand = ref.hand
        seat = hand.to_play
        other = (seat + 1) % 4
        ref.press(other, "coach", h.now)
        assert kinds(events, "move_rejected")[-1]["reason"] == "coach_unavailable"
        before = len(kinds(events, "coach"))
        ref.press(seat, "coach", h.now)
        coach = kinds(events, "coach")
        assert len(coach) == before + 1
        ev = coach[-1]
        private = ev["private"]
        assert private["seat"] == seat == ev["seat"] and private["kind"] == "suggestion"
        legal = [move_to_json(m) for m in hand.legal_moves(seat)]
        assert private["move"] in legal
        rack = set(ref.geometry.seats[seat].rack)
        assert set(private["cells"]) <= rack
        if private["piece"] is not None:
            assert private["cells"] and private["piece"] in private["text"]
        # the public form keeps who asked, never what was suggested
        out = public("coach", ev)
        assert out == {"seat": seat, "hand_no": ref.state.hand_no}
        asked += 1
        perform(h, RandomPlayer().choose(hand, seat, rng))
    assert asked >= 5


def test_a_long_press_never_confirms_the_referee_menu() -> None:
    ref, events, _ = make_referee()
    ref.set_coach(True)
    h = Hands(ref)
    h.settle()
    perform(h, GreedyPlayer().choose(ref.hand, ref.hand.to_play, random.Random(1)))
    ref.referee_press(h.now)
    assert ref.buttons.menu is not None and ref.buttons.menu.action == "undo"
    ref.press(ref.hand.to_play, "coach", h.now)
    assert ref.buttons.menu is not None and ref.state.accepted == 1  # still asking, nothing undone


def play_hand(ref: Referee, h: Hands, seed: int) -> None:
    rng = random.Random(seed)
    players = [RandomPlayer(), GreedyPlayer(), RandomPlayer(), GreedyPlayer()]
    start = len(ref.finished_hands())
    while len(ref.finished_hands()) == start:
        hand = ref.hand
        perform(h, players[hand.to_play].choose(hand, hand.to_play, rng))
    h.show(30.0)  # the next hand is dealt
    h.reset()
    h.settle()


def test_the_review_is_shown_journaled_and_kept_in_the_record(tmp_path: Any) -> None:
    ref, events, stored = make_referee(seed=7)
    ref.set_coach(True)
    h = Hands(ref)
    h.settle()
    for k in range(2):
        play_hand(ref, h, 10 + k)
    reviews = [e for e in stored if e["type"] == "review"]
    assert [e["hand"] for e in reviews] == [0, 1]
    assert any(e["lines"] for e in reviews), "random players made no costly move?"
    ended = kinds(events, "hand_ended")
    assert len(ended) == 2
    for i, ev in enumerate(ended):
        rec_hand = ev["record"]["hands"][i]
        assert rec_hand["x-review"] == reviews[i]["lines"]
        assert ev["review"]["hand_no"] == ev["hand_no"]
        assert len(ev["review"]["lines"]) == len(reviews[i]["lines"])
    # public lines name seats as the table does and only tiles the table saw
    for i, ev in enumerate(ended):
        hand = ref.finished_hands()[i]
        seen = {str(lp.tile) for lp in hand.line}
        for line, entry in zip(ev["review"]["lines"], reviews[i]["lines"], strict=True):
            assert "seat " not in line.split(" chose")[0]
            better = entry["better"].get("tile")
            if better is not None and better not in seen:
                assert better not in line and "a tile not shown" in line
    view = ref.view()
    assert view["review"] == ended[-1]["review"]
    assert public("view", view) is not None
    # the record replays as it is, x-review and all, and from the command line
    record = ref.record()
    assert all("x-review" in hd for hd in record["hands"])
    assert list(replay(json.loads(json.dumps(record))).score) == list(ref.match.score)
    from tablesense.cli import app

    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    r = CliRunner().invoke(app, ["rules", "replay", str(path)])
    assert r.exit_code == 0, r.output
    # a resumed match keeps its reviews (from the journal, not recomputed)
    again = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=7),
        TableGeometry.load("dominoes-4"),
        TagRegistry.virtual(0),
        store=lambda e: None,
    )
    again.replay(stored, 0.0)
    assert not again.coaching.on  # the switch is the command line's, each start
    assert again.record()["hands"] == record["hands"]
    assert again.view()["review"] == view["review"]


def test_the_coach_answers_in_the_tables_language() -> None:
    ref, events, _ = make_referee(lang="pt-BR", seed=3)
    ref.set_coach(True)
    h = Hands(ref)
    h.settle()
    ref.press(ref.hand.to_play, "coach", h.now)
    text = kinds(events, "coach")[-1]["private"]["text"]
    assert text.split()[0] in ("jogar", "comprar", "passar"), text
    ref.press((ref.hand.to_play + 1) % 4, "coach", h.now)
    assert "treinador" in kinds(events, "move_rejected")[-1]["instruction"]


def test_kems_coach_advises_a_swap_or_a_call_from_the_seats_view() -> None:
    ref, events, _ = make_referee("kems", "classic", "kems-4", seed=2)
    ref.set_coach(True)
    h = Hands(ref)
    h.settle()
    for seat in range(4):
        ref.press(seat, "coach", h.now)
    coach = kinds(events, "coach")
    assert [ev["seat"] for ev in coach] == [0, 1, 2, 3]
    for ev in coach:
        p = ev["private"]
        seat = ev["seat"]
        assert p["text"] and set(p["cells"]) <= set(ref.geometry.seats[seat].rack)
        if p["piece"] is not None:
            assert p["piece"] in {str(c) for c in ref.hand.hands[seat]}
            assert p["take"] in {str(c) for c in ref.hand.board}
        assert public("coach", ev) == {"seat": seat, "hand_no": ref.state.hand_no}


def test_the_coach_waits_until_a_host_deal_is_laid_out() -> None:
    ref, events, _ = make_referee(seed=5)
    ref.set_coach(True)
    assert ref.state.laying_out  # dealt by the host, not on the racks yet
    ref.press(ref.hand.to_play, "coach", 0.0)
    assert not kinds(events, "coach")
    assert "once the deal is laid out" in kinds(events, "move_rejected")[-1]["instruction"]
    h = Hands(ref)
    h.settle()
    ref.press(ref.hand.to_play, "coach", h.now)
    assert kinds(events, "coach")


def test_each_seat_reads_the_review_with_its_own_tiles_named() -> None:
    from tablesense.referee.sit import CoachHints

    ref, events, stored = make_referee(seed=7)
    ref.set_coach(True)
    hints = CoachHints()
    h = Hands(ref)
    h.settle()
    ref.press(ref.hand.to_play, "coach", h.now)
    hints.follow(TableEvent("coach", kinds(events, "coach")[-1], 1, 0.0))
    assert hints.hint(ref.hand.to_play) is not None
    assert all(hints.hint(s) is None for s in range(4) if s != ref.hand.to_play)
    play_hand(ref, h, 10)
    ended = kinds(events, "hand_ended")[-1]
    entry = [e for e in stored if e["type"] == "review"][-1]
    hints.follow(TableEvent("hand_ended", ended, 2, 0.0))
    assert hints.hint(ref.hand.to_play) is None  # the hint was for a position gone
    shown = public("hand_ended", ended)
    assert shown is not None and "private" not in shown
    mine = {item["seat"]: item["lines"] for item in ended["private"]["reviews"]}
    assert sorted(mine) == [0, 1, 2, 3]
    for seat in range(4):
        got = hints.review(seat)
        assert got is not None and got["hand_no"] == ended["hand_no"] and got["lines"] == mine[seat]
        for line, public_line, e in zip(mine[seat], ended["review"]["lines"], entry["lines"], strict=True):
            tile = e["better"].get("tile")
            if e["seat"] == seat and tile is not None:
                assert tile in line  # its own tile, named to it
            else:
                assert line == public_line  # another seat's line as everyone reads it
