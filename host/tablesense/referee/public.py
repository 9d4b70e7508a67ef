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

#: Zones whose pieces only their owner sees: racks face their player, the
#: boneyard lies face down. Every other cell (line, Kems board slots, spare
#: cells) shows its piece to the whole table.
HIDDEN_ZONES = frozenset({"rack", "boneyard"})

DOMINO_RE = re.compile(r"(?<![\w-])([0-6])-([0-6])(?![\w-])")
CARD_RE = re.compile(r"(?<![\w])(10|[2-9TJQKA])([SHDC])(?![\w])")
SEAT_RE = re.compile(r"\bseat (\d+)\b")
TEAM_RE = re.compile(r"\bteam (\d+)\b")

SUIT_SIGNS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def _domino_key(a: str, b: str) -> str:
    """Tiles are named either way round ("5-6", "6-5"): compare sorted."""
    return "-".join(sorted((a, b)))


def piece_names(text: str, game: str) -> list[str]:
    """The pieces a text names (tiles ``5-6``, cards ``TH``), normalised."""
    if game == "dominoes":
        return [_domino_key(a, b) for a, b in DOMINO_RE.findall(text)]
    return [("T" if r == "10" else r) + s for r, s in CARD_RE.findall(text)]


def normalise(piece: str, game: str) -> str:
    names = piece_names(piece, game)
    return names[0] if names else piece


def redact(text: str, public: Collection[str] | None, game: str) -> str:
    """``text`` with every piece that is not in ``public`` replaced by "the
    tile" / "the card" (``public`` None: everything is public)."""
    if public is None:
        return text
    known = {normalise(p, game) for p in public}
    if game == "dominoes":

        def tile(m: re.Match[str]) -> str:
            return m.group(0) if _domino_key(m.group(1), m.group(2)) in known else "the tile"

        return DOMINO_RE.sub(tile, text)

    def card(m: re.Match[str]) -> str:
        name = ("T" if m.group(1) == "10" else m.group(1)) + m.group(2)
        return m.group(0) if name in known else "the card"

    return CARD_RE.sub(card, text)


def pretty_cards(text: str) -> str:
    """Cards as people write them: ``TH`` → ``10♥``, ``QS`` → ``Q♠``."""

    def card(m: re.Match[str]) -> str:
        rank = "10" if m.group(1) in ("T", "10") else m.group(1)
        return rank + SUIT_SIGNS[m.group(2)]

    return CARD_RE.sub(card, text)


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
