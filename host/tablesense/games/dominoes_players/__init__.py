"""Computer players for dominoes, like :mod:`tablesense.games.kems_players`.

A package split by concern: ``player`` (what a player is and the moves it
chooses among), ``simple`` (random, greedy, Monte Carlo, players by name, the
match loop), ``search`` (the strongest
player: inference, sampled worlds, policy playouts), ``inference`` (what a
seat can know of the hidden hands), ``endgame`` (exact alpha-beta once few
tiles are left), ``equity`` and ``equity_data`` (what a hand is worth to the
match). The public names are re-exported here, so
``from tablesense.games.dominoes_players import X`` works for each; see
:mod:`.player` for what a player answers.
"""

from __future__ import annotations

from tablesense.games.dominoes_players.player import DominoPlayer, legal_choices
from tablesense.games.dominoes_players.simple import (
    PLAYERS,
    GreedyPlayer,
    MonteCarloPlayer,
    RandomPlayer,
    SearchPlayer,
    guess_world,
    head_to_head,
    make_player,
    missing_numbers,
    play_match,
)

__all__ = [
    "PLAYERS",
    "DominoPlayer",
    "GreedyPlayer",
    "MonteCarloPlayer",
    "RandomPlayer",
    "SearchPlayer",
    "guess_world",
    "head_to_head",
    "legal_choices",
    "make_player",
    "missing_numbers",
    "play_match",
]
