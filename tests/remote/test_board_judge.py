"""A Kems table's judge at a remote match (``remote/board_judge.py``): the
deal laid by lights, a local swap sensed and claimed, the other table's swap
and a refresh laid from the stock, the computer seats' calls and the
refresh two tables ask for at once, refused to the later one."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tablesense.remote.authority import Authority, RemoteRejected, Seating
from tablesense.remote.board_judge import REFRESH_AFTER_S, BoardJudge
from tablesense.remote.judge import PLACE, SEAT_COLOURS, TARGET, WRONG, TableJudge
from tablesense.remote.match import TableSide, judge_for
from tablesense.remote.view import TableView, frame_for
from tablesense.table.geometry import TableGeometry

SEATING = Seating({"a": frozenset({0, 2}), "b": frozenset({1, 3})})


class Table:
    """Table ``a`` of a Kems match: the authority, the table's view, judge and
    sensed cells (the whole deck in the stock to begin with)."""

    def __init__(self, seed: int = 4) -> None:
        self.auth = Authority("kems", "classic", SEATING, seed=seed)
        self.geometry = TableGeometry.load("kems-4-remote")
        self.pieces = sorted(self.auth.rules.all_pieces(self.auth.match.options))
        self.view = TableView(SEATING.tables["a"])
        self.judge = BoardJudge(self.geometry, self.view, self.pieces)
        cells = list(self.geometry.stock)
        random.Random(seed).shuffle(cells)
        self.sensed: dict[str, str] = dict(zip(cells, self.pieces, strict=True))
        self.apply(self.auth.start())

    def apply(self, facts: list[dict[str, Any]]) -> None:
        for fact in facts:
            self.view.apply(frame_for(fact, SEATING.tables["a"]))

    def at(self, piece: str) -> str:
        return next(c for c, p in self.sensed.items() if p == piece)

    def move(self, piece: str, to: str) -> None:
        assert to not in self.sensed
        self.sensed[to] = self.sensed.pop(self.at(piece))

    def free_stock(self) -> str:
        return next(c for c in self.geometry.stock if c not in self.sensed)

    def lay_out(self) -> None:
        """What the table's people do at the deal: take their lit cards, lay the board."""
        for seat, cards in self.view.hands.items():
            for card, cell in zip(cards, self.geometry.seats[seat].rack, strict=False):
                self.move(card, cell)
        for card, slot in zip(self.view.board, self.geometry.kems_slots, strict=True):
            self.move(card, slot)
        assert self.judge.judge(self.sensed).kind == "dealt"
        self.judge.dealt_hand = self.view.hand


def test_a_kems_layout_gets_the_board_judge_and_a_dominoes_one_the_line_judge() -> None:
    kems, dominoes = TableGeometry.load("kems-4-remote"), TableGeometry.load("dominoes-4-remote")
    assert type(judge_for("kems", kems, TableView(frozenset({0})), [])) is BoardJudge
    assert type(judge_for("dominoes", dominoes, TableView(frozenset({0})), [])) is TableJudge
    with pytest.raises(ValueError, match="no board slots and stock"):
        BoardJudge(TableGeometry.load("kems-4"), TableView(frozenset({0})), [])
    assert isinstance(TableSide(kems, frozenset({0, 2}), []).judge, BoardJudge)  # the layout names its game


def test_the_deal_lights_the_local_cards_in_their_seat_colour_and_the_board_with_its_slots() -> None:
    t = Table()
    verdict = t.judge.judge(t.sensed)
    assert verdict.kind == "waiting"
    for seat, cards in t.view.hands.items():
        assert all(verdict.lights[t.at(c)] == SEAT_COLOURS[seat] for c in cards)
    for card, slot in zip(t.view.board, t.geometry.kems_slots, strict=True):
        assert verdict.lights[t.at(card)] == PLACE and verdict.lights[slot] == TARGET
    # the other table's hands and the stock stay dark, face down
    remote = {str(c) for s in (1, 3) for c in t.auth.match.current.hands[s]} | {str(c) for c in t.auth.match.current.stock}
    assert not any(t.at(c) in verdict.lights for c in remote)
    t.lay_out()
    assert t.judge.judge(t.sensed).kind == "steady"


def test_a_local_swap_is_claimed_once_both_cards_lie_and_only_if_legal() -> None:
    t = Table()
    t.lay_out()
    legal = t.auth.legal_for("a")
    give, take = t.view.hands[0][0], t.view.board[2]
    slot, rack = t.geometry.kems_slots[2], t.geometry.seats[0].rack
    free = next(c for c in rack if c not in t.sensed)
    t.move(take, free)  # the slot's card taken first: half a swap, nothing claimed yet
    half = t.judge.judge(t.sensed, legal)
    assert half.kind == "waiting" and half.move is None
    t.move(give, slot)
    verdict = t.judge.judge(t.sensed, legal)
    assert verdict.kind == "claim" and verdict.move is not None
    assert verdict.move == {"seat": 0, "swap": {"give": give, "take": take}}
    # not among the legal moves (the authority has not sent them): not claimed
    assert t.judge.judge(t.sensed, []).kind == "waiting"
    t.apply(t.auth.submit("a", verdict.move))
    assert t.judge.judge(t.sensed, t.auth.legal_for("a")).kind == "steady"


def test_the_other_tables_swap_lights_its_card_in_the_stock_and_the_taken_card_goes_back() -> None:
    t = Table()
    t.lay_out()
    give, take = t.auth.match.current.hands[1][0], t.view.board[1]
    t.apply(t.auth.submit("b", {"seat": 1, "swap": {"give": str(give), "take": take}}))
    assert t.view.place == {"piece": str(give), "to": "slot", "slot": 1, "take": take, "seat": 1}
    verdict = t.judge.judge(t.sensed)
    slot = t.geometry.kems_slots[1]
    assert verdict.kind == "waiting"
    # the slot still holds the card taken: it shows that card first (to the stock), then the target
    assert verdict.lights[t.at(str(give))] == PLACE and verdict.lights[slot] == WRONG and t.at(take) == slot
    assert t.judge.pending_place() is not None
    t.move(take, t.free_stock())  # the taken card to the stock, face down
    lights = t.judge.judge(t.sensed).lights
    assert lights[t.at(str(give))] == PLACE and lights[slot] == TARGET
    t.move(str(give), slot)
    assert t.judge.judge(t.sensed).kind == "placed"


def test_a_card_of_the_stock_laid_on_a_slot_lights_as_misplaced() -> None:
    t = Table()
    t.lay_out()
    stray = str(t.auth.match.current.stock[0])
    t.move(t.view.board[0], t.free_stock())
    t.move(stray, t.geometry.kems_slots[0])
    verdict = t.judge.judge(t.sensed, t.auth.legal_for("a"))
    assert verdict.kind == "waiting" and verdict.lights[t.geometry.kems_slots[0]] == WRONG
    assert stray in verdict.misplaced and t.judge.home()[stray] == tuple(t.geometry.stock)


def test_a_refresh_lays_the_four_new_cards_from_the_stock_and_the_old_board_goes_back() -> None:
    t = Table()
    t.lay_out()
    old = list(t.view.board)
    t.apply(t.auth.submit("a", {"refresh": True, "x-board": old}))
    new = list(t.view.board)
    assert t.view.place == {"to": "board", "pieces": new} and not set(new) & set(old)
    verdict = t.judge.judge(t.sensed)
    assert all(verdict.lights[t.at(c)] == WRONG for c in old)  # off the slots, back to the stock
    for card in old:
        t.move(card, t.free_stock())
    verdict = t.judge.judge(t.sensed)
    assert all(verdict.lights[t.at(c)] == PLACE for c in new)
    for card, slot in zip(new, t.geometry.kems_slots, strict=True):
        t.move(card, slot)
    assert t.judge.judge(t.sensed).kind == "placed"


def test_a_refresh_asked_for_after_the_board_changed_is_refused() -> None:
    """Both tables saw the same board and asked to turn it over: once."""
    t = Table()
    seen = [str(c) for c in t.auth.match.current.board]
    t.auth.submit("b", {"refresh": True, "x-board": seen})
    with pytest.raises(RemoteRejected, match="not turned over twice"):
        t.auth.submit("a", {"refresh": True, "x-board": seen})


def test_computer_seats_call_kems_on_their_partners_four_and_answer_it() -> None:
    t = Table()
    t.lay_out()
    legal = t.auth.legal_for("a")
    t.view.hands[2] = ["9S", "9H", "9D", "9C"]  # what the table knows of its own seats
    assert t.judge.bot_move(0, legal) == {"seat": 0, "call": "kems"}
    answer = [{"seat": 2, "call": "double"}, {"seat": 2, "decline": True}]
    assert t.judge.bot_move(2, answer) == {"seat": 2, "decline": True}  # seat 0 has no four: no double
    t.view.hands[0] = ["KS", "KH", "KD", "KC"]
    assert t.judge.bot_move(2, answer) == {"seat": 2, "call": "double"}
    assert t.judge.button_move(2, answer) == {"seat": 2, "call": "double"}
    assert t.judge.button_move(0, legal) == {"seat": 0, "call": "kems"}


def test_a_computer_seat_swaps_towards_its_best_rank_and_its_table_refreshes_when_idle() -> None:
    t = Table()
    t.lay_out()
    legal = t.auth.legal_for("a")
    t.view.hands[0] = ["9S", "9H", "KD", "7C"]
    t.view.board = ["9D", "QS", "QH", "8C"]
    swap = {"seat": 0, "swap": {"give": "7C", "take": "9D"}}
    assert t.judge.bot_move(0, [*legal, swap]) == swap
    t.view.board = ["QD", "QS", "QH", "8C"]
    assert t.judge.bot_move(0, legal) is None  # nothing raises its best count: it waits
    assert t.judge.idle_move(legal, REFRESH_AFTER_S / 2) is None
    assert t.judge.idle_move(legal, REFRESH_AFTER_S) == {"refresh": True, "x-board": t.view.board}
    t.view.hands[0] = [str(c) for c in t.auth.match.current.hands[0]]
    t.view.board = [str(c) for c in t.auth.match.current.board]
    give, take = t.view.hands[0][1], t.view.board[3]
    routes = t.judge.routes({"seat": 0, "swap": {"give": give, "take": take}}, t.sensed)
    free = next(c for c in t.geometry.seats[0].rack if c not in t.sensed)
    assert routes == [(t.geometry.kems_slots[3], free), (t.at(give), t.geometry.kems_slots[3])]
