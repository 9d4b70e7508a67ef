"""The seat buttons from the keyboard: an operator (or a table without
wired buttons) types ``p 2`` for seat 2's button, ``c 2`` for its call
button, ``h 2`` for the button held (the coach) and ``r`` for the referee
button. Anything else is answered, in the table's language, with what the
keys are. Used by ``tablesense play --keys``."""

from __future__ import annotations

import sys
import threading
from typing import Any

from rich.markup import escape

from tablesense.games.common import say
from tablesense.i18n.cli import _

__all__ = ["KEYS_HELP", "key_command", "read_keys"]


def read_keys(session: Any, stop: threading.Event, console: Any = None) -> None:
    """Buttons from the keyboard: ``p N`` (seat N's button, 1-based), ``c N``
    (seat N's call button), ``h N`` (seat N's button held: the coach), ``r``
    (referee button); anything else is answered with what the keys are."""
    for line in sys.stdin:
        if stop.is_set():
            return
        answer = key_command(session, line)
        if answer and console is not None:  # in the table's language (the keys themselves stay p, c, h, r)
            console.print("[yellow]" + escape(_(answer)) + "[/]", highlight=False)


KEYS_HELP = say(
    "keys: p N = seat N's button, c N = seat N's call button, "
    "h N = seat N's button held (the coach), r = the referee button"
)


def key_command(session: Any, line: str) -> str | None:
    """Carry out one keyboard line; returns what to tell the operator when
    the line is not a button (None: done, or an empty line)."""
    parts = line.split()
    if not parts:
        return None
    n = len(session.referee.spec.seat_names)
    key = parts[0].lower()
    if key == "r" and len(parts) == 1:
        session.referee_press()
        return None
    if key in ("p", "c", "h"):
        if len(parts) != 2 or not parts[1].isdigit():
            return say("'{line}': say which seat, 1 to {n} (for example '{key} 1'); {keys}", line=line.strip(), n=n,
                       key=key, keys=KEYS_HELP)
        seat = int(parts[1])
        if not 1 <= seat <= n:
            return say("there is no seat {seat}: the seats are 1 to {n}", seat=seat, n=n)
        session.press(seat - 1, {"p": "main", "c": "call", "h": "coach"}[key])
        return None
    return say("unknown key '{line}'; {keys}", line=line.strip(), keys=KEYS_HELP)
