"""The options of variant ``classic``, each with the seed text's default (``docs/rules/kems.md``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, TypeAlias

from tablesense.games.common import (
    OptionError,
    say,
)
from tablesense.games.kems.cards import BOARD_SIZE, HAND_SIZE, SEAT_COUNTS

FalseCall: TypeAlias = Literal["caller-minus-one", "opponents-plus-one"]
FalseDouble: TypeAlias = Literal["penalty", "kems-stands"]
DoubleContre: TypeAlias = Literal["both-hands", "never"]
RefreshRule: TypeAlias = Literal["bottom", "discard"]


@dataclass(frozen=True)
class KemsOptions:
    """The options of variant ``classic`` (defaults: docs/rules/kems.md).

    Build it with :meth:`from_dict`, which knows the seat-dependent default of
    ``deck`` and rejects unknown names and values with :class:`OptionError`.
    """

    deck: int = 32
    """32 or 52 cards; default 32 with 4 or 6 seats (six hands and the board
    take 28 cards), 52 with 8 (the record format, changed 2026-12-01)."""
    double_points: int = 2
    """What a double Kems, and a double contre, score: 2 or 3."""
    target: int | None = 10
    """Match points that win the match; ``None``: no target (play until stopped)."""
    false_call: FalseCall = "opponents-plus-one"
    """A false ``kems`` (or ``double``): every other team +1, or the caller's team -1."""
    false_double: FalseDouble = "penalty"
    """A double whose kems is true but the caller lacks four: the whole claim is
    false (``penalty``), or the kems still scores 1 (``kems-stands``)."""
    double_contre: DoubleContre = "both-hands"
    """A right contre scores ``double_points`` when the target's partner also
    holds four of a kind (``both-hands``), or always 1 (``never``)."""
    allow_take_back: bool = False
    """Whether a swap may take back the card it just gave."""
    refresh: RefreshRule = "bottom"
    """Where a refresh puts the old board: under the stock (``bottom``; the
    stock never runs out), or out of play (``discard``; when fewer than 4
    stock cards are left, the refresh ends the round as ``void``)."""
    misdeal_at: int | None = 3
    """A seat dealt this many cards of one rank (or more) makes a misdeal: 3
    (the seed: three or four), 4, or ``None`` (never)."""

    @classmethod
    def defaults(cls, seats: int = 4) -> KemsOptions:
        return cls.from_dict({}, seats)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None, seats: int = 4) -> KemsOptions:
        """Options from a record's ``options`` object (missing names take defaults).

        :raises OptionError: unknown option, a value out of range, or a deck
            too small for the seats.
        """
        if seats not in SEAT_COUNTS:
            raise OptionError(say("Kems is played by 4, 6 or 8 seats, not {seats!r}", seats=seats))
        values = dict(values or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(k for k in values if k not in known)
        if unknown:
            raise OptionError(
                say("unknown Kems option {unknown!r}; the options are {known}", unknown=unknown[0], known=', '.join(sorted(known)))
            )

        def pick(name: str, allowed: Sequence[Any], default: Any) -> Any:
            if name not in values:
                return default
            value = values[name]
            ok = any(value == a and type(value) is type(a) for a in allowed)
            if not ok:
                shown = ", ".join("null" if a is None else repr(a) for a in allowed)
                raise OptionError(say("option {name} must be one of {shown}, not {value!r}", name=name, shown=shown, value=value))
            return value

        deck_size = pick("deck", (32, 52), 32 if seats in (4, 6) else 52)
        if HAND_SIZE * seats + BOARD_SIZE > deck_size:
            raise OptionError(
                say("{seats} seats need {hand_size} cards for the hands and the board: use deck 52", seats=seats, hand_size=HAND_SIZE * seats + BOARD_SIZE)
            )
        target = values.get("target", 10)
        if target is not None and (
            isinstance(target, bool) or not isinstance(target, int) or target < 1
        ):
            raise OptionError(
                say("option target must be a whole number of points >= 1 or null, not {target!r}", target=target)
            )
        allow = values.get("allow_take_back", False)
        if not isinstance(allow, bool):
            raise OptionError(say("option allow_take_back must be true or false, not {allow!r}", allow=allow))
        return cls(
            deck=deck_size,
            double_points=pick("double_points", (2, 3), 2),
            target=target,
            false_call=pick(
                "false_call", ("opponents-plus-one", "caller-minus-one"), "opponents-plus-one"
            ),
            false_double=pick("false_double", ("penalty", "kems-stands"), "penalty"),
            double_contre=pick("double_contre", ("both-hands", "never"), "both-hands"),
            allow_take_back=allow,
            refresh=pick("refresh", ("bottom", "discard"), "bottom"),
            misdeal_at=pick("misdeal_at", (3, 4, None), 3),
        )

    def to_dict(self) -> dict[str, Any]:
        """Every option, as a record's ``options`` object writes it."""
        return {f.name: getattr(self, f.name) for f in fields(self)}
