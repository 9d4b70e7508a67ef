"""The Kems engine's API: value types, options, check messages, undo, match
progression and the record it writes (rule sentences: test_kems_rules.py)."""

from __future__ import annotations

import random

import pytest

from tablesense.games.common import IllegalPlayError, OptionError, RecordFormatError
from tablesense.games.kems import (
    Call,
    Card,
    DealError,
    KemsMatch,
    KemsOptions,
    KemsRound,
    Refresh,
    Swap,
    deck,
    event_from_json,
    event_to_json,
    replay_record,
)

C = Card.parse
DEAL = ["9S 9H KS KH", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"]


def test_card_parse_str_repr() -> None:
    card = C("TH")
    assert (card.rank, card.suit) == ("T", "H")
    assert str(card) == "TH"
    assert repr(card) == "Card.parse('TH')"
    assert eval(repr(card)) == card
    assert Card("T", "H") == card and hash(Card("T", "H")) == hash(card)
    for bad in ("10H", "th", "T", "THX", "1S", "TZ", "", None, 5):
        with pytest.raises(ValueError, match="not a card"):
            Card.parse(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rank"):
        Card("1", "H")
    with pytest.raises(ValueError, match="suit"):
        Card("T", "X")


def test_decks() -> None:
    assert len(deck(52)) == len(set(deck(52))) == 52
    assert set(deck(32)) < set(deck(52))
    assert deck(32)[0] == C("7S")
    with pytest.raises(ValueError):
        deck(36)


@pytest.mark.parametrize(
    "event",
    [
        Swap(2, C("9H"), C("KS")),
        Refresh(),
        Call(1, "kems"),
        Call(0, "double"),
        Call(3, "contre", 2),
    ],
)
def test_event_json_roundtrip(event: Swap | Refresh | Call) -> None:
    assert event_from_json(event_to_json(event)) == event


def test_event_json_shapes() -> None:
    assert event_to_json(Swap(2, C("9H"), C("KS"))) == {
        "seat": 2,
        "swap": {"give": "9H", "take": "KS"},
    }
    assert event_to_json(Refresh()) == {"refresh": True}
    assert event_to_json(Call(1, "contre", 2)) == {"seat": 1, "call": "contre", "target": 2}
    # writer fields (x-...) are ignored
    assert event_from_json({"refresh": True, "x-ms": 1200}) == Refresh()


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([], "must be an object"),
        ({"refresh": 1}, "refresh is written"),
        ({"seat": 0}, "'swap', 'refresh' or 'call'"),
        ({"call": "kems"}, "no seat"),
        ({"seat": "0", "call": "kems"}, "must be an integer"),
        ({"seat": True, "call": "kems"}, "must be an integer"),
        ({"seat": 0, "call": "kemz"}, "not a call"),
        ({"seat": 0, "call": "contre"}, "names its target"),
        ({"seat": 0, "call": "kems", "target": 1}, "only a contre has a target"),
        ({"seat": 0, "swap": {"give": "9H"}}, "no 'take'"),
        ({"seat": 0, "swap": {"give": "9H", "take": "10S"}}, "not a card"),
        ({"seat": 0, "swap": ["9H", "KS"]}, "give"),
        ({"seat": 0, "call": "kems", "when": 3}, "unknown field 'when'"),
    ],
)
def test_event_from_json_rejects(obj: object, message: str) -> None:
    with pytest.raises(RecordFormatError, match=message):
        event_from_json(obj, "hands[0].events[3]")


def test_call_value_checks() -> None:
    with pytest.raises(ValueError):
        Call(0, "contre")
    with pytest.raises(ValueError):
        Call(0, "kems", 1)
    with pytest.raises(ValueError):
        Call(0, "bluff")  # type: ignore[arg-type]


def test_options_defaults_and_roundtrip() -> None:
    opts = KemsOptions.from_dict({}, 4)
    assert opts.to_dict() == {
        "deck": 32,
        "double_points": 2,
        "target": 10,
        "false_call": "opponents-plus-one",
        "false_double": "penalty",
        "double_contre": "both-hands",
        "allow_take_back": False,
        "refresh": "bottom",
        "misdeal_at": 3,
    }
    assert KemsOptions.from_dict(opts.to_dict(), 4) == opts
    assert KemsOptions.from_dict({"target": None}, 4).target is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"colour": 1}, "unknown Kems option 'colour'"),
        ({"deck": 36}, "deck must be one of 32, 52"),
        ({"deck": "32"}, "deck must be one of"),
        ({"double_points": True}, "double_points"),
        ({"target": 0}, "target"),
        ({"target": 2.5}, "target"),
        ({"false_call": "caller-minus-two"}, "false_call"),
        ({"allow_take_back": "yes"}, "allow_take_back"),
        ({"refresh": "shuffle"}, "refresh"),
        ({"misdeal_at": 2}, "misdeal_at"),
    ],
)
def test_options_reject(values: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        KemsOptions.from_dict(values, 4)


def test_deal_errors() -> None:
    with pytest.raises(DealError, match="5 cards"):
        KemsRound.from_text(
            ["9S 9H KS KH 7D", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"], "9D 9C QD QC"
        )
    with pytest.raises(DealError, match="appears twice"):
        KemsRound.from_text(
            ["9S 9H KS KH", "9S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"], "9D 9C QD QC"
        )
    with pytest.raises(DealError, match="not a card of the 32-card deck"):
        KemsRound.from_text(
            ["9S 9H KS 2H", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"], "9D 9C QD QC"
        )
    with pytest.raises(DealError, match="missing"):
        KemsRound.from_text(DEAL, "9D 9C QD QC", stock="8D")
    with pytest.raises(DealError, match="4, 6 or 8 seats"):
        KemsRound.from_text(DEAL[:3], "9D 9C QD QC")


def test_check_messages_speak_to_players() -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    with pytest.raises(IllegalPlayError) as err:
        rnd.check(Swap(1, C("9S"), C("9D")))
    assert str(err.value) == "seat 1 does not hold 9S: a seat lays a card from its own hand"
    with pytest.raises(IllegalPlayError) as err:
        rnd.check(Swap(1, C("7S"), C("8D")))
    assert str(err.value) == "8D is not on the board (9D 9C QD QC)"
    with pytest.raises(IllegalPlayError) as err:
        rnd.check(Swap(1, C("7S"), C("9S")))
    # another seat's hand is never revealed; the partner's is named (the rule)
    assert str(err.value) == "9S is not on the board (9D 9C QD QC)"
    with pytest.raises(IllegalPlayError) as err:
        rnd.check(Swap(1, C("7S"), C("7H")))
    assert str(err.value) == (
        "7H is not on the board (9D 9C QD QC); it comes from partner seat 3's hand "
        "(no direct swap between partners)"
    )
    with pytest.raises(IllegalPlayError, match="no seat 4 at a 4-seat table"):
        rnd.check(Swap(4, C("7S"), C("9D")))
    assert not rnd.is_legal(Call(0, "double"))
    assert rnd.is_legal(Call(0, "kems"))


def test_undo_restores_every_kind_of_event() -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    rng = random.Random(5)
    snapshots = []
    for _ in range(60):
        snapshots.append(([list(h) for h in rnd.hands], list(rnd.board), list(rnd.stock)))
        if rng.random() < 0.2:
            rnd.play(Refresh())
        else:
            s = rng.randrange(4)
            rnd.play(rng.choice(rnd.legal_swaps(s)))
    rnd.play(Call(0, "kems"))
    assert rnd.is_over
    rnd.undo()
    assert not rnd.is_over
    while rnd.events:
        rnd.undo()
        hands, board, stock = snapshots.pop()
        assert (rnd.hands, rnd.board, rnd.stock) == (hands, board, stock)
    with pytest.raises(IndexError):
        rnd.undo()


def test_undo_of_a_void_refresh() -> None:
    rnd = KemsRound.from_text(
        DEAL, "9D 9C QD QC", options=KemsOptions.from_dict({"refresh": "discard"}, 4)
    )
    for _ in range(4):
        rnd.play(Refresh())
    assert rnd.is_void and rnd.is_over
    rnd.undo()
    assert not rnd.is_over and rnd.stock == [] and len(rnd.board) == 4
    rnd.undo()
    assert len(rnd.stock) == 4


def test_legal_events_cover_swaps_calls_and_refresh() -> None:
    rnd = KemsRound.from_text(DEAL, "9D 9C QD QC")
    events = rnd.legal_moves()
    assert len(events) == 4 * (16 + 1 + 2) + 1
    assert all(rnd.is_legal(e) for e in events)


def test_match_progression_and_record() -> None:
    match = KemsMatch({"target": 2}, seats=4)
    rng = random.Random(11)
    with pytest.raises(IllegalPlayError, match="no round in progress"):
        match.finish_hand()
    rounds = 0
    while not match.is_over:
        rnd = match.new_hand(rng)
        with pytest.raises(IllegalPlayError, match="not finished"):
            match.new_hand(rng)
        if not rnd.is_misdeal:
            rnd.play(Call(rounds % 4, "kems"))  # a false kems each time: the other team scores
        match.finish_hand()
        rounds += 1
    assert match.winner is not None and max(match.score) == 2
    record = match.to_record()
    assert record["format"] == "tablesense.record/1" and record["game"] == "kems"
    assert len(record["hands"]) == len(match.hands) == rounds
    result = replay_record(record)
    assert list(result.score) == match.score
    assert result.winner == match.winner
    assert [h.to_json() for h in result.hands] == [r.to_json() for r in match.results]


def test_match_deal_rotates_and_needs_an_rng() -> None:
    match = KemsMatch(seats=6)
    assert match.options.deck == 32
    with pytest.raises(ValueError, match="rng"):
        match.new_hand()
    rnd = match.new_hand(random.Random(1))
    assert len(rnd.stock) == 32 - 28
    match.abandon_hand()
    assert match.current is None and match.hands == []
    with pytest.raises(DealError, match="together"):
        match.new_hand(deal=rnd.deal)


def test_a_tie_at_the_target_plays_on() -> None:
    match = KemsMatch({"target": 1}, seats=4)
    match.score = [1.0, 1.0]
    assert not match.is_over and match.winner is None
    match.score = [1.0, 2.0]
    assert match.winner == 1
