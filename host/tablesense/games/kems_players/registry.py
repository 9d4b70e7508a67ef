"""The Kems players by name."""

from __future__ import annotations

from tablesense.games.common import say
from tablesense.games.kems_players.reasoner import ReasonerPlayer
from tablesense.games.kems_players.simple import GreedyPlayer, RandomPlayer
from tablesense.games.kems_players.tracking import TrackingPlayer

__all__ = ["PLAYERS", "make_player"]

PLAYERS: dict[str, type[RandomPlayer] | type[GreedyPlayer] | type[TrackingPlayer]] = {
    "random": RandomPlayer,
    "greedy": GreedyPlayer,
    "tracking": TrackingPlayer,
    "reasoner": ReasonerPlayer,
}


def make_player(name: str) -> RandomPlayer | GreedyPlayer | TrackingPlayer:
    """A player by name (``random``, ``greedy``, ``tracking``, ``reasoner``)."""
    try:
        return PLAYERS[name]()
    except KeyError:
        raise ValueError(say("unknown Kems player {name!r}; players: {players}", name=name,
                             players=", ".join(PLAYERS))) from None
