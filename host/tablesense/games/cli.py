"""Commands of the ``games`` room: ``tablesense rules replay FILE|-``."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

rules_app = typer.Typer(
    name="rules",
    help="Rules engines and game records.",
    no_args_is_help=True,
    add_completion=False,
)


@rules_app.command("replay")
def replay_command(
    file: str = typer.Argument(..., metavar="FILE|-", help="A game record (JSON), or - for stdin."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
) -> None:
    """Check a game record move by move; print the result object as JSON.

    Exit status 0: the record is legal; 1: an illegal step (hand and move
    index, and why); 2: not valid JSON or not the record format (also:
    numbers that are not finite or beyond 2**53, nesting deeper than 32
    levels); 3: an internal error of the checker (please report it).
    """
    from rich.console import Console

    from tablesense.games.common import IllegalStepError, RecordFormatError
    from tablesense.games.record import load, loads, replay

    err = Console(stderr=True, highlight=False)
    out: dict[str, Any]
    status: int
    try:
        obj = loads(sys.stdin.buffer.read()) if file == "-" else load(file)
        result = replay(obj)
        out, status = result.to_json(), 0
    except IllegalStepError as exc:
        out = {"ok": False, "hand": exc.hand, "move": exc.move, "error": exc.message}
        status = 1
    except RecordFormatError as exc:
        out, status = {"ok": False, "error": str(exc)}, 2
    except Exception as exc:  # a bug in an engine: say so, without a traceback
        out = {"ok": False, "error": f"internal error while checking the record: {exc!r}"}
        status = 3
    try:
        text = json.dumps(out, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite number slipped through: never print Infinity
        out = {
            "ok": False,
            "error": "internal error: the checker computed a number that is not finite",
        }
        status = 3
        text = json.dumps(out)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    if not quiet:
        err.print(_summary(out, status))
    raise typer.Exit(status)


def _summary(out: dict[str, Any], status: int) -> str:
    if status in (2, 3):
        return f"[red]not a valid record:[/] {out['error']}" if status == 2 else out["error"]
    if status == 1:
        return f"[red]illegal step[/] in hand {out['hand']}, move {out['move']}: {out['error']}"
    lines = []
    for i, h in enumerate(out["hands"]):
        label = f" ({h['label']})" if h.get("label") else ""
        who = "nobody" if h["winner"] is None else f"team {h['winner']}"
        lines.append(f"hand {i}: {h['outcome']}{label}, {who}, points {h['points']}")
    winner = "no winner yet" if out["winner"] is None else f"team {out['winner']} wins"
    lines.append(f"[green]legal record[/]: score {out['score']}, {winner}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""
    app.add_typer(rules_app, name="rules")
