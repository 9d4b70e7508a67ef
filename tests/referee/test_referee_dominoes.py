"""The referee on synthetic dominoes tables: every move kind, every rejection."""

from __future__ import annotations

import random
from typing import Any

import pytest
from tablekit import Hands, kinds, make_referee, perform

from tablesense.games.dominoes import Announce, Draw, Pass, Play, Tile
from tablesense.games.dominoes_players import GreedyPlayer
from tablesense.referee.layout import Problem


def opened(
    variant: str = "pairs-pips", table: str = "dominoes-4", seed: int = 1
) -> tuple[Any, Any, Hands]:
    ref, events, stored = make_referee("dominoes", variant, table, seed)
    h = Hands(ref)
    h.settle()
    opening = ref.hand.legal_moves()[-1]
    perform(h, opening)
    assert ref.state.accepted == 1
    return ref, events, h


def first_play(ref: Any) -> Play:
    return next(m for m in ref.hand.legal_moves() if isinstance(m, Play))


def snapshot(ref: Any) -> tuple[Any, ...]:
    hand = ref.hand
    return (tuple(map(str, hand.moves)), hand.to_play, [list(map(str, x)) for x in hand.hands])


def test_opening_play_is_recognised_after_the_table_settles() -> None:
    ref, events, stored = make_referee()
    h = Hands(ref)
    h.settle()
    opening = ref.hand.legal_moves()[-1]
    assert isinstance(opening, Play) and str(opening.tile) == "6-6"
    h.lift("6-6")
    h.show(0.05)
    h.drop("6-6", "center")
    h.show(0.1)  # still settling: not accepted yet
    assert ref.state.accepted == 0
    h.show(1.0)
    assert ref.state.accepted == 1
    acc = kinds(events, "move_accepted")
    assert acc[-1]["move"] == {"seat": opening.seat, "tile": "6-6"}
    # journaled before it was announced
    assert stored[-1] == {"type": "move", "move": {"seat": opening.seat, "tile": "6-6"}}
    view = kinds(events, "view")[-1]
    assert view["line"]["center"]["tile"] == "6-6"
    assert view["seats"][opening.seat]["count"] == 6


@pytest.mark.parametrize("end", ["left", "right"])
def test_play_on_each_end_goes_to_the_next_cell_of_that_arm(end: str) -> None:
    ref, events, h = opened()
    rules: Any = ref.rules
    for _ in range(3):
        plays = [m for m in ref.hand.legal_moves() if isinstance(m, Play) and m.end == end]
        if not plays:
            perform(h, ref.hand.legal_moves()[0])
            continue
        move = plays[0]
        k = len(ref.hand.arm(end))
        perform(h, move)
        assert ref.hand.moves[-1] == move
        assert h.where(str(move.tile)) == rules.line.arm(end)[k]


def test_quick_take_back_is_not_a_move() -> None:
    ref, events, h = opened()
    move = first_play(ref)
    rules: Any = ref.rules
    target = rules.target_cell(move.end)
    h.lift(str(move.tile))
    h.drop(str(move.tile), target)
    h.show(0.1)
    h.lift(str(move.tile))
    h.to_rack(str(move.tile), move.seat)
    h.settle()
    assert ref.state.accepted == 1
    assert not kinds(events, "move_rejected")


def test_tile_still_sliding_waits_longer_than_a_settled_one() -> None:
    ref, events, h = opened()
    move = first_play(ref)
    rules: Any = ref.rules
    h.lift(str(move.tile))
    h.drop(str(move.tile), rules.target_cell(move.end))
    h.show(ref.timing.settle + 0.05)
    assert ref.state.accepted == 1  # the next cell is free: it might slide on
    h.show(ref.timing.slide)
    assert ref.state.accepted == 2


def test_out_of_turn_play_is_explained_and_changes_nothing() -> None:
    ref, events, h = opened()
    before = snapshot(ref)
    other = (ref.hand.to_play + 1) % 4
    tile = (
        next(t for t in ref.hand.hands[other] if t.has(6))
        if any(t.has(6) for t in ref.hand.hands[other])
        else ref.hand.hands[other][0]
    )
    rules: Any = ref.rules
    h.lift(str(tile))
    h.drop(str(tile), rules.line.left[0])
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "out_of_turn"
    assert f"put {tile} back on {rules.seat_label(other)}'s rack" in rej["instruction"]
    assert rules.line.left[0] in rej["cells"]
    assert snapshot(ref) == before
    h.lift(str(tile))
    h.to_rack(str(tile), other)
    h.settle()
    assert kinds(events, "correction_cleared")
    assert ref.state.correction is None


def test_tile_that_does_not_fit_is_explained() -> None:
    ref, events, h = opened()
    seat = ref.hand.to_play
    bad = [
        t
        for t in ref.hand.hands[seat]
        if not t.has(ref.hand.left_end) and not t.has(ref.hand.right_end)
    ]
    if not bad:
        pytest.skip("this deal gives no unfit tile")
    rules: Any = ref.rules
    h.lift(str(bad[0]))
    h.drop(str(bad[0]), rules.line.right[0])
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "does_not_fit"
    assert str(bad[0]) in rej["instruction"] and "back on" in rej["instruction"]
    assert ref.state.accepted == 1


def test_tile_on_a_wrong_cell_is_sent_to_the_right_one() -> None:
    ref, events, h = opened()
    move = first_play(ref)
    rules: Any = ref.rules
    arm = rules.line.arm(move.end)
    h.lift(str(move.tile))
    h.drop(str(move.tile), arm[2])  # skipped two cells
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "wrong_cell"
    assert (
        rej["instruction"]
        == f"move {move.tile} from cell {arm[2]} to cell {arm[0]} (the next cell of the {move.end} arm)"
    )
    assert rej["cells"] == [arm[2], arm[0]]
    assert rej["fix"] == {"piece": str(move.tile), "to": arm[0]}
    h.drop(str(move.tile), arm[0])
    h.settle()
    assert ref.state.accepted == 2
    assert kinds(events, "correction_cleared")


def test_tile_taken_back_from_the_line_is_asked_back() -> None:
    ref, events, h = opened()
    opener = ref.hand.moves[0].seat
    h.lift("6-6")
    h.to_rack("6-6", opener)
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "taken_back"
    assert "put it back on cell center" in rej["instruction"]
    assert ref.state.accepted == 1 and ref.hand.line


def test_lifted_tile_is_only_asked_back_after_the_long_wait() -> None:
    ref, events, h = opened()
    seat = ref.hand.to_play
    tile = str(ref.hand.hands[seat][0])
    h.lift(tile)
    h.show(ref.timing.error + 0.1)
    assert not kinds(events, "move_rejected")  # may be on its way to the line
    h.show(ref.timing.missing)
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "missing" and rej["instruction"].startswith("put the tile back on")
    # the tile came from a rack: only its seat is told which one
    assert rej["private"]["instruction"].startswith(f"put {tile} back on")
    assert tile not in str(rej["instruction"]) and rej["piece"] is None


def test_pass_while_holding_a_playable_tile_is_refused() -> None:
    ref, events, h = opened()
    seat = ref.hand.to_play
    before = snapshot(ref)
    ref.press(seat, "main", h.now)
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "pass_with_playable"
    who = ref.rules.seat_label(seat)
    assert rej["instruction"].startswith(f"{who} cannot pass")
    # the tile that fits is the seat's secret: named only under "private",
    # and with the seat's name, never a 0-based number
    hidden = {str(t) for t in ref.hand.hands[seat]}
    assert not any(t in rej["instruction"] for t in hidden)
    assert not any(t in kinds(events, "message")[-1]["text"] for t in hidden)
    detail = rej["private"]["instruction"]
    assert any(t in detail for t in hidden) and f"seat {seat}" not in detail
    assert detail.startswith(who) and rej["private"]["seat"] == seat
    assert len(rej["cells"]) == 2  # the playable tile and where it goes
    assert snapshot(ref) == before
    h.show(ref.timing.notice + 0.1)
    assert kinds(events, "correction_cleared")


def test_button_of_another_seat_is_out_of_turn() -> None:
    ref, events, h = opened()
    other = (ref.hand.to_play + 2) % 4
    ref.press(other, "main", h.now)
    assert kinds(events, "move_rejected")[-1]["reason"] == "out_of_turn"


def play_until(ref: Any, h: Hands, want: type, seed: int = 5) -> bool:
    """Play greedy moves on the table until ``want`` is the move to make."""
    bot = GreedyPlayer()
    rng = random.Random(seed)
    start = ref.state.hand_no
    while ref.state.hand_no == start:
        moves = ref.hand.legal_moves()
        if any(isinstance(m, want) for m in moves):
            return True
        perform(h, bot.choose(ref.hand, ref.hand.to_play, rng))
    return False


def test_a_legal_pass_by_button_and_a_whole_hand_scored_from_the_racks() -> None:
    for seed in range(1, 30):
        ref, events, stored = make_referee(seed=seed)
        h = Hands(ref)
        h.settle()
        if play_until(ref, h, Pass):
            break
    else:
        pytest.fail("no pass in 30 seeded hands")
    seat = ref.hand.to_play
    n = ref.state.accepted
    perform(h, Pass(seat))
    assert ref.state.accepted == n + 1 and ref.hand.moves[-1] == Pass(seat)
    # play the hand out: it is scored automatically and archived
    bot = GreedyPlayer()
    rng = random.Random(0)
    while ref.state.hand_no == 1:
        perform(h, bot.choose(ref.hand, ref.hand.to_play, rng))
    ended = kinds(events, "hand_ended")[-1]
    assert ended["hand_no"] == 1
    assert ended["record"]["hands"][0]["moves"]
    last = ref.finished_hands()[-1]
    assert ended["counts"] == [sum(t.pips for t in last.hands[s]) for s in range(4)]
    assert stored[-2] == {"type": "finish"}  # then the next hand's deal
    assert stored[-1]["type"] == "hand"
    assert ended["score"] == [
        float(p) if not float(p).is_integer() else int(p) for p in ref.match.score
    ]


def test_draw_in_the_two_seat_game_and_a_draw_not_allowed() -> None:
    for seed in range(1, 40):
        ref, events, stored = make_referee("dominoes", "pips-two-player", "dominoes-2", seed)
        h = Hands(ref)
        h.settle()
        if play_until(ref, h, Draw, seed):
            break
    else:
        pytest.fail("no draw in 40 seeded hands")
    seat = ref.hand.to_play
    draw = next(m for m in ref.hand.legal_moves() if isinstance(m, Draw))
    # the other seat may not draw
    other = 1 - seat
    h.lift(str(draw.tile))
    h.to_rack(str(draw.tile), other)
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "draw_not_allowed" and "boneyard" in rej["instruction"]
    h.lift(str(draw.tile))
    h.to_rack(str(draw.tile), seat)
    h.settle()
    assert ref.hand.moves[-1] == draw


def table_dealt(seed: int) -> tuple[Any, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """A 2-seat referee whose hand was read from the racks (``--deal table``):
    the engine's deal, resumed from a journal that says so."""
    from tablesense.referee.core import MatchSpec, Referee

    first, _, stored = make_referee("dominoes", "pips-two-player", "dominoes-2", seed)
    stored[0] = {**stored[0], "deal": "table"}
    events: list[tuple[str, dict[str, Any]]] = []
    ref = Referee(
        MatchSpec.from_json(stored[0]["spec"]),
        first.geometry,
        first.registry,
        emit=lambda kind, **data: events.append((kind, data)),
        store=stored.append,
        deal="table",
    )
    ref.replay(list(stored), 0.0)
    return ref, events, stored


def test_free_draw_when_the_table_deals() -> None:
    """At a real table the boneyard is face down: any tile may be drawn, and
    the record's boneyard order follows what was drawn (the engine's
    ``free_draw``; no private state is touched)."""
    for seed in range(1, 40):
        ref, events, stored = table_dealt(seed)
        h = Hands(ref)
        h.settle()
        if play_until(ref, h, Draw, seed) and ref.hand.boneyard_count > 1:
            break
    else:
        pytest.fail("no draw in 40 seeded hands")
    seat = ref.hand.to_play
    drawn = len(ref.hand.dealt_boneyard) - ref.hand.boneyard_count
    other_tile = ref.hand.boneyard[-1]
    assert ref.hand.boneyard[0] != other_tile
    perform(h, Draw(seat, other_tile))
    assert ref.hand.moves[-1] == Draw(seat, other_tile)
    assert stored[-1] == {"type": "move", "move": {"seat": seat, "draw": str(other_tile)}}
    # the record's boneyard lists the tiles in the order they were drawn
    assert ref.hand.dealt_boneyard[drawn] == other_tile
    # the draw itself carries the order: no separate reorder entry
    assert not any(e["type"] == "reorder" for e in stored)
    # and the journal rebuilds the same hand, also one written when a
    # ``reorder`` entry came before such a draw
    old = list(stored)
    bone = [str(other_tile)] + [str(t) for t in ref.hand.dealt_boneyard[drawn + 1 :]]
    old.insert(len(old) - 1, {"type": "reorder", "boneyard": bone})
    for journal in (stored, old):
        again, _, _ = table_dealt(seed)
        again.replay(journal[len(again.journal.entries) :], 0.0)
        assert again.hand.moves == ref.hand.moves
        assert again.hand.dealt_boneyard == ref.hand.dealt_boneyard


def test_announced_double_in_brazilian_points() -> None:
    for seed in range(1, 40):
        ref, events, stored = make_referee("dominoes", "brazilian-points", "dominoes-4", seed)
        anns = [m for m in ref.hand.legal_moves() if isinstance(m, Announce)]
        if anns:
            break
    else:
        pytest.fail("no announce possible")
    h = Hands(ref)
    h.settle()
    move = anns[0]
    perform(h, move)
    assert ref.hand.moves[-1] == move
    assert stored[-1]["move"] == {"seat": move.seat, "announce": str(move.tile)}
    assert ref.state.correction is None


def test_unknown_duplicated_and_unreadable_tags_are_their_own_errors() -> None:
    ref, events, h = opened()
    h.problems = [Problem("unknown_tag", ("left-5",), "04deadbeef")]
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert (
        rej["reason"] == "unknown_tag"
        and "not enrolled" in rej["instruction"]
        and rej["cells"] == ["left-5"]
    )
    h.problems = [Problem("duplicate_tag", ("left-5", "seat0-1"), "3-5")]
    h.settle()
    assert kinds(events, "move_rejected")[-1]["reason"] == "duplicate_tag"
    h.problems = [Problem("read_error", ("right-2",), "collision")]
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "read_error" and "cannot be read" in rej["instruction"]
    h.problems = []
    h.settle()
    assert ref.state.correction is None
    assert ref.state.accepted == 1


def test_board_offline_pauses_and_resumes() -> None:
    ref, events, h = opened()
    move = first_play(ref)
    h.offline = (2,)
    h.settle()
    assert ref.state.paused
    msg = kinds(events, "message")[-1]
    assert msg["text"].startswith("board 2 is offline: play is paused") and msg["level"] == "error"
    assert kinds(events, "view")[-1]["paused"] is True
    perform(h, move)  # while paused nothing is judged
    assert ref.state.accepted == 1
    h.offline = ()
    h.settle()
    assert not ref.state.paused and ref.state.accepted == 2


def test_several_boards_offline_are_named_together() -> None:
    ref, events, h = opened()
    h.offline = (2, 1)
    h.settle()
    assert kinds(events, "message")[-1]["text"].startswith("boards 1, 2 are offline: play is paused")


def test_referee_button_undo_with_confirmation() -> None:
    ref, events, h = opened()
    move = first_play(ref)
    perform(h, move)
    assert ref.state.accepted == 2
    ref.referee_press(h.now)
    assert "undo the last move" in kinds(events, "message")[-1]["text"]
    ref.press(0, "main", h.now)  # any seat confirms
    assert ref.state.accepted == 1 and len(ref.hand.moves) == 1
    h.settle()  # the tile is still on the line: the table is guided back
    rej = kinds(events, "move_rejected")[-1]
    assert str(move.tile) in rej["instruction"]
    h.lift(str(move.tile))
    h.to_rack(str(move.tile), move.seat)
    h.settle()
    assert ref.state.correction is None


def test_referee_button_void_hand() -> None:
    ref, events, h = opened()
    ref.referee_press(h.now)
    ref.referee_press(h.now)
    assert "void this hand" in kinds(events, "message")[-1]["text"]
    ref.press(1, "main", h.now)
    assert ref.state.hand_no == 2
    assert ref.record()["x-voided"]


def test_referee_button_third_press_cancels() -> None:
    ref, events, h = opened()
    for _ in range(3):
        ref.referee_press(h.now)
    ref.press(0, "main", h.now)
    assert ref.state.accepted == 1 and ref.state.hand_no == 1


def test_replay_of_the_journal_rebuilds_the_same_match() -> None:
    from tablesense.referee.core import MatchSpec, Referee
    from tablesense.table.geometry import TableGeometry
    from tablesense.table.tags import TagRegistry

    ref, events, stored = make_referee(seed=3)
    h = Hands(ref)
    h.settle()
    bot = GreedyPlayer()
    rng = random.Random(2)
    for _ in range(9):
        perform(h, bot.choose(ref.hand, ref.hand.to_play, rng))
    again = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=3),
        TableGeometry.load("dominoes-4"),
        TagRegistry.virtual(0),
    )
    again.replay(stored, 0.0)
    assert snapshot(again) == snapshot(ref)
    assert again.state.accepted == ref.state.accepted


def test_table_dealt_hand_is_read_from_the_racks() -> None:
    from tablesense.referee.core import MatchSpec, Referee
    from tablesense.referee.layout import Sensed
    from tablesense.table.geometry import TableGeometry
    from tablesense.table.tags import TagRegistry

    g = TableGeometry.load("dominoes-4")
    events: list[tuple[str, dict[str, Any]]] = []
    ref = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=1),
        g,
        TagRegistry.virtual(0),
        emit=lambda k, **d: events.append((k, d)),
        deal="table",
    )
    ref.start(0.0)
    assert ref.state.phase == "dealing"
    tiles = [str(t) for t in sorted(Tile.parse(f"{a}-{b}") for a in range(7) for b in range(a, 7))]
    random.Random(4).shuffle(tiles)
    cells = {}
    for s, seat in enumerate(g.seats):
        for c, t in zip(seat.rack, tiles[7 * s : 7 * s + 7], strict=True):
            cells[c] = t
    ref.feed(Sensed.of(cells), 1.0)
    ref.feed(Sensed.of(cells), 5.0)
    assert ref.state.phase == "play" and ref.state.hand_no == 1
    assert sorted(map(str, ref.hand.hands[0])) == sorted(tiles[:7])


def test_two_plays_in_quick_succession_are_both_taken() -> None:
    """The next seat lays its tile before the previous one has settled: the
    table shows two moves at once, both are taken, in order."""
    ref, events, h = opened()
    rules: Any = ref.rules
    first = first_play(ref)
    after = ref.hand.clone()
    after.apply(first)
    second = next((m for m in after.legal_moves() if isinstance(m, Play)), None)
    if second is None:
        pytest.skip("the next seat cannot play here")
    h.lift(str(first.tile))
    h.drop(str(first.tile), rules.target_cell(first.end))
    h.show(0.05)
    h.lift(str(second.tile))
    h.drop(str(second.tile), rules.target_cell(second.end, after))
    h.settle()
    assert ref.hand.moves[-2:] == [first, second]
    assert not kinds(events, "move_rejected")


def test_either_partner_may_open_after_a_blocked_hand_at_the_table() -> None:
    """Issue 12: after a blocked brazilian-points hand either partner of the
    winning pair opens with a non-double; the referee takes the opening from
    the partner the engine did not suggest, and still refuses an opponent."""
    from tablesense.games.dominoes import DominoHand, Opening

    ref, events, _ = make_referee("dominoes", "brazilian-points", "dominoes-4", seed=5)
    dealt = ref.hand
    after_block = Opening(0, None, no_double=True, others=(2,),
                          reason="after a blocked hand either player of the winning side opens")
    ref.match.current = DominoHand(dealt.options, dealt.hands, opening=after_block)
    h = Hands(ref)
    h.settle()
    # an opponent (seat 1) may not open
    partners = next(m for m in ref.hand.legal_moves(2) if isinstance(m, Play))
    opp_tile = next(t for t in ref.hand.hands[1] if not t.is_double)
    h.lift(str(opp_tile))
    h.show(0.2)
    rules: Any = ref.rules
    h.drop(str(opp_tile), rules.line.center)
    h.show(2.0)
    assert ref.state.accepted == 0
    rejected = kinds(events, "move_rejected")
    assert rejected and rejected[-1]["reason"] == "out_of_turn", rejected
    h.lift(str(opp_tile))
    h.show(0.2)
    h.to_rack(str(opp_tile), 1)
    h.show(2.0)
    # the partner the engine did not suggest (seat 2) opens with a non-double
    assert not partners.tile.is_double
    perform(h, partners)
    h.show(2.0)
    assert ref.state.accepted == 1
    assert kinds(events, "move_accepted")[-1]["move"]["seat"] == 2
