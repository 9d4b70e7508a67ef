"""Replay a dominoes game record move by move (``tablesense rules replay``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tablesense.games.common import (
    IllegalPlayError,
    IllegalStepError,
    OptionError,
    Points,
    RecordFormatError,
    ReplayResult,
    message_of,
    say,
)
from tablesense.games.dominoes.deal import DealError
from tablesense.games.dominoes.match import DominoMatch
from tablesense.games.dominoes.options import VARIANTS, DominoOptions
from tablesense.games.dominoes.tiles import DominoMove, Tile, move_from_json


def _tiles(value: Any, where: str) -> list[Tile]:
    if not isinstance(value, list):
        raise RecordFormatError(say("{where} is a list of tiles, got {value!r}", where=where, value=value))
    out = []
    for v in value:
        try:
            out.append(Tile.parse(v))
        except ValueError as exc:
            raise RecordFormatError(say("{where}: {exc}", where=where, exc=message_of(exc))) from None
    return out


def replay_record(obj: Mapping[str, Any]) -> ReplayResult:
    """Check a dominoes game record move by move and score it.

    Raises :class:`RecordFormatError` when the record does not fit the format
    and :class:`IllegalStepError` (hand and move index, a player's sentence)
    at the first illegal step.
    """
    if not isinstance(obj, Mapping):
        raise RecordFormatError(say("a game record is a JSON object"))
    variant = obj.get("variant")
    if obj.get("game") != "dominoes":
        raise RecordFormatError(say("not a dominoes record (game {obj_get!r})", obj_get=obj.get('game')))
    if variant not in VARIANTS:
        raise RecordFormatError(
            say("unknown dominoes variant {variant!r}; known: {variants}", variant=variant, variants=', '.join(VARIANTS))
        )
    options = obj.get("options", {})
    try:
        opts = DominoOptions.from_dict(variant, options)
    except OptionError as exc:
        raise RecordFormatError(message_of(exc)) from None
    hands = obj.get("hands")
    if not isinstance(hands, list):
        raise RecordFormatError(say("'hands' is a list of hand objects"))
    if not hands:
        raise RecordFormatError(say("a record holds at least one hand"))
    first = hands[0]
    if not isinstance(first, dict) or not isinstance(first.get("deal"), list):
        raise RecordFormatError(say("hand 0: 'deal' is a list, one list of tiles per seat"))
    seats = len(first["deal"])
    try:
        match = DominoMatch(variant, opts, seats)
    except OptionError as exc:
        raise RecordFormatError(say("hand 0: {exc}", exc=message_of(exc))) from None
    for hi, h in enumerate(hands):
        if not isinstance(h, dict):
            raise RecordFormatError(say("hand {hi} is not a JSON object", hi=hi))
        unknown = [
            k for k in h if k not in ("deal", "boneyard", "moves") and not k.startswith("x-")
        ]
        if unknown:
            raise RecordFormatError(say("hand {hi}: unknown fields {unknown}", hi=hi, unknown=unknown))
        if "deal" not in h or "moves" not in h:
            raise RecordFormatError(say("hand {hi}: 'deal' and 'moves' are required", hi=hi))
        deal_raw = h["deal"]
        if not isinstance(deal_raw, list) or len(deal_raw) != seats:
            raise RecordFormatError(say("hand {hi}: 'deal' has one list of tiles per seat ({seats})", hi=hi, seats=seats))
        deal = [_tiles(d, f"hand {hi}, deal of seat {s}") for s, d in enumerate(deal_raw)]
        bone = _tiles(h.get("boneyard", []), f"hand {hi}, boneyard")
        moves = h["moves"]
        if not isinstance(moves, list):
            raise RecordFormatError(say("hand {hi}: 'moves' is a list", hi=hi))
        parsed: list[DominoMove] = []
        for mi, mv in enumerate(moves):
            try:
                m = move_from_json(mv)
            except RecordFormatError as exc:
                raise RecordFormatError(say("hand {hi}, move {mi}: {exc}", hi=hi, mi=mi, exc=message_of(exc))) from None
            if m.seat >= seats:
                raise RecordFormatError(
                    say("hand {hi}, move {mi}: there is no seat {seat} (seats 0..{seats})", hi=hi, mi=mi, seat=m.seat, seats=seats - 1)
                )
            parsed.append(m)
        if match.is_over:
            raise IllegalStepError(
                hi, 0, say("the match was already over (team {winner} won): no hand may follow", winner=match.winner)
            )
        try:
            hand = match.new_hand(deal=deal, boneyard=bone)
        except DealError as exc:
            raise RecordFormatError(say("hand {hi}: {exc}", hi=hi, exc=message_of(exc))) from None
        for mi, m in enumerate(parsed):
            try:
                hand.play(m)
            except IllegalPlayError as exc:
                raise IllegalStepError(hi, mi, message_of(exc)) from None
        if not hand.is_over:
            who = (
                f"seat {hand.to_play} must open with {hand.opening.tile}"
                if hand.left_end is None and hand.opening.tile is not None
                else f"seat {hand.to_play} is to play"
            )
            raise IllegalStepError(hi, len(parsed), say("the hand stops before it ends: {who}", who=who))
        match.finish_hand()
    extra: dict[str, Any] = {}
    if variant == "brazilian-points":
        extra["carry"] = [_num(p) for p in match.carry]
    return ReplayResult(tuple(match.results), tuple(match.score), match.winner, extra)


def _num(p: Points) -> int | float:
    return int(p) if float(p).is_integer() else float(p)
