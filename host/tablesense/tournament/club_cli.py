"""``tablesense tournament club ...``: the club's players, ratings and seasons from the shell.

Exit codes as the rest of ``tournament``: 0 done, 1 refused (the message
says why), 2 a wrong argument.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from .db import Database

club_app = typer.Typer(help="The club's memory: players, ratings, seasons.", no_args_is_help=True)


def _db(url: str) -> Database:
    from .db import Database

    return Database(url)


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _default_db() -> str:
    from .cli import DEFAULT_DB

    return DEFAULT_DB


DbOpt = typer.Option(None, "--db", help="Database URL (default: the tournament's).")


@club_app.command("add-player")
def add_player_cmd(name: str = typer.Argument(...), badge: str = typer.Option("", "--badge"), club: str = typer.Option("", "--club"),
                   db: str | None = DbOpt) -> None:
    """Add a player to the club (a badge belongs to one player)."""
    from .players import add_player
    from .service import DirectorError

    try:
        pid = add_player(_db(db or _default_db()), name, badge=badge or None, club=club)
    except DirectorError as exc:
        _fail(str(exc))
    typer.echo(f"player {pid}: {name}")


@club_app.command("players")
def players_cmd(query: str = typer.Argument(""), db: str | None = DbOpt) -> None:
    """List the club's players (those matching QUERY: name or badge)."""
    from .players import search

    for p in search(_db(db or _default_db()), query, limit=10_000):
        typer.echo(f"{p.id}\t{p.name}\t{p.badge or ''}\t{p.club}")


@club_app.command("enter")
def enter_cmd(event: int = typer.Argument(...), players: list[int] = typer.Argument(...),  # noqa: B008
              name: str = typer.Option("", "--name"), db: str | None = DbOpt) -> None:
    """Enter known players (one, or two for a pair) as an entrant of EVENT."""
    from .players import register_players
    from .service import Director, DirectorError

    try:
        eid = register_players(Director(_db(db or _default_db()), event), players, name or None)
    except DirectorError as exc:
        _fail(str(exc))
    typer.echo(f"entrant {eid}")


@club_app.command("ratings")
def ratings_cmd(family: str = typer.Option("dominoes-pairs", "--family", help="dominoes-pairs, dominoes-individual or kems."),
                recompute: bool = typer.Option(False, "--recompute", help="Forget the stored ratings and replay every result."),
                db: str | None = DbOpt) -> None:
    """The club's ratings in a family, brought up to date with the confirmed results."""
    from . import ratings as rt
    from .players import all_players

    if family not in rt.FAMILIES:
        _fail(f"unknown family {family!r}; choose from {', '.join(rt.FAMILIES)}", 2)
    d = _db(db or _default_db())
    reps = rt.recompute(d) if recompute else rt.update(d)
    names = {p.id: p.name for p in all_players(d)}
    for r in reps:
        typer.echo(f"{r.family}: {r.kept} kept, {r.replayed} rated", err=True)
    table = sorted(rt.current(d, family).items(), key=lambda kv: -kv[1].ordinal)
    for i, (pid, sk) in enumerate(table, start=1):
        typer.echo(f"{i}\t{names.get(pid, pid)}\t{sk.mu:.1f} ±{sk.sigma:.1f}\t{sk.games}{' provisional' if sk.provisional else ''}")


@club_app.command("season-create")
def season_create(name: str = typer.Argument(...), events: list[int] = typer.Argument(None),  # noqa: B008
                  scoring: str = typer.Option("placement", "--scoring", help="placement or match-points."),
                  best: int | None = typer.Option(None, "--best", help="Count only each player's best N evenings."),
                  db: str | None = DbOpt) -> None:
    """Create a season over EVENTS (more can be added with season-add)."""
    from .seasons import create_season
    from .service import DirectorError

    try:
        sid = create_season(_db(db or _default_db()), name, scoring=scoring, best=best, events=events or [])
    except DirectorError as exc:
        _fail(str(exc), 2 if "scoring" in str(exc) or "best" in str(exc) else 1)
    typer.echo(f"season {sid}")


@club_app.command("season-add")
def season_add(season: int = typer.Argument(...), event: int = typer.Argument(...), db: str | None = DbOpt) -> None:
    """Add an event (an evening) to a season."""
    from .seasons import add_event
    from .service import DirectorError

    try:
        add_event(_db(db or _default_db()), season, event)
    except DirectorError as exc:
        _fail(str(exc))


@club_app.command("season")
def season_show(season: int = typer.Argument(...), fmt: str = typer.Option("text", "--format", help="text, csv or json."),
                db: str | None = DbOpt) -> None:
    """A season's table now (the evenings that are over)."""
    from .seasons import season_table
    from .service import DirectorError

    try:
        t = season_table(_db(db or _default_db()), season)
    except DirectorError as exc:
        _fail(str(exc))
    if fmt == "csv":
        typer.echo(t.to_csv(), nl=False)
    elif fmt == "json":
        typer.echo(json.dumps(t.to_json()))
    elif fmt == "text":
        for r in t.rows:
            typer.echo(f"{r.rank}\t{r.name}\t{r.total:g}\t{len(r.evenings)} evening(s)")
    else:
        _fail(f"unknown format {fmt!r}: text, csv or json", 2)
