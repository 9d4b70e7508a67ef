"""What happens in a round (:class:`Swap`, :class:`Refresh`, :class:`Call`) and its JSON in the record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from tablesense.games.common import (
    RecordFormatError,
    Seat,
    message_of,
    say,
    short_repr,
)
from tablesense.games.kems.cards import Card

CallKind: TypeAlias = Literal["kems", "double", "contre"]
CALL_KINDS: tuple[str, ...] = ("kems", "double", "contre")


@dataclass(frozen=True, slots=True)
class Swap:
    """``seat`` lays ``give`` on the board and takes ``take`` from it.

    ``give`` takes the board slot that ``take`` leaves. ``take == give`` (a
    take-back) is legal only with the option ``allow_take_back``.
    """

    seat: Seat
    give: Card
    take: Card

    def __str__(self) -> str:
        return f"seat {self.seat} gives {self.give}, takes {self.take}"


@dataclass(frozen=True, slots=True)
class Refresh:
    """The 4 board cards leave the board and the next 4 stock cards are laid
    face up (where the old board goes: option ``refresh``)."""

    def __str__(self) -> str:
        return "refresh"


@dataclass(frozen=True, slots=True)
class Call:
    """A call; the first call ends the round.

    ``kems``: ``seat`` says its partner holds four of a kind. ``double``: right
    after its partner's ``kems``, ``seat`` claims both partners hold four of a
    kind. ``contre``: ``seat`` says opponent ``target`` holds four of a kind.
    """

    seat: Seat
    kind: CallKind
    target: Seat | None = None

    def __post_init__(self) -> None:
        if self.kind not in CALL_KINDS:
            raise ValueError(f"{self.kind!r} is not a call: the calls are kems, double, contre")
        if self.kind == "contre" and self.target is None:
            raise ValueError("a contre names its target: the opponent said to hold four of a kind")
        if self.kind != "contre" and self.target is not None:
            raise ValueError(f"a {self.kind} call has no target; only a contre names one")

    def __str__(self) -> str:
        if self.kind == "contre":
            return f"seat {self.seat} calls contre on seat {self.target}"
        return f"seat {self.seat} calls {self.kind}"


KemsEvent: TypeAlias = Swap | Refresh | Call


def event_to_json(event: KemsEvent) -> dict[str, Any]:
    """An event as the record format writes it."""
    if isinstance(event, Swap):
        return {"seat": event.seat, "swap": {"give": str(event.give), "take": str(event.take)}}
    if isinstance(event, Refresh):
        return {"refresh": True}
    out: dict[str, Any] = {"seat": event.seat, "call": event.kind}
    if event.target is not None:
        out["target"] = event.target
    return out


def _fields(obj: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(k for k in obj if k not in allowed and not str(k).startswith("x-"))
    if extra:
        raise RecordFormatError(
            say("{where}: unknown field {extra!r} (allowed: {allowed}, or writer fields starting with 'x-')", where=where, extra=extra[0], allowed=', '.join(sorted(allowed)))
        )


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordFormatError(say("{where} must be an integer, not {short_value}", where=where, short_value=short_repr(value)))
    return value


def _seat(value: Any, where: str, seats: int | None) -> int:
    seat = _int(value, where)
    if seats is not None and not 0 <= seat < seats:
        raise RecordFormatError(say("{where}: there is no seat {seat} (seats 0..{seats})", where=where, seat=seat, seats=seats - 1))
    return seat


def _card(value: Any, where: str) -> Card:
    try:
        return Card.parse(value)
    except ValueError as exc:
        raise RecordFormatError(say("{where}: {exc}", where=where, exc=message_of(exc))) from None


def event_from_json(obj: Any, where: str = "event", seats: int | None = None) -> KemsEvent:
    """Read one event of a round object.

    With ``seats``, a seat (or a contre's target) outside ``0..seats-1`` does
    not fit the format either: the record names a seat the table does not have
    (whether an *existing* seat may act is the round's question).

    :raises RecordFormatError: when ``obj`` is not an event of the format
        (the message starts with ``where``).
    """
    if not isinstance(obj, dict):
        raise RecordFormatError(say("{where} must be an object, not {obj!r}", where=where, obj=obj))
    if "refresh" in obj:
        _fields(obj, {"refresh"}, where)
        if obj["refresh"] is not True:
            raise RecordFormatError(say('{where}: a refresh is written {{"refresh": true}}', where=where))
        return Refresh()
    if "seat" not in obj:
        raise RecordFormatError(
            say("{where}: an event is a swap, a refresh or a call; this has no seat", where=where)
        )
    seat = _seat(obj["seat"], f"{where}.seat", seats)
    if "swap" in obj:
        _fields(obj, {"seat", "swap"}, where)
        swap = obj["swap"]
        if not isinstance(swap, dict):
            raise RecordFormatError(say('{where}.swap must be {{"give": CARD, "take": CARD}}', where=where))
        _fields(swap, {"give", "take"}, f"{where}.swap")
        for key in ("give", "take"):
            if key not in swap:
                raise RecordFormatError(say("{where}.swap has no {key!r} card", where=where, key=key))
        return Swap(
            seat,
            _card(swap["give"], f"{where}.swap.give"),
            _card(swap["take"], f"{where}.swap.take"),
        )
    if "call" in obj:
        _fields(obj, {"seat", "call", "target"}, where)
        kind = obj["call"]
        if kind not in CALL_KINDS:
            raise RecordFormatError(say("{where}.call: {kind!r} is not a call (kems, double, contre)", where=where, kind=kind))
        target = obj.get("target")
        if kind == "contre":
            if "target" not in obj:
                raise RecordFormatError(say("{where}: a contre names its target seat ('target')", where=where))
            target = _seat(target, f"{where}.target", seats)
        elif "target" in obj:
            raise RecordFormatError(say("{where}: only a contre has a target, not a {kind}", where=where, kind=kind))
        return Call(seat, kind, target)
    raise RecordFormatError(say("{where}: an event has 'swap', 'refresh' or 'call'", where=where))
