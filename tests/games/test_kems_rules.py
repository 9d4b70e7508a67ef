"""One test per rule sentence of seed 003 (Kems, Malay translation of French
rules), named after the sentence; docs/rules/kems.md quotes each one with
the reading chosen. Sentences without a rule (flavour) are listed there."""

from __future__ import annotations

import random

import pytest

from tablesense.games.common import IllegalPlayError, OptionError
from tablesense.games.kems import (
    RANKS_32,
    Call,
    Card,
    KemsMatch,
    KemsOptions,
    KemsRound,
    Refresh,
    Swap,
    deal_cards,
    deck,
    partner_of,
    team_of,
)

C = Card.parse

# A position used throughout: seat 0 holds two 9s and two kings; the board
# offers the two other 9s. Seats 0 and 2 are partners, 1 and 3 the opponents.
DEAL = ["9S 9H KS KH", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"]
BOARD = "9D 9C QD QC"


def position(
    options: KemsOptions | None = None, deal: list[str] | None = None, board: str = BOARD
) -> KemsRound:
    return KemsRound.from_text(deal or DEAL, board, options=options)


def four_nines(rnd: KemsRound) -> KemsRound:
    """Seat 0 swaps its kings for the board's 9s: it holds four 9s."""
    rnd.play(Swap(0, C("KS"), C("9D")))
    rnd.play(Swap(0, C("KH"), C("9C")))
    assert rnd.has_four(0)
    return rnd


# ----------------------------------------------------------------- intro


def test_this_card_game_is_played_in_teams_of_2_usually_4_but_also_6_or_8() -> None:
    for seats in (4, 6, 8):
        match = KemsMatch(seats=seats)
        assert len(match.score) == seats // 2
        rnd = match.new_hand(random.Random(seats))
        assert [len(h) for h in rnd.hands] == [4] * seats
    for seats in (2, 3, 5, 7, 10):
        with pytest.raises(OptionError):
            KemsMatch(seats=seats)


# ----------------------------------------------------------------- before starting


def test_we_take_a_32_card_deck_without_jokers() -> None:
    cards = deck(32)
    assert len(cards) == len(set(cards)) == 32
    assert {c.rank for c in cards} == set(RANKS_32)
    assert KemsOptions.defaults(4).deck == 32
    # the record format (2026-12-01): 32 cards by default with 4 or 6 seats (six
    # hands and a board fit), 52 with 8 (eight hands and a board do not fit in
    # 32 cards); 52 still allowed with 6
    assert KemsOptions.defaults(6).deck == 32
    assert KemsOptions.defaults(8).deck == 52
    assert KemsOptions.from_dict({"deck": 52}, 6).deck == 52
    with pytest.raises(OptionError, match="use deck 52"):
        KemsOptions.from_dict({"deck": 32}, 8)
    rnd = position()
    with pytest.raises(IllegalPlayError, match="not a card of the 32-card deck"):
        rnd.check(Swap(0, C("2S"), C("9D")))


def test_with_four_there_are_two_teams_a_and_b() -> None:
    rnd = position()
    assert rnd.teams == 2
    assert {rnd.team_of(s) for s in range(4)} == {0, 1}


def test_players_sit_a_b_a_b() -> None:
    assert [team_of(s, 4) for s in range(4)] == [0, 1, 0, 1]
    assert [team_of(s, 6) for s in range(6)] == [0, 1, 2, 0, 1, 2]
    assert [partner_of(s, 4) for s in range(4)] == [2, 3, 0, 1]
    assert [partner_of(s, 8) for s in range(8)] == [4, 5, 6, 7, 0, 1, 2, 3]
    for n in (4, 6, 8):
        for s in range(n):
            # neighbours are opponents; the partner is on the same team
            assert team_of((s + 1) % n, n) != team_of(s, n)
            assert team_of(partner_of(s, n), n) == team_of(s, n)


def test_a_player_deals_4_cards_to_each_one_at_a_time_clockwise_ending_with_himself() -> None:
    cards = deck(32)
    hands, board, stock = deal_cards(cards, 4, dealer=1)
    # the first card goes left of the dealer (seat 2), the last to the dealer
    assert hands[2][0] == cards[0]
    assert hands[3][0] == cards[1]
    assert hands[0][0] == cards[2]
    assert hands[1][0] == cards[3]
    assert hands[1][3] == cards[15]
    assert board == cards[16:20]
    assert stock == cards[20:]
    # a match passes the deal clockwise: round k is dealt by seat k mod n
    match = KemsMatch(seats=4)
    assert match.dealer == 0


def test_each_team_must_agree_a_special_discreet_sign() -> None:
    # the sign is modelled by the seat-button signal: a seat sees its
    # partner's light only
    rnd = four_nines(position())
    assert rnd.signal(2) is True  # seat 0's partner sees it
    assert rnd.signal(1) is False and rnd.signal(3) is False  # opponents do not
    assert rnd.view(2).signal and not rnd.view(1).signal
    assert rnd.signal(0) is False  # seat 2 has no four: no light for seat 0


def test_partners_signal_each_other_that_they_have_kems_unseen_by_the_opponents() -> None:
    rnd = four_nines(position())
    for seat in (1, 3):
        view = rnd.view(seat)
        # an opponent's view holds its own hand, the board and the public
        # history, never another seat's hand or the signal of another team
        assert view.hand == tuple(rnd.hands[seat])
        assert not view.signal
        assert not hasattr(view, "hands")


def test_a_player_dealt_3_or_4_of_a_kind_means_the_cards_are_dealt_again() -> None:
    for hand in ("9S 9H 9D KH", "9S 9H 9D 9C"):
        deal = [hand, "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"]
        board = "KS KD QD QC" if hand.count("9") == 3 else "KS KD KC QD"
        rnd = position(deal=deal, board=board)
        assert rnd.is_misdeal and rnd.is_over
        assert rnd.result().outcome == "redeal"
        assert rnd.result().points == (0, 0)
        with pytest.raises(IllegalPlayError, match="misdeal"):
            rnd.check(Refresh())
    # a pair is fine; option misdeal_at 4 keeps three of a kind
    assert not position().is_misdeal
    opts = KemsOptions.from_dict({"misdeal_at": 4}, 4)
    deal = ["9S 9H 9D KH", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"]
    assert not position(opts, deal=deal, board="KS KD QD QC").is_misdeal


# ----------------------------------------------------------------- goal


def test_the_objective_is_the_highest_total_of_points() -> None:
    match = KemsMatch({"target": 2}, seats=4)
    for _ in range(2):
        rnd = match.new_hand(
            deal=position().deal, board=position().initial_board, stock=position().initial_stock
        )
        four_nines(rnd)
        rnd.play(Call(2, "kems"))
        match.finish_hand()
    assert match.score == [2, 0]
    assert match.is_over and match.winner == 0
    with pytest.raises(IllegalPlayError, match="match is over"):
        match.new_hand(random.Random(1))
    assert KemsOptions.defaults().target == 10


def test_to_score_you_must_make_kems_or_contre_kems() -> None:
    rnd = position()
    rnd.play(Swap(1, C("7S"), C("QD")))
    rnd.play(Refresh())
    assert not rnd.is_over
    with pytest.raises(IllegalPlayError, match="not over"):
        rnd.result()  # swaps and refreshes score nothing; only a call ends a round


def test_to_make_kems_swap_with_the_board_until_four_of_a_kind_for_example_four_9s() -> None:
    rnd = position()
    assert not rnd.has_four(0)
    four_nines(rnd)
    assert sorted(c.suit for c in rnd.hands[0]) == sorted("SHDC")


def test_he_signals_his_partner_who_must_then_say_kems() -> None:
    rnd = four_nines(position())
    rnd.play(Call(2, "kems"))  # the partner says it
    assert rnd.result().outcome == "kems" and rnd.result().points == (1, 0)
    # the holder saying kems about itself claims its partner has four: false
    rnd = four_nines(position())
    rnd.play(Call(0, "kems"))
    assert rnd.result().label == "false kems"


def test_contre_kems_when_an_opponent_has_four_and_before_his_teammate_says_kems() -> None:
    rnd = four_nines(position())
    rnd.play(Call(1, "contre", 0))
    assert rnd.result().outcome == "contre" and rnd.result().points == (0, 1)
    rnd = four_nines(position())
    rnd.play(Call(2, "kems"))
    with pytest.raises(IllegalPlayError, match="round is over"):
        rnd.check(Call(1, "contre", 0))  # too late: the round ended at the kems


# ----------------------------------------------------------------- course of a round


def test_after_dealing_the_first_4_cards_of_the_stock_are_turned_up() -> None:
    match = KemsMatch(seats=4)
    rng = random.Random(7)
    cards = deck(32)
    random.Random(7).shuffle(cards)
    rnd = match.new_hand(rng)
    assert list(rnd.initial_board) == cards[16:20]
    assert list(rnd.initial_stock) == cards[20:]
    assert len(rnd.board) == 4


def test_once_the_4_cards_are_turned_and_the_dealer_is_ready_play_starts() -> None:
    rnd = position()
    # every seat may act as soon as the round exists (the table's "ready"
    # is the referee's business); no event precedes the board
    assert rnd.events == []
    assert all(rnd.legal_swaps(s) for s in range(4))


def test_to_make_kems_every_player_swaps_his_cards_with_the_board() -> None:
    rnd = position()
    # no turns: any seat, in any order, any number of times
    rnd.play(Swap(3, C("7H"), C("QD")))
    rnd.play(Swap(3, C("8H"), C("QC")))
    rnd.play(Swap(0, C("KS"), C("9D")))
    assert rnd.board == [C("KS"), C("9C"), C("7H"), C("8H")]
    assert len(rnd.legal_swaps(1)) == 16


def test_he_must_lay_the_card_to_exchange_on_the_board_first_then_take() -> None:
    rnd = position()
    rnd.play(Swap(0, C("KS"), C("9D")))
    # the given card takes the slot of the card taken
    assert rnd.board == [C("KS"), C("9C"), C("QD"), C("QC")]
    assert C("9D") in rnd.hands[0] and C("KS") not in rnd.hands[0]
    with pytest.raises(IllegalPlayError, match="may not take back"):
        rnd.check(Swap(0, C("KH"), C("KH")))
    opts = KemsOptions.from_dict({"allow_take_back": True}, 4)
    rnd = position(opts)
    rnd.play(Swap(0, C("KH"), C("KH")))
    assert rnd.hands[0] == [C("9S"), C("9H"), C("KS"), C("KH")]


def test_a_player_may_not_end_with_more_than_4_cards_in_hand() -> None:
    rnd = position()
    with pytest.raises(IllegalPlayError, match="does not hold"):
        rnd.check(Swap(0, C("QD"), C("9D")))  # taking without giving a card of its own
    rng = random.Random(3)
    for _ in range(200):
        s = rng.randrange(4)
        rnd.play(rng.choice(rnd.legal_swaps(s)))
        assert all(len(h) == 4 for h in rnd.hands)


def test_forbidden_to_swap_cards_directly_with_your_teammate_without_the_board() -> None:
    rnd = position()
    with pytest.raises(IllegalPlayError, match="no direct swap between partners"):
        rnd.check(Swap(0, C("KS"), C("QS")))  # QS is in partner seat 2's hand
    assert all(sw.take in rnd.board for sw in rnd.legal_swaps(0))


def test_forbidden_to_have_more_than_4_cards_in_your_hand() -> None:
    # a swap is one card for one card: every hand keeps exactly 4 cards
    rnd = four_nines(position())
    assert [len(h) for h in rnd.hands] == [4, 4, 4, 4]
    assert len(rnd.board) == 4


def test_if_nobody_wants_the_board_4_new_cards_are_laid_and_the_old_4_go_under_the_deck() -> None:
    rnd = position()
    stock_before = list(rnd.stock)
    rnd.play(Refresh())
    assert rnd.board == stock_before[:4]
    assert rnd.stock == stock_before[4:] + [C("9D"), C("9C"), C("QD"), C("QC")]
    rnd.undo()
    assert rnd.board == [C("9D"), C("9C"), C("QD"), C("QC")] and rnd.stock == stock_before
    # the stock never runs out under "bottom": the board cycles back
    for _ in range(50):
        rnd.play(Refresh())
    assert len(rnd.stock) == 12 and not rnd.is_over
    # option refresh "discard": the old board leaves play; with fewer than 4
    # stock cards, the refresh ends the round as void (deal again)
    rnd = position(KemsOptions.from_dict({"refresh": "discard"}, 4))
    for _ in range(3):
        rnd.play(Refresh())
    assert rnd.stock == [] and len(rnd.discards) == 12 and not rnd.is_over
    rnd.play(Refresh())
    assert rnd.is_over and rnd.result().outcome == "void"
    assert rnd.result().points == (0, 0)


def test_a_player_with_4_of_a_kind_must_signal_his_teammate() -> None:
    rnd = position()
    assert not rnd.signal(2)
    four_nines(rnd)
    assert rnd.signal(2)
    rnd.undo()
    assert not rnd.signal(2)  # the light goes out when the four is broken


def test_the_teammate_must_then_say_kems() -> None:
    rnd = four_nines(position())
    assert Call(2, "kems") in rnd.legal_calls(2)
    rnd.play(Call(2, "kems"))
    result = rnd.result()
    assert (result.outcome, result.winner, result.points, result.label) == (
        "kems",
        0,
        (1, 0),
        "kems",
    )


def test_an_opponent_who_thinks_a_player_has_four_may_say_contre_kems_to_him() -> None:
    rnd = four_nines(position())
    assert Call(1, "contre", 0) in rnd.legal_calls(1)
    assert Call(1, "contre", 3) not in rnd.legal_calls(1)
    with pytest.raises(IllegalPlayError, match="partner: a contre names an opponent"):
        rnd.check(Call(1, "contre", 3))
    with pytest.raises(IllegalPlayError, match="on itself"):
        rnd.check(Call(1, "contre", 1))
    with pytest.raises(IllegalPlayError, match="no seat 7"):
        rnd.check(Call(1, "contre", 7))


def test_the_target_admits_kems_if_he_has_it_or_else_shows_2_different_cards() -> None:
    rnd = four_nines(position())
    rnd.play(Call(3, "contre", 0))
    assert rnd.result().label == "contre" and rnd.contre_proof() is None
    rnd = position()
    rnd.play(Call(3, "contre", 0))
    a, b = rnd.contre_proof() or (None, None)
    assert a is not None and b is not None and a.rank != b.rank
    assert a in rnd.hands[0] and b in rnd.hands[0]


def test_to_score_faster_a_double_kems_is_possible() -> None:
    rnd = position(deal=["9S 9H KS KH", "7S 8S TS JS", "QS QH AS AH", "7H 8H TH JH"])
    four_nines(rnd)
    rnd.play(Swap(2, C("AS"), C("QD")))
    rnd.play(Swap(2, C("AH"), C("QC")))
    rnd.play(Call(0, "kems"))
    rnd.play(Call(2, "double"))
    assert rnd.result().outcome == "double" and rnd.result().points == (2, 0)


def test_both_teammates_hold_such_a_hand_and_say_kems_then_double_kems_in_turn() -> None:
    def both_four() -> KemsRound:
        rnd = four_nines(position())
        rnd.play(Swap(2, C("AS"), C("QD")))
        rnd.play(Swap(2, C("AH"), C("QC")))
        return rnd

    rnd = both_four()
    # double only right after the partner's kems, and only by that partner
    with pytest.raises(IllegalPlayError, match="right after its partner's kems"):
        rnd.check(Call(2, "double"))
    rnd.play(Call(0, "kems"))
    assert rnd.is_over and rnd.awaiting_double
    with pytest.raises(IllegalPlayError):
        rnd.check(Call(1, "double"))
    with pytest.raises(IllegalPlayError):
        rnd.check(Call(0, "double"))
    rnd.play(Call(2, "double"))
    assert not rnd.awaiting_double
    with pytest.raises(IllegalPlayError, match="round is over"):
        rnd.check(Call(0, "double"))
    # a double whose caller lacks four is a false claim (option false_double)
    rnd = four_nines(position())
    rnd.play(Call(2, "kems"))
    rnd.play(Call(0, "double"))
    assert rnd.result().label == "false double" and rnd.result().points == (0, 1)
    opts = KemsOptions.from_dict({"false_double": "kems-stands"}, 4)
    rnd = four_nines(position(opts))
    rnd.play(Call(2, "kems"))
    rnd.play(Call(0, "double"))
    assert rnd.result().points == (1, 0)


# ----------------------------------------------------------------- points


def test_for_a_kems_the_team_wins_one_point() -> None:
    rnd = four_nines(position())
    rnd.play(Call(2, "kems"))
    assert rnd.result().points == (1, 0) and rnd.result().winner == 0


def test_for_a_contre_kems_the_team_gets_a_point() -> None:
    rnd = four_nines(position())
    rnd.play(Call(3, "contre", 0))
    assert rnd.result().points == (0, 1) and rnd.result().winner == 1


def test_for_a_failed_contre_kems_the_team_believed_to_have_kems_wins_one_point() -> None:
    rnd = position()
    rnd.play(Call(3, "contre", 0))
    result = rnd.result()
    assert (result.outcome, result.label, result.points, result.winner) == (
        "contre",
        "failed contre",
        (1, 0),
        0,
    )


@pytest.mark.parametrize("double_points", [2, 3])
def test_for_a_double_kems_a_team_wins_2_or_3_points_decided_at_the_start(
    double_points: int,
) -> None:
    opts = KemsOptions.from_dict({"double_points": double_points}, 4)
    rnd = four_nines(position(opts))
    rnd.play(Swap(2, C("AS"), C("QD")))
    rnd.play(Swap(2, C("AH"), C("QC")))
    rnd.play(Call(2, "kems"))
    rnd.play(Call(0, "double"))
    assert rnd.result().points == (double_points, 0)
    assert rnd.result().label == "double kems"
    with pytest.raises(OptionError):
        KemsOptions.from_dict({"double_points": 4}, 4)


@pytest.mark.parametrize("double_points", [2, 3])
def test_for_a_double_contre_kems_a_team_wins_2_or_3_points(double_points: int) -> None:
    # seats 1 and 3 (team 1) both hold four of a kind; seat 0 calls contre
    deal = ["9S 9H KS KH", "7S 7H TS JS", "QS QH AS AH", "8H 8S TH JH"]
    rnd = KemsRound.from_text(
        deal, "7D 7C 8D 8C", options=KemsOptions.from_dict({"double_points": double_points}, 4)
    )
    rnd.play(Swap(1, C("TS"), C("7D")))
    rnd.play(Swap(1, C("JS"), C("7C")))
    rnd.play(Swap(3, C("TH"), C("8D")))
    rnd.play(Swap(3, C("JH"), C("8C")))
    assert rnd.has_four(1) and rnd.has_four(3)
    rnd.play(Call(0, "contre", 1))
    assert rnd.result().label == "double contre"
    assert rnd.result().points == (double_points, 0)
    # option double_contre "never": a right contre always scores 1
    rnd2 = KemsRound.from_text(
        deal, "7D 7C 8D 8C", options=KemsOptions.from_dict({"double_contre": "never"}, 4)
    )
    for e in rnd.events:
        rnd2.play(e)
    assert rnd2.result().points == (1, 0)


# ----------------------------------------------------------------- beyond the seed (options)


@pytest.mark.parametrize(
    ("false_call", "points"),
    [("opponents-plus-one", (0, 1)), ("caller-minus-one", (-1, 0))],
)
def test_false_kems_penalty_is_an_option(false_call: str, points: tuple[int, int]) -> None:
    rnd = position(KemsOptions.from_dict({"false_call": false_call}, 4))
    rnd.play(Call(2, "kems"))
    assert rnd.result().label == "false kems"
    assert rnd.result().points == points
    assert rnd.result().winner == 1


def test_false_kems_with_three_teams_gives_every_other_team_a_point() -> None:
    rnd = KemsRound.from_text(
        ["7S 7H 8S 8H", "9S 9H TS TH", "JS JH QS QH", "KS KH AS AH", "7D 7C 8D 8C", "9D 9C TD TC"],
        "JD JC QD QC",
    )
    rnd.play(Call(0, "kems"))
    assert rnd.result().points == (0, 1, 1) and rnd.result().winner is None


def test_a_round_ends_at_its_first_call() -> None:
    rnd = four_nines(position())
    rnd.play(Call(1, "contre", 2))
    assert rnd.is_over
    for event in (Swap(1, C("7S"), C("KS")), Refresh(), Call(2, "kems"), Call(3, "contre", 0)):
        with pytest.raises(IllegalPlayError, match="round is over"):
            rnd.check(event)
    assert rnd.legal_moves() == []
