"""How a result becomes final: the event's confirmation mode.

A club chooses per event (option ``confirm``):

- ``badges`` — one player of each side taps a badge at the table after the
  director acknowledged the result (needs badges registered for everyone);
- ``buttons`` — each side presses its seat button to accept the score the
  table shows; a side that refuses calls the director (the match is marked
  ``disputed`` and waits for the console);
- ``director`` — the table only reports; the director confirms from the
  console or the CLI (one match, or every reported match at once).

This module is pure: it judges a table's ``confirm`` message against the
match's sides and says what is wrong in words the director can act on. The
director service applies the verdict in its own transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CONFIRM_MODES: tuple[str, ...] = ("badges", "buttons", "director")
DEFAULT_MODE = "badges"


class ConfirmationError(ValueError):
    """A confirm message that does not confirm (the text says why)."""


@dataclass(frozen=True)
class Side:
    """One entrant of the match as the confirmation sees it."""

    entrant: int
    name: str
    badges: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    """What a valid confirm message means: confirmed, or disputed by some sides."""

    confirmed: bool
    disputed_by: tuple[int, ...] = ()
    detail: dict[str, Any] | None = None


def check_mode(mode: object) -> str:
    """The event's mode, or a clear refusal naming the modes there are."""
    if mode not in CONFIRM_MODES:
        raise ConfirmationError(f"unknown confirmation mode {mode!r}; choose from {', '.join(CONFIRM_MODES)}")
    return str(mode)


def judge(mode: str, body: dict[str, Any], sides: Sequence[Side]) -> Verdict:
    """Judge one ``confirm`` message of a table for a match between ``sides``.

    ``badges``: every side must have one of its badges among ``body["badges"]``.
    ``buttons``: ``body["accepted"]`` lists the sides (0-based, in the match's
    order) whose seat button accepted, ``body["refused"]`` those who refused;
    any refusal disputes the result, otherwise every side must have accepted.
    ``director``: a table cannot confirm at all.
    """
    if mode == "director":
        raise ConfirmationError("this event's results are confirmed by the director, not at the table")
    if mode == "buttons":
        accepted = _sides(body.get("accepted", []), len(sides), "accepted")
        refused = _sides(body.get("refused", []), len(sides), "refused")
        if accepted & refused:
            raise ConfirmationError(f"side(s) {sorted(accepted & refused)} both accepted and refused")
        if refused:
            return Verdict(False, tuple(sides[i].entrant for i in sorted(refused)),
                           {"accepted": sorted(accepted), "refused": sorted(refused)})
        missing = [sides[i].name for i in range(len(sides)) if i not in accepted]
        if missing:
            raise ConfirmationError(f"{', '.join(missing)} did not press a seat button to accept")
        return Verdict(True, (), {"accepted": sorted(accepted)})
    taps = {str(b) for b in body.get("badges", [])}
    for side in sides:
        if not taps.intersection(side.badges):
            raise ConfirmationError(f"{side.name} has not confirmed (no badge of theirs was tapped)")
    return Verdict(True, (), {"badges": sorted(taps)})


def _sides(raw: object, n: int, what: str) -> set[int]:
    if not isinstance(raw, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in raw):
        raise ConfirmationError(f"{what} must be a list of side numbers")
    bad = [x for x in raw if not 0 <= x < n]
    if bad:
        raise ConfirmationError(f"{what} names side(s) {bad}; the match has sides 0..{n - 1}")
    return set(raw)


# ---------------------------------------------------------------- check-in at the table


@dataclass(frozen=True)
class Elsewhere:
    """An entrant of the event who is not at this table: where they play this round (None: no match)."""

    name: str
    badges: tuple[str, ...]
    table: int | None


def judge_checkin(body: dict[str, Any], sides: Sequence[Side], others: Sequence[Elsewhere], table: int) -> list[int]:
    """The entrants of this match a table's check-in message checks in.

    Players check in with a badge tap (``badges``) or with their seat
    buttons (``accepted``: the sides, as for a confirmation). A badge of an
    entrant who plays elsewhere is refused with the table they belong at, so
    the table can send them on; a badge nobody registered is refused too.
    """
    taps = {str(b) for b in body.get("badges", [])}
    for o in others:
        if taps.intersection(o.badges):
            if o.table is None:
                raise ConfirmationError(f"{o.name} has no match this round")
            raise ConfirmationError(f"{o.name} plays at table {o.table}, not at table {table}")
    known = {b for s in sides for b in s.badges} | {b for o in others for b in o.badges}
    unknown = sorted(taps - known)
    if unknown:
        raise ConfirmationError(f"badge {unknown[0]} is not registered for this event")
    accepted = _sides(body.get("accepted", []), len(sides), "accepted")
    return [s.entrant for i, s in enumerate(sides) if i in accepted or taps.intersection(s.badges)]
