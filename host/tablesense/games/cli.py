"""Commands of the ``games`` room: ``tablesense rules replay FILE|-``."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from tablesense.i18n import N_, NC_, Translator
from tablesense.i18n.cli import LANG_OPTION

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
    lang: str = LANG_OPTION,
) -> None:
    """Check a game record move by move; print the result object as JSON.

    Exit status 0: the record is legal; 1: an illegal step (hand and move
    index, and why); 2: not valid JSON or not the record format (also:
    numbers that are not finite or beyond 2**53, nesting deeper than 32
    levels, a record over 8 MiB, a path that is not a regular file); 3: an internal error of the checker (please report it).
    The JSON keys are the record format's; the ``error`` text is in the
    chosen language. On a terminal a refused record is told once, by the
    summary on stderr (the JSON goes to a pipe or a file, or with --quiet).
    """
    from rich.console import Console

    from tablesense.games.common import IllegalStepError, RecordFormatError, message_of
    from tablesense.games.record import load, loads, read_limited, replay
    err = Console(stderr=True, highlight=False)
    _ = Translator(lang)  # resolved by the option (an unknown tag has exited 2)

    out: dict[str, Any]
    status: int
    human = ""
    try:
        obj = loads(read_limited(sys.stdin.buffer)) if file == "-" else load(file)
        result = replay(obj)
        out, status = result.to_json(), 0
    except IllegalStepError as exc:
        out = {"ok": False, "hand": exc.hand, "move": exc.move, "error": _(exc.message)}
        status = 1
        human = _(_counted_from_one(exc.message))
    except RecordFormatError as exc:
        out, status = {"ok": False, "error": _(message_of(exc))}, 2
    except Exception as exc:  # noqa: BLE001 - a bug in an engine: say so, without a traceback
        out = {"ok": False, "error": _(N_("internal error while checking the record: {error}"),
                                       error=repr(exc))}
        status = 3
    try:
        text = json.dumps(out, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite number slipped through: never print Infinity
        out = {
            "ok": False,
            "error": _(N_("internal error: the checker computed a number that is not finite")),
        }
        status = 3
        text = json.dumps(out)
    if quiet or status == 0 or not sys.stdout.isatty():
        # a person at a terminal reads a refusal once, in the summary below;
        # a pipe or a file always gets the result object
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    if not quiet:
        err.print(_summary(out, status, _, human))
    raise typer.Exit(status)


#: The outcomes of a hand or a round as the record format names them, for
#: the catalogs (the JSON keeps these words; the summary translates them).
OUTCOME_WORDS = (
    NC_("outcome", "domino"), NC_("outcome", "blocked"), NC_("outcome", "locomotiva"),
    NC_("outcome", "seven-doubles"), NC_("outcome", "void"), NC_("outcome", "kems"),
    NC_("outcome", "double"), NC_("outcome", "contre"), NC_("outcome", "redeal"),
    NC_("outcome", "misdeal"),
)


def _counted_from_one(message: object) -> str:
    """An engine's sentence with its seats and teams counted from 1 ("Seat 3"
    for the record's seat 2), for the summary a person reads; the JSON's
    ``error`` keeps the record's numbers, as the format's examples do."""
    from tablesense.games.common import engine_sentence, say

    return engine_sentence(
        message, lambda seat: say("Seat {n}", n=seat + 1), lambda team: say("team {team}", team=team + 1)
    )


def _summary(out: dict[str, Any], status: int, _: Translator, human: str = "") -> str:
    """The human summary on stderr, in the chosen language, counting hands,
    moves and teams from 1 as players do (the JSON on stdout keeps the
    record's 0-based indexes: hand 1 here is ``hands[0]`` there)."""
    if status in (2, 3):
        if status == 3:
            return str(out["error"])
        return "[red]" + _(N_("not a valid record:")) + "[/] " + str(out["error"])
    if status == 1:
        where = _(N_("illegal step in hand {hand}, move {move}:"), hand=out["hand"] + 1, move=out["move"] + 1)
        return f"[red]{where}[/] {human or out['error']}"
    lines = []
    for i, h in enumerate(out["hands"]):
        label = f" ({_(h['label'])})" if h.get("label") else ""
        who = _(N_("nobody")) if h["winner"] is None else _(N_("team {team}"), team=h["winner"] + 1)
        lines.append(_(N_("hand {hand}: {outcome}{label}, {who}, points {points}"),
                       hand=i + 1, outcome=_.context("outcome", h["outcome"]), label=label, who=who, points=h["points"]))
    winner = (_(N_("no winner yet")) if out["winner"] is None
              else _(N_("team {team} wins"), team=out["winner"] + 1))
    lines.append("[green]" + _(N_("legal record:")) + "[/] "
                 + _(N_("score {score}, {winner}"), score=out["score"], winner=winner))
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""
    app.add_typer(rules_app, name="rules")
