"""Remote matches at a tournament: two tables, usually at two venues, play one
match together (docs/remote.md, "At a tournament").

The director pairs the round as usual; the match's own table *hosts* it. With
``tablesense tournament pair-remote TABLE --with-table N`` the director makes
that table's match remote: table N (free this round) *joins* it. The director draws
the match's short code here, keeps the pairing in the event's options
(``remote_pairs``, by match id) and :func:`add_to_assignments` writes it into
both tables' assignments: the host's match gains ``remote: {role: host, code,
table: N}``, and table N's assignment carries the same match with ``role:
join``. ``play --remote auto --director ...`` at each table reads its role and
the code from there; the host table reports the result as any table does.

The code's alphabet lives here (the remote room's wire imports it): the
director draws codes without depending on the remote room.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from tablesense.sentence import say

from .audit import DirectorError, _append_audit
from .db import Event, Match, Table

#: Six letters and digits without look-alikes (no I, L, O, 0, 1): 31^6 codes.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
#: The one variant a remote match plays so far (the remote room's first slice).
REMOTE_VARIANTS = ("pairs-pips",)
OPTION = "remote_pairs"


def new_code() -> str:
    """A fresh short code (31^6, about 8.9 x 10^8 codes) from the system's random source."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


@dataclass(frozen=True)
class RemotePair:
    match: int
    round: int
    host: int
    join: int
    code: str


def remote_pairs(options: dict[str, Any]) -> list[RemotePair]:
    """The event's remote pairings (every round)."""
    return [RemotePair(int(k), int(v["round"]), int(v["host"]), int(v["join"]), str(v["code"]))
            for k, v in sorted((options.get(OPTION) or {}).items(), key=lambda kv: int(kv[0]))]


def pair_remote(director: Any, match_id: int, join_table: int, actor: str = "director") -> RemotePair:
    """Make ``match_id`` (of the current round, at its table) a remote match that
    ``join_table`` joins; DirectorError with the reason when it cannot be."""
    with director.db.session() as s:
        ev = s.get(Event, director.event_id, with_for_update=True)  # one pairing at a time
        assert ev is not None
        m = s.get(Match, match_id)
        rnd = director.current_round_no(s)
        if m is None or m.event_id != director.event_id:
            raise DirectorError(say("no match {match} in this event", match=match_id))
        if m.round_no != rnd:
            raise DirectorError(say("match {match} is of round {round}; only the current round's ({current}) "
                                      "can be made remote", match=match_id, round=m.round_no, current=rnd))
        if ev.variant not in REMOTE_VARIANTS:
            raise DirectorError(say("a remote match plays {variants}; this event plays {variant}",
                                      variants=", ".join(REMOTE_VARIANTS), variant=ev.variant))
        if m.entrant_b is None or m.table_no is None:
            raise DirectorError(say("match {match} is a bye: nobody plays it", match=match_id))
        if m.status != "pending" or m.confirmed:
            raise DirectorError(say("match {match} already has a result", match=match_id))
        if join_table == m.table_no:
            raise DirectorError(say("match {match} is at table {table} already; name the other venue's table",
                                      match=match_id, table=join_table))
        tables = set(s.scalars(select(Table.number).where(Table.event_id == director.event_id)))
        if join_table not in tables:
            raise DirectorError(say("table {table} is not registered in this event (tournament add-table)",
                                      table=join_table))
        busy = s.scalar(select(Match.id).where(Match.event_id == director.event_id, Match.round_no == rnd,
                                                Match.table_no == join_table))
        if busy is not None:
            raise DirectorError(say("table {table} plays match {other} this round", table=join_table, other=busy))
        pairs = dict(ev.options.get(OPTION) or {})
        for k, v in pairs.items():
            if int(v["round"]) != rnd:
                continue
            if int(k) == match_id:
                raise DirectorError(say("match {match} is remote already: table {table} joins it (code {code})",
                                          match=match_id, table=v["join"], code=v["code"]))
            if join_table in (int(v["host"]), int(v["join"])):
                raise DirectorError(say("table {table} plays remote match {other} this round",
                                          table=join_table, other=k))
        pair = RemotePair(match_id, rnd, m.table_no, join_table, new_code())
        pairs[str(match_id)] = {"round": rnd, "host": pair.host, "join": pair.join, "code": pair.code}
        ev.options = {**ev.options, OPTION: pairs}  # a new dict: the JSON column sees the change
        _append_audit(s, director.event_id, actor, "remote-paired", match_id, "",
                      {"host": pair.host, "join": pair.join})
        return pair


def add_to_assignments(out: dict[int, dict[str, Any]], options: dict[str, Any], round_no: int,
                       keys: dict[int, str] | None = None) -> dict[int, dict[str, Any]]:
    """The round's assignments (``Rounds.assignments``) with its remote matches:
    the host's match names its role, the code and the joining table; the
    joining table's assignment carries the same match as ``join`` and the
    host table's registered public key (``keys``: table number -> key): the
    director drew the code, so only that key's endorsement in the host's
    lobby tells the host table from another that learned the code
    (docs/remote.md, "Who opened the code")."""
    for p in remote_pairs(options):
        if p.round != round_no or p.host not in out:
            continue
        for m in out[p.host]["matches"]:
            if m["match"] != p.match:
                continue
            m["remote"] = {"role": "host", "code": p.code, "table": p.join}
            joined = copy.deepcopy(m)
            joined["remote"] = {"role": "join", "code": p.code, "table": p.host}
            if keys is not None and p.host in keys:
                joined["remote"]["key"] = keys[p.host]
            out.setdefault(p.join, {"event": out[p.host]["event"], "round": round_no, "table": p.join,
                                    "matches": []})["matches"].append(joined)
    return out
