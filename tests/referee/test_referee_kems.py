"""The referee on synthetic Kems tables: swaps, refreshes, calls, rejections."""

from __future__ import annotations

from typing import Any

import pytest
from tablekit import Hands, kinds, make_referee

from tablesense.games.kems import Call, Refresh, Swap


def kems(
    seed: int = 2,
) -> tuple[Any, list[tuple[str, dict[str, Any]]], list[dict[str, Any]], Hands]:
    for s in range(seed, seed + 50):
        ref, events, stored = make_referee("kems", "classic", "kems-4", s)
        if not ref.match.results:  # no misdeal in the first round
            h = Hands(ref)
            h.settle()
            return ref, events, stored, h
    raise AssertionError("no clean deal")


def slot_of(ref: Any, card: str) -> str:
    return ref.geometry.kems_slots[[str(c) for c in ref.hand.board].index(card)]


def swap(h: Hands, seat: int, give: str, take: str, *, settle: bool = True) -> None:
    ref = h.ref
    rack_cell = h.where(give)
    slot = slot_of(ref, take)
    h.lift(give)
    h.show(0.1)
    h.lift(take)
    h.drop(give, slot)
    h.show(0.1)
    assert rack_cell is not None
    h.drop(take, rack_cell)
    if settle:
        h.settle()


def test_swap_is_recognised_and_keeps_the_slot_order() -> None:
    ref, events, stored, h = kems()
    give, take = str(ref.hand.hands[0][0]), str(ref.hand.board[1])
    swap(h, 0, give, take)
    assert ref.hand.events[-1] == Swap(0, *(type(ref.hand.board[0]).parse(x) for x in (give, take)))
    assert str(ref.hand.board[1]) == give
    assert stored[-1] == {"type": "move", "move": {"seat": 0, "swap": {"give": give, "take": take}}}
    view = kinds(events, "view")[-1]
    assert view["board"][1] == give


def test_simultaneous_swaps_while_another_card_is_in_the_air() -> None:
    ref, events, stored, h = kems()
    g0, t0 = str(ref.hand.hands[0][0]), str(ref.hand.board[0])
    g1, t1 = str(ref.hand.hands[1][0]), str(ref.hand.board[3])
    cell1 = h.where(g1)
    h.lift(g1)  # seat 2 holds its card up while seat 1 swaps
    swap(h, 0, g0, t0)
    assert len(ref.hand.events) == 1
    assert not kinds(events, "move_rejected")
    h.lift(t1)
    h.drop(g1, ref.geometry.kems_slots[3])
    assert cell1 is not None
    h.drop(t1, cell1)
    h.settle()
    assert [e.seat for e in ref.hand.events] == [0, 1]


def test_refresh_lays_the_next_stock_cards() -> None:
    ref, events, stored, h = kems()
    coming = [str(c) for c in ref.hand.stock[:4]]
    for cell in ref.geometry.kems_slots:
        h.lift(h.cells[cell])
    h.show(0.3)
    for cell, card in zip(ref.geometry.kems_slots, coming, strict=True):
        h.drop(card, cell)
    h.settle()
    assert ref.hand.events[-1] == Refresh()
    assert [str(c) for c in ref.hand.board] == coming


def test_direct_swap_between_partners_is_refused() -> None:
    ref, events, stored, h = kems()
    card = str(ref.hand.hands[0][0])
    h.lift(card)
    h.to_rack(card, 2)
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "partner_swap"
    assert "partners" in rej["instruction"] and "put the card back on" in rej["instruction"]
    # a card passed hand to hand was never on the board: only its seat hears which
    from tablesense.games.kems.game import pretty_cards

    assert f"put {pretty_cards(card)} back on" in rej["private"]["instruction"]
    assert not ref.hand.events


def test_a_swap_taken_first_is_half_way_not_a_fifth_card() -> None:
    """The order the page teaches (issue 31): the board card onto the rack's
    free cell, then one of the seat's cards onto the empty slot. Half-way it
    is no error while a person chooses; a long pause gets the next step."""
    ref, events, stored, h = kems()
    slot = ref.geometry.kems_slots[2]
    take = str(ref.hand.board[2])
    h.lift(take)
    h.to_rack(take, 1)
    h.show(ref.timing.missing - 0.5)
    assert not kinds(events, "move_rejected") and ref.state.correction is None
    h.show(1.0)
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "take_before_give"
    assert "to finish the swap, lay one of your cards on board slot 3" in rej["instruction"]
    assert "five cards" not in rej["instruction"] and slot in rej["cells"]
    give = str(ref.hand.hands[1][0])
    h.lift(give)
    h.drop(give, slot)
    h.settle()
    assert ref.state.correction is None and [(e.seat, str(e.give), str(e.take)) for e in ref.hand.events] == [
        (1, give, take)
    ]
    assert all(r["reason"] not in ("fifth_card",) for r in kinds(events, "move_rejected"))


def test_a_fifth_card_whose_slot_was_filled_again_is_refused() -> None:
    ref, events, stored, h = kems()
    slot = ref.geometry.kems_slots[2]
    take = str(ref.hand.board[2])
    h.lift(take)
    h.to_rack(take, 1)
    other = str(ref.hand.stock[-1])
    h.drop(other, slot)  # a card from off the table fills the slot again
    h.settle()
    rej = next(r for r in kinds(events, "move_rejected") if r["reason"] == "fifth_card")
    assert "five cards" in rej["instruction"] and slot in rej["cells"]


def test_card_out_of_play_on_the_table() -> None:
    ref, events, stored, h = kems()
    stock_card = str(ref.hand.stock[-1])
    h.drop(stock_card, ref.geometry.seats[3].rack[-1])
    h.settle()
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "not_in_play" and "take the card off cell" in rej["instruction"]
    # it lies on a rack (face to its seat): the public text does not name it
    assert stock_card not in rej["instruction"]


def test_kems_call_waits_for_a_double_then_scores() -> None:
    ref, events, stored, h = kems()
    ref.press(1, "main", h.now)
    assert ref.hand.events[-1] == Call(1, "kems")
    assert kinds(events, "call")[-1] == {"seat": 1, "call": "kems", "target": None}
    # while the partner may double, nothing reads like a success (issue 31)
    waiting = kinds(events, "message")[-1]["text"]
    assert waiting == "Seat 2 called Kems, not checked yet: the partner may still call double"
    h.show(ref.timing.double_window + 0.1)
    ended = kinds(events, "hand_ended")[-1]
    assert ended["result"]["outcome"] == "kems"
    assert ended["result"]["label"] == "false kems"  # the partner holds no four of a kind
    assert ref.state.hand_no == 2


def test_double_right_after_the_partners_kems() -> None:
    ref, events, stored, h = kems()
    ref.press(0, "main", h.now)
    ref.press(2, "main", h.now + 0.5)
    calls = [e for e in ref.finished_hands()[-1].events if isinstance(e, Call)]
    assert calls == [Call(0, "kems"), Call(2, "double")]
    assert kinds(events, "hand_ended")[-1]["result"]["outcome"] == "double"


def test_contre_names_its_target_with_the_targets_button() -> None:
    ref, events, stored, h = kems()
    ref.press(0, "call", h.now)
    assert "contre" in kinds(events, "message")[-1]["text"]
    ref.press(3, "main", h.now + 1)
    rnd = ref.finished_hands()[-1]
    assert rnd.events[-1] == Call(0, "contre", 3)
    assert kinds(events, "hand_ended")[-1]["result"]["outcome"] == "contre"
    # the result says what a contre is without nested parentheses (issue 31)
    said = next(m["text"] for m in reversed(kinds(events, "message")) if m["text"].startswith("round "))
    assert said.count("(") == 1, said
    from tablesense.referee.view import _result_text

    won = _result_text({"winner": 0, "outcome": "contre", "label": "contre", "points": [1, 0], "hand_no": 1},
                       ["Ana & Bia", "Caio & Duda"], "round")
    assert won == "round 1: Ana & Bia win (contre: against a Kems); Ana & Bia +1, Caio & Duda +0", won


def test_contre_on_a_partner_is_refused() -> None:
    ref, events, stored, h = kems()
    ref.press(0, "call", h.now)
    ref.press(2, "main", h.now + 1)
    rej = kinds(events, "move_rejected")[-1]
    assert rej["reason"] == "illegal_call" and "partner" in rej["instruction"]
    assert not ref.hand.events


def test_misdeal_is_redealt_automatically() -> None:
    for seed in range(1, 300):
        ref, events, stored = make_referee("kems", "classic", "kems-4", seed)
        if ref.match.results:
            break
    else:
        pytest.skip("no misdeal in 300 seeds")
    assert ref.match.results[0].outcome == "redeal"
    assert kinds(events, "hand_ended")[0]["result"]["outcome"] == "redeal"
    assert ref.hand is not None and ref.state.hand_no >= 2


def test_undo_a_swap() -> None:
    ref, events, stored, h = kems()
    give, take = str(ref.hand.hands[0][0]), str(ref.hand.board[0])
    swap(h, 0, give, take)
    ref.referee_press(h.now)
    ref.press(1, "main", h.now)
    assert not ref.hand.events
    h.settle()
    assert kinds(events, "move_rejected")[-1]["fix"] is not None


def test_table_dealt_round_and_a_refresh_of_cards_never_seen() -> None:
    """A real dealer deals by hand: the round is read from the racks and the
    slots; the stock is face down, so a refresh may show any unseen cards and
    the record's stock order is fitted to them (the record still replays)."""
    import random as _random

    from tablesense.games.kems import deck
    from tablesense.games.record import replay
    from tablesense.referee.core import MatchSpec, Referee
    from tablesense.referee.layout import Sensed
    from tablesense.table.geometry import TableGeometry
    from tablesense.table.tags import TagRegistry

    g = TableGeometry.load("kems-4")
    events: list[tuple[str, dict[str, Any]]] = []
    stored: list[dict[str, Any]] = []
    ref = Referee(
        MatchSpec("kems", "classic", seed=1),
        g,
        TagRegistry.virtual(0),
        emit=lambda k, **d: events.append((k, d)),
        store=stored.append,
        deal="table",
    )
    ref.start(0.0)
    for seed in range(100):
        cards = [str(c) for c in deck(32)]
        _random.Random(seed).shuffle(cards)
        hands = [cards[4 * s : 4 * s + 4] for s in range(4)]
        if all(max(sum(1 for c in h if c[0] == r) for r in "789TJQKA") < 3 for h in hands):
            break  # no misdeal
    else:
        raise AssertionError("every seed misdealt")
    cells = {}
    for s, seat in enumerate(g.seats):
        cells.update(zip(seat.rack, hands[s], strict=False))
    cells.update(zip(g.kems_slots, cards[16:20], strict=True))
    ref.feed(Sensed.of(cells), 1.0)
    ref.feed(Sensed.of(cells), 5.0)
    assert ref.state.phase == "play" and [str(c) for c in ref.hand.board] == cards[16:20]
    unseen = cards[28:32]  # not the engine's next four
    for cell, card in zip(g.kems_slots, unseen, strict=True):
        cells[cell] = card
    ref.feed(Sensed.of(cells), 6.0)
    ref.feed(Sensed.of(cells), 9.0)
    assert ref.hand.events == [Refresh()]
    assert [str(c) for c in ref.hand.board] == unseen
    ref.press(0, "main", 10.0)
    ref.tick(20.0)
    assert replay(ref.record()).to_json()["ok"] is True
