"""Computer players for Kems, and the loop that lets them play.

A package split by concern: ``base`` (the protocol, the view-only base class,
the answer to the sign), ``knowledge`` (what a seat knows from the public
history), ``simple`` (random, greedy), ``tracking``, ``reasoner``,
``registry`` (players by name) and ``loop`` (rounds, matches, the win-rate
table). Everything is re-exported here, so
``from tablesense.games.kems_players import X`` works for every name.

A player answers ``choose(round, seat, rng) -> Swap | Call | None`` (None:
wait). It reads only ``round.view(seat)`` (:class:`~tablesense.games.kems.SeatView`):
its own hand, the board, the public history of swaps and refreshes, the
stock size, and the partner *signal*.

The signal is how the seed's secret sign between partners is modelled: on
the table, a seat that holds four of a kind presses its seat button and only
its partner's light shows it. So ``view.signal`` is True exactly when this
seat's partner really holds four of a kind. The engine never shows a player
the other hands.

Kems has no turns: :func:`play_round` polls every seat once per tick, in a
fresh random order, and applies what each one chooses at once (so the others
see it when their turn in the tick comes). A tick in which nobody acts means
"no player wants to exchange cards with the board": the board is refreshed.

Players:

- :class:`RandomPlayer`: a random legal swap now and then; says ``kems`` (and
  ``double``) on its partner's signal, never contre.
- :class:`GreedyPlayer`: collects the rank it holds most of (a swap only when
  it raises its best count), kems/double on the signal.
- :class:`TrackingPlayer`: tracks every card seen (the boards laid, every
  swap) and where it can be; chooses the rank to collect by what is still
  reachable; never feeds an opponent's rank, feeds its partner's; denies an
  opponent a card it needs; and calls contre when the Bayesian estimate that
  an opponent holds four (hidden cards weighted by how well they explain
  that opponent's visible swaps) passes a threshold.
- :class:`ReasonerPlayer`: tracking's swaps, with the calls decided by their
  expected value (contre once an opponent is a third likely to hold four).
"""

from __future__ import annotations

from tablesense.games.kems_players.base import KemsPlayer, ViewPlayer
from tablesense.games.kems_players.knowledge import Knowledge, Tracker, four_probability, track
from tablesense.games.kems_players.loop import ArenaResult, _main, arena, play_match, play_round
from tablesense.games.kems_players.reasoner import ReasonerPlayer
from tablesense.games.kems_players.registry import PLAYERS, make_player
from tablesense.games.kems_players.simple import GreedyPlayer, RandomPlayer
from tablesense.games.kems_players.tracking import TrackingPlayer

__all__ = [
    "KemsPlayer",
    "ViewPlayer",
    "RandomPlayer",
    "GreedyPlayer",
    "TrackingPlayer",
    "ReasonerPlayer",
    "PLAYERS",
    "make_player",
    "Knowledge",
    "Tracker",
    "track",
    "four_probability",
    "play_round",
    "play_match",
    "ArenaResult",
    "arena",
    "_main",
]
