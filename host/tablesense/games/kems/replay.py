"""Checking a Kems game record move by move and scoring it (:func:`replay_record`)."""

from __future__ import annotations

from typing import Any

from tablesense.games.common import (
    IllegalPlayError,
    IllegalStepError,
    OptionError,
    RecordFormatError,
    ReplayResult,
    message_of,
    say,
)
from tablesense.games.kems.cards import SEAT_COUNTS, Card
from tablesense.games.kems.events import _card, _fields, event_from_json
from tablesense.games.kems.match import KemsMatch
from tablesense.games.kems.options import KemsOptions
from tablesense.games.kems.round import DealError

_ROUND_FIELDS = {"deal", "board", "stock", "events"}


def _cards(value: Any, where: str) -> list[Card]:
    if not isinstance(value, list):
        raise RecordFormatError(say("{where} must be a list of cards, not {value!r}", where=where, value=value))
    return [_card(v, f"{where}[{i}]") for i, v in enumerate(value)]


def _read_round(
    obj: Any, i: int, seats: int | None
) -> tuple[list[list[Card]], list[Card], list[Card], list[Any]]:
    where = f"hands[{i}]"
    if not isinstance(obj, dict):
        raise RecordFormatError(say("{where} must be a round object, not {obj!r}", where=where, obj=obj))
    _fields(obj, _ROUND_FIELDS, where)
    for key in ("deal", "board", "stock", "events"):
        if key not in obj:
            raise RecordFormatError(say("{where} has no {key!r}", where=where, key=key))
    deal_obj = obj["deal"]
    if not isinstance(deal_obj, list):
        raise RecordFormatError(say("{where}.deal must be a list of 4-card hands, one per seat", where=where))
    if seats is not None and len(deal_obj) != seats:
        raise RecordFormatError(
            say("{where}.deal has {n_deal_obj} hands; this match has {seats} seats", where=where, n_deal_obj=len(deal_obj), seats=seats)
        )
    deal = [_cards(h, f"{where}.deal[{s}]") for s, h in enumerate(deal_obj)]
    board = _cards(obj["board"], f"{where}.board")
    stock = _cards(obj["stock"], f"{where}.stock")
    events = obj["events"]
    if not isinstance(events, list):
        raise RecordFormatError(say("{where}.events must be a list", where=where))
    return deal, board, stock, events


def replay_record(obj: dict[str, Any]) -> ReplayResult:
    """Replay a Kems record (a parsed JSON object) and return its result.

    :raises RecordFormatError: the record does not fit the format (exit 2).
    :raises IllegalStepError: an event is illegal, a misdeal round has
        events, a round stops before its call, or a round follows the end of
        the match (exit 1).
    """
    if not isinstance(obj, dict):
        raise RecordFormatError(say("a game record is a JSON object"))
    _fields(obj, {"format", "game", "variant", "options", "hands"}, "record")
    if obj.get("game", "kems") != "kems":
        raise RecordFormatError(say("not a Kems record (game {obj_get!r})", obj_get=obj.get('game')))
    if obj.get("variant") != "classic":
        raise RecordFormatError(
            say("unknown Kems variant {obj_get!r}: the variant is 'classic'", obj_get=obj.get('variant'))
        )
    options_obj = obj.get("options", {})
    if not isinstance(options_obj, dict):
        raise RecordFormatError(say("options must be an object"))
    hands = obj.get("hands")
    if not isinstance(hands, list):
        raise RecordFormatError(say("hands must be a list of round objects"))
    if not hands:
        raise RecordFormatError(say("a record holds at least one round ('hands' is empty)"))
    seats = 4
    if hands and isinstance(hands[0], dict) and isinstance(hands[0].get("deal"), list):
        seats = len(hands[0]["deal"])
        if seats not in SEAT_COUNTS:
            raise RecordFormatError(
                say("hands[0].deal has {seats} hands; Kems is played by 4, 6 or 8 seats", seats=seats)
            )
    try:
        options = KemsOptions.from_dict(options_obj, seats)
    except OptionError as exc:
        raise RecordFormatError(say("options: {exc}", exc=message_of(exc))) from None
    match = KemsMatch(options, seats)
    # the whole record is read before anything is played: a field that does
    # not fit the format is exit 2 wherever it is, before any illegal step
    parsed = [_read_round(h, i, seats) for i, h in enumerate(hands)]
    parsed = [
        (
            deal,
            board,
            stock,
            [event_from_json(e, f"hands[{i}].events[{j}]", seats) for j, e in enumerate(events)],
        )
        for i, (deal, board, stock, events) in enumerate(parsed)
    ]
    for i, (deal, board, stock, events) in enumerate(parsed):
        if match.is_over:
            raise IllegalStepError(
                i,
                0,
                say("the match was over after round {i} (team {winner} reached {target} points): no round may follow", i=i - 1, winner=match.winner, target=match.target),
            )
        try:
            rnd = match.new_hand(deal=deal, board=board, stock=stock)
        except DealError as exc:
            raise RecordFormatError(say("hands[{i}]: {exc}", i=i, exc=message_of(exc))) from None
        if rnd.is_misdeal and events:
            raise IllegalStepError(
                i,
                0,
                say("this round is a misdeal ({rnd_misdeal}): it is redealt and has no events", rnd_misdeal=rnd.misdeal_reason()),
            )
        for j, event in enumerate(events):
            try:
                rnd.play(event)
            except IllegalPlayError as exc:
                raise IllegalStepError(i, j, message_of(exc)) from None
        if not rnd.is_over:
            raise IllegalStepError(
                i,
                len(events),
                say("the round stops before anyone calls: a round ends at its first call"),
            )
        match.finish_hand()
    return ReplayResult(
        hands=tuple(match.results),
        score=tuple(match.score),
        winner=match.winner,
    )
