"""Types every game engine shares: seats, teams, errors and results.

Engines are pure (no I/O, no clock, randomness only through an injected
``random.Random``), so the referee, the tournament director and ``replay``
can all trust the same answers. python-chess is the model: small frozen value
types, ``check``/``is_legal`` that only answer, ``play`` that checks and
raises, ``apply`` that does not check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, TypeAlias

Seat: TypeAlias = int
"""A seat index in playing order (0-based)."""

Team: TypeAlias = int
"""A team index as the record format defines it."""

Points: TypeAlias = float
"""Match points; ``brazilian-points`` has halves and quarters."""


class Sentence(str):
    """English text that remembers how it was made, so it can be translated.

    ``say("it is {turn}'s turn", turn="East")`` is the string
    ``"it is East's turn"`` everywhere a string is expected (logs, tests,
    JSON), and also carries ``template`` and ``params``: the language room
    (``tablesense.i18n``) looks the template up in a catalog and formats the
    parameters into the translation, translating parameters that are
    Sentences too. Engines stay pure: they never know which language is read.
    """

    template: str
    params: dict[str, Any]

    def __new__(cls, template: str, params: dict[str, Any]) -> Sentence:
        self = super().__new__(cls, template.format(**params))
        self.template = template
        self.params = params
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Sentence, (self.template, self.params))


def say(template: str, **params: Any) -> Sentence:
    """A translatable sentence (the extraction keyword of the catalogs)."""
    return Sentence(template, params)


def listed(items: list[Sentence], more: bool = False) -> Sentence:
    """Sentences one after another (``a; b; ...`` with ``more``), each still
    translated on its own: a joined list of plain strings would be English only."""
    out = items[0]
    for item in items[1:]:
        out = say("{first}; {then}", first=out, then=item)
    return say("{first}; ...", first=out) if more else out


def message_of(exc: BaseException) -> str:
    """An error's message as it was raised: a :class:`Sentence` stays one
    (``str(exc)`` would flatten it to English only)."""
    first = exc.args[0] if len(exc.args) == 1 else None
    return first if isinstance(first, str) else str(exc)


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
