"""A whole club evening on virtual tables, unattended, before the players arrive.

``tablesense tournament rehearse`` runs the real path of an evening once:
the director (database, MQTT bridge, console and pages), a broker of its own
(Mosquitto with the generated users, ACL and, by default, TLS), and each
table as a real ``tablesense play --director`` process (referee, journal,
display, durable outbox, signing) on its own virtual boards, where the
computer's hands move every piece (``play --virtual-table``). The director's
hands are the rehearsal's: it pairs each round when the last one is
confirmed, confirms results when the event leaves that to the director, and
stops at the winner.

The event is a new one (``pairs``, ``rounds``, ``variant``...), or a copy of
an event that exists (``source_event`` in ``source_db``): its entrants,
format, options and number of tables, played in the rehearsal's own
database, so the club's event is never touched. A copy confirms at the seat
buttons when the event asks for badges (the computer carries none).

The broker is the rehearsal's own by default. ``broker_url`` uses one that
already runs instead (the club's, set up with ``tournament
mosquitto-config``): the director joins it as ``director`` with the password
in ``?password_file=``, and the tables as ``table-N`` with the passwords of
the ``credentials`` file that ``mosquitto-config`` wrote beside
``director.password`` (or ``credentials``). What it needs and does not find
(nothing listening, a refused password, a CA that does not match, a table
without an account) stops it before any table starts, in one sentence. At
the end it withdraws the rounds it announced there, so no real table starts
a rehearsal match.

Everything the evening leaves is in the work folder: the broker's files,
the tables' keys, journals, outboxes and logs, and (by default) the
rehearsal's SQLite database.
"""

from __future__ import annotations

import contextlib
import getpass
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablesense.games.common import Sentence, say

from .bridge import BrokerURL, DirectorBridge
from .console import confirm_reported, final_result, pair_status
from .db import Database, Event
from .live import LiveBoard
from .mosquitto import (
    DIRECTOR_USER,
    Mosquitto,
    free_port,
    mosquitto_binary,
    table_user,
    write_broker_config,
)
from .security import TableKey
from .service import Director, DirectorError, team_size

log = logging.getLogger(__name__)

#: Exit statuses of ``tournament rehearse`` (docs/tournament.md names them).
EXIT_WINNER = 0
EXIT_FAILED = 1  # the evening stopped: a table process ended, a round took too long, Ctrl-C
EXIT_BAD_INPUT = 2  # a wrong option: no such event, a number out of range, a port in use
EXIT_NO_SERVICE = 3  # Mosquitto not installed, the database out of reach


class RehearsalError(RuntimeError):
    """The rehearsal cannot start or go on; ``code`` is the command's exit status."""

    def __init__(self, message: Sentence | str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class Plan:
    """What to rehearse and where (see the module docstring)."""

    db_url: str | None = None
    """Where the rehearsal's event is played (None: SQLite in the work folder)."""
    workdir: Path | None = None
    source_db: str | None = None
    source_event: int | None = None
    pairs: int = 8
    rounds: int = 3
    tables: int | None = None
    """Virtual tables (None: the copied event's number of tables, else 4)."""
    format: str = "swiss"
    game: str = "dominoes"
    variant: str = "pairs-pips"
    target: float | None = None
    seats: int | None = None
    """A new event: seats a table (Kems 4, 6 or 8; brazilian-points 3 or 4); None: the variant's usual."""
    confirm: str = "buttons"
    tls: bool = True
    host: str = "127.0.0.1"
    port: int = 8200
    speed: float = 4.0
    round_timeout: float = 900.0
    password: str | None = None
    """The director's console password (None: one is made up and printed)."""
    player: str | None = None
    broker_url: str | None = None
    """A broker that already runs (the director's URL, its password in ``?password_file=``); None: start one."""
    credentials: Path | None = None
    """The tables' broker passwords (``user password`` lines; default: ``credentials`` beside the password file)."""


@dataclass
class Report:
    event_id: int
    rounds: int
    matches: int
    winners: list[str]
    seconds: float
    url: str
    workdir: Path
    tables: dict[int, str] = field(default_factory=dict)
    """Each table's display page, as its ``play`` printed it."""


def layout_for(game: str, seats: int) -> str:
    """The shipped table layout a match of ``seats`` seats is played on."""
    from tablesense.games.registry import find_game

    return find_game(game).layout_name(seats)


class Rehearsal:
    """One rehearsal: ``start()`` brings the evening up (broker, director, pages,
    tables, round 1), ``run()`` drives it to the winner, ``stop()`` takes it down.
    ``tell`` prints progress (Sentences: the command translates them)."""

    def __init__(self, plan: Plan, tell: Callable[[Any], None] | None = None) -> None:
        self.plan = plan
        self.tell = tell or (lambda _line: None)
        self.workdir = Path(plan.workdir or _new_workdir()).resolve()
        self.director: Director | None = None
        self.bridge: DirectorBridge | None = None
        self.board = LiveBoard()
        self.broker: Mosquitto | None = None
        self.server: Any = None
        self.url = ""
        self.password = plan.password or secrets.token_urlsafe(12)
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.displays: dict[int, str] = {}
        self.stopping = threading.Event()
        self._started = time.monotonic()
        self.external: BrokerURL | None = None
        self.external_credentials: dict[str, str] = {}
        self.external_credentials_file = Path()

    # ------------------------------------------------------------ start

    def start(self) -> Rehearsal:
        p = self.plan
        _check_numbers(p)
        _check_port(p.host, p.port)
        if p.broker_url is None and mosquitto_binary() is None:
            raise RehearsalError(say("the rehearsal starts its own broker, and Mosquitto is not installed: "
                                     "sudo apt-get install mosquitto (or use one that runs with --broker)"),
                                 EXIT_NO_SERVICE)
        self.workdir.mkdir(parents=True, exist_ok=True)
        if p.broker_url is not None:
            self._check_external_broker()
        self.director = self._event()
        tables = [t.number for t in self.director.tables()]
        if p.broker_url is not None:
            self._use_broker(tables)
        else:
            self._start_broker(tables)
        self._start_director()
        self.tell(say("rehearsal: event {id} {name}, {n} tables, work folder {folder}", id=self.director.event_id,
                      name=repr(self._name()), n=len(tables), folder=str(self.workdir)))
        self.tell(say("director's console: {url}/director (password {password})", url=self.url,
                      password=self.password))
        self.tell(say("live tables: {url}/live", url=self.url))
        for t in tables:
            self._start_table(t)
        self._wait_online(tables)
        self._pair()
        return self

    def _wait_online(self, tables: list[int], timeout: float = 120.0) -> None:
        """Every table's ``play`` connected (its retained ``online``): the first round goes out
        to tables that listen, and none is taken for quiet while its process starts."""
        assert self.director is not None
        deadline = time.monotonic() + timeout
        while True:
            self._check_tables()
            online = {t.number for t in self.director.tables() if t.online}
            if set(tables) <= online:
                self.tell(say("tables {tables} online", tables=", ".join(map(str, tables))))
                return
            if time.monotonic() > deadline:
                raise RehearsalError(say("tables {tables} did not come online in {n} s (their logs are in {folder})",
                                         tables=", ".join(str(t) for t in tables if t not in online), n=int(timeout),
                                         folder=str(self.workdir)), EXIT_FAILED)
            time.sleep(0.3)

    def _name(self) -> str:
        assert self.director is not None
        with self.director.db.session() as s:
            return str(self.director.event(s).name)

    def _event(self) -> Director:
        p = self.plan
        url = p.db_url or f"sqlite:///{self.workdir / 'rehearsal.db'}"
        try:
            db = Database(url)
            if p.source_event is not None:
                return self._copy(db)
            d = Director.create_event(db, f"Rehearsal ({p.pairs} entrants, {p.rounds} rounds)", game=p.game,
                                      variant=p.variant, format=p.format, options=self._options())
        except RehearsalError:
            raise
        except DirectorError as exc:
            raise RehearsalError(exc.args[0] if exc.args else str(exc), EXIT_BAD_INPUT) from None
        except Exception as exc:  # noqa: BLE001 - an unreachable or unusable database, said in one line
            raise RehearsalError(say("cannot use the database {db}: {error}", db=_safe(url), error=_first(exc)),
                                 EXIT_NO_SERVICE) from None
        with db.session() as s:
            size = team_size(p.game, p.variant, int(d.event(s).options.get("seats", 4)))
        for i in range(1, p.pairs + 1):
            members = [f"Player {i}"] if size == 1 else [f"Player {i}A", f"Player {i}B"]
            d.register(f"{'Pair' if size == 2 else 'Player'} {i}", members, seed=i)
        self._ready(d, p.tables or 4)
        return d

    def _options(self) -> dict[str, Any]:
        p = self.plan
        opts: dict[str, Any] = {"rounds": p.rounds, "confirm": p.confirm, "quiet_after_s": 30.0,
                                "lots_seed": f"rehearsal-{secrets.token_hex(4)}"}
        if p.target is not None:
            opts["target"] = p.target
        if p.seats is not None:
            opts["seats"] = p.seats
        return opts

    def _copy(self, db: Database) -> Director:
        """The source event's entrants, format, options and tables, in a new event."""
        p = self.plan
        assert p.source_event is not None
        try:
            src_db = Database(p.source_db) if p.source_db else db
            with src_db.session() as s:
                ev = s.get(Event, p.source_event)
                if ev is None:
                    raise RehearsalError(say("no event {id} in {db}", id=p.source_event, db=_safe(p.source_db or "")),
                                         EXIT_BAD_INPUT)
                name, game, variant, fmt, options = ev.name, ev.game, ev.variant, ev.format, dict(ev.options)
        except RehearsalError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise RehearsalError(say("cannot use the database {db}: {error}", db=_safe(p.source_db or ""),
                                     error=_first(exc)), EXIT_NO_SERVICE) from None
        source = Director(src_db, p.source_event)
        entrants = [e for e in source.entrants() if e.status != "withdrawn"]
        if len(entrants) < 2:
            raise RehearsalError(say("event {id} has {n} entrants: register at least two to rehearse it",
                                     id=p.source_event, n=len(entrants)), EXIT_BAD_INPUT)
        for k in ("badge_salt", "lots_seed"):
            options.pop(k, None)
        if options.get("confirm") == "badges":
            options["confirm"] = "buttons"  # the computer carries no badges: its sides accept at the buttons
            self.tell(say("the event confirms with badges; the rehearsal confirms at the seat buttons"))
        if p.target is not None:
            options["target"] = p.target
        d = Director.create_event(db, f"{name} (rehearsal)", game=game, variant=variant, format=fmt, options=options)
        for e in entrants:
            d.register(e.name, list(e.members), seed=int(getattr(e, "seed", 0) or 0))
        self._ready(d, p.tables or len(source.tables()) or 4)
        return d

    def _ready(self, d: Director, tables: int) -> None:
        """Everyone checked in; tables 1..N, each with a key of its own in the work folder."""
        for e in d.entrants():
            d.check_in(e.id, "rehearsal")
        keys = self.workdir / "keys"
        keys.mkdir(exist_ok=True)
        for t in range(1, tables + 1):
            key = TableKey.generate()
            key.save(keys / f"table-{t}.key")
            d.add_table(t, key.public)

    def _start_broker(self, tables: list[int]) -> None:
        port = free_port()
        files = write_broker_config(self.workdir / "broker", tables=max(tables), port=port, run_as=getpass.getuser(),
                                    tls=self.plan.tls)
        try:
            self.broker = Mosquitto(files.conf, port).start()
        except Exception as exc:  # noqa: BLE001
            raise RehearsalError(say("the broker did not start: {error}", error=_first(exc)), EXIT_NO_SERVICE) from None
        self.broker_files = files
        self.broker_port = port
        secrets_dir = self.workdir / "broker"
        for t in tables:
            pw = secrets_dir / f"{table_user(t)}.password"
            pw.write_text(files.credentials[table_user(t)] + "\n")
            pw.chmod(0o600)

    # ------------------------------------------------------------ a broker that runs

    def _check_external_broker(self) -> None:
        """The director's URL parses, its password is readable, the tables have accounts, and the
        broker takes the director: else one sentence of what is missing, before anything starts."""
        from .broker_client import BrokerURL as URL

        raw = self.plan.broker_url or ""
        try:
            url = URL.parse(raw)
        except ValueError as exc:
            raise RehearsalError(say("--broker {url}: {error}", url=_safe_broker(raw), error=_first(exc)),
                                 EXIT_BAD_INPUT) from None
        if url.username is None or url.password is None:
            raise RehearsalError(say("--broker needs the director's account and its password file: "
                                     "mqtts://director@HOST:PORT?ca=DIR/ca.crt&password_file=DIR/director.password "
                                     "(DIR: the folder of tournament mosquitto-config)"), EXIT_BAD_INPUT)
        creds_file = self.plan.credentials or _beside_password_file(raw)
        if creds_file is None:
            raise RehearsalError(say("the tables' broker passwords are needed: give --credentials FILE (the "
                                     "credentials file of tournament mosquitto-config)"), EXIT_BAD_INPUT)
        creds = _read_credentials(creds_file)
        problem = _probe_broker(url)
        if problem is not None:
            raise RehearsalError(say("cannot use the broker at {where}: {problem}. The rehearsal needs a running "
                                     "broker (mosquitto -c DIR/mosquitto.conf), the director's password file, the "
                                     "broker's CA for mqtts (?ca=DIR/ca.crt) and the tables' credentials; or leave "
                                     "out --broker and it starts its own", where=f"{url.host}:{url.port}",
                                     problem=problem), EXIT_NO_SERVICE)
        self.external = url
        self.external_credentials = creds
        self.external_credentials_file = creds_file

    def _use_broker(self, tables: list[int]) -> None:
        """Each table's password in a file of the work folder (0600), for its ``?password_file=``."""
        url = self.external
        assert url is not None
        missing = [t for t in tables if table_user(t) not in self.external_credentials]
        if missing:
            have = sorted(int(u.split("-")[1]) for u in self.external_credentials if u.startswith("table-") and u[6:].isdigit())
            raise RehearsalError(say("{file} has no broker account for tables {tables} (it has {have}): rehearse "
                                     "with --tables {n}, or write the broker's config for more tables "
                                     "(tournament mosquitto-config --tables N) and restart it",
                                     file=str(self.external_credentials_file), tables=", ".join(map(str, missing)),
                                     have=", ".join(map(str, have)) or "none", n=len(have) or 1), EXIT_BAD_INPUT)
        secrets_dir = self.workdir / "broker"
        secrets_dir.mkdir(exist_ok=True)
        secrets_dir.chmod(0o700)
        for t in tables:
            pw = secrets_dir / f"{table_user(t)}.password"
            pw.write_text(self.external_credentials[table_user(t)] + "\n")
            pw.chmod(0o600)
        self.broker_port = url.port
        self.tell(say("using the broker at {where}: its accounts table-1 to table-{n} are the rehearsal's while it "
                      "runs (a real table or director connected with them is pushed off)",
                      where=f"{url.host}:{url.port}", n=max(tables)))

    def table_url(self, table: int) -> str:
        """Table ``table``'s broker URL, its password in a file (never on a command line)."""
        query = f"password_file={self.workdir / 'broker' / (table_user(table) + '.password')}"
        if self.external is not None:
            u = self.external
            if u.ca:
                query += f"&ca={Path(u.ca).resolve()}"
            return f"{'mqtts' if u.tls else 'mqtt'}://{table_user(table)}@{u.host}:{u.port}?{query}"
        scheme = "mqtts" if self.broker_files.ca else "mqtt"
        if self.broker_files.ca:
            query += f"&ca={self.broker_files.ca}"
        return f"{scheme}://{table_user(table)}@127.0.0.1:{self.broker_port}?{query}"

    def _start_director(self) -> None:
        import uvicorn

        from .web import create_app, hash_password

        assert self.director is not None
        url = self.external or BrokerURL.parse(self.broker_files.url(DIRECTOR_USER, "127.0.0.1", self.broker_port))
        self.bridge = DirectorBridge(self.director, url, live=self.board).start()
        if not self.bridge.wait_connected(15):
            raise RehearsalError(say("the director could not connect to the broker"), EXIT_NO_SERVICE)
        app = create_app(self.director, password_hash=hash_password(self.password),
                         on_round_paired=self.bridge.announce_round, live=self.board)
        self.server = uvicorn.Server(uvicorn.Config(app, host=self.plan.host, port=self.plan.port,
                                                    log_level="warning"))
        threading.Thread(target=self.server.run, name="rehearsal-pages", daemon=True).start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RehearsalError(say("the pages did not start on port {port}", port=self.plan.port), EXIT_FAILED)
            time.sleep(0.05)
        port = self.plan.port or self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://{self.plan.host}:{port}"

    def _start_table(self, table: int) -> None:
        assert self.director is not None
        with self.director.db.session() as s:
            ev = self.director.event(s)
            game, seats = ev.game, team_size(ev.game, ev.variant, int(ev.options.get("seats", 4)))
        seats *= self.director.entrants_per_table()
        folder = self.workdir / f"table-{table}"
        folder.mkdir(exist_ok=True)
        cmd = [sys.executable, "-m", "tablesense.cli", "play", "--table", layout_for(game, seats),
               "--virtual-table", "--seats", ",".join(["bot"] * seats), "--speed", str(self.plan.speed),
               "--director", self.table_url(table), "--table-no", str(table),
               "--table-key", str(self.workdir / "keys" / f"table-{table}.key"),
               "--journal", str(folder / "journal.sqlite"), "--no-keys", "--web-port", "0", "--host", "127.0.0.1",
               "--seed", str(table), "--announce-wait", "30"]
        if self.plan.player:
            cmd += ["--player", self.plan.player]
        log_file = (folder / "play.log").open("wb")
        self.procs[table] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log_file, stdin=subprocess.DEVNULL,
                                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
        log_file.close()

    # ------------------------------------------------------------ the evening

    def _pair(self) -> int:
        assert self.director is not None and self.bridge is not None
        try:
            rnd = self.director.pair_next_round("rehearsal")
        except (DirectorError, ValueError) as exc:
            raise RehearsalError(say("round cannot be paired: {error}", error=_first(exc)), EXIT_FAILED) from None
        self.bridge.announce_round()
        tables = sorted({m.table_no for m in self.director.matches(rnd) if m.table_no is not None})
        self.tell(say("round {round} paired and announced to tables {tables}", round=rnd,
                      tables=", ".join(map(str, tables))))
        return rnd

    def run(self) -> Report:
        """Drive the evening to its winner (see the module docstring)."""
        d = self.director
        assert d is not None
        round_started = time.monotonic()
        told: set[int] = set()
        while not self.stopping.is_set():
            self._check_tables()
            self._note_displays()
            cur = d.current_round_no()
            for m in d.matches(cur):
                if m.status in ("reported", "confirmed") and m.id not in told:
                    told.add(m.id)
                    self.tell(say("round {round}, table {table}: {sides}", round=cur, table=m.table_no,
                                  sides=_sides(d, m)))
            with d.db.session() as s:
                mode = d.event(s).options.get("confirm")
            if mode == "director":
                confirm_reported(d, "rehearsal")
            final = final_result(d)
            if final is not None:
                winners = [w["name"] for w in final["winners"]]
                self.tell(say("the winner: {names}", names=" & ".join(winners)))
                return Report(d.event_id, cur, len([m for r in range(1, cur + 1) for m in d.matches(r)]), winners,
                              time.monotonic() - self._started, self.url, self.workdir, dict(self.displays))
            if pair_status(d).can:
                self._pair()
                round_started = time.monotonic()
            elif time.monotonic() - round_started > self.plan.round_timeout:
                raise RehearsalError(say("round {round} took longer than {n} s: {state} (the tables' logs are in {folder})",
                                         round=cur, n=int(self.plan.round_timeout), state=pair_status(d).reason,
                                         folder=str(self.workdir)), EXIT_FAILED)
            self.stopping.wait(0.5)
        raise RehearsalError(say("the rehearsal was stopped before the winner"), EXIT_FAILED)

    def _check_tables(self) -> None:
        for t, proc in self.procs.items():
            rc = proc.poll()
            if rc is not None:
                tail = _tail(self.workdir / f"table-{t}" / "play.log")
                raise RehearsalError(say("table {table}'s play process ended (status {rc}): {tail}", table=t, rc=rc,
                                         tail=tail), EXIT_FAILED)

    def _note_displays(self) -> None:
        """Each table's display address, from the line its ``play`` printed."""
        for t in self.procs:
            if t in self.displays:
                continue
            for line in _lines(self.workdir / f"table-{t}" / "play.log"):
                if "http://" in line:
                    self.displays[t] = line[line.index("http://"):].split()[0]
                    self.tell(say("table {table}: display {url}", table=t, url=self.displays[t]))
                    break

    # ------------------------------------------------------------ the end

    def stop(self) -> None:
        """Take everything down: tables first (a clean stop between matches), then the pages, bridge, broker."""
        self.stopping.set()
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGINT)
        for proc in self.procs.values():
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self.server is not None:
            self.server.should_exit = True
        if self.bridge is not None:
            if self.external is not None:
                self.bridge.withdraw_round()  # the club's broker keeps no rehearsal match for a real table
            self.bridge.stop()
        if self.broker is not None:
            self.broker.stop()


def rehearse(plan: Plan, tell: Callable[[Any], None] | None = None,
             on_started: Callable[[Rehearsal], None] | None = None) -> Report:
    """Run the whole rehearsal; raises :class:`RehearsalError` (with its exit status) when it cannot."""
    r = Rehearsal(plan, tell)
    try:
        r.start()
        if on_started is not None:
            on_started(r)
        return r.run()
    finally:
        r.stop()


# ------------------------------------------------------------ helpers


def _check_numbers(p: Plan) -> None:
    if p.source_event is None and not 2 <= p.pairs <= 200:
        raise RehearsalError(say("--pairs is {n}: a rehearsal needs 2 to 200 entrants", n=p.pairs), EXIT_BAD_INPUT)
    if p.tables is not None and not 1 <= p.tables <= 50:
        raise RehearsalError(say("--tables is {n}: a rehearsal runs 1 to 50 virtual tables", n=p.tables),
                             EXIT_BAD_INPUT)
    if not 1 <= p.rounds <= 20:
        raise RehearsalError(say("--rounds is {n}: choose 1 to 20", n=p.rounds), EXIT_BAD_INPUT)
    if p.speed <= 0:
        raise RehearsalError(say("--speed is {n}: a pace above 0, e.g. 4", n=p.speed), EXIT_BAD_INPUT)


def _check_port(host: str, port: int) -> None:
    """A port another program holds stops the rehearsal before anything starts."""
    if port == 0:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            raise RehearsalError(say("port {port} is in use by another program: choose another with --port "
                                     "(0: any free port)", port=port), EXIT_BAD_INPUT) from None


def _safe_broker(url: str) -> str:
    """A broker URL without a password in it."""
    from urllib.parse import urlparse

    u = urlparse(url if "://" in url else "mqtt://" + url)
    if u.password is None:
        return url
    return url.replace(f":{u.password}@", ":***@", 1)


def _beside_password_file(url: str) -> Path | None:
    """``credentials`` in the folder of the URL's ``password_file`` (where mosquitto-config wrote both)."""
    from urllib.parse import parse_qs, urlparse

    files = parse_qs(urlparse(url if "://" in url else "mqtt://" + url).query).get("password_file")
    return Path(files[0]).resolve().parent / "credentials" if files else None


def _read_credentials(path: Path) -> dict[str, str]:
    """``user password`` lines (the credentials file of mosquitto-config)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise RehearsalError(say("cannot read the tables' broker passwords in {file}: {error} (give the credentials "
                                 "file of tournament mosquitto-config with --credentials)", file=str(path),
                                 error=exc.strerror or str(exc)), EXIT_BAD_INPUT) from None
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[0]] = parts[1]
    return out


def _probe_broker(url: BrokerURL, timeout: float = 8.0) -> Sentence | None:
    """Why the broker does not take ``url``'s account (None: it does): nothing listening,
    a TLS failure, a refused password, no answer."""
    import ssl

    from .broker_client import make_client

    answer: dict[str, Any] = {}
    done = threading.Event()
    client = make_client(f"{url.username}-probe", url, clean=True)

    def on_connect(_c: Any, _ud: Any, _flags: Any, rc: Any, _props: Any = None) -> None:
        answer["rc"] = rc
        done.set()

    client.on_connect = on_connect
    try:
        client.connect(url.host, url.port, keepalive=5)
    except ssl.SSLError as exc:
        return say("TLS failed ({error}): the CA in ?ca= must be the broker's", error=exc.reason or exc)
    except ConnectionRefusedError:
        return say("nothing listens there")
    except OSError as exc:
        return say("cannot reach it ({error})", error=exc.strerror or exc)
    client.loop_start()
    try:
        if not done.wait(timeout):
            return say("no answer in {n} s", n=int(timeout))
        rc = answer["rc"]
        if getattr(rc, "is_failure", False):
            return say("it refused {user} ({reason}): check the password file", user=url.username, reason=str(rc))
        return None
    finally:
        client.disconnect()
        client.loop_stop()


def _new_workdir() -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="tablesense-rehearsal-"))


def _safe(url: str) -> str:
    """A database URL without its password."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001
        return url.split("@")[-1]


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _sides(d: Director, m: Any) -> str:
    """``#1 Pair 1 12-0 #4 Pair 4``, or ``#1 Ana 5, #2 Bia 1, #3 Caio 10`` at a table of three or four."""
    from .console import entrant_labels
    from .kway import match_entrants, match_scores

    labels = entrant_labels(d)
    sides = match_entrants(m)
    scores = match_scores(m) or [None] * len(sides)
    if len(sides) == 2:
        return f"{labels.get(sides[0], '?')} {_num(scores[0])}-{_num(scores[1])} {labels.get(sides[1], '?')}"
    return ", ".join(f"{labels.get(e, '?')} {_num(x)}" for e, x in zip(sides, scores, strict=False))


def _num(x: float | None) -> str:
    if x is None:
        return "?"
    return str(int(x)) if float(x).is_integer() else str(x)


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def _tail(path: Path, n: int = 3) -> str:
    lines = [x.strip() for x in _lines(path) if x.strip()]
    return " / ".join(lines[-n:]) or f"see {path}"
