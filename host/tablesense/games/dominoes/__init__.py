"""The dominoes rules engine: ``pairs-pips``, ``pips-two-player``, ``brazilian-points``.

Pure: no I/O, no clock, randomness only through an injected ``random.Random``.
The referee, the computer players, the tournament director and ``replay`` all
ask this package the same questions, so they can never disagree.

The model follows python-chess: small frozen value types (:class:`Tile`,
:class:`Play`, :class:`Pass`, :class:`Draw`, :class:`Announce`), a
:class:`DominoHand` whose :meth:`~DominoHand.check` only answers (raising
:class:`IllegalPlayError` with a sentence a player understands),
:meth:`~DominoHand.play` that checks and applies, :meth:`~DominoHand.apply`
that does not check, and :meth:`~DominoHand.undo`. :class:`DominoMatch`
chains hands into a match (who opens, with what, the score, the target) and
writes the game record (``docs/record-format.md``).

One module per concern, all re-exported here (import from
``tablesense.games.dominoes``):

- :mod:`.tiles`: tiles, moves, their record form, the bit tables;
- :mod:`.options`: each variant's options, the opening rule;
- :mod:`.deal`: dealing and checking a deal;
- :mod:`.hand`: one hand's state and legality;
- :mod:`.scoring`: scoring per variant, who opens next;
- :mod:`.playout`: random playouts of a hand (the players' simulations);
- :mod:`.fast`: :func:`simulate_deal`, the lean deal-and-playout path;
- :mod:`.match`: a match of hands, and its record;
- :mod:`.replay`: checking a record move by move.

Every rule sentence this package implements is quoted in ``docs/rules/`` with
the option that controls it.
"""

from __future__ import annotations

from tablesense.games.common import IllegalPlayError
from tablesense.games.dominoes.deal import DealError, deal_tiles
from tablesense.games.dominoes.fast import PlayoutTrace, simulate_deal
from tablesense.games.dominoes.hand import DominoHand
from tablesense.games.dominoes.match import DominoMatch
from tablesense.games.dominoes.options import RECORD_FORMAT, VARIANTS, DominoOptions, Opening
from tablesense.games.dominoes.replay import replay_record
from tablesense.games.dominoes.tiles import (
    ALL_TILES,
    DOUBLE_BLANK,
    DOUBLE_SIX,
    LEFT,
    RIGHT,
    Announce,
    DominoMove,
    Draw,
    End,
    LinePlay,
    Pass,
    Play,
    Tile,
    describe_move,
    move_from_json,
    move_to_json,
)

__all__ = [
    "ALL_TILES",
    "DOUBLE_BLANK",
    "DOUBLE_SIX",
    "LEFT",
    "RECORD_FORMAT",
    "RIGHT",
    "VARIANTS",
    "Announce",
    "DealError",
    "DominoHand",
    "DominoMatch",
    "DominoMove",
    "DominoOptions",
    "Draw",
    "End",
    "IllegalPlayError",
    "LinePlay",
    "Opening",
    "Pass",
    "Play",
    "PlayoutTrace",
    "Tile",
    "deal_tiles",
    "describe_move",
    "move_from_json",
    "move_to_json",
    "replay_record",
    "simulate_deal",
]
