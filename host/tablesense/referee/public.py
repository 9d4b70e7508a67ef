"""What may be said in public: the referee's texts and events without the
pieces a seat holds hidden.

Everything the referee publishes reaches every display subscriber (the page,
a phone, a spectator screen), so a public event names a tile or a card only
while everyone at the table can see it: on a face-up cell (the line, the
Kems board), played, announced, or once the hand is over. What only one seat
may know (the tile it drew, the tile that fits when it may not pass, the
deal) travels under the event's ``private`` key, which public channels drop
(:func:`tablesense.outputs.events.public_event`).

The texts are made public by :func:`redact`: a piece that is not public at
that moment becomes "the tile" / "the card" (the lit cells still show the
players where). Engine messages number seats from 0; :func:`engine_text`
names them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from tablesense.games.game import Game

#: Zones whose pieces only their owner sees: racks face their player, the
#: boneyard lies face down. Every other cell (line, Kems board slots, spare
#: cells) shows its piece to the whole table.
HIDDEN_ZONES = frozenset({"rack", "boneyard"})

SEAT_RE = re.compile(r"\bseat (\d+)\b")
TEAM_RE = re.compile(r"\bteam (\d+)\b")

def piece_names(text: str, game: Game) -> list[str]:
    """The pieces a text names (tiles ``5-6``, cards ``TH``), normalised."""
    return game.piece_names(text)


def normalise(piece: str, game: Game) -> str:
    names = piece_names(piece, game)
    return names[0] if names else piece


def redact(text: str, public: Collection[str] | None, game: Game) -> str:
    """``text`` with every piece that is not in ``public`` replaced by "the
    tile" / "the card" (``public`` None: everything is public)."""
    if public is None:
        return text
    return game.hide_pieces(text, {normalise(p, game) for p in public})


def engine_text(message: str, seat_label: Callable[[int], str], team_name: Callable[[int], str]) -> str:
    """An engine's message with its 0-based ``seat N`` / ``team N`` named."""

    def seat(m: re.Match[str]) -> str:
        return seat_label(int(m.group(1)))

    def team(m: re.Match[str]) -> str:
        return team_name(int(m.group(1)))

    return TEAM_RE.sub(team, SEAT_RE.sub(seat, message))


def public_move(move: Mapping[str, Any]) -> dict[str, Any]:
    """A record move as the public may see it: a draw says only that a tile
    was drawn (``{"seat": 1, "draw": true}``)."""
    out = dict(move)
    if "draw" in out:
        out["draw"] = True
    return out
