"""A stored game record, step by step, for the replay viewer on a player's page.

The record is replayed with the dominoes engine (as ``rules replay`` and the
director's result check do); after every move the line of play is taken as
the table display draws it (``DominoHand.line_view``), so the page can draw
each step with the display's own renderer (``domino_svg.js``). Records are
the ones the tables sent with their signed results (``ts_results``); a
result entered by hand has none. Kems records are listed but not stepped
through (no card renderer on the display yet).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from tablesense.games.common import message_of
from tablesense.games.dominoes.match import DominoMatch
from tablesense.games.dominoes.options import DominoOptions
from tablesense.games.dominoes.tiles import Play, Tile, describe_move, move_from_json

from .db import Database, Match, Result


class RecordViewError(ValueError):
    """The record cannot be stepped through (the message says why)."""


def match_records(db: Database, match_id: int) -> list[dict[str, Any]]:
    """The game records of a match's accepted result (latest revision), or []."""
    with db.session() as s:
        m = s.get(Match, match_id)
        if m is None:
            raise RecordViewError(f"no match {match_id}")
        r = s.get(Result, m.result_id) if m.result_id else s.scalar(
            select(Result).where(Result.match_id == match_id).order_by(Result.revision.desc()).limit(1))
        if r is None:
            return []
        recs = r.payload.get("records", [])
        return [x for x in recs if isinstance(x, dict)] if isinstance(recs, list) else []


def steps(record: Mapping[str, Any]) -> dict[str, Any]:
    """Every hand of a dominoes record as a list of steps: move text, seat, line, scores."""
    if record.get("game") != "dominoes":
        raise RecordViewError(f"only dominoes records can be stepped through, not {record.get('game')!r}")
    try:
        opts = DominoOptions.from_dict(str(record.get("variant")), record.get("options", {}))
        hands = record["hands"]
        seats = len(hands[0]["deal"])
        match = DominoMatch(str(record["variant"]), opts, seats)
        out = []
        for h in hands:
            deal = [[Tile.parse(t) for t in d] for d in h["deal"]]
            hand = match.new_hand(deal=deal, boneyard=[Tile.parse(t) for t in h.get("boneyard", [])])
            before = [float(x) for x in match.score]
            st: list[dict[str, Any]] = [{"text": "the deal", "seat": None, "line": hand.line_view(), "last": None}]
            for mv in h["moves"]:
                m = move_from_json(mv)
                hand.play(m)
                st.append({"text": describe_move(m), "seat": m.seat, "line": hand.line_view(),
                           "last": str(m.tile) if isinstance(m, Play) else None})
            match.finish_hand()
            out.append({"score_before": before, "score_after": [float(x) for x in match.score], "steps": st})
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise RecordViewError(f"the record cannot be replayed: {message_of(exc)}") from None
    return {"variant": record.get("variant"), "seats": seats, "hands": out}
