"""The referee's decisions as console lines, for ``play`` and ``demo``.

Both the command module (:mod:`tablesense.referee.cli`) and the demo wiring
(:mod:`tablesense.referee.demo`) print the same lines; this module holds them
so neither has to import the other.
"""

from __future__ import annotations

from typing import Any


def log_events(bus: Any, console: Any) -> None:
    """Print what the referee decides, one line each."""

    last: dict[str, Any] = {}

    def show(ev: Any) -> None:
        d = ev.data
        if ev.kind == "move_rejected":
            last["instruction"] = d.get("instruction")
        if ev.kind == "match_started":
            # Kems calls a deal a round
            last["word"] = "round" if d.get("game") == "kems" else "hand"
        word = last.get("word", "hand")
        if ev.kind == "move_accepted":
            console.print(f"  [green]✓[/] {d.get('text')}", highlight=False)
        elif ev.kind == "move_rejected":
            console.print(f"  [red]✗ {d.get('instruction')}[/]", highlight=False)
        elif ev.kind == "correction_cleared":
            console.print("  [green]table matches again[/]", highlight=False)
        elif ev.kind == "hand_started":
            console.print(f"[bold]{word} {d.get('hand_no')}[/]", highlight=False)
        elif ev.kind == "hand_ended":
            r = d.get("result") or {}
            console.print(
                f"[bold]{word} {d.get('hand_no')} over[/]: {r.get('label') or r.get('outcome')} "
                f"points {r.get('points')} score {d.get('score')}",
                highlight=False,
            )
        elif ev.kind == "match_ended":
            console.print(
                f"[bold]match over[/]: {winner_name(d)} win, score {d.get('score')}"
            )
        elif (
            ev.kind == "message"
            and d.get("level") in ("error", "warning")
            and d.get("text") != last.get("instruction")
        ):
            console.print(f"  [yellow]{d.get('text')}[/]", highlight=False)
        elif ev.kind == "board_status":
            console.print(f"  board {d.get('board')}: {d.get('message')}", highlight=False)

    bus.add_listener(show)


def winner_name(data: dict[str, Any]) -> str:
    """The winning team by its players' names (never a 0-based number)."""
    teams = data.get("teams") or []
    winner = data.get("winner")
    if isinstance(winner, int) and 0 <= winner < len(teams):
        return str(teams[winner])
    return "nobody" if winner is None else f"team {winner + 1}"
