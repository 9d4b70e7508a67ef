"""The referee's decisions as console lines, for ``play`` and ``demo``.

Both the command module (:mod:`tablesense.referee.cli`) and the demo wiring
(:mod:`tablesense.referee.demo`) print the same lines; this module holds them
so neither has to import the other.
"""

from __future__ import annotations

from typing import Any

from tablesense.games.common import say
from tablesense.games.registry import GAMES
from tablesense.i18n import translate


def log_events(bus: Any, console: Any, lang: str = "en") -> None:
    """Print what the referee decides, one line each, in the table's
    language (the events' texts already are; the console's own words too)."""

    def tr(text: str) -> str:
        return translate(text, lang)

    last: dict[str, Any] = {}

    def show(ev: Any) -> None:
        d = ev.data
        if ev.kind == "move_rejected":
            last["instruction"] = d.get("instruction")
        if ev.kind == "match_started":
            # Kems calls a deal a round
            game = GAMES.get(str(d.get("game")))
            last["word"] = game.deal_word if game is not None else "hand"
        kems = last.get("word", "hand") == "round"
        if ev.kind == "move_accepted":
            console.print(f"  [green]✓[/] {d.get('text')}", highlight=False)
        elif ev.kind == "move_rejected":
            console.print(f"  [red]✗ {d.get('instruction')}[/]", highlight=False)
        elif ev.kind == "correction_cleared":
            console.print(f"  [green]{tr(say('the table matches again'))}[/]", highlight=False)
        elif ev.kind == "hand_started":
            n = d.get("hand_no")
            head = say("round {n}", n=n) if kems else say("hand {n}", n=n)
            console.print(f"[bold]{tr(head)}[/]", highlight=False)
        elif ev.kind == "hand_ended":
            from tablesense.referee.view import _OUTCOMES

            r = d.get("result") or {}
            n = d.get("hand_no")
            how = r.get("label") or r.get("outcome") or ""
            line = say(
                "{head}: {how}, points {points}, score {score}",
                head=say("round {n} over", n=n) if kems else say("hand {n} over", n=n),
                how=_OUTCOMES.get(how, how),
                points=str(r.get("points")),
                score=str(d.get("score")),
            )
            console.print(f"[bold]{tr(line)}[/]", highlight=False)
        elif ev.kind == "match_ended":
            line = say(
                "match over: {team} win, score {score}",
                team=winner_name(d),
                score=str(d.get("score")),
            )
            console.print(f"[bold]{tr(line)}[/]", highlight=False)
        elif (
            ev.kind == "message"
            and d.get("level") in ("error", "warning")
            and d.get("text") != last.get("instruction")
        ):
            console.print(f"  [yellow]{d.get('text')}[/]", highlight=False)
        elif ev.kind == "board_status":
            line = say("board {board}: {message}", board=d.get("board"), message=str(d.get("message")))
            console.print(f"  {tr(line)}", highlight=False)

    bus.add_listener(show)


def winner_name(data: dict[str, Any]) -> str:
    """The winning team by its players' names (never a 0-based number)."""
    teams = data.get("teams") or []
    winner = data.get("winner")
    if isinstance(winner, int) and 0 <= winner < len(teams):
        return str(teams[winner])
    return say("nobody") if winner is None else say("team {n}", n=winner + 1)
