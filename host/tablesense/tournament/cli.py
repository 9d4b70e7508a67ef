"""Commands of the ``tournament`` room: ``tablesense director ...`` and ``tablesense tournament ...``.

Heavy imports (SQLAlchemy, paho, FastAPI, rustworkx) stay inside the command
functions so ``tablesense --help`` stays fast. Every failure becomes one
clear line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from tablesense.games.common import message_of, say
from tablesense.games.registry import GAMES
from tablesense.i18n.cli import LANG_OPTION, _
from tablesense.tournament import DEFAULT_DB

director_app = typer.Typer(help="The tournament director: web pages and the MQTT bridge.", no_args_is_help=True)
tournament_app = typer.Typer(help="Events: create, register, pair, simulate, export, broker config.", no_args_is_help=True)

DbOpt = typer.Option(DEFAULT_DB, "--db", help="Database URL (sqlite:///FILE or postgresql+psycopg://...).")
EventOpt = typer.Option(None, "--event", help="Event id (default: the latest event in the database).")


def register(app: typer.Typer) -> None:
    """Add this room's commands to the root ``tablesense`` app."""
    app.add_typer(director_app, name="director")
    from .club_cli import club_app  # players, ratings, seasons (issue 20)

    tournament_app.add_typer(club_app, name="club")
    app.add_typer(tournament_app, name="tournament")


def _fail(message: str, code: int = 1) -> None:
    """``error: ...`` on stderr and exit ``code``. A Sentence is translated
    into the command's language here; other text arrives translated (or is
    a developer's English, e.g. a database driver's)."""
    from rich.console import Console
    from rich.markup import escape

    text = _(message) if hasattr(message, "template") else message
    label = _("error:")
    Console(stderr=True).print(f"[red]{escape(label)}[/red] {escape(text)}", highlight=False)
    raise typer.Exit(code)


def _bad_argument(message: str) -> None:
    """A wrong argument: exit status 2 (docs/troubleshooting.md), 1 is for failures."""
    _fail(message, 2)


def _check_broker_url(url: str) -> None:
    """A --broker URL that cannot be parsed is a wrong argument (exit 2); one
    that carries its password is accepted with a warning (``ps`` shows it)."""
    from .bridge import PASSWORD_ENV, BrokerURL, password_in_url

    try:
        BrokerURL.parse(url)
    except ValueError as exc:
        _bad_argument(message_of(exc))
    if password_in_url(url):
        typer.echo(_("warning: the broker password in --broker is visible to every user of this machine (ps); "
                     "use ?password_file=FILE or ${variable}", variable=PASSWORD_ENV), err=True)


def _parse_score(text: str) -> tuple[float, float]:
    """``A-B`` in pairing order, two finite numbers of points (``150-97``, ``2.5-1.5``)."""
    import math
    import re

    m = re.fullmatch(r"\s*(\d{1,7}(?:\.\d{1,3})?)\s*-\s*(\d{1,7}(?:\.\d{1,3})?)\s*", text)
    if m is None:
        _bad_argument(say("--score {score} is not a score: write the two sides' points in pairing order "
                          "as A-B, e.g. --score 150-97 or --score 2.5-1.5", score=repr(text[:30])))
    assert m is not None
    a, b = float(m.group(1)), float(m.group(2))
    assert math.isfinite(a) and math.isfinite(b)
    return a, b


class _NotANumber(ValueError):
    pass


def _no_nan(name: str) -> Any:
    raise _NotANumber(name)


@contextmanager
def _errors() -> Iterator[None]:
    """Turn the room's expected errors into a message and exit status 1."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except typer.Exit:
        raise
    except (ValueError, RuntimeError, OSError, SQLAlchemyError) as exc:
        msg = message_of(exc)
        _fail(msg if hasattr(msg, "template") else (str(exc).splitlines()[0] if str(exc) else type(exc).__name__))


def _open(db_url: str, event: int | None) -> Any:
    from sqlalchemy import func, select

    from .db import Database, Event
    from .service import Director

    db = Database(db_url)
    if event is None:
        with db.session() as s:
            event = s.scalar(select(func.max(Event.id)))
        if event is None:
            _fail(say("no event in {db}; create one with `tablesense tournament create`", db=db_url))
    assert event is not None
    return Director(db, event)


# ------------------------------------------------------------------ director


@director_app.command("serve")
def serve(
    db: str = DbOpt,
    event: int | None = EventOpt,
    broker: str = typer.Option("mqtt://127.0.0.1:1883", "--broker", help="mqtts://director@HOST:8883?ca=broker/ca.crt&password_file=broker/director.password "
                                "(or $TABLESENSE_BROKER_PASSWORD; mqtt://... without TLS)"),
    no_broker: bool = typer.Option(False, "--no-broker", help="Serve the pages without the MQTT bridge."),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8080, "--port"),
    password_env: str = typer.Option("TABLESENSE_DIRECTOR_PASSWORD", "--password-env", help="Environment variable holding the director's password."),
    tls_cert: Path | None = typer.Option(None, "--tls-cert", help="Serve the pages over HTTPS with this certificate (PEM); cookies become Secure."),
    tls_key: Path | None = typer.Option(None, "--tls-key", help="The private key of --tls-cert (PEM)."),
    lang: str | None = typer.Option(None, "--lang", help="The pages' language (en, pt-BR, ms); default: LANG. Spectators may switch with ?lang=."),
) -> None:
    """Serve live standings, pairings, exports and the director's page; ingest table results."""
    import os

    from tablesense.i18n import UnknownLanguageError, resolve
    from tablesense.i18n.cli import activate, active

    from .web import MIN_PASSWORD

    try:  # without --lang here: `tablesense --lang X director serve`, else the locale (the root resolved it)
        page_lang = resolve(lang) if lang else active()
    except UnknownLanguageError as e:
        _bad_argument(str(e))
        raise
    activate(page_lang)  # what serve prints speaks the pages' default language too
    if (tls_cert is None) != (tls_key is None):
        _bad_argument(say("--tls-cert and --tls-key go together"))
    _check_broker_url(broker)
    with _errors():
        password = os.environ.get(password_env, "")
        if not password:
            _fail(say("set the director's password in {variable} (the management page needs a login)",
                      variable="$" + password_env))
        if len(password) < MIN_PASSWORD:
            _fail(say("the director's password in {variable} is {n} characters long; use at least {min} "
                      "(the management page is on the club's network)",
                      variable="$" + password_env, n=len(password), min=MIN_PASSWORD))
        import uvicorn

        from .bridge import BrokerURL, DirectorBridge, default_check_workers
        from .console import ack_line, serve_banner
        from .live import LiveBoard
        from .web import create_app, hash_password

        director = _open(db, event)
        before = _stop_on_signals()
        bridge = None
        try:
            if not no_broker:  # results, and the tables' live progress (console, /live) on the same connection
                bridge = DirectorBridge(
                    director, BrokerURL.parse(broker),
                    on_ack=lambda t, a: typer.echo(_(ack_line(t, a.key, a.status, a.reason))), live=LiveBoard(),
                    check_workers=default_check_workers(),
                ).start()
                if not bridge.wait_connected(10):
                    _fail(say("cannot connect to the broker at {broker}", broker=broker))
                bridge.announce_round()
            for line in serve_banner(director, host, port, None if no_broker else broker):
                typer.echo(_(line))
            app = create_app(director, password_hash=hash_password(password),
                             on_round_paired=bridge.announce_round if bridge else None,
                             secure_cookies=tls_cert is not None, live=bridge.live if bridge else None, lang=page_lang)
            uvicorn.run(app, host=host, port=port, log_level="warning",
                        ssl_certfile=str(tls_cert) if tls_cert else None, ssl_keyfile=str(tls_key) if tls_key else None)
        finally:
            if bridge is not None:
                bridge.stop()
            _restore_signals(before)


def _stop_on_signals() -> dict[int, Any]:
    """SIGTERM and Ctrl-C end ``director serve`` with status 0, after the
    bridge has stopped. uvicorn stops its server on either, then raises the
    signal again; Python's default action for SIGTERM then killed the process
    on the spot, before the bridge shut its check workers down, and a
    forkserver with a worker per core stayed behind after every stop."""
    import signal

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    before: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread (a test's runner): left as it is
            before[sig] = signal.signal(sig, stop)
    return before


def _restore_signals(before: dict[int, Any]) -> None:
    import signal

    for sig, handler in before.items():
        signal.signal(sig, handler)


# ------------------------------------------------------------------ tournament


@tournament_app.command("create")
def create(
    name: str = typer.Argument(..., help="Event name."),
    db: str = DbOpt,
    game: str = typer.Option("dominoes", "--game"),
    variant: str = typer.Option("pairs-pips", "--variant"),
    format: str = typer.Option("swiss", "--format", help="swiss, round-robin, knockout or groups."),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE (JSON value), e.g. -o target=150 -o 'tiebreaks=[\"games_won\",\"buchholz\"]'."),
    lang: str | None = typer.Option(None, "--lang", help="The event's language (en, pt-BR, ms): its pages' default; default: director serve --lang."),
) -> None:
    """Create an event; prints its id."""
    with _errors():
        from .db import Database
        from .service import Director, DirectorError, event_language

        opts: dict[str, Any] = {}
        for o in option:
            if "=" not in o:
                _bad_argument(say("--option {option} is not KEY=VALUE", option=repr(o)))
            k, v = o.split("=", 1)
            try:
                opts[k] = json.loads(v, parse_constant=_no_nan)
            except _NotANumber:
                _bad_argument(say("--option {option}: NaN and Infinity are not values an event may have",
                                  option=repr(o)))
            except ValueError:
                opts[k] = v
        if lang is not None:  # a tag we have no catalog for is a wrong argument (exit 2), like serve --lang
            try:
                opts["lang"] = event_language(lang)
            except DirectorError as e:
                _bad_argument(str(e))
        d = Director.create_event(Database(db), name, game=game, variant=variant, format=format, options=opts)
        typer.echo(d.event_id)  # the event's id alone on stdout (scripts read it); what to do next on stderr
        typer.echo(_("created event {id} {name}; next: register its entrants (tablesense tournament register NAME "
                     "--member A --member B --db {db})", id=d.event_id, name=repr(name), db=db), err=True)


def _numbers(d: Any) -> dict[int, int]:
    """Entrant id -> its number in the event (what people read and type)."""
    from .present import entrant_numbers

    return entrant_numbers(e.id for e in d.entrants())


def _who(d: Any, entrant_id: int | None) -> str:
    """``#3 Ana & Bia``, or "bye" for the empty side of a bye."""
    from .present import numbered

    if entrant_id is None:
        return _("bye")
    names = {e.id: e.name for e in d.entrants()}
    return numbered(_numbers(d).get(entrant_id), names.get(entrant_id, "?"))


def _entrant_by_number(d: Any, number: int) -> Any:
    """The entrant numbered ``number`` in the event; a number nobody has fails with the range (exit 1)."""
    entrants = d.entrants()  # in the order of registration: the numbers' order
    if not 1 <= number <= len(entrants):
        _fail(say("no entrant #{number} in this event (its entrants are #1 to #{last})", number=number,
                  last=len(entrants)) if entrants else say("no entrant is registered in this event yet"))
    return entrants[number - 1]


def _checked_in(d: Any) -> str:
    entrants = [e for e in d.entrants() if e.status != "withdrawn"]
    return _("{n} of {total} checked in", n=sum(1 for e in entrants if e.status == "checked_in"), total=len(entrants))


@tournament_app.command("register")
def register_entrant(
    name: str = typer.Argument(...),
    db: str = DbOpt,
    event: int | None = EventOpt,
    member: list[str] = typer.Option([], "--member", help="A player's name (twice for a pair)."),
    badge: list[str] = typer.Option([], "--badge", help="A badge tag UID (hex) of one of its players."),
    seed: int = typer.Option(0, "--seed"),
    lang: str = LANG_OPTION,
) -> None:
    """Register an entrant (a pair or an individual); prints its number in the event (#1, #2, ... in order)."""
    with _errors():
        d = _open(db, event)
        eid = d.register(name, member, badge, seed)
        typer.echo(_numbers(d)[eid])  # the number alone on stdout (scripts read it); the sentence for people on stderr
        typer.echo(_("registered {who} (entrants: {n})", who=_who(d, eid), n=len(d.entrants())), err=True)


@tournament_app.command("check-in")
def check_in(number: int = typer.Argument(..., help="The entrant's number in the event (#3: 3)."), db: str = DbOpt,
             event: int | None = EventOpt, lang: str = LANG_OPTION) -> None:
    """Check an entrant in by hand (tables check in by badge taps); says who and how many are in."""
    with _errors():
        d = _open(db, event)
        e = _entrant_by_number(d, number)
        changed = d.check_in(e.id, "director-cli")
        said = (_("checked in {who}", who=_who(d, e.id)) if changed
                else _("{who} was already checked in", who=_who(d, e.id)))
        typer.echo(f"{said} ({_checked_in(d)})")


@tournament_app.command("withdraw")
def withdraw(number: int = typer.Argument(..., help="The entrant's number in the event."),
             reason: str = typer.Option(..., "--reason"), db: str = DbOpt, event: int | None = EventOpt,
             lang: str = LANG_OPTION) -> None:
    """Withdraw an entrant from later rounds (its played matches stay)."""
    with _errors():
        d = _open(db, event)
        e = _entrant_by_number(d, number)
        if d.withdraw(e.id, reason, "director-cli"):
            typer.echo(_("withdrew {who} from the later rounds (reason: {reason}); its played matches stay",
                         who=_who(d, e.id), reason=repr(reason)))
        else:
            typer.echo(_("{who} had already withdrawn", who=_who(d, e.id)))


@tournament_app.command("bye")
def bye(number: int = typer.Argument(..., help="The entrant's number in the event."),
        round_no: int = typer.Option(..., "--round"), db: str = DbOpt, event: int | None = EventOpt,
        lang: str = LANG_OPTION) -> None:
    """Record a requested (zero-point) bye for a future round."""
    with _errors():
        d = _open(db, event)
        e = _entrant_by_number(d, number)
        d.request_bye(e.id, round_no)
        typer.echo(_("{who} sits out round {round} (a requested bye scores nothing)", who=_who(d, e.id),
                     round=round_no))


@tournament_app.command("add-table")
def add_table(
    number: int = typer.Argument(...),
    key_dir: Path = typer.Option(Path("."), "--key-dir", help="Where to write the table's private key (table-N.key)."),
    db: str = DbOpt,
    event: int | None = EventOpt,
    lang: str = LANG_OPTION,
) -> None:
    """Provision a table: create its signing key and register the public half."""
    with _errors():
        from .security import TableKey

        d = _open(db, event)
        key = TableKey.generate()
        key_dir.mkdir(parents=True, exist_ok=True)
        path = key_dir / f"table-{number}.key"
        key.save(path)
        d.add_table(number, key.public)
        typer.echo(_("table {table}: private key {path}; public key {key}", table=number, path=path, key=key.public))


@tournament_app.command("pair")
def pair(db: str = DbOpt, event: int | None = EventOpt, force: bool = typer.Option(False, "--force"), lang: str = LANG_OPTION) -> None:
    """Pair the next round and print its pairings."""
    with _errors():
        d = _open(db, event)
        n = d.pair_next_round(force=force)
        for m in d.matches(n):
            other = _who(d, m.entrant_b) if m.entrant_b else (_("bye") if m.kind == "pairing-bye" else _("bye (requested)"))
            typer.echo(_("round {round}  table {table}  {a} v {b}", round=n, table=f"{m.table_no or '-':>3}",
                         a=_who(d, m.entrant_a), b=other))


@tournament_app.command("pair-remote")
def pair_remote(
    table: int = typer.Argument(..., help="The table whose match of the round becomes remote: it hosts the match."),
    with_table: int = typer.Option(..., "--with-table", help="The table (at another venue) that joins the match."),
    round_no: int | None = typer.Option(None, "--round", help="The round (default: the current one)."),
    db: str = DbOpt,
    event: int | None = EventOpt,
    lang: str = LANG_OPTION,
) -> None:
    """Make a table's match of the round remote: it and another table (at another venue) play it together (docs/remote.md)."""
    with _errors():
        from .remote_pairs import pair_remote as make_remote

        d = _open(db, event)
        m = _match_at(d, table, None, round_no)
        p = make_remote(d, m.id, with_table, "director-cli")
        typer.echo(_("round {round}, table {host} hosts, table {join} joins; code {code} (both tables: "
                     "play --remote auto --director ...); a running director serve announces it when restarted",
                     round=m.round_no, host=p.host, join=p.join, code=p.code))


@tournament_app.command("standings")
def standings(db: str = DbOpt, event: int | None = EventOpt, lang: str = LANG_OPTION) -> None:
    """Print the standings."""
    with _errors():
        from rich.console import Console
        from rich.table import Table

        from .export import export_event
        from .present import standings_rows

        # The same columns as the standings page: human names, tie-breaks in the
        # event's order once each, lots as a place in the draw (never a float).
        cols, rows = standings_rows(export_event(_open(db, event), audit=False))
        cols = [(k, h) for k, h in cols if k not in ("players", "draws")]
        t = Table(title=_("Standings"))
        for k, h in cols:
            t.add_column(_(h), no_wrap=k == "name", justify="left" if k == "name" else "right")
        for r in rows:  # the entrant by number and name (#4 Gil & Hal), as on the pages; its rank in Rank
            t.add_row(*[f"#{r['number']} {r[k]}" if k == "name" and r.get("number") else str(r[k]) for k, _h in cols])
        Console(width=None if sys.stdout.isatty() else 200).print(t)


def _match_at(d: Any, table: int | None, number: int | None, round_no: int | None) -> Any:
    """The match at ``table`` (or of entrant ``number``) in ``round_no`` (default: the current round)."""
    rnd = round_no or d.current_round_no()
    if not rnd:
        _fail(say("no round has been paired yet"))
    matches = d.matches(rnd)
    if number is not None:
        e = _entrant_by_number(d, number)
        found = [m for m in matches if e.id in (*(m.entrants or []), m.entrant_a, m.entrant_b)]
        if not found:
            _fail(say("{who} has no match in round {round}", who=_who(d, e.id), round=rnd))
        return found[0]
    found = [m for m in matches if m.table_no == table]
    if not found:
        tables = sorted({m.table_no for m in matches if m.table_no is not None})
        _fail(say("no match at table {table} in round {round} (its tables: {tables})", table=table, round=rnd,
                  tables=", ".join(map(str, tables)) or "-"))
    if len(found) > 1:
        _fail(say("table {table} has {n} matches in round {round}: name the entrant with --pair N instead",
                  table=table, n=len(found), round=rnd))
    return found[0]


@tournament_app.command("correct")
def correct(
    table: int | None = typer.Argument(None, help="The table whose result to correct (in --round; default: the current round)."),
    pair: int | None = typer.Option(None, "--pair", help="Or: the number of an entrant (#5: 5) whose match to correct."),
    round_no: int | None = typer.Option(None, "--round", help="The round (default: the current one)."),
    score: str = typer.Option(..., "--score", help="A-B in pairing order, e.g. 150-97 (a table of three or four: 4-1-0)."),
    winner: int | None = typer.Option(None, "--winner", help="The winner's number (default: the side with more points; "
                                      "a level score without it is a draw)."),
    reason: str = typer.Option(..., "--reason"),
    db: str = DbOpt,
    event: int | None = EventOpt,
    lang: str = LANG_OPTION,
) -> None:
    """Correct a result by table or entrant number (with a reason; written to the audit log); prints what changed."""
    if (table is None) == (pair is None):
        _bad_argument(say("name the table (tournament correct 3 --score ...) or an entrant (--pair 5), one of the two"))
    several = score.count("-") >= 2  # a table of three or four entrants: one score each, in seat order
    sa, sb = (0.0, 0.0) if several else _parse_score(score)
    with _errors():
        d = _open(db, event)
        before = _match_at(d, table, pair, round_no)
        where = _("round {round}, table {table}", round=before.round_no, table=before.table_no or "-")
        if several:
            from .kway import correct_table, match_entrants

            correct_table(d, before.id, score, reason, "director-cli")
            sides = ", ".join(f"{_who(d, e)} {x}" for e, x in zip(match_entrants(before), score.split("-"), strict=False))
            typer.echo(_("{where}: {sides}; confirmed, and written to the audit log with the reason {reason}",
                         where=where, sides=sides, reason=repr(reason)))
            return
        won = _entrant_by_number(d, winner).id if winner is not None else None
        d.correct(before.id, (sa, sb), won, reason, "director-cli")
        after = next(m for m in d.matches(before.round_no) if m.id == before.id)
        was = _("no result") if before.score_a is None else f"{before.score_a:g}-{before.score_b or 0:g}"
        who = _who(d, after.winner_id) if after.winner_id is not None else _("nobody (a draw)")
        typer.echo(_("{where} ({a} v {b}): {was} -> {score}, winner {winner}; "
                     "confirmed, and written to the audit log with the reason {reason}",
                     where=where, a=_who(d, before.entrant_a), b=_who(d, before.entrant_b), was=was,
                     score=f"{sa:g}-{sb:g}", winner=who, reason=repr(reason)))


@tournament_app.command("confirm")
def confirm(
    tables: list[int] = typer.Argument(None, help="The table(s) whose reported result to confirm (in --round; "
                                       "default: the current round)."),
    pairs: list[int] = typer.Option([], "--pair", help="Or: the number of an entrant (#5: 5) whose match to confirm "
                                    "(repeat for several)."),
    round_no: int | None = typer.Option(None, "--round", help="The round (default: the current one)."),
    all_reported: bool = typer.Option(False, "--all", help="Confirm every reported result of the round."),
    db: str = DbOpt,
    event: int | None = EventOpt,
    lang: str = LANG_OPTION,
) -> None:
    """Confirm reported results by table or entrant number, or --all (the `director` confirmation mode; a disputed result)."""
    named = bool(tables) + bool(pairs) + all_reported
    if named != 1:
        _bad_argument(say("name the table(s) to confirm (tournament confirm 3), an entrant (--pair 5) "
                          "or --all for every reported result of the round; one of the three"))
    with _errors():
        from .console import confirm_match, confirm_reported, pair_status
        from .kway import match_entrants, match_scores

        d = _open(db, event)
        if all_reported:
            done = confirm_reported(d, "director-cli", round_no)
        else:
            chosen = [_match_at(d, t, None, round_no) for t in tables or []]
            chosen += [_match_at(d, None, n, round_no) for n in pairs or []]
            unique = list({m.id: m for m in chosen}.values())  # a table and its pair named twice: confirmed once
            done = [confirm_match(d, m.id, "director-cli") for m in unique]
        for m in done:
            sides = zip(match_entrants(m), match_scores(m) or [], strict=False)
            typer.echo(_("confirmed {where}: {sides}", where=_("round {round}, table {table}", round=m.round_no,
                                                                  table=m.table_no or "-"),
                         sides=" v ".join(f"{_who(d, e)} {x:g}" for e, x in sides)))
        if not done:
            typer.echo(_("no reported result to confirm"))
        typer.echo(_(pair_status(d).reason))


@tournament_app.command("export")
def export(
    db: str = DbOpt,
    event: int | None = EventOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the event as one JSON object."),
    csv: str | None = typer.Option(None, "--csv", help="standings or results: print that CSV."),
    archive: Path | None = typer.Option(None, "--archive", help="Write a ZIP of every game record and the audit log."),
    lang: str = LANG_OPTION,
) -> None:
    """Export an event: JSON, CSV, or the archive of its records."""
    with _errors():
        from .export import dumps, export_event, records_archive, results_csv, standings_csv

        d = _open(db, event)
        if archive is not None:
            data = records_archive(d)
            archive.write_bytes(data)
            typer.echo(_("wrote {path} ({kb} kB): every game record, the event and its audit log", path=archive,
                         kb=max(1, len(data) // 1024)), err=True)
        if csv is not None:
            if csv not in ("standings", "results"):
                _bad_argument(say("--csv takes standings or results"))
            sys.stdout.write(standings_csv(d) if csv == "standings" else results_csv(d))
        if as_json or (csv is None and archive is None):
            sys.stdout.write(dumps(export_event(d)) + "\n")


@tournament_app.command("mosquitto-config")
def mosquitto_config(
    out: Path = typer.Option(..., "--out", help="Directory for mosquitto.conf, passwd, acl, credentials."),
    tables: int = typer.Option(..., "--tables"),
    port: int | None = typer.Option(None, "--port", help="Default 8883 with TLS, 1883 without."),
    bind: str = typer.Option("127.0.0.1", "--bind"),
    run_as: str | None = typer.Option(None, "--user", help="Write a `user` line (the account the broker runs as)."),
    tls: bool = typer.Option(True, "--tls/--no-tls", help="MQTT over TLS with a generated CA (default), or in clear."),
    name: list[str] = typer.Option([], "--name", help="A host name or address the tables use to reach the broker (for its certificate; repeat)."),
    lang: str = LANG_OPTION,
) -> None:
    """Generate the broker's config: one user per table, ACLs, PBKDF2 password file, TLS CA and certificate."""
    with _errors():
        from .mosquitto import write_broker_config

        port = port or (8883 if tls else 1883)
        files = write_broker_config(out, tables=tables, port=port, bind=bind, run_as=run_as, tls=tls, names=name)
        typer.echo(_("wrote {conf}, {passwd}, {acl} and {credentials} (keep it secret)", conf=files.conf,
                     passwd=files.passwd, acl=files.acl, credentials=files.conf.parent / "credentials"))
        folder = files.conf.parent
        if files.ca is not None:
            typer.echo(_("copy {ca} and {password} to table N; it connects with --director {url} "
                         "(HOST: a name in the certificate, see --name)", ca=files.ca,
                         password=folder / "table-N.password",
                         url=f"mqtts://table-N@HOST:{port}?ca=PATH/ca.crt&password_file=PATH/table-N.password"))
        else:
            typer.echo(_("copy {password} to table N; it connects with --director {url}",
                         password=folder / "table-N.password",
                         url=f"mqtt://table-N@HOST:{port}?password_file=PATH/table-N.password"))
        typer.echo(_("the director connects with --broker {url}",
                     url=f"{'mqtts' if files.ca else 'mqtt'}://director@127.0.0.1:{port}?"
                         + (f"ca={files.ca}&" if files.ca else "") + f"password_file={folder / 'director.password'}"))
        typer.echo(_("start the broker with: {command}", command=f"mosquitto -c {files.conf}"))


@tournament_app.command("venue-config")
def venue_config(
    venue: str = typer.Argument(..., help="The venue's name: lower-case letters, digits and dashes."),
    out: Path = typer.Option(..., "--out", help="Directory for the venue broker's files (copy it to the venue)."),
    tables: int = typer.Option(..., "--tables", help="Table users to create at the venue (table-1 .. table-N)."),
    director_dir: Path = typer.Option(..., "--director-dir", help="The director broker's folder (from mosquitto-config)."),
    director_host: str = typer.Option(..., "--director-host", help="How the venue reaches the director's broker."),
    director_port: int = typer.Option(1883, "--director-port"),
    port: int = typer.Option(1883, "--port", help="The venue broker's port."),
    bind: str = typer.Option("0.0.0.0", "--bind"),
    run_as: str | None = typer.Option(None, "--user", help="Write a `user` line (the account the venue broker runs as)."),
    lang: str = LANG_OPTION,
) -> None:
    """A far venue's broker bridged to the director's: its tables, its ACL, and the bridge (docs/tournament.md)."""
    with _errors():
        from .venues import write_venue_config

        v = write_venue_config(out, venue=venue, tables=tables, director_dir=director_dir, director_host=director_host,
                               director_port=director_port, port=port, bind=bind, run_as=run_as)
        typer.echo(_("wrote {conf} (with the bridge to {director} as {user}), {passwd}, {acl} and {credentials}",
                     conf=v.broker.conf, director=f"{director_host}:{director_port}", user=v.user,
                     passwd=v.broker.passwd, acl=v.broker.acl, credentials=v.broker.conf.parent / "credentials"))
        typer.echo(_("added {user} to {passwd} and acl: restart the director's broker "
                     "(or send it SIGHUP) so the bridge can log in", user=v.user,
                     passwd=director_dir.resolve() / "passwd"))
        typer.echo(_("at the venue, start: {command}", command=f"mosquitto -c {v.broker.conf}"))


@tournament_app.command("relay-config")
def relay_config(
    name: str = typer.Argument(..., help="The relay's name: lower-case letters, digits and dashes."),
    out: Path = typer.Option(..., "--out", help="Directory for the relay broker's files."),
    upstream: str = typer.Option(..., "--upstream", help="HOST:PORT of the director's broker (with --director-dir) "
                                 "or of another relay's MQTT listener."),
    director_dir: Path | None = typer.Option(None, "--director-dir", help="The director broker's folder (from "
                                             "mosquitto-config): the relay gets a read-only account there."),
    port: int = typer.Option(1884, "--port", help="The relay's plain MQTT port (the next relay bridges from it)."),
    ws_port: int = typer.Option(9001, "--ws-port", help="The WebSocket port browsers connect to."),
    bind: str = typer.Option("0.0.0.0", "--bind"),
    max_spectators: int = typer.Option(5000, "--max-spectators", help="Connections each listener admits."),
    run_as: str | None = typer.Option(None, "--user", help="Write a `user` line (the account the relay runs as)."),
    token_file: Path | None = typer.Option(None, "--token-file", help="The event's spectator token (made there when "
                                           "the file does not exist; give every relay of the event the same file): "
                                           "spectators log in as `spectator` with it instead of anonymously."),
    lang: str = LANG_OPTION,
) -> None:
    """A relay broker for spectators: the tables' public progress bridged in, served read-only over WebSocket."""
    with _errors():
        from .relays import spectator_token, write_relay_config

        host, _sep, port_text = upstream.rpartition(":")
        if not host or not port_text.isdigit():
            _fail(say("--upstream is HOST:PORT, not {value}", value=repr(upstream[:60])))
        token = spectator_token(token_file) if token_file is not None else None
        r = write_relay_config(out, name=name, upstream_host=host, upstream_port=int(port_text), director_dir=director_dir,
                               port=port, ws_port=ws_port, bind=bind, max_spectators=max_spectators, run_as=run_as,
                               token=token)
        typer.echo(_("wrote {conf} and {acl}: spectators read the live topics at ws://HOST:{ws_port}/",
                     conf=r.conf, acl=r.acl, ws_port=ws_port))
        if r.user is not None and director_dir is not None:
            typer.echo(_("added {user} to {passwd} and acl: restart the director's broker "
                         "(or send it SIGHUP) so the bridge can log in", user=r.user,
                         passwd=director_dir.resolve() / "passwd"))
        typer.echo(_("start the broker with: {command}", command=f"mosquitto -c {r.conf}"))


@tournament_app.command("table")
def table(
    number: int = typer.Argument(...),
    key: Path = typer.Option(..., "--key", help="The table's private key file (from add-table)."),
    journal: Path = typer.Option(..., "--journal", help="The table's journal file (created if missing)."),
    broker: str = typer.Option("mqtt://127.0.0.1:1883", "--broker", help="mqtts://table-N@HOST:8883?ca=ca.crt&password_file=FILE "
                                "(or $TABLESENSE_BROKER_PASSWORD; mqtt://... without TLS)"),
    seed: int = typer.Option(0, "--seed"),
    lang: str = LANG_OPTION,
) -> None:
    """Run a headless table that plays its assigned matches with computer players."""
    _check_broker_url(broker)
    with _errors():
        import signal
        import threading

        from .bridge import BrokerURL
        from .security import TableKey
        from .table_client import HeadlessTable

        url = BrokerURL.parse(broker)
        typer.echo(_("table {table}: headless table (computer players), key {key}, journal {journal}, "
                     "broker {broker} as {user}", table=number, key=key, journal=journal,
                     broker=f"{url.host}:{url.port}", user=url.username or _("anonymous")))
        stop = threading.Event()
        # Ctrl-C and SIGTERM stop the table at once, cleanly (offline status, journal closed).
        # Set explicitly: a table started in the background of a script inherits SIGINT
        # ignored, and Python then never raises KeyboardInterrupt for it.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda _sig, _frame: stop.set())
        t = HeadlessTable(number, TableKey.load(key), journal, url, seed=seed, say=lambda m: typer.echo(_(m))).start()
        try:
            stop.wait()
        finally:
            t.close()
        typer.echo(_("table {table}: stopped; its journal keeps any match in play, resumed at the next start",
                     table=number))


@tournament_app.command("simulate")
def simulate(
    entrants: int = typer.Option(12, "--entrants"),
    rounds: int = typer.Option(3, "--rounds"),
    format: str = typer.Option("swiss", "--format", help="swiss, round-robin, knockout or groups."),
    tables: int = typer.Option(4, "--tables"),
    seed: int = typer.Option(0, "--seed"),
    db: str = DbOpt,
    broker: str = typer.Option("spawn", "--broker", help="spawn (own Mosquitto with generated users/ACL) or mqtt://HOST:PORT"),
    game: str = typer.Option("dominoes", "--game", help=" or ".join(GAMES) + "."),
    variant: str = typer.Option("pairs-pips", "--variant", help="; ".join(f"{g.name}: {', '.join(g.variants)}" for g in GAMES.values()) + "."),
    target: float | None = typer.Option(None, "--target", help="Match target (default: the variant's)."),
    best_of: int = typer.Option(1, "--best-of"),
    drop_tables: int = typer.Option(0, "--drop-tables", help="Tables that crash mid-match in round 2."),
    restart_broker: bool = typer.Option(False, "--restart-broker", help="Restart the broker mid round 2 (spawn only)."),
    restart_director: bool = typer.Option(False, "--restart-director", help="Kill and restart the director mid round 1."),
    attack: bool = typer.Option(False, "--attack", help="Duplicate, forge and replay messages."),
    move_delay: float = typer.Option(0.0, "--move-delay", help="Seconds per computer move (lets faults land mid-match)."),
    confirm: str = typer.Option("badges", "--confirm", help="How results become final: badges, buttons or director."),
    seats: int | None = typer.Option(None, "--seats", help="Seats a table: 3 (brazilian-points, 3 players a table), 6 or 8 (Kems, 3 or 4 teams a table)."),
    club: int = typer.Option(0, "--club", help="Simulate a club of this many players over --evenings (club_sim.py: ratings, a season)."),
    evenings: int = typer.Option(10, "--evenings", help="With --club: evenings in the season."),
    first_round: str = typer.Option("rating", "--first-round", help="With --club: rating (neighbours in rating meet) or drawn."),
    lang: str = LANG_OPTION,
) -> None:
    """Run a whole event end to end over the broker and database with headless tables."""
    if club:
        with _errors():
            if club < 4 or evenings < 1 or first_round not in ("rating", "drawn"):
                _bad_argument(say("--club needs at least 4 players, --evenings at least 1, "
                                  "--first-round rating or drawn"))
            from .club_sim import simulate_club

            rep = simulate_club(db, players=club, evenings=evenings, rounds=rounds, seed=seed, first_round=first_round,
                                variant=variant, game=game, progress=lambda m: typer.echo(_(m), err=True))
            typer.echo(json.dumps(rep.to_json()))
        return
    with _errors():
        from rich.console import Console

        from .simulate import Faults
        from .simulate import simulate as run

        console = Console(stderr=True)
        faults = Faults(drop_tables=drop_tables, drop_round=2 if drop_tables else 0,
                        broker_restart_round=2 if restart_broker else 0, director_restart_round=1 if restart_director else 0,
                        duplicates=attack, forgeries=attack)
        progress_line: Callable[[str], None] = lambda m: console.print(_(m), highlight=False)  # noqa: E731
        report = run(entrants=entrants, rounds=rounds, format=format, tables=tables, seed=seed, db_url=db,
                     broker=broker, game=game, variant=variant, target=target, best_of=best_of, faults=faults, progress=progress_line,
                     move_delay=move_delay, confirm=confirm, seats=seats)
        typer.echo(json.dumps(report.to_json()))


@tournament_app.command("rehearse")
def rehearse(
    db: str | None = typer.Option(None, "--db", help="Where the rehearsal's event is played (default: SQLite in the "
                                  "work folder; never the club's event itself)."),
    event: int | None = typer.Option(None, "--event", help="Rehearse a copy of this event (its entrants, format, "
                                     "options and tables), read from --from-db."),
    from_db: str = typer.Option(DEFAULT_DB, "--from-db", help="The club's database holding --event."),
    pairs: int = typer.Option(8, "--pairs", help="A new event: how many entrants (pairs, or players in a "
                              "two-player variant)."),
    rounds: int = typer.Option(3, "--rounds", help="A new event: Swiss rounds."),
    tables: int | None = typer.Option(None, "--tables", help="Virtual tables, each a `play --director` process "
                                      "(default: the copied event's tables, else 4)."),
    game: str = typer.Option("dominoes", "--game", help="A new event: " + " or ".join(GAMES) + "."),
    variant: str | None = typer.Option(None, "--variant", help="A new event: " + "; ".join(
        f"{g.name}: {', '.join(g.variants)}" for g in GAMES.values()) + " (default: the game's first)."),
    seats: int | None = typer.Option(None, "--seats", help="A new event: seats a table (brazilian-points 3: three "
                                     "players a table; Kems 6 or 8: three or four teams a table)."),
    target: float | None = typer.Option(None, "--target", help="Match target in points (small: a short rehearsal)."),
    confirm: str = typer.Option("buttons", "--confirm", help="A new event: buttons (the computer's seat buttons) or "
                                "director (the rehearsal confirms)."),
    speed: float = typer.Option(4.0, "--speed", help="The computer hands' pace (1: a person's; 4: four times faster)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address of the director's pages."),
    port: int = typer.Option(8200, "--port", help="Port of the director's pages (0: any free port)."),
    workdir: Path | None = typer.Option(None, "--workdir", help="Folder for the broker, keys, journals and logs "
                                        "(default: a new temporary folder, kept)."),
    tls: bool = typer.Option(True, "--tls/--no-tls", help="The broker speaks TLS (as the club's should)."),
    broker: str | None = typer.Option(None, "--broker", help="Use a broker that runs (the club's) instead of starting "
                                      "one: mqtts://director@HOST:8883?ca=DIR/ca.crt&password_file=DIR/director.password"),
    credentials: Path | None = typer.Option(None, "--credentials", help="With --broker: the tables' broker passwords "
                                            "(default: the credentials file beside the password file)."),
    round_timeout: float = typer.Option(900.0, "--round-timeout", help="Seconds a round may take before the "
                                        "rehearsal gives up (exit 1)."),
    lang: str = LANG_OPTION,
) -> None:
    """Run a whole evening on virtual tables, unattended, to a winner: director, broker,
    real `play --director` referees whose computer hands move the pieces."""
    import os

    from .rehearsal import Plan, RehearsalError
    from .rehearsal import rehearse as run

    if confirm not in ("buttons", "director"):
        _bad_argument(say("--confirm is buttons or director in a rehearsal (the computer carries no badges)"))
    if event is not None and db is not None and db == from_db:
        _bad_argument(say("--db is the club's database: a rehearsal plays in a database of its own "
                          "(leave out --db)"))
    if game not in GAMES:
        _bad_argument(say("--game {game}: choose {games}", game=repr(game), games=" or ".join(GAMES)))
    if variant is not None and variant not in GAMES[game].variants:
        _bad_argument(say("--variant {variant} is not a variant of {game} (its variants: {variants})",
                          variant=repr(variant), game=game, variants=", ".join(GAMES[game].variants)))
    if broker is not None:
        _check_broker_url(broker)
    plan = Plan(broker_url=broker, credentials=credentials, db_url=db, workdir=workdir, source_db=from_db if event is not None else None, source_event=event,
                pairs=pairs, rounds=rounds, tables=tables, game=game, variant=variant or GAMES[game].variants[0],
                seats=seats, target=target, confirm=confirm, tls=tls, host=host, port=port, speed=speed,
                round_timeout=round_timeout,
                password=os.environ.get("TABLESENSE_DIRECTOR_PASSWORD") or None)
    try:
        report = run(plan, tell=lambda line: typer.echo(_(line), err=True))
    except RehearsalError as exc:
        _fail(exc.message, exc.code)
    except KeyboardInterrupt:
        _fail(say("the rehearsal was stopped before the winner"), 1)
    else:
        typer.echo(json.dumps({"event": report.event_id, "rounds": report.rounds, "matches": report.matches,
                               "winners": report.winners, "seconds": round(report.seconds, 1),
                               "workdir": str(report.workdir)}))
