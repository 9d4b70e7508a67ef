"""Differential test against the PyPI package ``dominoes`` (6.1.0).

On random deals, both engines must offer the same plays at every turn and end
the hand the same way (domino by the same player, or blocked with the same
side ahead). Its scoring differs from the seeds on purpose (a blocked hand
scores both sides' pips, a tie scores nothing), so points are not compared.
``dominoes`` lets a player block the game at will, so our engine runs with
``forced_block="allowed"``; it also folds a tile that fits two equal ends into
one move, so plays are compared as (tile, number of the end it covers).
"""

from __future__ import annotations

import random
from typing import cast

import dominoes
import pytest

from tablesense.games.dominoes import DominoMatch, Pass, Play, Tile

N_DEALS = 600


def peer_game(deal: list[list[Tile]]) -> dominoes.Game:
    hands = [dominoes.Hand([dominoes.Domino(t.low, t.high) for t in h]) for h in deal]
    opener = next(s for s, h in enumerate(deal) if Tile(6, 6) in h)
    six = dominoes.Domino(6, 6)
    game = dominoes.Game(dominoes.Board(), hands, [], opener, ((six, True),), opener, None)
    game.make_move(six, True)
    return game


def peer_plays(game: dominoes.Game) -> set[tuple[Tile, int]]:
    left = cast(int, game.board.left_end())
    right = cast(int, game.board.right_end())
    return {
        (Tile(min(d.first, d.second), max(d.first, d.second)), left if is_left else right)
        for d, is_left in game.valid_moves
    }


@pytest.mark.parametrize("chunk", range(3))
def test_same_legal_moves_and_outcomes_as_the_dominoes_package(chunk: int) -> None:
    rng = random.Random(1000 + chunk)
    outcomes = set()
    for _ in range(N_DEALS // 3):
        ours = DominoMatch("pairs-pips", {"forced_block": "allowed"}).new_hand(rng)
        ours.play(ours.legal_moves()[0])  # 6-6 by its holder
        peer = peer_game([list(h) for h in ours.deal])
        while not ours.is_over:
            seat = ours.to_play
            moves = ours.legal_moves()
            if moves == [Pass(seat)]:
                ours.play(moves[0])  # the peer skips passes by itself
                continue
            assert peer.turn == seat
            mine = {
                (m.tile, ours.left_end if m.end == "left" else ours.right_end)
                for m in moves
                if isinstance(m, Play)
            }
            assert mine == peer_plays(peer)
            m = rng.choice(moves)
            assert isinstance(m, Play)
            number = ours.left_end if m.end == "left" else ours.right_end
            ours.play(m)
            d = dominoes.Domino(m.tile.low, m.tile.high)
            peer.make_move(d, peer.board.left_end() == number)
            assert peer.board.left_end() in (ours.left_end, ours.right_end)
            assert peer.board.right_end() in (ours.left_end, ours.right_end)
        assert peer.result is not None
        r = ours.result()
        outcomes.add(r.outcome)
        if r.outcome == "domino":
            assert peer.result.won and peer.result.player == ours.last_player
        else:
            assert not peer.result.won
            pips = ours.team_pips()
            if pips[0] != pips[1]:
                assert (peer.result.points > 0) == (r.winner == 0)
            else:
                assert peer.result.points == 0
    assert outcomes == {"domino", "blocked"}
