"""Kems (Quems), variant ``classic``: the rules engine.

Seed 003 (a Malay translation of French rules) is the authority; every
sentence of it, the reading chosen and the option that controls it are in
``docs/rules/kems.md``. The record format is ``docs/record-format.md``.

Kems is played simultaneously: there are no turns. Every seat may swap one of
its cards with a face-up board card at any time (give first, then take), the
board may be refreshed from the stock, and the round ends at its first call:

- ``kems``: the caller says its *partner* holds four of a kind (the partner
  signalled it);
- ``double``: right after its partner's ``kems``, the partner claims that both
  of them hold four of a kind (a double Kems);
- ``contre``: the caller says that an opponent holds four of a kind.

The engine is pure: no I/O, no clock; randomness only through an injected
``random.Random`` (dealing). Like python-chess, :meth:`KemsRound.check` only
answers (raising :class:`IllegalPlayError` with a sentence a player
understands), :meth:`KemsRound.play` checks then applies, :meth:`KemsRound.apply`
applies without checking, and :meth:`KemsRound.undo` restores the state
before the last event.

Seats are numbered around the table; seats alternate teams, the partner of
seat ``s`` is ``(s + n/2) mod n`` and its team is ``s mod (n/2)``.

One module per concern, all re-exported here (import from
``tablesense.games.kems``): :mod:`.cards`, :mod:`.events`, :mod:`.options`,
:mod:`.round`, :mod:`.match`, :mod:`.replay`, and :mod:`.game` (Kems as a
:class:`~tablesense.games.game.Game`).
"""

from __future__ import annotations

from tablesense.games.kems.cards import (
    BOARD_SIZE,
    HAND_SIZE,
    RANKS,
    RANKS_32,
    SEAT_COUNTS,
    SUITS,
    Card,
    deck,
    iter_cards,
    partner_of,
    rank_name,
    team_of,
)
from tablesense.games.kems.events import (
    CALL_KINDS,
    Call,
    CallKind,
    KemsEvent,
    Refresh,
    Swap,
    event_from_json,
    event_to_json,
)
from tablesense.games.kems.match import KemsMatch
from tablesense.games.kems.options import KemsOptions
from tablesense.games.kems.replay import replay_record
from tablesense.games.kems.round import DealError, KemsRound, SeatView, deal_cards

__all__ = [
    "BOARD_SIZE",
    "CALL_KINDS",
    "Call",
    "CallKind",
    "Card",
    "DealError",
    "HAND_SIZE",
    "KemsEvent",
    "KemsMatch",
    "KemsOptions",
    "KemsRound",
    "RANKS",
    "RANKS_32",
    "Refresh",
    "SEAT_COUNTS",
    "SUITS",
    "SeatView",
    "Swap",
    "deal_cards",
    "deck",
    "event_from_json",
    "event_to_json",
    "iter_cards",
    "partner_of",
    "rank_name",
    "replay_record",
    "team_of",
]
