"""A stored game record, step by step, for the replay viewer on a player's page.

The record is replayed with the dominoes engine (as ``rules replay`` and the
director's result check do); after every move the line of play is taken as
the table display draws it (``DominoHand.line_view``), so the page can draw
each step with the display's own renderer (``domino_svg.js``). Records are
the ones the tables sent with their signed results (``ts_results``); a
result entered by hand has none (the page says so).

A Kems record is replayed the same way with the Kems engine, round by round:
after every event (a swap between a hand and the board, a refresh, a call)
the four board cards and every seat's hand are taken from the round, so the
page draws them with the display's own card function
(``TableDisplay.cardNode``) and marks what the event changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from tablesense.games.common import message_of
from tablesense.games.dominoes.match import DominoMatch
from tablesense.games.dominoes.options import DominoOptions
from tablesense.games.dominoes.tiles import Play, Tile, describe_move, move_from_json
from tablesense.games.kems import (
    Call,
    Card,
    KemsMatch,
    KemsOptions,
    KemsRound,
    Refresh,
    Swap,
    event_from_json,
    replay_record,
)

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
    """Every hand of a dominoes record (or round of a Kems record) as a list of steps."""
    if record.get("game") == "kems":
        return kems_steps(record)
    if record.get("game") != "dominoes":
        raise RecordViewError(f"only dominoes and Kems records can be stepped through, not {record.get('game')!r}")
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
    return {"game": "dominoes", "variant": record.get("variant"), "seats": seats, "hands": out}


_SUITS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


def _card_text(card: object) -> str:
    """"TH" -> "10\u2665", as the display writes a card."""
    c = str(card)
    rank = "10" if c[:-1] == "T" else c[:-1]
    return rank + _SUITS.get(c[-1], c[-1])


def _kems_text(event: Swap | Refresh | Call) -> str:
    if isinstance(event, Swap):
        if event.give == event.take:
            return f"Seat {event.seat + 1} takes back {_card_text(event.give)}"
        return f"Seat {event.seat + 1} gives {_card_text(event.give)}, takes {_card_text(event.take)}"
    if isinstance(event, Call):
        if event.kind == "contre":
            return f"Seat {event.seat + 1} calls contre on seat {(event.target or 0) + 1}"
        return f"Seat {event.seat + 1} calls {event.kind}"
    return "Refresh: four new board cards"


def _position(rnd: KemsRound) -> dict[str, Any]:
    """A Kems round's position as the page draws it: board slots, every seat's hand, stock size."""
    return {"board": [str(c) for c in rnd.board], "hands": [[str(c) for c in h] for h in rnd.hands],
            "stock": len(rnd.stock)}


def kems_steps(record: Mapping[str, Any]) -> dict[str, Any]:
    """Every round of a Kems record as steps: event text, board, hands and what changed.

    The whole record is first checked with ``kems.replay_record`` (the rules'
    own replay), then played again round by round to take the positions."""
    try:
        replay_record(dict(record))
        hands = record["hands"]
        seats = len(hands[0]["deal"])
        match = KemsMatch(KemsOptions.from_dict(record.get("options", {}), seats), seats)
        out = []
        for r in hands:
            rnd = match.new_round(deal=[[Card.parse(c) for c in h] for h in r["deal"]],
                                  board=[Card.parse(c) for c in r["board"]],
                                  stock=[Card.parse(c) for c in r["stock"]])
            before = [float(x) for x in match.score]

            first = "the deal" + (f" (a misdeal: {rnd.misdeal_reason()})" if rnd.is_misdeal else "")
            st: list[dict[str, Any]] = [{"text": first, "kind": "deal", "seat": None, "changed": {}, **_position(rnd)}]
            for raw in r["events"]:
                ev = event_from_json(raw, "event", seats)
                old = _position(rnd)
                rnd.play(ev)
                now = _position(rnd)
                changed: dict[str, Any] = {"board": [i for i, (a, b) in enumerate(zip(old["board"], now["board"], strict=True))
                                                     if a != b]}
                kind = "refresh" if isinstance(ev, Refresh) else "swap" if isinstance(ev, Swap) else "call"
                if isinstance(ev, Swap):
                    changed["seat"] = ev.seat
                    changed["hand"] = [i for i, (a, b) in enumerate(zip(old["hands"][ev.seat], now["hands"][ev.seat], strict=True))
                                       if a != b]
                seat = ev.seat if isinstance(ev, Swap | Call) else None
                st.append({"text": _kems_text(ev), "kind": kind, "seat": seat, "changed": changed, **now})
            res = match.finish_round()
            out.append({"score_before": before, "score_after": [float(x) for x in match.score],
                        "outcome": res.label or res.outcome, "steps": st})
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise RecordViewError(f"the record cannot be replayed: {message_of(exc)}") from None
    return {"game": "kems", "variant": record.get("variant"), "seats": seats, "hands": out}
