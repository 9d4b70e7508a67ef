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


def describe(ev: TableEvent) -> str:
    """One plain sentence for an event (no markup)."""
    d: dict[str, Any] = ev.data
    k = ev.kind
    if k == "move_accepted":
        return str(d.get("text") or d.get("move") or "move accepted")
    if k == "move_rejected":
        return str(d.get("instruction") or d.get("message") or "move rejected")
    if k == "correction_cleared":
        return (
            f"the table matches again ({d['reason']})"
            if d.get("reason")
            else "the table matches again"
        )
    if k == "board_status":
        state = "online" if d.get("online") else "OFFLINE"
        extra = f": {d['message']}" if d.get("message") else ""
        return f"board {d.get('board')} {state}{extra}"
    if k == "hand_started":
        return f"hand {d.get('hand_no')} starts"
    if k == "hand_ended":
        result = d.get("result") or {}
        return f"hand {d.get('hand_no')} over: {result.get('label') or result.get('outcome', '?')}, score {d.get('score')}"
    if k == "match_ended":
        return f"match over: {_winner(d)} win, score {d.get('score')}"
    if k == "suggestion":
        what = d.get("kind", "move")
        piece = f" {d['piece']}" if d.get("piece") else ""
        where = f" {d.get('from_cell')} -> {d.get('to_cell')}" if d.get("to_cell") else ""
        return f"{_seat(d.get('seat'))} suggests {what}{piece}{where}"
    if k == "call":
        target = f" on {_seat(d['target'])}" if d.get("target") is not None else ""
        return f"{_seat(d.get('seat'))} calls {d.get('call') or d.get('kind')}{target}"
    if k == "message":
        return str(d.get("text", ""))
    if k == "match_started":
        return f"match starts: {d.get('game', '')} {d.get('variant', '')}".strip()
    return ", ".join(f"{key}={value}" for key, value in d.items() if key != "record")


def _seat(seat: Any) -> str:
    """Seats as people count them (events number them from 0)."""
    return f"seat {seat + 1}" if isinstance(seat, int) else "the table"


def _winner(d: dict[str, Any]) -> str:
    teams = d.get("teams") or []
    winner = d.get("winner")
    if isinstance(winner, int) and 0 <= winner < len(teams):
        return str(teams[winner])
    return "nobody" if winner is None else f"team {winner + 1}"


class ConsoleOutput:
    """Print table events to a Rich console until :meth:`close` (idempotent)."""

    def __init__(
        self,
        bus: EventBus,
        console: Console | None = None,
        *,
        kinds: Iterable[str] = DEFAULT_KINDS,
    ) -> None:
        self.console = console or Console(stderr=True)
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
        line.append(describe(ev), style=style)
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
