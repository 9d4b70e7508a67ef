"""The games the table plays, found by name: the one place that lists them.

Every room that needs to know which games and variants exist, how many seats
they take or how to start a match asks here (``find_game("kems")``,
``names()``) and then asks the :class:`~tablesense.games.game.Game`: nobody
else keeps a list of games or branches on a game's name. Adding a game is a
:class:`~tablesense.games.game.Game` subclass listed below (plus how its
pieces lie on a table: ``referee/rules.py`` and a layout file).
"""

from __future__ import annotations

from tablesense.games.common import OptionError
from tablesense.games.dominoes.game import Dominoes
from tablesense.games.game import Game
from tablesense.games.kems.game import Kems
from tablesense.sentence import say

__all__ = ["GAMES", "Game", "UnknownGame", "find_game", "names"]

GAMES: dict[str, Game] = {g.name: g for g in (Dominoes(), Kems())}
"""Every game by its record-format name, in the order the commands list them."""


class UnknownGame(OptionError):
    """A game name the registry does not know (the message lists the known ones)."""


def names() -> tuple[str, ...]:
    """The games' names: ``("dominoes", "kems")``."""
    return tuple(GAMES)


def find_game(name: str) -> Game:
    """The game called ``name``; :class:`UnknownGame` says which exist."""
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        raise UnknownGame(say("unknown game {game!r}: the games are {games}", game=name,
                              games=", ".join(GAMES))) from None
