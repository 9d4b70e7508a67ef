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

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import select

from tablesense.games.common import message_of, say
from tablesense.games.dominoes.match import DominoMatch
from tablesense.games.dominoes.options import DominoOptions
from tablesense.games.dominoes.tiles import Announce, Draw, Pass, Play, Tile, move_from_json
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
from tablesense.games.registry import GAMES
from tablesense.i18n import N_

from .db import Database, Entrant, Event, Match, Result, match_entrants

#: A Kems round's outcome (``HandResult.label``), by seed 003's names.
_OUTCOMES = {k: k for k in (N_("kems"), N_("false kems"), N_("double kems"), N_("kems, false double"), N_("false double"),
                            N_("contre"), N_("double contre"), N_("failed contre"))}


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


def match_place(db: Database, match_id: int) -> tuple[int, int | None]:
    """(round, table) of a match: how its replay is titled (never the database id)."""
    with db.session() as s:
        m = s.get(Match, match_id)
        if m is None:
            raise RecordViewError(f"no match {match_id}")
        return int(m.round_no), m.table_no


def seat_names(db: Database, match_id: int) -> list[str]:
    """Who sat where in a match (the director's seat plan, as its assignment gave
    it to the table): the replay names the players, not "Seat 1"."""
    from .kway import seat_plan
    from .rounds import _seats

    with db.session() as s:
        m = s.get(Match, match_id)
        if m is None:
            return []
        ev = s.get(Event, m.event_id)
        sides = [s.get(Entrant, e) for e in match_entrants(m)]
        members = [list(e.members) if e is not None else [] for e in sides]
        if ev is None or len(members) < 2 or not all(members):
            return []
        seats = int(ev.options.get("seats", 4))
        plan = _seats(members[0], members[1]) if len(members) == 2 else seat_plan(ev.game, members, seats)
    return [str(p["player"]) for p in sorted(plan, key=lambda p: p["seat"])]


def steps(record: Mapping[str, Any], tr: Callable[[object], str] = str, names: Sequence[str] = ()) -> dict[str, Any]:
    """Every hand of a dominoes record (or round of a Kems record) as a list of steps.

    A step's ``text`` is a sentence for people, seats counted from 1, in ``tr``'s
    language (the templates are the table display's own, so they read alike)."""
    game = GAMES.get(str(record.get("game")))
    if game is None:
        raise RecordViewError(f"only {' and '.join(GAMES)} records can be stepped through, not {record.get('game')!r}")
    if game.play_area == "board":
        return {**kems_steps(record, tr, names), "play_area": game.play_area}
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
            st: list[dict[str, Any]] = [{"text": tr(say("the deal")), "seat": None, "line": hand.line_view(), "last": None}]
            for mv in h["moves"]:
                m = move_from_json(mv)
                hand.play(m)
                st.append({"text": tr(_domino_text(m, names)), "seat": m.seat, "line": hand.line_view(),
                           "last": str(m.tile) if isinstance(m, Play) else None})
            match.finish_hand()
            out.append({"score_before": before, "score_after": [float(x) for x in match.score], "steps": st})
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise RecordViewError(f"the record cannot be replayed: {message_of(exc)}") from None
    return {"game": game.name, "play_area": game.play_area, "variant": record.get("variant"), "seats": seats, "names": list(names), "hands": out}


_SUITS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


def _card_text(card: object) -> str:
    """"TH" -> "10\u2665", as the display writes a card."""
    c = str(card)
    rank = "10" if c[:-1] == "T" else c[:-1]
    return rank + _SUITS.get(c[-1], c[-1])


def _seat(seat: int, names: Sequence[str] = ()) -> str:
    """The player at ``seat`` by name when the seat plan is known, else "Seat 3" (seats from 1)."""
    if 0 <= seat < len(names) and names[seat]:
        return names[seat]
    return say("Seat {n}", n=seat + 1)


def _domino_text(m: object, names: Sequence[str] = ()) -> str:
    """A move as the table display says it (``referee.view``'s templates), seats from 1."""
    if isinstance(m, Play):
        who, tile = _seat(m.seat, names), str(m.tile)
        if m.end == "left":
            return say("{who} plays {tile} on the left end", who=who, tile=tile)
        if m.end == "right":
            return say("{who} plays {tile} on the right end", who=who, tile=tile)
        return say("{who} plays {tile}", who=who, tile=tile)
    if isinstance(m, Pass):
        return say("{who} passes", who=_seat(m.seat, names))
    if isinstance(m, Draw):
        return say("{who} draws {tile}", who=_seat(m.seat, names), tile=str(m.tile))  # a record shows every tile
    if isinstance(m, Announce):
        return say("{who} announces {tile}", who=_seat(m.seat, names), tile=str(m.tile))
    return str(m)


#: Kems calls by the names seed 003 gives them.
_CALLS = {"kems": N_("Kems"), "double": N_("Double Kems"), "contre": N_("contre")}


def _kems_text(event: Swap | Refresh | Call, names: Sequence[str] = ()) -> str:
    if isinstance(event, Swap):
        who = _seat(event.seat, names)
        if event.give == event.take:
            return say("{who} takes back {card}", who=who, card=_card_text(event.give))
        return say("{who} gives {give}, takes {take}", who=who, give=_card_text(event.give), take=_card_text(event.take))
    if isinstance(event, Call):
        call = say(_CALLS.get(event.kind, event.kind))
        if event.kind == "contre":
            return say("{who} calls {call} on {target}", who=_seat(event.seat, names), call=call, target=_seat(event.target or 0, names))
        return say("{who} calls {call}", who=_seat(event.seat, names), call=call)
    return say("Refresh: four new board cards")


def _position(rnd: KemsRound) -> dict[str, Any]:
    """A Kems round's position as the page draws it: board slots, every seat's hand, stock size."""
    return {"board": [str(c) for c in rnd.board], "hands": [[str(c) for c in h] for h in rnd.hands],
            "stock": len(rnd.stock)}


def kems_steps(record: Mapping[str, Any], tr: Callable[[object], str] = str, names: Sequence[str] = ()) -> dict[str, Any]:
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
            rnd = match.new_hand(deal=[[Card.parse(c) for c in h] for h in r["deal"]],
                                  board=[Card.parse(c) for c in r["board"]],
                                  stock=[Card.parse(c) for c in r["stock"]])
            before = [float(x) for x in match.score]

            first = say("the deal (a misdeal: {reason})", reason=rnd.misdeal_reason()) if rnd.is_misdeal else say("the deal")
            st: list[dict[str, Any]] = [{"text": tr(first), "kind": "deal", "seat": None, "changed": {}, **_position(rnd)}]
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
                st.append({"text": tr(_kems_text(ev, names)), "kind": kind, "seat": seat, "changed": changed, **now})
            res = match.finish_hand()
            out.append({"score_before": before, "score_after": [float(x) for x in match.score],
                        "outcome": tr(say(_OUTCOMES.get(res.label or res.outcome, res.label or res.outcome))), "steps": st})
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise RecordViewError(f"the record cannot be replayed: {message_of(exc)}") from None
    return {"game": record.get("game"), "variant": record.get("variant"), "seats": seats, "names": list(names), "hands": out}
