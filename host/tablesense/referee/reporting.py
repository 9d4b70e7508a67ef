"""How a table reports its finished match to the tournament director, and
keeps its record: send the result and wait for the director's echo, have
both sides confirm it at the table (a badge laid on any cell, or the seat
buttons, as the event says), and archive the game record after every hand.

Used by ``tablesense play`` (:mod:`tablesense.referee.cli`) and a club
evening at the table (:mod:`tablesense.referee.evening`). Every line the
operator reads is in the table's language. The connection itself
(``--director``, ``--table-key``) is made by the command, which owns its
options and their errors.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from rich.markup import escape

from tablesense.games.common import message_of, say
from tablesense.i18n import N_
from tablesense.i18n.cli import _

__all__ = [
    "ECHO_WORDS",
    "archive_record",
    "computer_sides",
    "confirm_at_table",
    "confirm_by_buttons",
    "director_says",
    "report_match",
]


def report_match(reporter: Any, record: dict[str, Any], stop: threading.Event, console: Any) -> bool:
    """Send the finished match to the director and wait for its echo; an
    interrupted wait loses nothing: the outbox re-sends at the next start.
    True when the director accepted the result."""
    from tablesense.tournament.reporter import ReportError

    try:
        key = reporter.report(record)
    except ReportError as exc:
        console.print("[red]" + escape(_(say("not reported: {error}; call the director", error=message_of(exc)))) + "[/]")
        return False
    console.print(_("result sent to the director; waiting for its acknowledgement ..."))
    status = reporter.wait_echo(key, stop=stop)
    if status is None:
        console.print("[yellow]" + _("not acknowledged yet: the result stays in the outbox and is "
                                     "re-sent when the table starts again") + "[/]")
        return False
    console.print(_("director: {what} {status}", what=_("result"), status=_(ECHO_WORDS.get(status, status))))
    return status in ("accepted", "duplicate")


def confirm_at_table(
    reporter: Any, source: Any, bus: Any, stop: threading.Event, console: Any, session: Any = None,
    computer: frozenset[int] = frozenset(),
) -> bool:
    """After the director's echo, both sides confirm by laying a badge on the
    table (any cell); the badges read are sent as the confirmation. True when
    the director accepted it. The event decides (its ``confirm`` mode):
    ``buttons`` — each side presses its seat button instead (a call button
    refuses and calls the director); ``director`` — nothing to do here.
    ``computer``: the computer seats; a side that only they play accepts the
    score the table reports by itself (it has no badge to lay: in a ``badges``
    event such a match is left to the director's console)."""
    from tablesense.table.state import Tag

    mode = reporter.confirm_mode()
    if mode == "director":
        bus.publish("message", text=_("result reported: the director confirms it"), level="info")
        console.print(_("this event's results are confirmed by the director (console or `tournament confirm`)"))
        return True
    if mode == "buttons" and session is not None:
        return confirm_by_buttons(reporter, session, bus, stop, console, computer)
    if computer_sides(reporter, computer):
        bus.publish("message", text=_("result reported: the director confirms it"), level="info")
        console.print(_("a computer side has no badge to lay: the director confirms this result "
                        "(console or `tournament confirm`)"))
        return True

    bus.publish("message", text=_("result accepted: one player of each side, lay your badge on the table to confirm"),
                level="info")
    console.print(_("waiting for a badge of each side to confirm the result ..."))
    seen: set[str] = set()
    taps = None
    while taps is None:
        if stop.is_set():
            return False
        state = source.state()
        if state is not None:
            seen |= {r.uid.hex() for r in state.values() if isinstance(r, Tag)}
        taps = reporter.confirmation(seen)
        if taps is None:
            stop.wait(0.2)
    status = reporter.wait_echo(reporter.confirm(taps), stop=stop)
    console.print(director_says(_("confirmation"), status))
    return status in ("accepted", "duplicate")


def record_path(directory: Path, match_id: str) -> Path:
    """Where :func:`archive_record` keeps a match's game record."""
    return directory / f"{match_id}.json"


def match_over_line(scores: Any, path: Path) -> str:
    """What ``play`` prints when a match ends: one line a person reads (the
    record itself is in the archive, not on the console)."""
    score = " - ".join(f"{float(x):g}" for x in scores or [])
    return _("match over, score {score}; its game record is {path}", score=score, path=path)


def archive_record(ev: Any, directory: Path, match_id: str, console: Any) -> None:
    """Write the match record after every hand (temporary file, then rename)."""
    if ev.kind not in ("hand_ended", "match_ended") or "record" not in ev.data:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = record_path(directory, match_id)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(ev.data["record"], indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        console.print("[red]" + _("cannot archive the record in {folder}: {error}", folder=directory, error=exc) + "[/]")


def computer_sides(reporter: Any, computer: frozenset[int]) -> set[int]:
    """The sides of the last reported match that only computer seats play."""
    seats: dict[int, list[int]] = {}
    for seat in range(64):
        side = reporter.side_of_seat(seat)
        if side is not None:
            seats.setdefault(side, []).append(seat)
    return {side for side, at in seats.items() if at and all(s in computer for s in at)}


def confirm_by_buttons(reporter: Any, session: Any, bus: Any, stop: threading.Event, console: Any,
                       computer: frozenset[int] = frozenset()) -> bool:
    """Each side presses its seat button to accept the score on the display; a
    call button refuses it (the director is called). Seat presses (GPIO or
    keyboard, both through ``session.press``) are taken for this while it runs.
    A side of computer seats only (``computer``) accepts by itself."""
    import queue

    presses: queue.Queue[tuple[int, str]] = queue.Queue()
    original = session.press
    session.press = lambda seat, button="main": presses.put((seat, button))
    bus.publish("message", text=_("result accepted: each side, press your seat button to accept the score "
                                  "(the call button calls the director)"), level="info")
    console.print(_("waiting for a seat button of each side to accept the result ..."))
    accepted: set[int] = computer_sides(reporter, computer)
    refused: set[int] = set()
    try:
        while not refused and len(accepted) < reporter.sides():
            if stop.is_set():
                return False
            try:
                seat, button = presses.get(timeout=0.2)
            except queue.Empty:
                continue
            side = reporter.side_of_seat(seat)
            if side is not None:
                (refused if button == "call" else accepted).add(side)
    finally:
        session.press = original
    status = reporter.wait_echo(reporter.confirm_buttons(sorted(accepted - refused), sorted(refused)), stop=stop)
    console.print(director_says(_("refusal") if refused else _("confirmation"), status))
    return status in ("accepted", "duplicate")


#: The director's answers to a table (``reporter.wait_echo``), as the console shows them.
ECHO_WORDS = {"accepted": N_("accepted"), "duplicate": N_("duplicate"), "refused": N_("refused")}


def director_says(what: str, status: str | None) -> str:
    """``director: confirmation accepted`` in the table's language (None: no answer yet)."""
    if status is None:
        return _("director: {what} not acknowledged yet", what=what)
    return _("director: {what} {status}", what=what, status=_(ECHO_WORDS.get(status, status)))
