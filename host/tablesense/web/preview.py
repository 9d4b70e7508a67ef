"""Display views built straight from the engines, without a referee.

For previewing and measuring the display page and for its browser tests: the
same public ``view`` schema the referee publishes (CONTRACTS section 6,
docs/display.md), produced from a game played with legal moves, plus what the
page must then show (:func:`displayed_line`). The referee's own views come
from :meth:`tablesense.referee.core.Referee.view`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

#: Seat names of the previews (seat order).
NAMES = ["Ana", "Bruno", "Carla", "Davi", "Eva", "Fabio", "Gil", "Hugo"]
NAMES4 = NAMES[:4]

__all__ = ["NAMES", "NAMES4", "displayed_line", "dominoes_view", "kems_view", "random_domino_moves"]


def dominoes_view(
    match: Any,
    hand: Any,
    *,
    hand_no: int,
    facts: Mapping[str, Any],
    message: dict | None = None,
    last_move: dict | None = None,
    result: dict | None = None,
) -> dict[str, Any]:
    """The view of ``hand`` (a ``DominoHand``) in ``match`` (a ``DominoMatch``);
    ``facts`` are the game's page facts (``Game.page_facts``), which the
    referee's views carry too."""
    n = hand.seats
    to_play = None if hand.is_over else hand.to_play
    line: dict[str, Any] = {"center": None, "left": [], "right": []}
    if hand.line:
        first = hand.line[0]
        line["center"] = {"tile": str(first.tile), "seat": first.seat}
        for end in ("left", "right"):
            line[end] = [
                {"tile": str(lp.tile), "outer": lp.outer, "seat": lp.seat} for lp in hand.arm(end)
            ]
    view: dict[str, Any] = {
        "game": facts["name"],
        "facts": dict(facts),
        "variant": match.variant,
        "table": "dominoes-4",
        "seats": [
            {
                "index": i,
                "name": NAMES[i],
                "team": hand.team_of(i),
                "count": len(hand.hands[i]),
                "is_turn": to_play == i,
                "kind": "bot" if i == 3 else "human",
            }
            for i in range(n)
        ],
        "scores": [int(s) if float(s).is_integer() else s for s in match.score],
        "target": match.target,
        "hand_no": hand_no,
        "to_play": to_play,
        "line": line,
        "message": message,
        "boards": [{"id": 1, "online": True}, {"id": 2, "online": True}],
        # a public view: a drawn tile is not named (the referee's rule too)
        "last_move": (
            {**last_move, "draw": True} if last_move and "draw" in last_move else last_move
        ),
        "result": result,
        "match_over": match.is_over,
        "winner": match.winner,
    }
    if hand.line:
        view["ends"] = {"left": hand.left_end, "right": hand.right_end}
    return view


def displayed_line(hand: Any) -> dict[str, list[str]]:
    """What the page must draw: each arm outward as (low-high) tiles."""
    return {
        "center": [str(hand.line[0].tile)] if hand.line else [],
        "left": [str(lp.tile) for lp in hand.arm("left")],
        "right": [str(lp.tile) for lp in hand.arm("right")],
    }


def kems_view(
    match: Any,
    rnd: Any,
    *,
    hand_no: int,
    facts: Mapping[str, Any],
    message: dict | None = None,
    last_move: dict | None = None,
    result: dict | None = None,
) -> dict[str, Any]:
    """The view of ``rnd`` (a ``KemsRound``) in ``match`` (a ``KemsMatch``);
    ``facts`` as for :func:`dominoes_view`."""
    n = rnd.seats
    return {
        "game": facts["name"],
        "facts": dict(facts),
        "variant": "classic",
        "table": f"kems-{n}",
        "seats": [
            {
                "index": i,
                "name": NAMES[i],
                "team": rnd.team_of(i),
                "count": len(rnd.hands[i]),
                "is_turn": False,
                "kind": "human",
            }
            for i in range(n)
        ],
        "scores": [int(s) if float(s).is_integer() else s for s in match.score],
        "target": match.target,
        "hand_no": hand_no,
        "to_play": None,
        "board": [str(c) for c in rnd.board],
        "stock": len(rnd.stock),
        "message": message,
        "boards": [{"id": 1, "online": True}],
        # a public view: a drawn tile is not named (the referee's rule too)
        "last_move": (
            {**last_move, "draw": True} if last_move and "draw" in last_move else last_move
        ),
        "result": result,
        "match_over": match.is_over,
        "winner": match.winner,
    }


def random_domino_moves(hand: Any, rng: random.Random, limit: int) -> list[Any]:
    """Legal moves played on ``hand`` (mutates it), up to ``limit`` or hand end."""
    played = []
    while not hand.is_over and len(played) < limit:
        moves = hand.legal_moves()
        # prefer plays so the line grows (and doubles/turns get drawn)
        plays = [m for m in moves if type(m).__name__ == "Play"]
        move = rng.choice(plays or moves)
        hand.play(move)
        played.append(move)
    return played
