"""Types every game engine shares: seats, teams, errors and results.

Engines are pure (no I/O, no clock, randomness only through an injected
``random.Random``), so the referee, the tournament director and ``replay``
can all trust the same answers. python-chess is the model: small frozen value
types, ``check``/``is_legal`` that only answer, ``play`` that checks and
raises, ``apply`` that does not check.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tablesense.sentence import Sentence as Sentence
from tablesense.sentence import joined
from tablesense.sentence import message_of as message_of
from tablesense.sentence import say as say

Seat: TypeAlias = int
"""A seat index in playing order (0-based)."""

Team: TypeAlias = int
"""A team index as the record format defines it."""

Points: TypeAlias = float
"""Match points; ``brazilian-points`` has halves and quarters."""


# Sentences live in the leaf module every room may import; the engines' callers
# have always found them here too.
listed = joined


#: "seat {x}" / "team {x}" in an engine template, where ``x`` is a 0-based index.
_FIELD = re.compile(r"(?<!no )\b(seat|team) \{(\w+)\}")


def engine_sentence(
    message: object, seat_label: Callable[[int], str], team_name: Callable[[int], str]
) -> str:
    """An engine's Sentence with its 0-based seats and teams named; the
    template is rewritten only when every named field is an index."""
    if isinstance(message, BaseException):
        message = message_of(message)
    if not isinstance(message, Sentence):
        return str(message)
    params = dict(message.params)
    named: dict[str, str] = {}

    def field(m: re.Match[str]) -> str:
        kind, key = m.group(1), m.group(2)
        value = params.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            return m.group(0)
        named[key] = seat_label(value) if kind == "seat" else team_name(value)
        return "{" + key + "}"

    template = _FIELD.sub(field, message.template)
    if not named:
        return _named_params(message, seat_label, team_name)
    params.update(named)
    for key, value in params.items():
        if isinstance(value, Sentence):
            params[key] = engine_sentence(value, seat_label, team_name)
    return Sentence(template, params)


def _named_params(
    message: Sentence, seat_label: Callable[[int], str], team_name: Callable[[int], str]
) -> Sentence:
    params = {
        k: engine_sentence(v, seat_label, team_name) if isinstance(v, Sentence) else v
        for k, v in message.params.items()
    }
    return Sentence(message.template, params)



class IllegalPlayError(ValueError):
    """A move that the rules do not allow in this state.

    The message is one sentence a player understands, for example
    ``"seat 2 holds 3-5, which fits the right end: it may not pass"``.
    """


class OptionError(ValueError):
    """An unknown option, or an option value outside what the variant allows."""


class RecordFormatError(ValueError):
    """A game record that is not valid JSON or does not fit the format
    (``replay`` exit status 2)."""


class IllegalStepError(ValueError):
    """A game record with an illegal step (``replay`` exit status 1).

    ``hand`` and ``move`` are 0-based indexes into the record's ``hands``
    and that hand's ``moves`` (or ``events``).
    """

    def __init__(self, hand: int, move: int, message: str) -> None:
        super().__init__(message)
        self.hand = hand
        self.move = move
        self.message = message


MAX_NUMBER = 2**53
"""The largest magnitude a number in a record may have: beyond it a JSON
number is no longer exact in every reader (IEEE doubles), and sums of such
numbers could overflow to infinity, which JSON cannot write."""


def is_plain_number(value: Any) -> bool:
    """A JSON number a record may hold: an int or a finite float (not a bool),
    of magnitude at most :data:`MAX_NUMBER`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return -MAX_NUMBER <= value <= MAX_NUMBER


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr`` cut to ``limit`` characters, for error messages about values a
    record may make huge (a number of thousands of digits, a deep list)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_NUMBER:
        # str() of a huge int is slow and limited (4300 digits): estimate
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return f"a {type(value).__name__} too large to show"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def number(points: float) -> int | float:
    """Points as JSON wants them: ``12`` rather than ``12.0``, ``0.5`` as is."""
    return int(points) if float(points).is_integer() else float(points)


@dataclass(frozen=True)
class HandResult:
    """How one hand (dominoes) or round (Kems) ended, as the record's result
    object reports it."""

    outcome: str
    """``domino``, ``blocked``, ``kems``, ``double``, ``contre``, ``redeal``,
    ``void``, ... (the variant documents its set)."""
    winner: Team | None
    points: tuple[Points, ...]
    """Points each team earned in this hand; may be negative (a penalty)."""
    label: str | None = None
    """The variant's name for what happened (``cruzada``, ``lambreta``...)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "outcome": self.outcome,
            "winner": self.winner,
            "points": [number(p) for p in self.points],
        }
        if self.label is not None:
            out["label"] = self.label
        return out


@dataclass(frozen=True)
class ReplayResult:
    """The result object of ``tablesense rules replay`` on success."""

    hands: tuple[HandResult, ...]
    score: tuple[Points, ...]
    winner: Team | None
    extra: dict[str, Any] = field(default_factory=dict)
    """Writer-specific additions, emitted under ``x-`` keys."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": True,
            "hands": [h.to_json() for h in self.hands],
            "score": [number(p) for p in self.score],
            "winner": self.winner,
        }
        for key, value in self.extra.items():
            out[key if key.startswith("x-") else f"x-{key}"] = value
        return out
