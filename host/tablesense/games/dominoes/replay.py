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
)
from tablesense.games.dominoes.deal import DealError
from tablesense.games.dominoes.match import DominoMatch
from tablesense.games.dominoes.options import VARIANTS, DominoOptions
from tablesense.games.dominoes.tiles import DominoMove, Tile, move_from_json


def _tiles(value: Any, where: str) -> list[Tile]:
    if not isinstance(value, list):
        raise RecordFormatError(f"{where} is a list of tiles, got {value!r}")
    out = []
    for v in value:
        try:
            out.append(Tile.parse(v))
        except ValueError as exc:
            raise RecordFormatError(f"{where}: {exc}") from None
    return out


def replay_record(obj: Mapping[str, Any]) -> ReplayResult:
    """Check a dominoes game record move by move and score it.

    Raises :class:`RecordFormatError` when the record does not fit the format
    and :class:`IllegalStepError` (hand and move index, a player's sentence)
    at the first illegal step.
    """
    if not isinstance(obj, Mapping):
        raise RecordFormatError("a game record is a JSON object")
    variant = obj.get("variant")
    if obj.get("game") != "dominoes":
        raise RecordFormatError(f"not a dominoes record (game {obj.get('game')!r})")
    if variant not in VARIANTS:
        raise RecordFormatError(
            f"unknown dominoes variant {variant!r}; known: {', '.join(VARIANTS)}"
        )
    options = obj.get("options", {})
    try:
        opts = DominoOptions.from_dict(variant, options)
    except OptionError as exc:
        raise RecordFormatError(str(exc)) from None
    hands = obj.get("hands")
    if not isinstance(hands, list):
        raise RecordFormatError("'hands' is a list of hand objects")
    if not hands:
        raise RecordFormatError("a record holds at least one hand")
    first = hands[0]
    if not isinstance(first, dict) or not isinstance(first.get("deal"), list):
        raise RecordFormatError("hand 0: 'deal' is a list, one list of tiles per seat")
    seats = len(first["deal"])
    try:
        match = DominoMatch(variant, opts, seats)
    except OptionError as exc:
        raise RecordFormatError(f"hand 0: {exc}") from None
    for hi, h in enumerate(hands):
        if not isinstance(h, dict):
            raise RecordFormatError(f"hand {hi} is not a JSON object")
        unknown = [
            k for k in h if k not in ("deal", "boneyard", "moves") and not k.startswith("x-")
        ]
        if unknown:
            raise RecordFormatError(f"hand {hi}: unknown fields {unknown}")
        if "deal" not in h or "moves" not in h:
            raise RecordFormatError(f"hand {hi}: 'deal' and 'moves' are required")
        deal_raw = h["deal"]
        if not isinstance(deal_raw, list) or len(deal_raw) != seats:
            raise RecordFormatError(f"hand {hi}: 'deal' has one list of tiles per seat ({seats})")
        deal = [_tiles(d, f"hand {hi}, deal of seat {s}") for s, d in enumerate(deal_raw)]
        bone = _tiles(h.get("boneyard", []), f"hand {hi}, boneyard")
        moves = h["moves"]
        if not isinstance(moves, list):
            raise RecordFormatError(f"hand {hi}: 'moves' is a list")
        parsed: list[DominoMove] = []
        for mi, mv in enumerate(moves):
            try:
                m = move_from_json(mv)
            except RecordFormatError as exc:
                raise RecordFormatError(f"hand {hi}, move {mi}: {exc}") from None
            if m.seat >= seats:
                raise RecordFormatError(
                    f"hand {hi}, move {mi}: there is no seat {m.seat} (seats 0..{seats - 1})"
                )
            parsed.append(m)
        if match.is_over:
            raise IllegalStepError(
                hi, 0, f"the match was already over (team {match.winner} won): no hand may follow"
            )
        try:
            hand = match.new_hand(deal=deal, boneyard=bone)
        except DealError as exc:
            raise RecordFormatError(f"hand {hi}: {exc}") from None
        for mi, m in enumerate(parsed):
            try:
                hand.play(m)
            except IllegalPlayError as exc:
                raise IllegalStepError(hi, mi, str(exc)) from None
        if not hand.is_over:
            who = (
                f"seat {hand.to_play} must open with {hand.opening.tile}"
                if hand.left_end is None and hand.opening.tile is not None
                else f"seat {hand.to_play} is to play"
            )
            raise IllegalStepError(hi, len(parsed), f"the hand stops before it ends: {who}")
        match.finish_hand()
    extra: dict[str, Any] = {}
    if variant == "brazilian-points":
        extra["carry"] = [_num(p) for p in match.carry]
    return ReplayResult(tuple(match.results), tuple(match.score), match.winner, extra)


def _num(p: Points) -> int | float:
    return int(p) if float(p).is_integer() else float(p)
