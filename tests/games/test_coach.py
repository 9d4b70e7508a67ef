"""The dominoes coach: private suggestions from the seat's own knowledge,
and a post-hand review stored as an ``x-review`` annotation of the record."""

from __future__ import annotations

import json
import random

import pytest

from tablesense.games.coach import DominoCoach, Mistake, annotate_record, move_words
from tablesense.games.dominoes import Announce, DominoMatch, Play, Tile
from tablesense.games.dominoes_players import GreedyPlayer, RandomPlayer
from tablesense.games.record import replay


def position(seed: int):
    rng = random.Random(seed)
    while True:
        h = DominoMatch("pairs-pips").new_hand(rng)
        for _ in range(rng.randrange(2, 10)):
            if h.is_over:
                break
            h.play(GreedyPlayer().choose(h, h.to_play, rng))
        if not h.is_over and len(h.legal_moves()) > 1:
            return h


def test_a_suggestion_is_addressed_to_its_seat_and_uses_only_its_knowledge() -> None:
    coach = DominoCoach(worlds=8)
    for seed in range(6):
        h = position(seed)
        seat = h.to_play
        before = h.moves
        s = coach.suggest(h, seat, random.Random(1))
        assert s.for_seat == seat and h.is_legal(s.move)
        assert h.moves == before  # asking changes nothing at the table
        assert s.values[0][1] == max(v for _, v in s.values)
        # the other seats' tiles dealt differently: the same suggestion
        hidden = [t for x in range(4) if x != seat for t in h.hand_of(x)]
        random.Random(seed).shuffle(hidden)
        hands, k = [], 0
        for x in range(4):
            n = h.count(x)
            hands.append(h.hand_of(x) if x == seat else hidden[k : k + n])
            k += 0 if x == seat else n
        other = h.clone(hands, [])
        assert coach.suggest(other, seat, random.Random(1)).move == s.move
        # the text names the move and the seat, never another seat's tiles
        for t in hidden:
            assert str(t) not in s.text or (isinstance(s.move, Play) and s.move.tile == t)


def test_suggest_refuses_a_seat_that_is_not_to_play() -> None:
    h = position(1)
    with pytest.raises(ValueError, match="turn"):
        DominoCoach(worlds=2).suggest(h, (h.to_play + 1) % 4, random.Random(1))


def test_the_review_finds_a_random_players_costly_moves_and_the_record_keeps_it() -> None:
    rng = random.Random(3)
    match = DominoMatch("pairs-pips")
    players = [RandomPlayer(), GreedyPlayer(), RandomPlayer(), GreedyPlayer()]
    reviews = []
    coach = DominoCoach(worlds=10, top=3, min_loss=0.5)
    for _ in range(2):
        if match.is_over:
            break
        h = match.new_hand(rng)
        while not h.is_over:
            h.play(players[h.to_play].choose(h, h.to_play, rng))
        match.finish_hand()
        reviews.append(coach.review(h, random.Random(4)))
    assert any(reviews)
    for mistakes in reviews:
        assert len(mistakes) <= 3
        assert [m.loss for m in mistakes] == sorted((m.loss for m in mistakes), reverse=True)
        for m in mistakes:
            assert m.loss >= 0.5 and not isinstance(m.played, Announce)
            assert f"seat {m.seat}" in m.text and move_words(m.better) in m.text
    record = annotate_record(match.to_record(), reviews)
    text = json.dumps(record)
    assert "x-review" in text
    result = replay(json.loads(text))  # raises on anything the format forbids
    assert list(result.score) == match.score


def test_annotate_needs_one_review_per_hand() -> None:
    with pytest.raises(ValueError, match="reviews"):
        annotate_record({"hands": [{}, {}]}, [[]])
    m = Mistake(3, 1, Play(1, Tile(2, 3), "left"), Play(1, Tile(3, 3), "right"), 1.25)
    assert m.to_json()["loss"] == 1.25 and "2-3" in m.text and "3-3" in m.text
