"""The ``tablesense`` command line.

Each room owns its commands in its own ``cli.py`` and adds them here through
``register(app)``, so this file only lists the rooms. Room modules keep heavy
imports inside their command functions, so that ``tablesense --help`` stays fast.
Errors are turned into text and an exit status only at the command level.
"""

from __future__ import annotations

import importlib

import typer

from tablesense.i18n.cli import LANG_OPTION

app = typer.Typer(
    name="tablesense",
    help="Smart game table: referee, virtual table, tournaments, board tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: Rooms that contribute commands, in the order their help appears.
COMMAND_ROOMS = (
    "tablesense.games.cli",  # rules replay
    "tablesense.referee.cli",  # play, demo
    "tablesense.sim.cli",  # sim boards
    "tablesense.flash.cli",  # boards list, flash
    "tablesense.diag.cli",  # diag, tags enroll
    "tablesense.tournament.cli",  # director serve, tournament simulate/export
    "tablesense.hw.cli",  # hw draw, hw check
    "tablesense.web.cli",  # display preview
    "tablesense.remote.cli",  # remote broker-config (play --remote is in play)
)

for _module_name in COMMAND_ROOMS:
    importlib.import_module(_module_name).register(app)


def _print_version(value: bool) -> None:
    """``--version`` is eager: it answers before any command is needed."""
    if value:
        from tablesense import __version__

        typer.echo(f"tablesense {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print the version and exit.",
        is_eager=True,
        callback=_print_version,
    ),
    lang: str = LANG_OPTION,
) -> None:
    """Smart game table: referee, virtual table, tournaments, board tools.

    ``--lang`` here chooses the language of whichever command follows (each
    command also takes its own ``--lang``); default: the locale (LANG).
    """
    del version, lang


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
