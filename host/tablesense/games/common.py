"""Types every game engine shares: seats, teams, errors and results.

Engines are pure (no I/O, no clock, randomness only through an injected
``random.Random``), so the referee, the tournament director and ``replay``
can all trust the same answers. python-chess is the model: small frozen value
types, ``check``/``is_legal`` that only answer, ``play`` that checks and
raises, ``apply`` that does not check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

Seat: TypeAlias = int
"""A seat index in playing order (0-based)."""

Team: TypeAlias = int
"""A team index as the record format defines it."""

Points: TypeAlias = float
"""Match points; ``brazilian-points`` has halves and quarters."""


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
