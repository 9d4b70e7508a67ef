"""The director's ingestion service: check, store and acknowledge table outboxes.

Result ingestion (:meth:`Ingestion.ingest`) is idempotent: a result is keyed by
(event, round, table, revision); the same key with the same content is a
duplicate (acknowledged again, nothing changes), the same key with other
content is refused as a replay, and so are results that are forged (bad
signature), out of turn (not this table's match of the current round, or the
match already confirmed) or whose records do not replay to the reported score.
Refusals go to the audit log within the table's budget (:class:`.audit.AuditTrail`).
The queue in front of it, with its token buckets, is :mod:`.intake`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from . import kway
from . import pairing as pr
from .audit import AuditChain, AuditTrail, _clip
from .checks import Checked, Replayed, check_message, replay_one
from .confirmation import DEFAULT_MODE as DEFAULT_CONFIRM
from .confirmation import ConfirmationError, Elsewhere, judge_checkin
from .confirmation import Side as ConfirmSide
from .confirmation import judge as judge_confirmation
from .db import Entrant, Match, Result, Round, Table
from .scope import EventScope


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

class Refusal(Exception):
    """A message refused: the text is the reason the ack carries."""


_Refusal = Refusal


class Ingestion:
    """Outbox messages of the tables into the event's database, one transaction a batch.

    A message goes through :func:`.checks.check_message` (parse, digests,
    signature, replays: no database, possibly in a worker process) and then
    :meth:`store`, which checks it against the event (match, turn, revision)
    and writes it, for a whole batch in one transaction with one commit.
    """

    def __init__(self, scope: EventScope, audit: AuditTrail) -> None:
        self.db = scope.db
        self.event_id = scope.event_id
        self._lock = scope.lock
        self.event = scope.event
        self.current_round_no = scope.current_round_no
        self._audit = audit
        self._keys: dict[int, str] = {}  # table -> public key (see _table_key)
        self._game: tuple[str, str] | None = None  # (game, variant): fixed when the event is made

    def forget_key(self, number: int) -> None:
        """The table's key was replaced: read it again at its next message."""
        self._keys.pop(number, None)

    def _table_key(self, number: int) -> str | None:
        """A table's public key, read once (``add_table`` replaces it): checking
        a signature never costs a database read."""
        key = self._keys.get(number)
        if key is None:
            with self.db.session() as s:  # every table's at once: 200 tables, one query
                self._keys.update((n, k) for n, k in s.execute(
                    select(Table.number, Table.public_key).where(Table.event_id == self.event_id)))
            key = self._keys.get(number)
        return key

    def game(self) -> tuple[str, str]:
        """The event's game and variant (read once: they never change)."""
        if self._game is None:
            with self.db.session() as s:
                ev = self.event(s)
                self._game = (ev.game, ev.variant)
        return self._game

    def check_args(self, table: int) -> tuple[int, str | None, str, str]:
        """What :func:`.checks.check_raw` needs besides the bytes: event, the table's key, game, variant."""
        game, variant = self.game()
        return self.event_id, self._table_key(table), game, variant

    def check(self, table: int, message: dict[str, Any]) -> Checked:
        """The database-free checks of one parsed message, in this process."""
        return check_message(message, table, *self.check_args(table))

    # ------------------------------------------------------------ the API

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
        checked = self.check(topic_table, message)
        if size is None:
            size = len(json.dumps(message, separators=(",", ":"), default=str)) if checked.digest else 0
        return self.store([(topic_table, checked, size)])[0]

    def ingest_many(self, items: Sequence[tuple[int, dict[str, Any], int]]) -> list[Ack]:
        """Ingest several messages (topic table, message, bytes) in one transaction
        (see :meth:`store`)."""
        return self.store([(table, self.check(table, message), size) for table, message, size in items])

    def refuse_raw(self, topic_table: int, reason: str, raw: bytes, *, sha256: str | None = None,
                   size: int | None = None) -> Ack:
        """Refuse bytes that are not a readable message (too large, not JSON, too
        deep, NaN, ids out of range): audited by digest and size, never copied.
        ``sha256``/``size`` describe bytes already dropped (an oversized payload)."""
        d = sha256 or hashlib.sha256(raw).hexdigest()
        n = len(raw) if size is None else size
        return Ack("?", "refused", self._refuse("?", topic_table, reason, d, n).reason, d)

    def store(self, items: Sequence[tuple[int, Checked, int]]) -> list[Ack]:
        """Store checked messages (topic table, checks, bytes) in one transaction:
        one commit, so one fsync, for all of them (a group commit); the caller
        acknowledges only after it returns. The rows the batch needs are read
        in a few queries, and its audit entries chained in one pass. Each
        message is refused on its own (every check comes before a message's
        first write; refusals are audited after the commit); should one fail in
        an unforeseen way, the batch is rolled back and every message stored
        alone, so nothing is half-stored."""
        checked = [(table, self._recheck_forged(table, c), size) for table, c, size in items]
        acks: list[Ack | None] = [None] * len(checked)
        refused: list[tuple[int, str, str]] = []  # (index, key, reason): audited after the commit
        try:
            with self._lock, self.db.session() as s:
                batch = _Batch(s, self.event_id, [c.body for _t, c, _n in checked if c.body is not None])
                for i, (_table, c, _size) in enumerate(checked):
                    if c.refusal or c.body is None:
                        refused.append((i, c.key, c.refusal or "malformed message"))
                        continue
                    try:
                        ack = self._apply(batch, c)
                    except _Refusal as r:
                        refused.append((i, c.key, str(r)))
                        continue
                    acks[i] = Ack(ack.key, ack.status, ack.reason, c.digest)
                batch.settle()
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            if len(checked) > 1:
                return [self.store([item])[0] for item in checked]
            table, c, size = checked[0]
            return [Ack(c.key, "refused", self._refuse(c.key, table, f"malformed message: {exc}", c.digest, size).reason,
                        c.digest)]
        for i, key, reason in refused:
            table, c, size = checked[i]
            acks[i] = Ack(key, "refused", self._refuse(key, table, reason, c.digest, size).reason, c.digest)
        return [a for a in acks if a is not None]

    def _recheck_forged(self, table: int, c: Checked) -> Checked:
        """A signature that failed against the cached key: the key may have been
        replaced by another process (the CLI), so read it again once before
        calling the message forged."""
        if not c.forged or c.message is None:
            return c
        old = self._keys.pop(table, None)
        fresh = self._table_key(table)
        if fresh is None or fresh == old:
            return c
        return self.check(table, c.message)

    def _apply(self, batch: _Batch, c: Checked) -> Ack:
        """Store one signed message in the batch's session (every refusal is raised before its first write)."""
        assert c.body is not None
        kind = c.body["kind"]
        if kind == "result":
            return self._ingest_result(batch, c)
        if kind == "confirm":
            return self._ingest_confirm(batch, c.key, c.body)
        return self._ingest_checkin(batch, c.key, c.body)

    def _refuse(self, key: str, table: int, reason: str, d: str, size: int) -> Ack:
        """Audit a refusal by the message's digest and size (never its content),
        within the table's audit budget."""
        reason = _clip(reason)
        self._audit.audit_limited(f"table-{table}", "refused", reason, size, key=_clip(key, 80), digest=d or "?", size=size)
        return Ack(key, "refused", reason)

    def _ingest_result(self, batch: _Batch, c: Checked) -> Ack:
        s, key, body, d = batch.s, c.key, c.body, c.body_digest
        assert body is not None
        game, variant = self.game()
        rnd_no, table_no, revision = int(body["round"]), int(body["table"]), int(body["revision"])
        old = batch.results.get((rnd_no, table_no, revision))
        if old is not None:
            if old.digest == d:
                return Ack(key, "duplicate")
            raise _Refusal("replayed key: this (event, round, table, revision) was acknowledged with other content")
        m = s.get(Match, int(body["match"]))
        if m is None or m.event_id != self.event_id:
            raise _Refusal(f"no match {body['match']!r} in this event")
        if m.round_no != rnd_no or m.table_no != table_no:
            raise _Refusal(f"out of turn: match {m.id} is round {m.round_no} table {m.table_no}")
        if rnd_no != batch.current_round:
            raise _Refusal(f"out of turn: round {rnd_no} is not the current round")
        if m.confirmed:
            raise _Refusal(f"out of turn: match {m.id} is already confirmed; corrections go through the director")
        top = batch.top.get((rnd_no, table_no), 0)
        if revision <= top:
            raise _Refusal(f"stale revision {revision}: table {table_no} already reported revision {top}")
        expect = kway.match_entrants(m)
        if list(body["entrants"]) != expect:
            raise _Refusal(f"entrants {body['entrants']} are not match {m.id}'s {expect}")
        scores: list[float] | None = None
        if len(expect) > 2:
            try:
                scores, winner_side, games_k = kway.verify_records(game, variant, body, len(expect), c.replays)
            except kway.KwayError as exc:
                raise _Refusal(str(exc)) from exc
            score, games = (scores[0], scores[1]), [tuple(g) for g in games_k]
        else:
            score, winner_side, games = verify_records(game, variant, body, m.best_of, c.replays)
        winner = None if winner_side is None else expect[winner_side]
        if body.get("winner") != winner:
            raise _Refusal(f"reported winner {body.get('winner')!r} does not follow from the records ({winner!r})")
        batch.add_result(m, {"event_id": self.event_id, "round_no": rnd_no, "table_no": table_no, "revision": revision,
                             "match_id": m.id, "digest": d, "payload": body, "received_at": time.time()}, {
            "score_a": score[0], "score_b": score[1], "scores": scores, "winner_id": winner,
            "games": [list(g) for g in games], "status": "reported"})
        batch.audit.append(f"table-{table_no}", "result-accepted", m.id, "", {
            "key": key, "digest": d, "score": list(score), "winner": winner,
        })
        return Ack(key, "accepted")

    def _ingest_confirm(self, batch: _Batch, key: str, body: dict[str, Any]) -> Ack:
        s = batch.s
        rnd_no, table_no, revision = int(body["round"]), int(body["table"]), int(body["revision"])
        res = batch.results.get((rnd_no, table_no, revision))
        if res is None:
            raise _Refusal(f"out of turn: no acknowledged result {rnd_no}/{table_no}/{revision} to confirm")
        batch.settle()  # a result of this very batch gets its id
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
            batch.audit.append(f"table-{table_no}", "result-disputed", m.id, "refused at the table",
                               {"key": key, "disputed_by": list(verdict.disputed_by), **_private(verdict.detail)})
            return Ack(key, "accepted")
        m.confirmed = True
        m.status = "confirmed"
        batch.audit.append(f"table-{table_no}", "result-confirmed", m.id, "", {"key": key, **_private(verdict.detail)})
        return Ack(key, "accepted")

    def _ingest_checkin(self, batch: _Batch, key: str, body: dict[str, Any]) -> Ack:
        s = batch.s
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
        batch.audit.append(f"table-{body['table']}", "checked-in", m.id, "", {"entrants": changed})
        return Ack(key, "accepted")


@dataclass
class _Stored:
    """A result of the batch's (round, table)s: stored before, or added by the
    batch (``id`` None until :meth:`_Batch.settle` inserts it)."""

    round_no: int
    table_no: int
    revision: int
    match_id: int
    digest: str
    id: int | None = None


class _Batch:
    """One transaction's view of what its messages touch, read in a few queries:
    the results already stored for their (round, table) (keys and digests, not
    payloads), their matches (into the session, so ``s.get`` costs nothing),
    the current round. What it writes goes in a few statements at
    :meth:`settle`: the new results in one multi-row INSERT, their matches in
    one executemany UPDATE, the audit entries (chained in one pass) in one
    more; no ORM unit of work for them."""

    def __init__(self, s: Session, event_id: int, bodies: Sequence[dict[str, Any]]) -> None:
        self.s = s
        self.audit = AuditChain(s, event_id)
        rounds = {int(b["round"]) for b in bodies if "round" in b}
        tables = {int(b["table"]) for b in bodies if "table" in b}
        matches = {int(b["match"]) for b in bodies if isinstance(b.get("match"), int)}
        self.results: dict[tuple[int, int, int], _Stored] = {}
        self.top: dict[tuple[int, int], int] = {}  # (round, table) -> the highest revision stored
        if rounds and tables:
            for rid, rnd, tab, rev, mid, dig in s.execute(
                    select(Result.id, Result.round_no, Result.table_no, Result.revision, Result.match_id, Result.digest)
                    .where(Result.event_id == event_id, Result.round_no.in_(rounds), Result.table_no.in_(tables))):
                self._note(_Stored(rnd, tab, rev, mid, dig, rid))
        # The matches, held here (the session's identity map keeps only weak
        # references, and s.get() of a row it still holds costs no query), and
        # the current round, in one query: on PostgreSQL every query is a round
        # trip, and on a busy machine each costs a wait for the server's turn.
        current = select(func.max(Round.number)).where(Round.event_id == event_id)
        rows = list(s.execute(select(Match, current.scalar_subquery()).where(Match.id.in_(matches)))) if matches else []
        self.matches = [m for m, _r in rows]
        self.current_round = int((rows[0][1] if rows else s.scalar(current)) or 0)
        self._unsettled: list[tuple[Match, _Stored, dict[str, Any], dict[str, Any]]] = []

    def _note(self, r: _Stored) -> None:
        self.results[(r.round_no, r.table_no, r.revision)] = r
        key = (r.round_no, r.table_no)
        self.top[key] = max(self.top.get(key, 0), r.revision)

    def add_result(self, m: Match, row: dict[str, Any], match_values: dict[str, Any]) -> None:
        """A new result (``row``, ts_results' columns) standing for ``m``, whose
        columns become ``match_values`` and ``result_id`` its id, at :meth:`settle`.
        ``m`` shows the new values at once (later messages of the batch read them)."""
        stored = _Stored(row["round_no"], row["table_no"], row["revision"], row["match_id"], row["digest"])
        self._note(stored)
        for k, v in match_values.items():
            set_committed_value(m, k, v)
        self._unsettled.append((m, stored, row, match_values))

    def settle(self) -> None:
        """Write what is pending, in order: the ORM's own changes (a
        confirmation's), the new results (ids read back), their matches, the
        audit entries."""
        if self._unsettled:
            self.s.flush()
            rows = [row for _m, _st, row, _v in self._unsettled]
            results = Result.metadata.tables[Result.__tablename__]
            ids = self.s.execute(insert(results).returning(results.c.id, sort_by_parameter_order=True),
                                 rows).scalars().all()
            updates = []
            for (m, stored, _row, values), rid in zip(self._unsettled, ids, strict=True):
                stored.id = rid
                set_committed_value(m, "result_id", rid)
                updates.append({"b_id": m.id, "result_id": rid, **values})
            t = Match.metadata.tables[Match.__tablename__]
            self.s.execute(update(t).where(t.c.id == bindparam("b_id")).values(
                {k: bindparam(k) for k in updates[0] if k != "b_id"}), updates)
            self._unsettled.clear()
        self.audit.flush()


def _private(detail: dict[str, Any] | None) -> dict[str, Any]:
    """An audit detail without badge ids (private: the log is public); their count stays."""
    out = dict(detail or {})
    if "badges" in out:
        out["taps"] = len(out.pop("badges"))
    return out


def verify_records(game: str, variant: str, body: dict[str, Any], best_of: int,
                   replays: Sequence[Replayed | None] = ()) -> tuple[tuple[float, float], int | None, list[tuple[float, float]]]:
    """Check every game record of a result; the reported score must follow from them.

    ``replays``: the records already replayed (:func:`.checks.replay_records`);
    a record not among them is replayed here. Returns (match score, winning
    side 0/1/None, per-game scores). A best-of-N match carries one record per
    game; its score is the sum of the games and its winner the side that won
    the majority.
    """
    records = body.get("records")
    if not isinstance(records, list) or not records:
        raise _Refusal("a result must carry the game records of its hands")
    games: list[tuple[float, float]] = []
    winners: list[int | None] = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or rec.get("game") != game or rec.get("variant") != variant:
            raise _Refusal(f"record {i} is not a {game} {variant} record")
        rr = (replays[i] if i < len(replays) else None) or replay_one(rec)
        if rr.error:
            raise _Refusal(f"record {i} does not replay{rr.error}")
        sc = rr.score
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
