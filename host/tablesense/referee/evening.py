"""A table that stays up all evening: ``tablesense play --director ...``.

After a match is reported and confirmed (or left to the director), the table
waits for the director's next announcement for its number and plays it on
the same link and display, until Ctrl-C (between matches: a clean exit) or
the end of the event. Before each match the players check in at the table
(their badge on the table, or their seat button); a badge of a player who
belongs at another table is sent to the director, whose refusal names the
right table, and the table shows it.

Everything the table still owes the director is journalled in the
reporter's outbox file: the result waits in the outbox until acknowledged,
and :data:`PENDING` holds a result whose confirmation at the table is still
owed, so a host restarted in between resumes waiting for that confirmation
(badges or seat buttons) before it waits for the next match.

The match itself is played by a callable (``play(announced) -> record``):
the CLI's :class:`TableMatches` referees it on the real table; tests pass a
refereed match on the direct table.
"""

from __future__ import annotations

import json
import queue
import secrets
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablesense.i18n.cli import _  # the table's language (play makes it the command's)
from tablesense.referee.reporting import match_over_line, record_path
from tablesense.referee.state import Phase

PENDING = "evening/pending"
"""Outbox key-value entry: the reported result whose confirmation is still owed."""


def _names(m: dict[str, Any]) -> str:
    return " v ".join(str(e["name"]) for e in m["entrants"])


@dataclass
class Evening:
    """Match after match for one table; see the module docstring.

    ``reporter`` is the table's :class:`~tablesense.tournament.reporter.TableReporter`,
    ``bus`` its display, ``source`` the table link (``state()``: cell -> Tag) for
    badges, ``buttons`` the object the seat buttons call (``press(seat, button)``,
    the referee session), ``registry`` the tag registry (a piece is not a badge).
    """

    reporter: Any
    bus: Any
    console: Any
    stop: threading.Event
    source: Any = None
    buttons: Any = None
    registry: Any = None
    poll: float = 0.2
    played: list[int] = field(default_factory=list)
    finished: int = 0
    """Matches reported in this run (the first one, played before the loop, included)."""
    computer: frozenset[int] = frozenset()
    """The computer seats (``play --seats "Ana,bot,Bia,bot"``): a side that only they
    play checks in and accepts its result by itself."""

    # ------------------------------------------------------------ journal

    def pending(self) -> dict[str, Any] | None:
        """The confirmation still owed from before a restart, if any."""
        p = self.reporter.table.outbox.get(PENDING)
        return p if isinstance(p, dict) else None

    def _owe(self, stage: str, key: str | None) -> None:
        self.reporter.table.outbox.put(PENDING, {"stage": stage, "key": key, "reported": self.reporter.reported})

    def _settled(self) -> None:
        self.reporter.table.outbox.put(PENDING, None)

    # ------------------------------------------------------------ results

    def finish(self, record: dict[str, Any]) -> bool:
        """Report the finished match, wait for the director's echo, then the
        confirmation the event asks for. True when the match is settled (False:
        stopped or refused; a stopped wait resumes at the next start)."""
        from tablesense.tournament.reporter import ReportError

        try:
            key = self.reporter.report(record)
        except ReportError as exc:
            self.console.print("[red]" + _("not reported: {error}; call the director", error=exc) + "[/]")
            return False
        self.finished += 1
        self._owe("echo", key)
        self.console.print(_("result sent to the director; waiting for its acknowledgement ..."))
        return self._settle()

    def resume(self) -> bool:
        """Finish what a restarted host still owed: True when nothing is owed now."""
        p = self.pending()
        if p is None:
            return True
        self.reporter.reported = p.get("reported")
        rnd = (p.get("reported") or {}).get("round") or "?"  # the round people read, never the match's database id
        self.console.print(_("resuming: this table's result of round {round} is still to be acknowledged", round=rnd)
                           if p.get("stage") == "echo" else
                           _("resuming: this table's result of round {round} is still to be confirmed", round=rnd))
        return self._settle()

    def _settle(self) -> bool:
        from tablesense.referee.reporting import confirm_at_table, director_says

        p = self.pending() or {}
        if p.get("stage") == "echo":
            status = self.reporter.wait_echo(str(p["key"]), stop=self.stop)
            if status is None:
                self.console.print("[yellow]" + _("not acknowledged yet: the result stays in the outbox and is "
                                                  "re-sent when the table starts again") + "[/]")
                return False
            self.console.print(director_says(_("result"), status))
            if status not in ("accepted", "duplicate"):
                self._settled()  # refused: the director corrects it from the console
                return False
            self._owe("confirm", None)
        if confirm_at_table(self.reporter, self.source, self.bus, self.stop, self.console, self.buttons,
                            self.computer):
            self._settled()
            return True
        return False

    # ------------------------------------------------------------ the next match

    def wait_next(self) -> dict[str, Any] | None:
        """The director's next match for this table (None: stopped). Says what it waits for."""
        said = False
        while not self.stop.is_set():
            m = self.reporter.current_match(timeout=0.0)
            if m is not None:
                return m
            if not said:
                text = _("table {table}: waiting for the director to announce the next match",
                         table=self.reporter.number)
                self.console.print(text + " " + _("(Ctrl-C to stop)"))
                self.bus.publish("message", text=text, level="info")
                said = True
            self.stop.wait(self.poll)
        return None

    def check_in(self, m: dict[str, Any]) -> bool:
        """The players of ``m`` check in: each side lays a badge of theirs on the
        table or presses its seat button. A badge that belongs to nobody here is
        sent to the director at once; its refusal (e.g. "X plays at table 2, not
        at table 1") is shown. True when the director acknowledged the check-in
        (False: stopped, or refused)."""
        journal = self.reporter.table.outbox
        done = f"evening/checked-in/{int(m['match'])}"
        if journal.get(done):
            return True
        n_sides = len(m["entrants"])  # the badges of each side arrive as salted digests
        seat_side = {int(s["seat"]): int(s["entrant"]) for s in m.get("seats", [])}
        text = _("table {table}: expecting {names} - check in with your badge on the table or your seat button",
                 table=self.reporter.number, names=_names(m))
        self.bus.publish("message", text=text, level="info", checkin=[e["name"] for e in m["entrants"]])
        self.console.print(text)
        presses: queue.Queue[tuple[int, str]] = queue.Queue()
        original = getattr(self.buttons, "press", None)
        if self.buttons is not None:
            self.buttons.press = lambda seat, button="main": presses.put((seat, button))
        seen: set[str] = set()
        asked: set[str] = set()
        sides_seats: dict[int, list[int]] = {}
        for seat, side in seat_side.items():
            sides_seats.setdefault(side, []).append(seat)
        accepted: set[int] = {side for side, at in sides_seats.items() if all(s in self.computer for s in at)}
        try:
            while True:
                if self.stop.is_set():
                    return False
                seen |= self._badges()
                mine = self.reporter.match_taps(m, seen)  # UID -> side, matched by digest
                for b in sorted(seen - asked - set(mine)):
                    asked.add(b)
                    self._checkin_once(m, [b], [])
                while not presses.empty():
                    seat, button = presses.get_nowait()
                    if button == "main" and seat in seat_side:
                        accepted.add(seat_side[seat])
                here = set(mine.values()) | accepted
                if len(here) == n_sides:
                    break
                self.stop.wait(self.poll)
        finally:
            if self.buttons is not None:
                self.buttons.press = original
        status = self._checkin_once(m, sorted(self.reporter.match_taps(m, seen)), sorted(accepted))
        if status in ("accepted", "duplicate"):
            journal.put(done, True)
            self.bus.publish("message", text=_("checked in: {names}", names=_names(m)), level="info")
            return True
        return False

    def _checkin_once(self, m: dict[str, Any], badges: list[str], accepted: list[int]) -> str | None:
        key = self.reporter.check_in(m, badges, accepted)
        status = self.reporter.wait_echo(key, stop=self.stop)
        if status == "refused":
            why = self.reporter.reason(key) or _("call the director")  # the display shows it (reporter.wait_echo)
            self.console.print("[red]" + _("check-in refused: {reason}", reason=why) + "[/]")
        elif status is not None:
            from tablesense.referee.reporting import director_says

            self.console.print(director_says(_("check-in"), status))
        return status

    def _badges(self) -> set[str]:
        """Tags on the table that are not pieces of this table's set (hex UIDs)."""
        from tablesense.table.state import Tag
        from tablesense.table.tags import UnknownTag

        state = self.source.state() if self.source is not None else None
        out = set()
        for r in (state or {}).values():
            if isinstance(r, Tag) and (self.registry is None or isinstance(self.registry.piece(r.uid), UnknownTag)):
                out.add(r.uid.hex())
        return out

    # ------------------------------------------------------------ the loop

    def run(self, play: Callable[[dict[str, Any]], dict[str, Any] | None]) -> int:
        """Wait, check in, play, report and confirm, match after match, until
        stopped. Returns the number of matches played in this loop."""
        n = 0
        while not self.stop.is_set():
            if not self.resume() and self.stop.is_set():
                break
            m = self.wait_next()
            if m is None:
                break
            self.reporter.show_match(m)
            if not self.check_in(m) and self.stop.is_set():
                break
            record = play(m)
            if record is None:
                break
            n += 1
            self.played.append(int(m["match"]))
            self.finish(record)
        self.console.print(_("table {table}: stopped between matches ({n} played in this run)",
                             table=self.reporter.number, n=self.finished))
        return n


@dataclass
class TableMatches:
    """Plays an announced match on the real table for :meth:`Evening.run`: a new
    referee on the same session (link, display, seat buttons), journalled as
    ``tablesense play`` journals one match."""

    maker: Callable[[dict[str, Any]], Any]
    session: Any
    journal: Any
    stop: threading.Event
    out: Callable[[str], Any] = field(default=sys.stdout.write)
    bots: Callable[[], dict[int, Any]] = dict
    """The computer players of the next match, by seat (none: people play every seat)."""
    records: Path = Path("records")
    """Where the match's game record is archived (``play --records``): the line printed names it."""

    def __call__(self, m: dict[str, Any]) -> dict[str, Any] | None:
        referee = self.maker(m)
        self.session.next_match(referee, self.bots())
        referee.start(self.session.clock())
        self.session.attach()
        self.session.run(self.stop, until=lambda s: referee.state.phase is Phase.OVER)
        if referee.state.phase is not Phase.OVER:
            return None  # stopped mid-match: the journal resumes it at the next start
        path = record_path(self.records, self.journal.match_id or "match")  # before the journal moves on
        self.journal.close_match("finished")
        record = referee.record()
        self.out(match_over_line(referee.view().get("scores"), path) + "\n")
        return record


@dataclass
class MatchMaker:
    """A new refereed match for an announcement: the seat names, variant and
    target the director announced, on this table's geometry and tag set,
    begun in the table's journal (what ``tablesense play`` does for one match)."""

    geometry: Any
    registry: Any
    journal: Any
    bus: Any
    game: str
    deal: str = "table"
    lang: str = "en"
    seed: int | None = None
    computer: frozenset[int] = frozenset()
    """The computer seats: the director's names, played by the computer."""
    timing: Any = None
    """The referee's waits (None: a person's pace; a virtual table's computer hands move faster)."""

    def __call__(self, m: dict[str, Any]) -> Any:
        from tablesense.referee.core import MatchSpec, Referee

        n = len(self.geometry.seats)
        plan = sorted(m.get("seats", []), key=lambda s: int(s["seat"]))
        names = ([str(s["player"]) for s in plan] if len(plan) == n
                 else [s.name for s in self.geometry.seats])
        target = m.get("options", {}).get("target")
        options: dict[str, Any] = {}
        if target is not None:
            options["target"] = int(target) if float(target).is_integer() else target
        spec = MatchSpec(
            game=self.game, variant=str(m["variant"]), options=options, seat_names=names,
            seat_kinds=["bot" if i in self.computer else "human" for i in range(n)],
            # a host-dealt match deals afresh at each announcement (the same seed would deal
            # every match of the evening alike; no --seed: a fresh one, or every table and every
            # round of an evening of virtual tables played the very same game)
            seed=secrets.randbits(31) if self.seed is None else self.seed * 1_000_003 + int(m["match"]),
            table=self.geometry.name, lang=self.lang,
        )
        extra = {} if self.timing is None else {"timing": self.timing}
        referee = Referee(spec, self.geometry, self.registry, emit=self.bus.publish, store=self.journal.append,
                          deal="engine" if self.deal == "host" else "table", **extra)
        row = self.journal.running()
        if row is not None and row.entries == 0:
            # a match `play` opened before the announcement came, never played: this one, or abandoned
            if row.spec == json.loads(json.dumps(spec.to_json(), sort_keys=True)):
                self.journal.resume(row.id)
                return referee
            self.journal.close_match("abandoned", row.id)
        self.journal.begin(spec.to_json())
        return referee


def drop_unplayed(journal: Any) -> None:
    """Close a running match of the table's journal that has no entry yet as
    ``abandoned``: ``play --director`` opens one before the announcement comes
    (or while it waits between matches); resumed as it was, it would carry the
    table's default names instead of the next match's, and contradict it."""
    row = journal.running()
    if row is not None and row.entries == 0:
        journal.close_match("abandoned", row.id)


def start_reporter(
    director: str, table_no: int | None, table_key: Path | None, outbox: Path | None, journal: Path | None
) -> Any:
    """Connect the table to the director (tournament.reporter: the table's
    outbox, signing and re-sending); a bad ``--director``, ``--table-key`` or
    outbox is refused with exit 2."""
    from tablesense.games.common import message_of, say
    from tablesense.referee.options import CommandRefused, default_journal
    from tablesense.tournament.bridge import BrokerURL
    from tablesense.tournament.reporter import TableReporter
    from tablesense.tournament.security import SignatureError, TableKey

    if table_no is None or table_key is None:
        raise CommandRefused(_("--director needs --table-no and --table-key"))
    try:
        broker = BrokerURL.parse(director)
    except ValueError as exc:
        raise CommandRefused(say("--director: {error}", error=message_of(exc))) from None
    try:
        key = TableKey.load(table_key)
    except (OSError, ValueError, SignatureError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else message_of(exc)
        raise CommandRefused(say("--table-key {path}: {error}", path=str(table_key), error=reason)) from None
    path = outbox or Path(journal or default_journal()).with_name("outbox.sqlite")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return TableReporter(table_no, key, path, broker).start()
    except Exception as exc:  # noqa: BLE001 - whatever stops the outbox opening is said, never a traceback
        raise CommandRefused(_("cannot open the outbox {path}: {error}", path=path, error=exc)) from None
