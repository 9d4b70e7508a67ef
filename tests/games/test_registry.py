"""The one game interface: every game answers the same questions with the
same verbs, and the registry is where the list of games lives."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tablesense.games.common import OptionError
from tablesense.games.game import Game
from tablesense.games.record import replay
from tablesense.games.registry import GAMES, UnknownGame, find_game, names

TABLES = Path(__file__).resolve().parents[2] / "hardware" / "tables"
ALL = [(g.name, v, s) for g in GAMES.values() for v in g.variants for s in g.seat_counts(v)]


def test_the_registry_names_each_game_once_in_order() -> None:
    assert names() == ("dominoes", "kems")
    assert all(isinstance(g, Game) and find_game(n) is g for n, g in GAMES.items())
    assert find_game("kems").variants == ("classic",)
    assert find_game("dominoes").variants == ("pairs-pips", "pips-two-player", "brazilian-points")


@pytest.mark.parametrize("name", ["chess", "", "Dominoes"])
def test_an_unknown_game_names_the_known_ones(name: str) -> None:
    with pytest.raises(UnknownGame, match=rf"unknown game {name!r}: the games are dominoes, kems"):
        find_game(name)


def test_a_variant_or_seat_count_the_game_lacks_is_an_option_error() -> None:
    dominoes = find_game("dominoes")
    with pytest.raises(OptionError, match="dominoes has no variant 'classic'"):
        dominoes.new_match("classic")
    with pytest.raises(OptionError, match="seats"):
        dominoes.new_match("pairs-pips", seats=3)
    with pytest.raises(OptionError, match="kems has no variant 'pairs-pips'"):
        find_game("kems").seat_counts("pairs-pips")


@pytest.mark.parametrize(("game", "variant", "seats"), ALL)
def test_every_game_plays_with_the_same_verbs(game: str, variant: str, seats: int) -> None:
    """new_match, new_hand, legal_moves, play, move JSON, the journal's deal
    and the record: no caller needs to know which game it drives."""
    g = find_game(game)
    rng = random.Random(f"{game}-{variant}-{seats}")
    match = g.new_match(variant, seats=seats)
    assert match.variant in (variant, "classic") and match.seats == seats and match.current is None
    hand = match.new_hand(rng)
    assert match.current is hand and hand.seats == seats
    # the journal's hand entry starts the very same hand on a fresh match
    twin = g.new_match(variant, seats=seats)
    again = g.start_hand(twin, g.deal_to_json(hand))
    assert g.deal_to_json(again) == g.deal_to_json(hand)
    # moves go to JSON and back, and play the same on both
    for _ in range(6):
        moves = hand.legal_moves()
        if hand.is_over or not moves:
            break
        move = rng.choice(moves)
        obj = g.move_to_json(move)
        assert g.move_from_json(obj) == move
        hand.play(move)
        again.play(g.move_from_json(obj))
    assert g.face_up(hand) == g.face_up(again)
    assert g.face_up(hand) <= g.all_pieces(match.options)
    assert len(g.all_pieces(match.options)) in (28, 32, 52)
    assert 0 <= g.team_of_seat(seats, seats - 1) == match.team_of(seats - 1) < seats
    view = g.pieces_view(hand, None, None, boneyard=True)
    assert ("line" in view) if g.play_area == "line" else ("board" in view)
    # played to its end (a random legal move each time), the hand is scored
    # and the match's record replays through the registry to the same score
    while not hand.is_over:
        hand.play(rng.choice(hand.legal_moves()))
    result = match.finish_hand()
    assert match.current is None and match.hands == [hand] and match.results == [result]
    assert replay(match.to_record()).score == tuple(match.score)


@pytest.mark.parametrize(("game", "variant", "seats"), ALL)
def test_each_seat_count_has_its_shipped_layout(game: str, variant: str, seats: int) -> None:
    layout = find_game(game).layout_name(seats)
    assert (TABLES / f"{layout}.toml").is_file(), layout


def test_the_pieces_a_text_names_and_hides() -> None:
    dominoes, kems = find_game("dominoes"), find_game("kems")
    assert dominoes.piece_names("plays 6-5 then 2-2") == ["5-6", "2-2"]
    assert dominoes.hide_pieces("plays 6-5 then 2-2", {"2-2"}) == "plays the tile then 2-2"
    assert kems.piece_names("give 10H, take QS") == ["TH", "QS"]
    assert kems.hide_pieces("give TH, take QS", {"QS"}) == "give the card, take QS"
    assert kems.pretty("give TH") == "give 10♥" and dominoes.pretty("give TH") == "give TH"
    assert (dominoes.the_piece, kems.the_piece) == ("the tile", "the card")


def test_each_game_says_its_deal_and_seats_a_club() -> None:
    dominoes, kems = find_game("dominoes"), find_game("kems")
    assert dominoes.per_deal(hand="a hand", round="a round") == "a hand"
    assert kems.per_deal(hand="a hand", round="a round") == "a round"
    assert [dominoes.teams_at_table(v, s) for v, s in [("pairs-pips", 4), ("pips-two-player", 2),
                                                       ("brazilian-points", 3)]] == [2, 2, 3]
    assert [kems.teams_at_table("classic", s) for s in (4, 6, 8)] == [2, 3, 4]
    assert dominoes.rating_family("brazilian-points", 3) == "dominoes-individual"
    assert dominoes.rating_family("brazilian-points", 4) == "dominoes-pairs"
    assert kems.rating_family("classic", 8) == "kems"
    assert dominoes.variant_for_seats(2) == "pips-two-player"
    assert dominoes.variant_for_seats(3) == "brazilian-points"
    assert dominoes.variant_for_seats(4) == "pairs-pips"


def test_the_players_come_from_the_game() -> None:
    for g in GAMES.values():
        assert type(g.player()).__name__ == {"greedy": "GreedyPlayer", "tracking": "TrackingPlayer"}[g.default_player]
        with pytest.raises(ValueError, match="nosuch"):
            g.player("nosuch")


def test_a_table_shown_stock_order_is_journaled_and_replayed_by_the_game() -> None:
    """Kems dealt by the table: the stock's order is learnt as the table shows
    it; the game writes the ``reorder`` entry and applies it (the referee only
    journals it). Dominoes has no such pile to reorder from a table."""
    kems = find_game("kems")
    rnd = kems.new_match("classic", seats=4).new_hand(rng=random.Random(5))
    stock = [str(c) for c in rnd.stock]
    shown = [stock[5], stock[2], stock[9], stock[0]]
    entry = kems.stock_reorder(rnd, shown)
    assert entry["type"] == "reorder" and entry["stock"][:4] == shown
    assert sorted(entry["stock"]) == sorted(stock), "the same cards, in the order shown"
    kems.apply_reorder(rnd, entry)
    assert [str(c) for c in rnd.stock] == entry["stock"] and [str(c) for c in rnd.initial_stock] == entry["initial"]
    dominoes = find_game("dominoes")
    hand = dominoes.new_match("pairs-pips", seats=4).new_hand(rng=random.Random(5))
    with pytest.raises(ValueError, match="same tiles"):
        dominoes.apply_reorder(hand, {"type": "reorder", "boneyard": ["6-6"]})
    with pytest.raises(ValueError):
        dominoes.stock_reorder(hand, ["6-6"])
