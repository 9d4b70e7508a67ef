"""The options of each dominoes variant and the opening rule of a hand.

Every option carries the seed text's default; ``docs/rules/<variant>.md``
quotes the sentence each one rests on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tablesense.games.common import (
    MAX_NUMBER,
    OptionError,
    Points,
    Seat,
    is_plain_number,
    say,
    short_repr,
)
from tablesense.games.dominoes.tiles import DOUBLE_BLANK, DOUBLE_SIX, Tile

VARIANTS: tuple[str, ...] = ("pairs-pips", "pips-two-player", "brazilian-points")
"""The dominoes variants of the record format."""

VARIANT_TITLES: dict[str, str] = {
    "pairs-pips": say("pairs, scored in pips"),
    "pips-two-player": say("two players, scored in pips"),
    "brazilian-points": say("Brazilian club rules, match points"),
}
"""The variants as people name them (the record format's names stay in exports)."""

RECORD_FORMAT = "tablesense.record/1"


# --------------------------------------------------------------------------- options


def _choice(*values: str) -> Any:
    def check(name: str, value: Any) -> Any:
        if value not in values:
            raise OptionError(say("option {name!r} is one of {values}; got {value!r}", name=name, values=', '.join(values), value=value))
        return value

    return check


def _positive_number(name: str, value: Any) -> Any:
    if not is_plain_number(value) or value <= 0:
        raise OptionError(
            say("option {name!r} is a positive number up to {MAX_NUMBER}; got {short_value}", name=name, MAX_NUMBER=MAX_NUMBER, short_value=short_repr(value))
        )
    return value


def _number(name: str, value: Any) -> Any:
    if not is_plain_number(value):
        raise OptionError(
            say("option {name!r} is a number between -{MAX_NUMBER} and {MAX_NUMBER}; got {short_value}", name=name, MAX_NUMBER=MAX_NUMBER, short_value=short_repr(value))
        )
    return value


def _boolean(name: str, value: Any) -> Any:
    if not isinstance(value, bool):
        raise OptionError(say("option {name!r} is true or false; got {value!r}", name=name, value=value))
    return value


def _score_list(name: str, value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(is_plain_number(v) for v in value):
        raise OptionError(
            say("option {name!r} is a list of numbers between -{MAX_NUMBER} and {MAX_NUMBER}, one per team; got {short_value}", name=name, MAX_NUMBER=MAX_NUMBER, short_value=short_repr(value))
        )
    return tuple(value)


_PIPS_OPTIONS: dict[str, tuple[Any, Any]] = {
    "target": (50, _positive_number),
    "opening": ("double-six", _choice("double-six", "rotation")),
    "rotation": ("next", _choice("next", "previous")),
    "score_all_pips": (False, _boolean),
    "blocked_tie": ("locker-loses", _choice("locker-loses", "nobody", "replay")),
    "forced_block": ("forbidden", _choice("forbidden", "allowed")),
}

_BRAZILIAN_OPTIONS: dict[str, tuple[Any, Any]] = {
    "target": (4, _positive_number),
    "forced_block": ("forbidden", _choice("forbidden", "allowed")),
    "simple_domino": (1, _number),
    "blocked_opener": ("either", _choice("either", "fewest-pips", "after-locker")),
    "announce": (True, _boolean),
    "cegonha_doubles": ("announcer", _choice("announcer", "anyone")),
    "deal_specials": (True, _boolean),
    "lambreta": (-1, _number),
    "start_score": (None, _score_list),
}

_OPTION_TABLES: dict[str, dict[str, tuple[Any, Any]]] = {
    "pairs-pips": _PIPS_OPTIONS,
    "pips-two-player": _PIPS_OPTIONS,
    "brazilian-points": _BRAZILIAN_OPTIONS,
}

_SEATS: dict[str, tuple[int, ...]] = {
    "pairs-pips": (4,),
    "pips-two-player": (2,),
    "brazilian-points": (4, 3),
}


@dataclass(frozen=True, slots=True)
class DominoOptions:
    """The options of one variant, every one with the seed text's default.

    ``docs/rules/<variant>.md`` quotes the sentence each option rests on.
    Options that a variant does not have keep their defaults and are not
    written to records.
    """

    variant: str
    target: Points = 50
    opening: str = "double-six"
    """Pips variants: who opens hands after the first: ``double-six`` (the
    holder of 6-6, every hand) or ``rotation``."""
    rotation: str = "next"
    """With ``opening="rotation"``: the next opener is the ``next`` seat in
    playing order after the last opener, or the ``previous`` one."""
    score_all_pips: bool = False
    """Pips variants: the winner scores all pips left on the table, not only
    the opponents' (a regional alternative)."""
    blocked_tie: str = "locker-loses"
    """Pips variants, a blocked hand with equal pips: ``locker-loses``,
    ``nobody`` scores, or the hand is ``replay``-ed."""
    forced_block: str = "forbidden"
    """``forbidden``: a play that blocks the game is illegal while the seat has
    another play (only "natural" blocks); ``allowed``."""
    simple_domino: Points = 1
    blocked_opener: str = "either"
    """``brazilian-points``, after a blocked hand: ``either`` partner of the
    winning pair may open; ``fewest-pips`` or ``after-locker`` fix which one
    (a club's own rule)."""
    announce: bool = True
    cegonha_doubles: str = "announcer"
    deal_specials: bool = True
    lambreta: Points = -1
    start_score: tuple[Points, ...] | None = None

    @classmethod
    def from_dict(cls, variant: str, options: Mapping[str, Any] | None = None) -> DominoOptions:
        """Options of ``variant`` from a record's ``options`` object.

        Raises :class:`OptionError` on an unknown variant, an unknown option or
        a value outside what the option allows. Missing options take defaults.
        """
        if variant not in _OPTION_TABLES:
            raise OptionError(say("unknown dominoes variant {variant!r}; known: {variants}", variant=variant, variants=', '.join(VARIANTS)))
        table = _OPTION_TABLES[variant]
        values: dict[str, Any] = {name: default for name, (default, _) in table.items()}
        if options is not None:
            if not isinstance(options, Mapping):
                raise OptionError(say("options are a JSON object, got {options!r}", options=options))
            for name, value in options.items():
                if isinstance(name, str) and name.startswith("x-"):
                    continue
                if name not in table:
                    raise OptionError(
                        say("unknown option {name!r} for {variant}; known: {table}", name=name, variant=variant, table=', '.join(table))
                    )
                values[name] = table[name][1](name, value)
        return cls(variant=variant, **values)

    def to_dict(self) -> dict[str, Any]:
        """Every option of the variant, as a record writes them."""
        out: dict[str, Any] = {}
        for name in _OPTION_TABLES[self.variant]:
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


# --------------------------------------------------------------------------- opening rule


@dataclass(frozen=True, slots=True)
class Opening:
    """Who opens a hand and with what.

    ``seat`` ``None`` means "the holder of ``tile``". ``no_double`` forbids a
    double as the opening tile (``brazilian-points`` after a blocked hand).
    ``reason`` is the rule, in words, for error messages.
    """

    seat: Seat | None = None
    tile: Tile | None = None
    no_double: bool = False
    reason: str = ""
    fallback: bool = False
    """When nobody holds ``tile`` (two players: it is in the boneyard), the
    holder of the highest double opens with it, or without doubles the holder
    of the heaviest tile."""
    others: tuple[Seat, ...] = ()
    """Seats that may open instead of ``seat`` (``brazilian-points`` after a
    blocked hand: either partner of the winning pair); the record's opening
    play says who did."""


_FIRST_OPENINGS = {
    False: Opening(
        None, DOUBLE_SIX, reason=say("the first hand of a match opens with 6-6 by its holder")
    ),
    True: Opening(
        None,
        DOUBLE_SIX,
        reason=say("the first hand of a match opens with 6-6 by its holder"),
        fallback=True,
    ),
}
_THREE_SEAT_OPENING = Opening(
    None, DOUBLE_BLANK, reason=say("in the 3-seat game the first hand opens with 0-0")
)


def _first_hand_opening(variant: str, seats: int) -> Opening:
    if variant == "brazilian-points" and seats == 3:
        return _THREE_SEAT_OPENING
    return _FIRST_OPENINGS[variant == "pips-two-player"]
