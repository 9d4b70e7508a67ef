"""The director of one event: a facade over services that share one database.

Transport-free: the MQTT bridge (``bridge.py``), the web pages and the CLI all
call these methods. Every write goes through one lock and one transaction,
and every change a person or a table makes is written to the append-only,
hash-chained audit log in the same transaction, so the log and the data can
never disagree.

The work is done by services over the same :class:`.scope.EventScope`:
:class:`.ingestion.Ingestion` (table outboxes: checks, storage, acks),
:class:`.rounds.Rounds` (pairing, standings, assignments),
:class:`.corrections.Corrections` and :class:`.audit.AuditTrail` (budgeted
entries, the log, the chain's check). This class keeps entrants, tables and
the event's options, and the one API the CLI, pages and bridge use.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import select

from tablesense.games.common import say
from tablesense.games.registry import GAMES, find_game
from tablesense.i18n import N_

from . import kway
from .audit import AUDIT_BUDGET as AUDIT_BUDGET
from .audit import AUDIT_WINDOW_S as AUDIT_WINDOW_S
from .audit import FULL_CHECK_S as FULL_CHECK_S
from .audit import MAX_NAME as MAX_NAME
from .audit import AuditTrail, _check_id, _check_text
from .audit import DirectorError as DirectorError
from .audit import _append_audit as _append_audit
from .audit import _check_badge as _check_badge
from .audit import _clip as _clip
from .audit import team_size as team_size
from .confirmation import DEFAULT_MODE as DEFAULT_CONFIRM
from .confirmation import ConfirmationError
from .confirmation import check_mode as check_confirm_mode
from .corrections import Corrections
from .db import Database, Entrant, Event, Match, Table
from .ingestion import Ack as Ack
from .ingestion import Ingestion
from .ingestion import verify_records as verify_records
from .protocol import MAX_ID
from .rounds import Rounds
from .rounds import badge_salt as badge_salt
from .scope import EventScope
from .standings import DEFAULT_TIEBREAKS, validate_tiebreaks

FORMATS = ("swiss", "round-robin", "knockout", "groups")


_T = TypeVar("_T")


#: A club match's target where it differs from the rules' own (a club
#: evening plays longer pips matches and shorter Kems ones).
CLUB_TARGETS = {"pairs-pips": 100, "pips-two-player": 100, "classic": 5}


def default_options(game: str, variant: str) -> dict[str, Any]:
    the_game = find_game(game)
    target = CLUB_TARGETS.get(variant) or the_game.new_match(variant).target
    return {
        "target": target,
        "time_limit_s": None,
        "rounds": 5,
        "seats": the_game.default_seats(variant),
        "best_of": 1,
        "tiebreaks": list(DEFAULT_TIEBREAKS),
        "first_round": "drawn",
        "group_size": 4,
        "advance": 2,
        "bye_points": [0, 0],
        "lots_seed": "",
        "quiet_after_s": 10.0,
        "confirm": DEFAULT_CONFIRM,
        "lang": None,  # the pages' language for this event; None: the server's (director serve --lang)
        "badge_salt": "",  # made with the event: what the badge digests of the assignments are salted with
    }


def event_language(tag: object) -> str:
    """An event's language as stored (``pt-BR``, ``ms``, ``en``): a tag we have
    no catalog for is refused when the event is made, not found at the first page."""
    from tablesense.i18n import LANGUAGES, UnknownLanguageError, normalize

    try:
        lang = normalize(str(tag))
    except UnknownLanguageError:
        lang = ""
    if lang not in LANGUAGES:
        raise DirectorError(say("no translation for {tag}: choose one of {known}", tag=repr(str(tag)[:20]),
                                known=", ".join(LANGUAGES)))
    return lang


class Director(EventScope):
    """One event's director: every state change of the event goes through here."""

    def __init__(self, db: Database, event_id: int) -> None:
        super().__init__(db, event_id)
        with db.session() as s:
            if s.get(Event, event_id) is None:
                raise DirectorError(f"no event {event_id} in this database")
        self._last_seen: dict[int, float] = {}
        self._memo: dict[str, tuple[int, Any]] = {}  # key -> (data version, value) (see memo)
        self._memo_lock = threading.Lock()
        self.audit_trail = AuditTrail(self)
        """Budgeted entries, the log and its chain's check."""
        self.ingestion = Ingestion(self, self.audit_trail)
        """Table outboxes: checked, stored, acknowledged."""
        self.rounds = Rounds(self)
        """Pairing, standings, assignments."""
        self.corrections = Corrections(self, self.audit_trail)
        """A result changed after the fact."""
        # The services' API, as the pages, the CLI and the bridge call it.
        self.ingest = self.ingestion.ingest
        self.ingest_many = self.ingestion.ingest_many
        self.refuse_raw = self.ingestion.refuse_raw
        self.audit_limited = self.audit_trail.audit_limited
        self.flush_audit_budget = self.audit_trail.flush_audit_budget
        self.data_version = self.audit_trail.data_version
        self.audit_count = self.audit_trail.audit_count
        self.audit_log = self.audit_trail.audit_log
        self.verify_audit_chain = self.audit_trail.verify_audit_chain
        self.correct = self.corrections.correct
        self.entrants_per_table = self.rounds.entrants_per_table
        self.round_complete = self.rounds.round_complete
        self.matches = self.rounds.matches
        self.outcomes = self.rounds.outcomes
        self.standings = self.rounds.standings
        self.pair_next_round = self.rounds.pair_next_round
        self.plan_round = self.rounds.plan_round
        self.assignments = self.rounds.assignments

    # ------------------------------------------------------------ creation

    @staticmethod
    def create_event(
        db: Database,
        name: str,
        *,
        game: str = "dominoes",
        variant: str = "pairs-pips",
        format: str = "swiss",
        options: dict[str, Any] | None = None,
    ) -> Director:
        if game not in GAMES:
            raise DirectorError(f"unknown game {game!r}; choose from {', '.join(GAMES)}")
        if variant not in GAMES[game].variants:
            raise DirectorError(f"{game} has no variant {variant!r}; choose from {', '.join(GAMES[game].variants)}")
        if format not in FORMATS:
            raise DirectorError(f"unknown format {format!r}; choose from {', '.join(FORMATS)}")
        opts = default_options(game, variant)
        for k, v in (options or {}).items():
            if k not in opts:
                raise DirectorError(f"unknown event option {k!r}; known: {', '.join(sorted(opts))}")
            opts[k] = v
        validate_tiebreaks(opts["tiebreaks"])
        if opts["first_round"] not in ("drawn", "seeded", "rating"):
            raise DirectorError(f"first_round is drawn, seeded or rating (club ratings), not {str(opts['first_round'])[:20]!r}")
        try:
            check_confirm_mode(opts["confirm"])
        except ConfirmationError as exc:
            raise DirectorError(str(exc)) from exc
        if isinstance(opts["target"], float) and opts["target"].is_integer():
            opts["target"] = int(opts["target"])
        _check_engine_options(game, variant, opts)
        try:
            kway.prepare_options(game, variant, format, opts, (options or {}).keys())
        except kway.KwayError as exc:
            raise DirectorError(str(exc)) from exc
        if not opts["badge_salt"]:
            opts["badge_salt"] = secrets.token_hex(16)
        if not opts["lots_seed"]:
            opts["lots_seed"] = hashlib.sha256(f"{name}:{time.time()}".encode()).hexdigest()[:16]
        if opts["best_of"] < 1 or opts["best_of"] % 2 == 0:
            raise DirectorError("best_of must be an odd number (1, 3, 5, ...)")
        if opts["lang"] is not None:
            opts["lang"] = event_language(opts["lang"])
        with db.session() as s:
            ev = Event(name=name, game=game, variant=variant, format=format, options=opts, status="registration")
            s.add(ev)
            s.flush()
            event_id = ev.id
            _append_audit(s, event_id, "director", "event-created", None, "", {"name": name, "format": format, "options": opts})
        return Director(db, event_id)

    # ------------------------------------------------------------ helpers

    def language(self) -> str | None:
        """The event's own language (its pages' default), or None for the server's."""
        lang = self.options().get("lang")
        return str(lang) if lang else None

    def set_language(self, lang: str | None, actor: str = "director") -> str | None:
        """Change the event's language (None: back to the server's); audited like any change."""
        new = event_language(lang) if lang else None
        with self._lock, self.db.session() as s:
            ev = self.event(s)
            old = ev.options.get("lang")
            ev.options = {**ev.options, "lang": new}  # a new dict: the JSON column sees the change
            _append_audit(s, self.event_id, actor, "event-language", None, "", {"from": old, "to": new})
        return new

    def audit(self, actor: str, action: str, *, match_id: int | None = None, reason: str = "", **detail: Any) -> None:
        self.audit_trail.write(actor, action, match_id=match_id, reason=reason, **detail)

    # ------------------------------------------------------------ entrants

    def register(self, name: str, members: Sequence[str] = (), badges: Sequence[str] = (), seed: int = 0) -> int:
        name = _check_text(name, N_("an entrant's name"))
        if not name:
            raise DirectorError(say("an entrant needs a name"))
        members = [_check_text(m, N_("a player's name")) for m in members]
        badges = [_check_badge(b) for b in badges]
        if isinstance(seed, bool) or not isinstance(seed, int) or abs(seed) > MAX_ID:
            raise DirectorError(say("a seed is a whole number up to {max}", max=MAX_ID))
        with self._lock, self.db.session() as s:
            ev = self.event(s)
            size = team_size(ev.game, ev.variant, ev.options.get("seats", 4))
            members = list(members) or ([name] if size == 1 else [f"{name} A", f"{name} B"])
            if any(len(m) > MAX_NAME for m in members):
                raise DirectorError(say("a player's name has at most {max} characters", max=MAX_NAME))
            if len(members) != size:
                raise DirectorError(say("{variant} entrants have {size} player(s), {name} has {n}", variant=ev.variant, size=size,
                                        name=repr(name), n=len(members)))
            if s.scalar(select(Entrant.id).where(Entrant.event_id == self.event_id, Entrant.name == name)):
                raise DirectorError(say("{name} is already registered", name=repr(name)))
            taken = {b for e in s.scalars(select(Entrant).where(Entrant.event_id == self.event_id)) for b in e.badges}
            dup = taken.intersection(badges)
            if dup:
                raise DirectorError(say("badge(s) {badges} already belong to another entrant", badges=", ".join(sorted(dup))))
            e = Entrant(event_id=self.event_id, name=name, members=members, badges=list(badges), seed=seed, status="registered", bye_rounds=[])
            s.add(e)
            s.flush()
            _append_audit(s, self.event_id, "director", "registered", None, "", {"entrant": e.id, "name": name})
            return e.id

    def _set_status(self, entrant_id: int, status: str, actor: str, reason: str = "") -> bool:
        """False when the entrant already had that status (nothing written)."""
        _check_id(entrant_id, N_("entrant"))
        with self._lock, self.db.session() as s:
            e = s.get(Entrant, entrant_id)
            if e is None or e.event_id != self.event_id:
                raise DirectorError(say("no entrant {id} in this event", id=entrant_id))
            if e.status == status:
                return False
            if e.status == "withdrawn":
                raise DirectorError(say("{name} has withdrawn", name=e.name))
            e.status = status
            # who, by name: the audit log reads without looking the id up
            _append_audit(s, self.event_id, actor, status.replace("_", "-"), None, reason,
                          {"entrant": entrant_id, "name": e.name})
            return True

    def check_in(self, entrant_id: int, actor: str = "director") -> bool:
        """Check an entrant in; False when it already was."""
        return self._set_status(entrant_id, "checked_in", actor)

    def withdraw(self, entrant_id: int, reason: str, actor: str = "director") -> bool:
        if not reason.strip():
            raise DirectorError(say("a withdrawal needs a reason"))
        reason = _check_text(reason, N_("a reason"), 1000)
        return self._set_status(entrant_id, "withdrawn", actor, reason)

    def request_bye(self, entrant_id: int, round_no: int) -> None:
        """A zero-point bye the entrant asked for (it is left out of that round's pairing)."""
        _check_id(entrant_id, N_("entrant"))
        _check_id(round_no, N_("round"))
        with self._lock, self.db.session() as s:
            e = s.get(Entrant, entrant_id)
            if e is None or e.event_id != self.event_id:
                raise DirectorError(say("no entrant {id} in this event", id=entrant_id))
            if round_no <= self.current_round_no(s):
                raise DirectorError(say("round {n} is already paired", n=round_no))
            e.bye_rounds = sorted({*e.bye_rounds, round_no})
            _append_audit(s, self.event_id, "director", "bye-requested", None, "",
                          {"entrant": entrant_id, "name": e.name, "round": round_no})

    def entrants(self) -> list[Entrant]:
        with self.db.session() as s:
            return list(s.scalars(select(Entrant).where(Entrant.event_id == self.event_id).order_by(Entrant.id)))

    # ------------------------------------------------------------ tables

    def add_table(self, number: int, public_key: str) -> None:
        _check_id(number, N_("table"))
        with self._lock, self.db.session() as s:
            t = s.scalar(select(Table).where(Table.event_id == self.event_id, Table.number == number))
            if t is None:
                s.add(Table(event_id=self.event_id, number=number, public_key=public_key, online=False, last_seen=0.0))
            else:
                t.public_key = public_key
            _append_audit(s, self.event_id, "director", "table-key", None, "", {"table": number, "public_key": public_key})
            self.ingestion.forget_key(number)

    def tables(self) -> list[Table]:
        with self.db.session() as s:
            return list(s.scalars(select(Table).where(Table.event_id == self.event_id).order_by(Table.number)))

    def table_seen(self, number: int, online: bool | None = None) -> None:
        """Note a sign of life. Heartbeats stay in memory (200 tables beating every
        second must not cost 200 transactions a second); only a change of
        online/offline is written, with its audit entry, within the table's
        audit budget (a table flapping its status cannot grow the database)."""
        now = time.time()
        self._last_seen[number] = now
        if online is None:
            return
        with self._lock, self.db.session() as s:
            t = s.scalar(select(Table).where(Table.event_id == self.event_id, Table.number == number))
            if t is None:
                return
            if t.online != online and self.audit_trail.take_budget(f"table-{number}"):
                t.last_seen = now
                t.online = online
                _append_audit(s, self.event_id, f"table-{number}", "online" if online else "offline", None, "", {"table": number})

    def last_seen(self, number: int) -> float:
        """When the table was last heard from (0.0: never, since this director started)."""
        return self._last_seen.get(number, 0.0)

    def quiet_tables(self, now: float | None = None) -> list[int]:
        """Tables with a match in play that have not been heard from lately (or are offline)."""
        now = time.time() if now is None else now
        limit = float(self.options().get("quiet_after_s", 10.0))
        with self.db.session() as s:
            rnd = self.current_round_no(s)
            busy = set(
                s.scalars(
                    select(Match.table_no).where(
                        Match.event_id == self.event_id, Match.round_no == rnd, Match.confirmed.is_(False), Match.table_no.is_not(None)
                    )
                )
            )
            out = []
            for t in s.scalars(select(Table).where(Table.event_id == self.event_id)):
                seen = max(t.last_seen, self._last_seen.get(t.number, 0.0))
                if t.number in busy and (not t.online or now - seen > limit):
                    out.append(t.number)
            return sorted(out)

    # ------------------------------------------------------------ rounds

    def memo(self, key: str, compute: Callable[[], _T]) -> _T:
        """``compute()`` once per data version: a page read by a thousand
        spectators between two results costs one computation. The value is
        shared: callers must not change it."""
        version = self.data_version()
        with self._memo_lock:
            hit = self._memo.get(key)
            if hit is not None and hit[0] == version:
                return hit[1]  # type: ignore[no-any-return]
        value = compute()
        with self._memo_lock:
            self._memo[key] = (version, value)
        return value


def _check_engine_options(game: str, variant: str, opts: dict[str, Any]) -> None:
    """Refuse, when the event is created, options the tables' engine would refuse mid-event."""
    from tablesense.games.common import OptionError

    try:
        find_game(game).new_match(variant, {"target": opts["target"]}, seats=int(opts["seats"]))
    except OptionError as exc:
        raise DirectorError(f"{variant}: {exc}") from exc
