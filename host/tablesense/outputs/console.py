"""A console output: table events as one readable line each (Rich).

For ``tablesense play`` in a terminal, a headless table's log, or watching a
demo: another subscriber of the same event stream as the display page. It
reads on its own thread, so a slow terminal never slows the referee; ``view``
events (the whole display state) are not printed, the decisions are.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.text import Text

from tablesense.i18n import Translator
from tablesense.outputs.events import EVENT_KINDS, EventBus, Subscription, TableEvent

__all__ = ["ConsoleOutput", "describe"]

#: Kinds printed by default (``view`` carries the whole state and is skipped).
DEFAULT_KINDS: tuple[str, ...] = tuple(k for k in EVENT_KINDS if k != "view")

_STYLES = {
    "move_accepted": "green",
    "move_rejected": "bold red",
    "correction_cleared": "cyan",
    "hand_ended": "bold yellow",
    "match_ended": "bold magenta",
    "board_status": "blue",
    "suggestion": "dim",
    "call": "bold",
}


def describe(ev: TableEvent, lang: str = "en") -> str:
    """One plain sentence for an event (no markup), in ``lang`` (the
    table's language: the referee's own texts arrive in it already)."""
    _ = Translator(lang)
    d: dict[str, Any] = ev.data
    k = ev.kind
    if k == "move_accepted":
        return str(d.get("text") or d.get("move") or _("move accepted"))
    if k == "move_rejected":
        return str(d.get("instruction") or d.get("message") or _("move rejected"))
    if k == "correction_cleared":
        return (
            _("the table matches again ({reason})", reason=d["reason"])
            if d.get("reason")
            else _("the table matches again")
        )
    if k == "board_status":
        board = d.get("board")
        if d.get("message"):
            return (_("board {board} online: {message}", board=board, message=d["message"]) if d.get("online")
                    else _("board {board} OFFLINE: {message}", board=board, message=d["message"]))
        return _("board {board} online", board=board) if d.get("online") else _("board {board} OFFLINE", board=board)
    if k == "hand_started":
        return _("hand {n} starts", n=d.get("hand_no"))
    if k == "hand_ended":
        result = d.get("result") or {}
        return _("hand {n} over: {result}, score {score}", n=d.get("hand_no"),
                 result=result.get("label") or result.get("outcome", "?"), score=d.get("score"))
    if k == "match_ended":
        return _("match over: {winner} win, score {score}", winner=_winner(d, _), score=d.get("score"))
    if k == "suggestion":
        what = d.get("kind", "move")
        piece = f" {d['piece']}" if d.get("piece") else ""
        where = f" {d.get('from_cell')} -> {d.get('to_cell')}" if d.get("to_cell") else ""
        return _("{seat} suggests {what}", seat=_seat(d.get("seat"), _), what=f"{what}{piece}{where}")
    if k == "call":
        call = d.get("call") or d.get("kind")
        if d.get("target") is not None:
            return _("{seat} calls {call} on {target}", seat=_seat(d.get("seat"), _), call=call,
                     target=_seat(d["target"], _))
        return _("{seat} calls {call}", seat=_seat(d.get("seat"), _), call=call)
    if k == "message":
        return str(d.get("text", ""))
    if k == "match_started":
        return _("match starts: {game} {variant}", game=d.get("game", ""), variant=d.get("variant", "")).strip()
    return ", ".join(f"{key}={value}" for key, value in d.items() if key != "record")


def _seat(seat: Any, _: Translator) -> str:
    """Seats as people count them (events number them from 0)."""
    return _("seat {n}", n=seat + 1) if isinstance(seat, int) else _("the table")


def _winner(d: dict[str, Any], _: Translator) -> str:
    teams = d.get("teams") or []
    winner = d.get("winner")
    if isinstance(winner, int) and 0 <= winner < len(teams):
        return str(teams[winner])
    return _("nobody") if winner is None else _("team {team}", team=winner + 1)


class ConsoleOutput:
    """Print table events to a Rich console until :meth:`close` (idempotent)."""

    def __init__(
        self,
        bus: EventBus,
        console: Console | None = None,
        *,
        kinds: Iterable[str] = DEFAULT_KINDS,
        lang: str = "en",
    ) -> None:
        self.console = console or Console(stderr=True)
        self.lang = lang  # the table's language (play/demo --lang)
        self._sub: Subscription = bus.subscribe(kinds, replay=False, maxsize=5000)
        self._thread = threading.Thread(target=self._run, name="console-output", daemon=True)
        self._closed = False
        self._thread.start()

    def _run(self) -> None:
        for ev in self._sub:
            self.print_event(ev)

    def print_event(self, ev: TableEvent) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(ev.ts))
        level = ev.data.get("level") if ev.kind == "message" else None
        style = {"error": "bold red", "warning": "yellow"}.get(str(level), _STYLES.get(ev.kind, ""))
        line = Text(f"{stamp} ", style="dim")
        line.append(f"{ev.kind:<18}", style="dim")
        line.append(describe(ev, self.lang), style=style)
        self.console.print(line)

    def close(self, timeout: float = 2.0) -> None:
        if self._closed:
            return
        self._closed = True
        self._sub.close()
        self._thread.join(timeout)

    def __enter__(self) -> ConsoleOutput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
