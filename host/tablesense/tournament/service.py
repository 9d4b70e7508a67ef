"""The director's logic over the database: events, entrants, rounds, results, audit.

Transport-free: the MQTT bridge (``bridge.py``), the web pages and the CLI all
call these methods. Every write goes through one lock and one transaction,
and every change a person or a table makes is written to the append-only,
hash-chained audit log in the same transaction, so the log and the data can
never disagree.

Result ingestion (:meth:`Director.ingest`) is idempotent: a result is keyed by
(event, round, table, revision); the same key with the same content is a
duplicate (acknowledged again, nothing changes), the same key with other
content is refused as a replay, and so are results that are forged (bad
signature), out of turn (not this table's match of the current round, or the
match already confirmed) or whose records do not replay to the reported score.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tablesense.games.common import say
from tablesense.i18n import N_

from . import kway
from . import pairing as pr
from .audit import MAX_NAME as MAX_NAME
from .audit import DirectorError as DirectorError
from .audit import _append_audit as _append_audit
from .audit import _audit_hash
from .audit import _check_badge as _check_badge
from .audit import _clip as _clip
from .audit import team_size as team_size
from .confirmation import DEFAULT_MODE as DEFAULT_CONFIRM
from .confirmation import ConfirmationError, Elsewhere, judge_checkin
from .confirmation import Side as ConfirmSide
from .confirmation import check_mode as check_confirm_mode
from .confirmation import judge as judge_confirmation
from .db import AuditEntry, Database, Entrant, Event, Match, Result, Round, Table
from .protocol import MAX_ID, check_ids, message_key
from .security import SignatureError, badge_digest, digest, verify
from .standings import (
    DEFAULT_TIEBREAKS,
    MatchOutcome,
    Standing,
    compute_standings,
    validate_tiebreaks,
)

FORMATS = ("swiss", "round-robin", "knockout", "groups")
GAMES = {"dominoes": ("pairs-pips", "pips-two-player", "brazilian-points"), "kems": ("classic",)}


_T = TypeVar("_T")





@dataclass(frozen=True)
class Ack:
    """The director's answer to one outbox message."""

    key: str
    status: str  # "accepted", "duplicate", "refused"
    reason: str = ""
    digest: str = ""
    """Digest of the whole message answered, signature included: a table drops
    an outbox entry only on an ack that names its own signed message, so a
    refusal of a copy with a broken or other signature under the same key
    cannot cancel the real one."""

    def to_json(self) -> dict[str, Any]:
        """The ack as published: key, status, a short reason and the digest, never
        any part of the payload (a refusal could otherwise echo megabytes)."""
        return {"key": _clip(self.key, 80), "status": self.status, "reason": _clip(self.reason), "digest": self.digest}


#: Refusals (and failed logins) one source may write to the audit log per
#: window; beyond that they are counted in memory and written as one
#: ``refusals-suppressed`` entry, so a flood cannot grow the database.
AUDIT_BUDGET = 20
AUDIT_WINDOW_S = 60.0
#: How often the audit chain is re-hashed from its start (otherwise incrementally).
FULL_CHECK_S = 600.0
#: Longest name of an entrant or a player (the database column's width).









def default_options(game: str, variant: str) -> dict[str, Any]:
    target = {"pairs-pips": 100, "pips-two-player": 100, "brazilian-points": 4, "classic": 5}[variant]
    return {
        "target": target,
        "time_limit_s": None,
        "rounds": 5,
        "seats": 2 if variant == "pips-two-player" else 4,
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


class Director:
    """One event's director: every state change of the event goes through here."""

    def __init__(self, db: Database, event_id: int) -> None:
        self.db = db
        self.event_id = event_id
        self._lock = threading.RLock()
        self._last_seen: dict[int, float] = {}
        self._keys: dict[int, str] = {}  # table -> public key (see _table_key)
        self._memo: dict[str, tuple[int, Any]] = {}  # key -> (data version, value) (see memo)
        self._memo_lock = threading.Lock()
        self._verified: tuple[int, str] = (0, "0" * 64)  # audit chain checked up to (id, hash)
        self._full_checked = -FULL_CHECK_S  # monotonic time of the last full check
        self._verify_lock = threading.Lock()
        self._budget: dict[str, list[float]] = {}  # source -> [window start, written, suppressed, bytes]
        with db.session() as s:
            if s.get(Event, event_id) is None:
                raise DirectorError(f"no event {event_id} in this database")

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
        if variant not in GAMES[game]:
            raise DirectorError(f"{game} has no variant {variant!r}; choose from {', '.join(GAMES[game])}")
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

    def event(self, s: Session) -> Event:
        ev = s.get(Event, self.event_id)
        assert ev is not None
        return ev

    def options(self) -> dict[str, Any]:
        with self.db.session() as s:
            return dict(self.event(s).options)

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
        with self._lock, self.db.session() as s:
            _append_audit(s, self.event_id, actor, action, match_id, reason, detail)

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
            self._keys.pop(number, None)

    def _table_key(self, number: int) -> str | None:
        """A table's public key, read once (``add_table`` replaces it): checking
        a signature never costs a database read."""
        key = self._keys.get(number)
        if key is None:
            with self.db.session() as s:
                key = s.scalar(select(Table.public_key).where(Table.event_id == self.event_id, Table.number == number))
            if key is not None:
                self._keys[number] = key
        return key

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
            if t.online != online and self._take_budget(f"table-{number}"):
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

    def entrants_per_table(self) -> int:
        """2 for matches between two entrants; 3 or 4 for the k-entrant events of kway.py."""
        with self.db.session() as s:
            ev = self.event(s)
            return kway.entrants_per_table(ev.game, ev.variant, int(ev.options.get("seats", 4)))

    def current_round_no(self, s: Session | None = None) -> int:
        if s is None:
            with self.db.session() as s2:
                return self.current_round_no(s2)
        return int(s.scalar(select(func.max(Round.number)).where(Round.event_id == self.event_id)) or 0)

    def round_complete(self, round_no: int | None = None) -> bool:
        with self.db.session() as s:
            rnd = round_no or self.current_round_no(s)
            if rnd == 0:
                return True
            left = s.scalar(
                select(func.count(Match.id)).where(
                    Match.event_id == self.event_id, Match.round_no == rnd, Match.confirmed.is_(False)
                )
            )
            return not left

    def matches(self, round_no: int | None = None) -> list[Match]:
        with self.db.session() as s:
            q = select(Match).where(Match.event_id == self.event_id)
            if round_no is not None:
                q = q.where(Match.round_no == round_no)
            return list(s.scalars(q.order_by(Match.round_no, Match.number)))

    def outcomes(self, s: Session, *, stage: str | None = None, round_nos: set[int] | None = None) -> list[MatchOutcome]:
        q = select(Match, Round.stage).join(Round, Round.id == Match.round_id).where(
            Match.event_id == self.event_id, Match.status.in_(("reported", "confirmed"))
        )
        out = []
        for m, st in s.execute(q):
            if stage is not None and st != stage:
                continue
            if round_nos is not None and m.round_no not in round_nos:
                continue
            out.append(
                MatchOutcome(m.round_no, m.entrant_a, m.entrant_b, m.score_a or 0.0, m.score_b or 0.0, m.winner_id, m.kind)
            )
        return out

    def standings(self, *, stage: str | None = None, members: Sequence[int] | None = None) -> list[Standing]:
        with self.db.session() as s:
            ev = self.event(s)
            k = kway.entrants_per_table(ev.game, ev.variant, int(ev.options.get("seats", 4)))
            if k > 2:  # tables of k: placement points (kway.py)
                ids = [e for e in s.scalars(select(Entrant.id).where(Entrant.event_id == self.event_id))]
                counted = [(m.kind, kway.match_entrants(m), kway.match_scores(m)) for m in s.scalars(select(Match).where(
                    Match.event_id == self.event_id, Match.status.in_(("reported", "confirmed"))))]
                return kway.compute_standings(ids, counted, ev.options["tiebreaks"], k=k, lots_seed=ev.options["lots_seed"])
            ids = list(members) if members is not None else [
                e for e in s.scalars(select(Entrant.id).where(Entrant.event_id == self.event_id))
            ]
            outs = self.outcomes(s, stage=stage)
            if members is not None:
                keep = set(ids)
                outs = [o for o in outs if o.a in keep and (o.b is None or o.b in keep)]
            return compute_standings(ids, outs, ev.options["tiebreaks"], lots_seed=ev.options["lots_seed"])

    def pair_next_round(self, actor: str = "director", *, force: bool = False) -> int:
        """Pair and store the next round; returns its number.

        Refuses while the current round has unconfirmed matches (``force``
        overrides, for a director who accepts a result by other means).
        """
        if self.entrants_per_table() > 2:
            return kway.pair_next_round(self, actor, force=force)
        with self._lock:
            with self.db.session() as s:
                ev = self.event(s)
                cur = self.current_round_no(s)
            if cur and not force and not self.round_complete(cur):
                raise DirectorError(say("round {n} still has matches without a confirmed result", n=cur))
            nxt = cur + 1
            stage, pairs, groups = self._plan_round(nxt)
            with self.db.session() as s:
                ev = self.event(s)
                tables = sorted(s.scalars(select(Table.number).where(Table.event_id == self.event_id)))
                rnd = Round(event_id=self.event_id, number=nxt, stage=stage, status="paired")
                s.add(rnd)
                s.flush()
                best_of = int(ev.options.get("best_of", 1)) if stage == "knockout" else 1
                byes_requested = [
                    e.id for e in s.scalars(select(Entrant).where(Entrant.event_id == self.event_id)) if nxt in e.bye_rounds
                ]
                table_i = 0
                for number, p in enumerate(pairs, start=1):
                    m = Match(
                        event_id=self.event_id, round_id=rnd.id, round_no=nxt, number=number,
                        entrant_a=p.a, entrant_b=p.b, kind="match", best_of=best_of, status="pending",
                        group_no=groups.get(p.a), games=[], confirmed=False,
                    )
                    if p.b is None:
                        bp = ev.options.get("bye_points", [0, 0])
                        m.kind = "pairing-bye"
                        m.score_a, m.score_b = float(bp[0]), float(bp[1])
                        m.winner_id = p.a
                        m.status = "confirmed"
                        m.confirmed = True
                    else:
                        m.table_no = tables[table_i % len(tables)] if tables else None
                        table_i += 1
                    s.add(m)
                for i, e in enumerate(byes_requested, start=len(pairs) + 1):
                    s.add(Match(
                        event_id=self.event_id, round_id=rnd.id, round_no=nxt, number=i, entrant_a=e, entrant_b=None,
                        kind="requested-bye", best_of=1, status="confirmed", score_a=0.0, score_b=0.0,
                        winner_id=None, games=[], confirmed=True,
                    ))
                ev.status = "running"
                _append_audit(s, self.event_id, actor, "round-paired", None, "", {
                    "round": nxt, "stage": stage, "pairs": [[p.a, p.b] for p in pairs], "requested_byes": byes_requested,
                })
            return nxt

    def _plan_round(self, nxt: int) -> tuple[str, list[pr.Pairing], dict[int, int]]:
        with self.db.session() as s:
            ev = self.event(s)
            opts = ev.options
            entrants = list(s.scalars(select(Entrant).where(Entrant.event_id == self.event_id).order_by(Entrant.seed, Entrant.id)))
            active = [e for e in entrants if e.status != "withdrawn" and nxt not in e.bye_rounds]
            seeded_ids = [e.id for e in entrants if e.status != "withdrawn"]
            history = list(s.execute(select(Match.entrant_a, Match.entrant_b, Match.round_no, Match.kind, Match.winner_id, Match.group_no).where(Match.event_id == self.event_id)))
            rounds_done = {r.number: r.stage for r in s.scalars(select(Round).where(Round.event_id == self.event_id))}
            fmt = ev.format
        rng = random.Random(f"{opts['lots_seed']}:round:{nxt}")
        if fmt == "swiss":
            if nxt > int(opts["rounds"]):
                raise DirectorError(say("the Swiss has {n} rounds; the event is over", n=opts["rounds"]))
            if len(active) < 2:
                raise DirectorError(say("fewer than two active entrants"))
            if nxt == 1:
                if opts["first_round"] == "rating":  # neighbours in club rating meet: even first games (ratings.py)
                    from .ratings import rating_order

                    order = rating_order(self.db, self.event_id, [e.id for e in active])
                    return "swiss", pr.swiss_first_round(order, seeded=False, rng=None), {}
                return "swiss", pr.swiss_first_round([e.id for e in active], seeded=opts["first_round"] == "seeded", rng=rng), {}
            met = pr.opponents_map((a, b) for a, b, *_ in history)
            had_bye = {a for a, b, _r, kind, *_ in history if kind == "pairing-bye"}
            table = self.standings()
            rank = {st.entrant: i for i, st in enumerate(table)}
            score = {st.entrant: st.games_won for st in table}
            players = [
                pr.SwissPlayer(e.id, score[e.id], rank[e.id], frozenset(met.get(e.id, ())), e.id in had_bye) for e in active
            ]
            return "swiss", pr.swiss_pairings(players), {}
        if fmt == "round-robin":
            rounds = pr.berger_rounds(seeded_ids)
            if nxt > len(rounds):
                raise DirectorError(say("every round of the round robin has been played"))
            return "round-robin", [p for p in rounds[nxt - 1] if _active(p, active)], {}
        if fmt == "knockout":
            return "knockout", self._knockout_round(seeded_ids, rounds_done), {}
        # groups then knockout
        groups = pr.snake_groups(seeded_ids, int(opts["group_size"]))
        group_rounds = pr.group_stage_rounds(groups)
        group_of = {e: gi + 1 for gi, g in enumerate(groups) for e in g}
        if nxt <= len(group_rounds):
            return "group", [p for p in group_rounds[nxt - 1] if _active(p, active)], group_of
        return "knockout", self._knockout_round(seeded_ids, rounds_done, groups), {}

    def _knockout_round(
        self, seeded_ids: list[int], rounds_done: dict[int, str], groups: list[list[int]] | None = None
    ) -> list[pr.Pairing]:
        """The first knockout round from seeds (or group places), later ones from the winners."""
        ko_rounds = sorted(n for n, st in rounds_done.items() if st == "knockout")
        if not ko_rounds:
            if groups is not None:
                ranked = [[st.entrant for st in self.standings(stage="group", members=g)] for g in groups]
                seeds = pr.knockout_seeds_from_groups(ranked, int(self.options()["advance"]))
            else:
                seeds = seeded_ids
            return pr.knockout_first_round(seeds)
        last = ko_rounds[-1]
        with self.db.session() as s:
            ms = list(s.scalars(select(Match).where(Match.event_id == self.event_id, Match.round_no == last).order_by(Match.number)))
        winners = [m.winner_id for m in ms]
        if any(w is None for w in winners):
            raise DirectorError(say("knockout round {n} has a match without a winner", n=last))
        if len(winners) == 1:
            raise DirectorError(say("the knockout is decided; the event is over"))
        return pr.knockout_next_round([w for w in winners if w is not None])

    # ------------------------------------------------------------ assignments

    def assignments(self, round_no: int | None = None) -> dict[int, dict[str, Any]]:
        """What each table must play this round: the payload of its retained ``assign`` topic."""
        with self.db.session() as s:
            ev = self.event(s)
            rnd = round_no or self.current_round_no(s)
            names = {e.id: e for e in s.scalars(select(Entrant).where(Entrant.event_id == self.event_id))}
            salt = badge_salt(ev.options)
            out: dict[int, dict[str, Any]] = {}
            for t in s.scalars(select(Table.number).where(Table.event_id == self.event_id)):
                out[t] = {"event": self.event_id, "round": rnd, "matches": []}
            for m in s.scalars(select(Match).where(Match.event_id == self.event_id, Match.round_no == rnd, Match.table_no.is_not(None)).order_by(Match.number)):
                assert m.entrant_b is not None and m.table_no is not None
                sides = [names[e] for e in kway.match_entrants(m)]
                out.setdefault(m.table_no, {"event": self.event_id, "round": rnd, "matches": []})["matches"].append({
                    "match": m.id,
                    "number": m.number,
                    "game": ev.game,
                    "variant": ev.variant,
                    "options": {"target": ev.options["target"]},
                    "time_limit_s": ev.options.get("time_limit_s"),
                    "best_of": m.best_of,
                    # badges leave the director only as salted digests (security.badge_digest)
                    "entrants": [{"id": x.id, "name": x.name, "members": x.members,
                                  "badges": [badge_digest(b, salt) for b in x.badges]} for x in sides],
                    "badge_salt": salt,
                    "seats": _seats(sides[0].members, sides[1].members) if len(sides) == 2 else kway.seat_plan(
                        ev.game, [x.members for x in sides], int(ev.options.get("seats", 4))),
                    "done": m.confirmed,
                    "confirm": ev.options.get("confirm", DEFAULT_CONFIRM),
                })
            return out

    # ------------------------------------------------------------ ingestion

    def ingest(self, topic_table: int, message: dict[str, Any], size: int | None = None) -> Ack:
        """Check, store and acknowledge one outbox message from a table.

        The ack is returned only after the transaction committed (a failed
        commit raises, and the caller sends no ack: the table re-sends). Its
        digest covers the whole signed message (see :class:`Ack`). ``size``:
        the bytes the message arrived as (for the audit of a refusal).
        Cheap checks come first (ids, key, topic, event), then the signature
        against the table's cached key, and the database only for a message
        signed by the table it claims to be.
        """
        try:
            d = digest(message)
        except (TypeError, ValueError):
            d = ""
        if size is None:
            size = len(json.dumps(message, separators=(",", ":"), default=str)) if d else 0
        ack = self._ingest(topic_table, message, d, size)
        return Ack(ack.key, ack.status, ack.reason, d)

    def refuse_raw(self, topic_table: int, reason: str, raw: bytes, *, sha256: str | None = None,
                   size: int | None = None) -> Ack:
        """Refuse bytes that are not a readable message (too large, not JSON, too
        deep, NaN, ids out of range): audited by digest and size, never copied.
        ``sha256``/``size`` describe bytes already dropped (an oversized payload)."""
        d = sha256 or hashlib.sha256(raw).hexdigest()
        n = len(raw) if size is None else size
        return Ack("?", "refused", self._refuse("?", topic_table, reason, d, n).reason, d)

    def _ingest(self, topic_table: int, message: dict[str, Any], d: str, size: int) -> Ack:
        try:
            check_ids(message)
            key = message_key(message)
        except (KeyError, ValueError, TypeError) as exc:
            return self._refuse("?", topic_table, f"malformed message: {exc}", d, size)
        with self._lock:
            try:
                body = self._signed_body(topic_table, message)
                with self.db.session() as s:
                    return self._apply(s, key, body)
            except _Refusal as r:
                return self._refuse(key, topic_table, str(r), d, size)
            except (KeyError, TypeError, ValueError, OverflowError) as exc:
                return self._refuse(key, topic_table, f"malformed message: {exc}", d, size)

    def ingest_many(self, items: Sequence[tuple[int, dict[str, Any], int]]) -> list[Ack]:
        """Ingest several messages (topic table, message, bytes) in one transaction:
        one commit, so one fsync, for all of them (a group commit); the caller
        acknowledges only after it returns. Each message is checked and refused
        on its own (every check comes before a message's first write); should
        one fail in an unforeseen way, the batch is rolled back and every
        message ingested alone, so nothing is half-stored."""
        acks: list[Ack | None] = [None] * len(items)
        digests: list[str] = []
        refused: list[tuple[int, str, str]] = []  # (index, key, reason): audited after the commit
        for _table, message, _size in items:
            try:
                digests.append(digest(message))
            except (TypeError, ValueError):
                digests.append("")
        try:
            with self._lock, self.db.session() as s:
                for i, (table, message, _size) in enumerate(items):
                    try:
                        check_ids(message)
                        key = message_key(message)
                    except (KeyError, ValueError, TypeError) as exc:
                        refused.append((i, "?", f"malformed message: {exc}"))
                        continue
                    try:
                        ack = self._apply(s, key, self._signed_body(table, message))
                    except _Refusal as r:
                        refused.append((i, key, str(r)))
                        continue
                    acks[i] = Ack(ack.key, ack.status, ack.reason, digests[i])
        except (KeyError, TypeError, ValueError, OverflowError):
            return [self.ingest(t, m, size) for t, m, size in items]
        for i, key, reason in refused:
            table, _message, size = items[i]
            acks[i] = Ack(key, "refused", self._refuse(key, table, reason, digests[i], size).reason, digests[i])
        return [a for a in acks if a is not None]

    def _signed_body(self, topic_table: int, message: dict[str, Any]) -> dict[str, Any]:
        """The body of a message that its topic's table signed for this event, or a
        :class:`_Refusal`: the cheap checks, then the signature against the
        table's cached key, and no database write."""
        if message.get("table") != topic_table:
            raise _Refusal(f"table {message.get('table')!r} published on table-{topic_table}'s topic")
        if message.get("event") != self.event_id:
            raise _Refusal(f"message for event {message.get('event')!r}, this is event {self.event_id}")
        public_key = self._table_key(topic_table)
        if public_key is None:
            raise _Refusal(f"table {topic_table} is not part of this event")
        try:
            return verify(public_key, message)
        except SignatureError as exc:
            # The key may have been replaced by another process (the CLI):
            # read it again once before calling the message forged.
            self._keys.pop(topic_table, None)
            fresh = self._table_key(topic_table)
            if fresh is None or fresh == public_key:
                raise _Refusal(f"forged: {exc}") from exc
            try:
                return verify(fresh, message)
            except SignatureError as exc2:
                raise _Refusal(f"forged: {exc2}") from exc2

    def _apply(self, s: Session, key: str, body: dict[str, Any]) -> Ack:
        """Store one signed message in ``s`` (every refusal is raised before its first write)."""
        kind = body["kind"]
        if kind == "result":
            return self._ingest_result(s, key, body)
        if kind == "confirm":
            return self._ingest_confirm(s, key, body)
        return self._ingest_checkin(s, key, body)

    def _refuse(self, key: str, table: int, reason: str, d: str, size: int) -> Ack:
        """Audit a refusal by the message's digest and size (never its content),
        within the table's audit budget."""
        reason = _clip(reason)
        self.audit_limited(f"table-{table}", "refused", reason, size, key=_clip(key, 80), digest=d or "?", size=size)
        return Ack(key, "refused", reason)

    def audit_limited(self, source: str, action: str, reason: str = "", cost: int = 0, **detail: Any) -> bool:
        """Audit something a table or an address caused, at most ``AUDIT_BUDGET``
        entries per ``AUDIT_WINDOW_S`` for one source; the rest are counted and
        written as one ``refusals-suppressed`` entry when the window ends.
        Returns True when this one was written."""
        with self._lock:
            if not self._take_budget(source, cost):
                return False
            with self.db.session() as s:
                _append_audit(s, self.event_id, source, action, None, reason, detail)
            return True

    def _take_budget(self, source: str, cost: int = 0) -> bool:
        """One write of ``source``'s budget: False (and counted) when it is spent."""
        now = time.monotonic()
        with self._lock:
            b = self._budget.setdefault(source, [now, 0, 0, 0])
            if now - b[0] >= AUDIT_WINDOW_S:
                self._flush_budget(source, b)
                b[:] = [now, 0, 0, 0]
            if b[1] >= AUDIT_BUDGET:
                b[2] += 1
                b[3] += cost
                return False
            b[1] += 1
            return True

    def flush_audit_budget(self, *, force: bool = False) -> None:
        """Write the suppressed counts of windows that ended (all of them if ``force``)."""
        now = time.monotonic()
        with self._lock:
            for source, b in self._budget.items():
                if force or now - b[0] >= AUDIT_WINDOW_S:
                    self._flush_budget(source, b)
                    b[:] = [now, 0, 0, 0]

    def _flush_budget(self, source: str, b: list[float]) -> None:
        if b[2]:
            with self.db.session() as s:
                _append_audit(s, self.event_id, source, "refusals-suppressed", None,
                              f"{int(b[2])} more refused in {AUDIT_WINDOW_S:g} s", {"count": int(b[2]), "bytes": int(b[3])})

    def _ingest_result(self, s: Session, key: str, body: dict[str, Any]) -> Ack:
        ev = self.event(s)
        rnd_no, table_no, revision = int(body["round"]), int(body["table"]), int(body["revision"])
        d = digest(body)
        old = s.scalar(select(Result).where(
            Result.event_id == self.event_id, Result.round_no == rnd_no, Result.table_no == table_no, Result.revision == revision,
        ))
        if old is not None:
            if old.digest == d:
                return Ack(key, "duplicate")
            raise _Refusal("replayed key: this (event, round, table, revision) was acknowledged with other content")
        m = s.get(Match, int(body["match"]))
        if m is None or m.event_id != self.event_id:
            raise _Refusal(f"no match {body['match']!r} in this event")
        if m.round_no != rnd_no or m.table_no != table_no:
            raise _Refusal(f"out of turn: match {m.id} is round {m.round_no} table {m.table_no}")
        if rnd_no != self.current_round_no(s):
            raise _Refusal(f"out of turn: round {rnd_no} is not the current round")
        if m.confirmed:
            raise _Refusal(f"out of turn: match {m.id} is already confirmed; corrections go through the director")
        top = s.scalar(select(func.max(Result.revision)).where(
            Result.event_id == self.event_id, Result.round_no == rnd_no, Result.table_no == table_no,
        )) or 0
        if revision <= top:
            raise _Refusal(f"stale revision {revision}: table {table_no} already reported revision {top}")
        expect = kway.match_entrants(m)
        if list(body["entrants"]) != expect:
            raise _Refusal(f"entrants {body['entrants']} are not match {m.id}'s {expect}")
        scores: list[float] | None = None
        if len(expect) > 2:
            try:
                scores, winner_side, games_k = kway.verify_records(ev.game, ev.variant, body, len(expect))
            except kway.KwayError as exc:
                raise _Refusal(str(exc)) from exc
            score, games = (scores[0], scores[1]), [tuple(g) for g in games_k]
        else:
            score, winner_side, games = verify_records(ev.game, ev.variant, body, m.best_of)
        winner = None if winner_side is None else expect[winner_side]
        if body.get("winner") != winner:
            raise _Refusal(f"reported winner {body.get('winner')!r} does not follow from the records ({winner!r})")
        res = Result(event_id=self.event_id, round_no=rnd_no, table_no=table_no, revision=revision, match_id=m.id,
                     digest=d, payload=body, received_at=time.time())
        s.add(res)
        s.flush()
        m.score_a, m.score_b = score
        m.scores = scores
        m.winner_id = winner
        m.games = [list(g) for g in games]
        m.status = "reported"
        m.result_id = res.id
        _append_audit(s, self.event_id, f"table-{table_no}", "result-accepted", m.id, "", {
            "key": key, "digest": d, "score": list(score), "winner": winner,
        })
        return Ack(key, "accepted")

    def _ingest_confirm(self, s: Session, key: str, body: dict[str, Any]) -> Ack:
        rnd_no, table_no, revision = int(body["round"]), int(body["table"]), int(body["revision"])
        res = s.scalar(select(Result).where(
            Result.event_id == self.event_id, Result.round_no == rnd_no, Result.table_no == table_no, Result.revision == revision,
        ))
        if res is None:
            raise _Refusal(f"out of turn: no acknowledged result {rnd_no}/{table_no}/{revision} to confirm")
        m = s.get(Match, res.match_id)
        assert m is not None
        if m.confirmed and m.result_id == res.id:
            return Ack(key, "duplicate")
        if m.result_id != res.id:
            raise _Refusal(f"revision {revision} is not the result standing for match {m.id}")
        sides = []
        for eid in kway.match_entrants(m):
            e = s.get(Entrant, eid)
            assert e is not None
            sides.append(ConfirmSide(e.id, e.name, tuple(e.badges)))
        try:
            verdict = judge_confirmation(self.event(s).options.get("confirm", DEFAULT_CONFIRM), body, sides)
        except ConfirmationError as exc:
            raise _Refusal(str(exc)) from exc
        if not verdict.confirmed:
            if m.status == "disputed":
                return Ack(key, "duplicate")
            m.status = "disputed"  # the table calls the director; the console confirms or corrects
            _append_audit(s, self.event_id, f"table-{table_no}", "result-disputed", m.id, "refused at the table",
                          {"key": key, "disputed_by": list(verdict.disputed_by), **_private(verdict.detail)})
            return Ack(key, "accepted")
        m.confirmed = True
        m.status = "confirmed"
        _append_audit(s, self.event_id, f"table-{table_no}", "result-confirmed", m.id, "", {"key": key, **_private(verdict.detail)})
        return Ack(key, "accepted")

    def _ingest_checkin(self, s: Session, key: str, body: dict[str, Any]) -> Ack:
        m = s.get(Match, int(body["match"]))
        if m is None or m.event_id != self.event_id or m.table_no != body["table"]:
            raise _Refusal(f"out of turn: match {body['match']!r} is not at table {body['table']}")
        here = kway.match_entrants(m)
        everyone = list(s.scalars(select(Entrant).where(Entrant.event_id == self.event_id)))
        at_table = {e: mm.table_no for mm in s.scalars(select(Match).where(
            Match.event_id == self.event_id, Match.round_no == m.round_no)) for e in kway.match_entrants(mm)}
        by_id = {e.id: e for e in everyone}
        try:
            present = judge_checkin(
                body, [ConfirmSide(e, by_id[e].name, tuple(by_id[e].badges)) for e in here],
                [Elsewhere(e.name, tuple(e.badges), at_table.get(e.id)) for e in everyone if e.id not in here],
                int(body["table"]))
        except ConfirmationError as exc:
            raise _Refusal(str(exc)) from exc
        changed = []
        for eid in present:
            e = by_id[eid]
            if e.status == "registered":
                e.status = "checked_in"
                changed.append(eid)
        if not changed:
            return Ack(key, "duplicate")
        _append_audit(s, self.event_id, f"table-{body['table']}", "checked-in", m.id, "", {"entrants": changed})
        return Ack(key, "accepted")

    # ------------------------------------------------------------ corrections

    def correct(self, match_id: int, score: tuple[float, float], winner: int | None, reason: str, actor: str) -> None:
        """Change a match's result after the fact: only with a reason, always audited."""
        if not reason.strip():
            raise DirectorError(say("a correction needs a reason"))
        reason = _check_text(reason, N_("a reason"), 1000)
        _check_id(match_id, N_("match"))
        if winner is not None:
            _check_id(winner, N_("entrant"))
        bad = [x for x in score if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x)
               or not 0 <= x <= 1_000_000]
        if len(score) != 2 or bad:
            self.audit(actor, "correction-refused", match_id=match_id, reason="score is not two finite numbers",
                       score=[repr(x)[:20] for x in score])
            raise DirectorError(say(
                "a score is two numbers from 0 to 1000000 in pairing order, e.g. 150-97 (NaN and Infinity are not scores)"
            ))
        with self._lock, self.db.session() as s:
            m = s.get(Match, match_id)
            if m is None or m.event_id != self.event_id:
                raise DirectorError(say("no match {id} in this event", id=match_id))
            if m.entrants and len(m.entrants) > 2:
                raise DirectorError(say("match {id} is a table of {n}: correct it with one score per entrant "
                                        "(tablesense tournament correct MATCH --score A-B-C), not A-B",
                                        id=match_id, n=len(m.entrants)))
            where = (say("the match at table {table} in round {round}", table=m.table_no, round=m.round_no)
                     if m.table_no else say("the bye in round {round}", round=m.round_no))
            if winner not in (None, m.entrant_a, m.entrant_b):
                raise DirectorError(say("{entrant} did not play {where}", entrant=_entrant_label(s, self.event_id, winner),
                                        where=where))
            # The score is in pairing order (first-named entrant first); the
            # winner is the side with more points (given or not) unless they are
            # level (a knockout tie decided otherwise), or the standings contradict it.
            leader = m.entrant_a if score[0] > score[1] else m.entrant_b if score[1] > score[0] else None
            winner = leader if winner is None else winner
            if leader is not None and winner != leader:
                raise DirectorError(say(
                    "score {score} makes {leader} the winner of {where}, not {winner}: "
                    "the score is in pairing order (first-named entrant first)",
                    score=f"{score[0]:g}-{score[1]:g}", leader=_entrant_label(s, self.event_id, leader), where=where,
                    winner=_entrant_label(s, self.event_id, winner)))
            before = {"score": [m.score_a, m.score_b], "winner": m.winner_id}
            m.score_a, m.score_b = float(score[0]), float(score[1])
            m.winner_id = winner
            m.status = "confirmed"
            m.confirmed = True
            _append_audit(s, self.event_id, actor, "correction", match_id, reason, {
                "before": before, "after": {"score": list(score), "winner": winner},
            })

    def data_version(self) -> int:
        """The newest audit entry's id in the database: every change to an event
        writes one in the same transaction, so an unchanged number means
        unchanged data (one indexed read; what :meth:`memo` keys on)."""
        with self.db.session() as s:
            return int(s.scalar(select(AuditEntry.id).order_by(AuditEntry.id.desc()).limit(1)) or 0)

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

    def audit_count(self) -> int:
        """How many entries the audit log has (a COUNT, for paging)."""
        with self.db.session() as s:
            return int(s.scalar(select(func.count(AuditEntry.id)).where(AuditEntry.event_id == self.event_id)) or 0)

    def audit_log(self, last: int | None = None, skip: int = 0) -> list[dict[str, Any]]:
        """The audit log in order; ``last`` keeps only the newest entries (what a
        page shows; ``skip`` newer ones passed over first), read with a LIMIT so a
        page never loads the whole log."""
        with self.db.session() as s:
            q = select(AuditEntry).where(AuditEntry.event_id == self.event_id)
            if last is not None:
                rows = list(s.scalars(q.order_by(AuditEntry.id.desc()).offset(skip).limit(last)))[::-1]
            else:
                rows = list(s.scalars(q.order_by(AuditEntry.id)))
            return [
                {"id": a.id, "ts": a.ts, "actor": a.actor, "action": a.action, "match": a.match_id,
                 "reason": a.reason, "detail": a.detail, "hash": a.hash}
                for a in rows
            ]

    def verify_audit_chain(self, *, full: bool = False) -> bool:
        """True when no audit entry was altered, removed or reordered.

        Incremental by default: entries up to the last one this director
        checked are trusted once that entry is still there with the same hash
        (the database refuses UPDATE and DELETE on the log), and only newer
        entries are hashed, so a page costs a few rows, not the whole log.
        Someone who drops that protection to edit an old row is caught by the
        full check: ``full``, the first check of a director, and one every
        ``FULL_CHECK_S`` seconds. Its own lock: a long check never holds up ingestion."""
        with self._verify_lock:
            if time.monotonic() - self._full_checked >= FULL_CHECK_S:
                full = True
            upto, prev = (0, "0" * 64) if full else self._verified
            with self.db.session() as s:
                if upto:
                    anchor = s.get(AuditEntry, upto)
                    if anchor is None or anchor.hash != prev:
                        self._verified = (0, "0" * 64)
                        return False
                q = (select(AuditEntry).where(AuditEntry.event_id == self.event_id, AuditEntry.id > upto)
                     .order_by(AuditEntry.id).execution_options(yield_per=2000))
                for a in s.scalars(q):
                    if a.prev_hash != prev or a.hash != _audit_hash(a.prev_hash, a.ts, a.actor, a.action, a.match_id, a.reason, a.detail):
                        return False
                    upto, prev = a.id, a.hash
            self._verified = (upto, prev)
            if full:
                self._full_checked = time.monotonic()
            return True


def badge_salt(options: dict[str, Any]) -> str:
    """The event's badge salt (``badge_salt``, made with the event; an event made
    before it existed uses its lots seed, as private until the event starts)."""
    return str(options.get("badge_salt") or f"lots:{options.get('lots_seed', '')}")


class _Refusal(Exception):
    pass


def _entrant_label(s: Session, event_id: int, entrant_id: int | None) -> str:
    """``#3 Ana & Bia``: an entrant as the director knows it (its number in the event, its name)."""
    from .present import entrant_numbers, numbered

    e = s.get(Entrant, entrant_id) if entrant_id is not None else None
    if e is None or e.event_id != event_id:
        return f"#? ({entrant_id})"
    numbers = entrant_numbers(s.scalars(select(Entrant.id).where(Entrant.event_id == event_id)))
    return numbered(numbers.get(e.id), e.name)


def _check_text(text: str, what: str, limit: int = MAX_NAME) -> str:
    """A name or reason typed by a person: stripped, no control characters (a NUL
    byte cannot be stored in PostgreSQL), at most ``limit`` characters."""
    text = str(text).strip()
    if len(text) > limit:
        raise DirectorError(say("{what} has at most {limit} characters, this one has {n}", what=say(what), limit=limit, n=len(text)))
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise DirectorError(say("{what} may not contain control characters (NUL, tab, newline)", what=say(what)))
    return text





def _check_id(value: object, what: str) -> int:
    """An id typed by a person: a whole number the database can hold."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ID:
        raise DirectorError(say("no {what} {value} in this event", what=say(what), value=str(value)[:20]))
    return value


def _private(detail: dict[str, Any] | None) -> dict[str, Any]:
    """An audit detail without badge ids (private: the log is public); their count stays."""
    out = dict(detail or {})
    if "badges" in out:
        out["taps"] = len(out.pop("badges"))
    return out


def _check_engine_options(game: str, variant: str, opts: dict[str, Any]) -> None:
    """Refuse, when the event is created, options the tables' engine would refuse mid-event."""
    from tablesense.games.common import OptionError

    try:
        if game == "dominoes":
            from tablesense.games.dominoes import DominoMatch

            DominoMatch(variant, {"target": opts["target"]}, seats=int(opts["seats"]))
        else:
            from tablesense.games.kems import KemsMatch

            KemsMatch({"target": opts["target"]}, seats=int(opts["seats"]))
    except OptionError as exc:
        raise DirectorError(f"{variant}: {exc}") from exc


def _active(p: pr.Pairing, active: Sequence[Entrant]) -> bool:
    ids = {e.id for e in active}
    return p.a in ids and (p.b is None or p.b in ids)


def _seats(a: list[str], b: list[str]) -> list[dict[str, Any]]:
    """Seat plan: entrant A holds seats 0 and 2 (team 0), entrant B seats 1 and 3."""
    if len(a) == 2:
        return [
            {"seat": 0, "entrant": 0, "player": a[0]}, {"seat": 1, "entrant": 1, "player": b[0]},
            {"seat": 2, "entrant": 0, "player": a[1]}, {"seat": 3, "entrant": 1, "player": b[1]},
        ]
    return [{"seat": 0, "entrant": 0, "player": a[0]}, {"seat": 1, "entrant": 1, "player": b[0]}]


def verify_records(game: str, variant: str, body: dict[str, Any], best_of: int) -> tuple[tuple[float, float], int | None, list[tuple[float, float]]]:
    """Replay every game record of a result; the reported score must follow from them.

    Returns (match score, winning side 0/1/None, per-game scores). A best-of-N
    match carries one record per game; its score is the sum of the games and
    its winner the side that won the majority.
    """
    from tablesense.games.common import IllegalStepError
    from tablesense.games.record import replay

    records = body.get("records")
    if not isinstance(records, list) or not records:
        raise _Refusal("a result must carry the game records of its hands")
    games: list[tuple[float, float]] = []
    winners: list[int | None] = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or rec.get("game") != game or rec.get("variant") != variant:
            raise _Refusal(f"record {i} is not a {game} {variant} record")
        try:
            rr = replay(rec)
        except Exception as exc:  # RecordFormatError, IllegalStepError: both refuse the result
            where = f" (hand {exc.hand}, move {exc.move})" if isinstance(exc, IllegalStepError) else ""
            raise _Refusal(f"record {i} does not replay{where}: {exc}") from exc
        sc = tuple(float(x) for x in rr.score)
        if len(sc) != 2:
            raise _Refusal(f"record {i} has {len(sc)} teams; a match is between two entrants")
        games.append((sc[0], sc[1]))
        winners.append(rr.winner)
    reported_games = body.get("games")
    if reported_games is not None and [list(map(float, g)) for g in reported_games] != [list(g) for g in games]:
        raise _Refusal(f"reported games {reported_games} do not follow from the records {games}")
    total = (sum(g[0] for g in games), sum(g[1] for g in games))
    if [float(x) for x in body.get("score", [])] != list(total):
        raise _Refusal(f"reported score {body.get('score')} does not follow from the records {list(total)}")
    if best_of > 1:
        side = pr.series_winner(games, best_of)
        if side is None:
            raise _Refusal(f"the series is not decided after {len(games)} game(s) of best-of-{best_of}")
        return total, side, games
    w = winners[0]
    if w is None and total[0] != total[1]:
        # A match stopped by its time limit: the side ahead wins.
        w = 0 if total[0] > total[1] else 1
    return total, w, games
