"""``tablesense tournament club ...``: the club's players, ratings and seasons from the shell.

Exit codes as the rest of ``tournament``: 0 done, 1 refused (the message
says why), 2 a wrong argument.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NoReturn

import typer

from tablesense.games.common import message_of, say
from tablesense.i18n.cli import LANG_OPTION, _

if TYPE_CHECKING:
    from .db import Database

club_app = typer.Typer(help="The club's memory: players, ratings, seasons.", no_args_is_help=True)


def _db(url: str) -> Database:
    from .db import Database

    return Database(url)


def _fail(message: str, code: int = 1) -> NoReturn:
    text = _(message) if hasattr(message, "template") else message  # a Sentence: into the command's language
    label = _("error:")
    typer.echo(f"{label} {text}", err=True)
    raise typer.Exit(code)


def _default_db() -> str:
    from . import DEFAULT_DB

    return DEFAULT_DB


DbOpt = typer.Option(None, "--db", help="Database URL (default: the tournament's).")


@club_app.command("add-player")
def add_player_cmd(name: str = typer.Argument(...), badge: str = typer.Option("", "--badge"), club: str = typer.Option("", "--club"),
                   db: str | None = DbOpt, lang: str = LANG_OPTION) -> None:
    """Add a player to the club (a badge belongs to one player)."""
    from .players import add_player
    from .service import DirectorError

    try:
        pid = add_player(_db(db or _default_db()), name, badge=badge or None, club=club)
    except DirectorError as exc:
        _fail(message_of(exc))
    typer.echo(_("player {id}: {name}", id=pid, name=name))


@club_app.command("players")
def players_cmd(query: str = typer.Argument(""), db: str | None = DbOpt, lang: str = LANG_OPTION) -> None:
    """List the club's players (those matching QUERY: name or badge)."""
    from .players import search

    for p in search(_db(db or _default_db()), query, limit=10_000):
        typer.echo(f"{p.id}\t{p.name}\t{p.badge or ''}\t{p.club}")


@club_app.command("enter")
def enter_cmd(event: int = typer.Argument(...), players: list[int] = typer.Argument(...),
              name: str = typer.Option("", "--name"), db: str | None = DbOpt, lang: str = LANG_OPTION) -> None:
    """Enter known players (one, or two for a pair) as an entrant of EVENT."""
    from .console import entrant_label
    from .players import register_players
    from .service import Director, DirectorError

    try:
        eid = register_players(Director(_db(db or _default_db()), event), players, name or None)
    except DirectorError as exc:
        _fail(message_of(exc))
    d = Director(_db(db or _default_db()), event)
    typer.echo(_("entered as {entrant}", entrant=entrant_label(d, eid)))


@club_app.command("ratings")
def ratings_cmd(family: str = typer.Option("dominoes-pairs", "--family", help="dominoes-pairs, dominoes-individual or kems."),
                recompute: bool = typer.Option(False, "--recompute", help="Forget the stored ratings and replay every result."),
                db: str | None = DbOpt, lang: str = LANG_OPTION) -> None:
    """The club's ratings in a family, brought up to date with the confirmed results."""
    from . import ratings as rt
    from .players import all_players

    if family not in rt.FAMILIES:
        _fail(say("unknown family {family}; choose from {families}", family=repr(family),
                  families=", ".join(rt.FAMILIES)), 2)
    d = _db(db or _default_db())
    reps = rt.recompute(d) if recompute else rt.update(d)
    names = {p.id: p.name for p in all_players(d)}
    for r in reps:
        typer.echo(_("{family}: {kept} kept, {rated} rated", family=r.family, kept=r.kept, rated=r.replayed), err=True)
    table = sorted(rt.current(d, family).items(), key=lambda kv: -kv[1].ordinal)
    for i, (pid, sk) in enumerate(table, start=1):
        provisional = " " + _("provisional") if sk.provisional else ""
        typer.echo(f"{i}\t{names.get(pid, pid)}\t{sk.mu:.1f} ±{sk.sigma:.1f}\t{sk.games}{provisional}")


@club_app.command("season-create")
def season_create(name: str = typer.Argument(...), events: list[int] = typer.Argument(None),
                  scoring: str = typer.Option("placement", "--scoring", help="placement or match-points."),
                  best: int | None = typer.Option(None, "--best", help="Count only each player's best N evenings."),
                  db: str | None = DbOpt, lang: str = LANG_OPTION) -> None:
    """Create a season over EVENTS (more can be added with season-add)."""
    from .seasons import create_season
    from .service import DirectorError

    try:
        sid = create_season(_db(db or _default_db()), name, scoring=scoring, best=best, events=events or [])
    except DirectorError as exc:
        _fail(message_of(exc), 2 if "scoring" in str(exc) or "best" in str(exc) else 1)
    typer.echo(_("season {id}", id=sid))


@club_app.command("season-add")
def season_add(season: int = typer.Argument(...), event: int = typer.Argument(...), db: str | None = DbOpt, lang: str = LANG_OPTION) -> None:
    """Add an event (an evening) to a season."""
    from .seasons import add_event
    from .service import DirectorError

    try:
        add_event(_db(db or _default_db()), season, event)
    except DirectorError as exc:
        _fail(message_of(exc))


@club_app.command("season")
def season_show(season: int = typer.Argument(...), fmt: str = typer.Option("text", "--format", help="text, csv or json."),
                db: str | None = DbOpt, lang: str = LANG_OPTION) -> None:
    """A season's table now (the evenings that are over)."""
    from .seasons import season_table
    from .service import DirectorError

    try:
        t = season_table(_db(db or _default_db()), season)
    except DirectorError as exc:
        _fail(message_of(exc))
    if fmt == "csv":
        typer.echo(t.to_csv(), nl=False)
    elif fmt == "json":
        typer.echo(json.dumps(t.to_json()))
    elif fmt == "text":
        for r in t.rows:
            typer.echo(f"{r.rank}\t{r.name}\t{r.total:g}\t" + _("{n} evening(s)", n=len(r.evenings)))
    else:
        _fail(say("unknown format {format}: text, csv or json", format=repr(fmt)), 2)
