"""The director's console: the round in progress, the actions in place, and the end.

Everything a director decides between rounds lives here, on top of
:class:`~tablesense.tournament.service.Director`:

- :func:`confirm_match` / :func:`confirm_reported` — the ``director``
  confirmation mode (and the way out of a dispute in ``buttons`` mode): a
  reported result becomes final, with an audit entry naming who confirmed;
- :func:`pair_status` — whether "pair next round" can be done now, and in
  words why not (results still open at tables 3 and 5; the Swiss has had its
  five rounds);
- :func:`final_result` — after the last round is confirmed: the final
  standings and the winner;
- :func:`console_state` — one JSON-able snapshot of the round in progress
  for the live console page (pushed over SSE whenever it changes);
- :func:`pair_remote_at` — the console's "make remote": the match at a
  table of the round in progress becomes a remote match another table joins
  (``tournament pair-remote``'s action, docs/remote.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from tablesense.games.common import Sentence, message_of, say

from . import kway
from . import pairing as pr
from .db import AuditEntry, Entrant, Match, Round
from .live import LiveBoard
from .present import entrant_numbers, numbered
from .service import Director, DirectorError, _append_audit
from .words import STATUS

OPEN_STATUSES = ("reported", "disputed")


@dataclass(frozen=True)
class PairStatus:
    """Can the next round be paired now? ``reason`` says why not; ``over`` when the event is done."""

    can: bool
    reason: str
    next_round: int
    over: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"can": self.can, "reason": self.reason, "next_round": self.next_round, "over": self.over}


# ---------------------------------------------------------------- confirming


def confirm_match(director: Director, match_id: int, actor: str = "director") -> Match:
    """Make a reported (or disputed) result final. Refuses a match without a result."""
    with director._lock, director.db.session() as s:
        m = s.get(Match, match_id)
        if m is None or m.event_id != director.event_id:
            raise DirectorError(say("that match is not in this event (the page is out of date: reload it)"))
        where = say("table {table} in round {round}", table=m.table_no, round=m.round_no) if m.table_no \
            else say("the bye in round {round}", round=m.round_no)
        if m.confirmed:
            raise DirectorError(say("{where} is already confirmed", where=where))
        if m.status not in OPEN_STATUSES:
            status = say(STATUS.get(m.status, m.status))
            raise DirectorError(say("{where} has no result to confirm yet (it is {status})", where=where, status=status))
        was = m.status
        m.confirmed = True
        m.status = "confirmed"
        _append_audit(s, director.event_id, actor, "result-confirmed", m.id, "", {
            "by": "director", "was": was, "score": [m.score_a, m.score_b], "winner": m.winner_id,
        })
        s.flush()
        s.expunge(m)
        return m


def confirm_reported(director: Director, actor: str = "director", round_no: int | None = None) -> list[Match]:
    """Confirm every reported result of the round (default: the current one).

    Disputed results are left alone: a side refused the score at the table,
    so the director looks at each of them on its own (confirm or correct).
    """
    rnd = round_no or director.current_round_no()
    ids = [m.id for m in director.matches(rnd) if m.status == "reported" and not m.confirmed]
    return [confirm_match(director, i, actor) for i in ids]


# ---------------------------------------------------------------- pairing


def pair_status(director: Director) -> PairStatus:
    """Whether ``pair_next_round`` would succeed now, without pairing anything."""
    cur = director.current_round_no()
    nxt = cur + 1
    if cur:
        states = open_tables(director, cur)
        counts = {status: count for status, (count, _tables) in states.items()}
        if any(counts.values()):
            words = {"pending": say("{n} still playing", n=counts["pending"]),
                     "reported": say("{n} reported but not confirmed", n=counts["reported"]),
                     "disputed": say("{n} disputed", n=counts["disputed"])}
            parts: list[Sentence] = []
            for status, part in words.items():
                count, tables = states[status]
                if not count:
                    continue
                if tables:
                    listed = ", ".join(map(str, tables))
                    where = say("table {list}", list=listed) if len(tables) == 1 else say("tables {list}", list=listed)
                    part = Sentence("{state} ({where})", {"state": part, "where": where})
                parts.append(part)
            # the parts joined by "; ", each translated on its own (a template of fields only)
            state = Sentence("; ".join(f"{{p{i}}}" for i in range(len(parts))), {f"p{i}": p for i, p in enumerate(parts)})
            return PairStatus(False, say("round {n} is not finished: {state}", n=cur, state=state), nxt)
    over = _over_reason(director, cur)
    if over:
        return PairStatus(False, over, nxt, over=True)
    try:
        if director.entrants_per_table() > 2:
            kway.plan_round(director, nxt)
        else:
            director.plan_round(nxt)
    except (DirectorError, pr.PairingError) as exc:  # a Swiss that cannot avoid a rematch says so, not a 500
        return PairStatus(False, message_of(exc), nxt)
    return PairStatus(True, say("round {n} can be paired", n=nxt), nxt)


def open_tables(director: Director, round_no: int) -> dict[str, tuple[int, list[int]]]:
    """The round's unconfirmed matches by state: ``pending`` (still playing),
    ``reported`` (a result waits for confirmation), ``disputed``; each as
    (how many matches, the tables they are at). A table is listed under the
    state of its own match, never under another's."""
    out: dict[str, tuple[int, list[int]]] = {}
    for status in ("pending", "reported", "disputed"):
        ms = [m for m in director.matches(round_no) if not m.confirmed and m.status == status]
        out[status] = (len(ms), sorted({m.table_no for m in ms if m.table_no is not None}))
    return out


def _over_reason(director: Director, cur: int) -> str:
    """Why the event is over (all its rounds played and confirmed), or ''."""
    if cur == 0:
        return ""
    with director.db.session() as s:
        ev = director.event(s)
        fmt, opts = ev.format, dict(ev.options)
        ids = [e.id for e in s.scalars(select(Entrant).where(Entrant.event_id == director.event_id))
               if e.status != "withdrawn"]
        stages = {r.number: r.stage for r in s.scalars(select(Round).where(Round.event_id == director.event_id))}
    if fmt == "swiss" and cur >= int(opts["rounds"]):
        return say("the event is over: all {n} Swiss rounds are played", n=opts["rounds"])
    if fmt == "round-robin" and cur >= len(pr.berger_rounds(ids)):
        return say("the event is over: every round of the round robin is played")
    if fmt in ("knockout", "groups") and stages.get(cur) == "knockout":
        last = [m for m in director.matches(cur) if m.kind == "match" or m.kind == "pairing-bye"]
        if len(last) == 1 and last[0].winner_id is not None:
            return say("the event is over: the knockout final is decided")
    return ""


# ---------------------------------------------------------------- the end


def final_result(director: Director) -> dict[str, Any] | None:
    """The final standings and winner once the last round is confirmed, else None."""
    cur = director.current_round_no()
    if not cur or not director.round_complete(cur) or not _over_reason(director, cur):
        return None
    names = {e.id: e.name for e in director.entrants()}
    with director.db.session() as s:
        fmt = director.event(s).format
    if fmt in ("knockout", "groups"):
        final = [m for m in director.matches(cur) if m.winner_id is not None]
        winners = [final[0].winner_id] if final else []
    else:
        table = director.standings()
        winners = [st.entrant for st in table if st.rank == 1]
    return {
        "round": cur,
        "winners": [{"entrant": w, "name": names.get(w, "?")} for w in winners if w is not None],
        "shared": len(winners) > 1,
    }


# ---------------------------------------------------------------- live state


def console_state(director: Director, now: float | None = None, live: LiveBoard | None = None) -> dict[str, Any]:
    """The round in progress as the console shows it: tables, matches, what can be done.

    With ``live`` (the tables' relayed progress) a table in play shows its hand and score."""
    cur, rows, matches, names = table_rows(director, now, live)
    ps = pair_status(director)
    remote = remote_roles(director, cur)
    for row in rows:
        row["remote"] = remote.get(row["table"])
    return {
        "round": cur,
        "tables": rows,
        "matches": [_match_json(m, names) for m in matches],
        "pair": ps.to_json(),
        "final": final_result(director),
        "counts": {s: sum(1 for m in matches if _status(m) == s) for s in ("pending", "reported", "disputed", "confirmed")},
        **round_facts(director, cur, matches, names),
    }


def remote_roles(director: Director, round_no: int) -> dict[int, dict[str, Any]]:
    """Each table's part in a remote match of the round: ``{role, code, table}``
    (``host`` or ``join``, the match's code, the other table), as the tables'
    assignments say it (tournament/remote_pairs.py)."""
    from .remote_pairs import remote_pairs

    out: dict[int, dict[str, Any]] = {}
    for p in remote_pairs(director.options()):
        if p.round == round_no:
            out[p.host] = {"role": "host", "code": p.code, "table": p.join, "match": p.match}
            out[p.join] = {"role": "join", "code": p.code, "table": p.host, "match": p.match}
    return out


def pair_remote_at(director: Director, host_table: int, join_table: int, actor: str = "director") -> Any:
    """The console's "make remote": the unplayed match at ``host_table`` in the
    round in progress becomes remote, ``join_table`` joining it (a
    :class:`~tablesense.tournament.remote_pairs.RemotePair`; DirectorError
    with the reason when it cannot be)."""
    from .remote_pairs import pair_remote

    cur = director.current_round_no()
    if not cur:
        raise DirectorError(say("no round has been paired yet"))
    m = next((x for x in director.matches(cur) if x.table_no == host_table), None)
    if m is None:
        raise DirectorError(say("table {table} has no match in round {round}", table=host_table, round=cur))
    return pair_remote(director, m.id, join_table, actor)


def round_facts(director: Director, cur: int, matches: list[Match], names: dict[int, str]) -> dict[str, Any]:
    """What the director reads beside the tables: who sits the round out (the
    byes have no table card), how many have checked in, when the round began
    (the console's clock counts from it)."""
    entrants = [e for e in director.entrants() if e.status != "withdrawn"]
    started = None
    if cur and not all(m.confirmed for m in matches):  # a round whose results are all in stops its clock
        with director.db.session() as s:
            for a in s.scalars(select(AuditEntry).where(AuditEntry.event_id == director.event_id,
                                                        AuditEntry.action == "round-paired")
                               .order_by(AuditEntry.id.desc()).limit(5)):
                if (a.detail or {}).get("round") == cur:
                    started = a.ts
                    break
    return {
        "byes": [{"name": names.get(kway.match_entrants(m)[0], "?"), "kind": m.kind}
                 for m in matches if m.kind != "match"],
        "checked_in": {"n": sum(1 for e in entrants if e.status == "checked_in"), "of": len(entrants)},
        "round_started": started,
    }


def table_rows(
    director: Director, now: float | None = None, live: LiveBoard | None = None
) -> tuple[int, list[dict[str, Any]], list[Match], dict[int, str]]:
    """Each table of the round in progress: its state, its match, its live progress, when last heard."""
    now = time.time() if now is None else now
    cur = director.current_round_no()
    names = entrant_labels(director)
    quiet = set(director.quiet_tables(now))
    tables = {t.number: t for t in director.tables()}
    matches = director.matches(cur) if cur else []
    by_table: dict[int, list[Match]] = {}
    for m in matches:
        if m.table_no is not None:
            by_table.setdefault(m.table_no, []).append(m)
    rows = []
    for number in sorted(set(tables) | set(by_table)):
        t = tables.get(number)
        seen = max(director.last_seen(number), t.last_seen if t else 0.0)
        ms = by_table.get(number, [])
        open_m = next((m for m in ms if not m.confirmed), None)
        shown = open_m or (ms[-1] if ms else None)
        state = _table_state(t.online if t else False, number in quiet, shown)
        progress = live.get(number) if live is not None else None
        if progress is not None and (shown is None or progress.get("match") != shown.id):
            progress = None  # an older match's progress
        if progress is not None:
            seen = max(seen, float(progress.get("received", 0.0)))
        elif live is not None and state == "playing":
            state = "waiting"  # relayed tables say when they play; this one has not started its match yet
        shown_live = table_progress(progress, now)
        if state == "playing" and shown_live is not None:
            state = _playing_state(shown_live)
        rows.append({
            "live": shown_live,
            "table": number,
            "online": bool(t and t.online),
            "quiet": number in quiet,
            "state": state,
            "last_heard_s": round(now - seen, 1) if seen else None,
            "match": _match_json(shown, names) if shown else None,
        })
    return cur, rows, matches, names


STALLED_AFTER_S = 180.0
"""A table in play with no move for this long is shown as stalled (go and look)."""


def table_progress(progress: dict[str, Any] | None, now: float) -> dict[str, Any] | None:
    """What the console shows of a table's relayed progress (tournament.live): hand, score,
    counts, the seat to play (its number and name), moves in the hand, seconds since the
    last move, and a problem the players are asked to fix (a correction, a pause)."""
    if progress is None:
        return None
    received = float(progress.get("received") or now)
    since = None
    if progress.get("moved"):
        # the table's own clock for the age at sending (no skew), the director's since
        since = max(0.0, float(progress.get("ts") or received) - float(progress["moved"])) + max(0.0, now - received)
    return {
        "hand": progress.get("hand"), "scores": progress.get("scores"), "counts": progress.get("counts"),
        "ts": progress.get("ts"), "turn": progress.get("turn"), "player": progress.get("player"),
        "moves": progress.get("moves"), "since_move_s": None if since is None else round(since, 1),
        "problem": progress.get("problem"), "finished": progress.get("state") == "finished",
    }


def _playing_state(shown: dict[str, Any]) -> str:
    """A table in play as the director needs it at a glance: playing, a correction
    pending, paused (a board offline), or stalled (no move for a while)."""
    if shown.get("problem") in ("correction", "paused"):
        return str(shown["problem"])
    since = shown.get("since_move_s")
    if since is not None and since >= STALLED_AFTER_S and not shown.get("finished"):
        return "stalled"
    return "playing"


def entrant_labels(director: Director) -> dict[int, str]:
    """Entrant id -> ``#3 Ana & Bia``: how the console and the pages name an entrant."""
    entrants = director.entrants()
    numbers = entrant_numbers(e.id for e in entrants)
    return {e.id: numbered(numbers[e.id], e.name) for e in entrants}


def entrant_label(director: Director, entrant_id: int) -> str:
    """``#3 Ana & Bia``: one entrant as the console and the commands name it."""
    return entrant_labels(director).get(entrant_id, "#?")


def _status(m: Match) -> str:
    return "confirmed" if m.confirmed else m.status


def _table_state(online: bool, quiet: bool, m: Match | None) -> str:
    if m is None:
        return "free"
    st = _status(m)
    if st == "pending":
        if quiet or not online:
            return "offline"
        return "playing"
    return st


def _match_json(m: Match, names: dict[int, str]) -> dict[str, Any]:
    ids = kway.match_entrants(m)
    scores = kway.match_scores(m)
    return {
        "id": m.id,
        "number": m.number,
        "table": m.table_no,
        "kind": m.kind,
        "entrants": ids,
        "names": [names.get(e, "?") for e in ids] + (["bye"] if len(ids) == 1 else []),
        "score": None if scores is None or m.kind != "match" else [_num(x) for x in scores],
        "winner": m.winner_id,
        "status": _status(m),
        "hands": len(m.games or []),
    }


def _num(x: float | None) -> int | float | None:
    if x is None:
        return None
    return int(x) if float(x).is_integer() else float(x)


# ---------------------------------------------------------------- what servers say


def page_urls(host: str, port: int) -> list[str]:
    """The addresses people can open: every address of this machine when bound to all."""
    import socket

    hosts = [host]
    if host in ("0.0.0.0", "::", ""):
        hosts = ["127.0.0.1"]
        try:
            for fam, _t, _p, _c, addr in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
                if fam == socket.AF_INET and addr[0] not in hosts:
                    hosts.append(str(addr[0]))
        except OSError:
            pass
    return [f"http://{h}:{port}" for h in hosts]


def serve_banner(director: Director, host: str, port: int, broker: str | None) -> list[str]:
    """What ``director serve`` prints when it starts: the event, its pages, the broker."""
    with director.db.session() as s:
        ev = director.event(s)
        name, game, variant, fmt = ev.name, ev.game, ev.variant, ev.format
        mode = ev.options.get("confirm", "badges")
    urls = page_urls(host, port)
    ps = pair_status(director)
    # Sentences: the command prints them in its language (English as they stand)
    lines: list[str] = [
        say("director: event {id} {name} ({game} {variant}, {format}; results confirmed by {mode})",
            id=director.event_id, name=repr(name), game=game, variant=variant, format=fmt, mode=mode),
        ps.reason if director.current_round_no() else say("no round paired yet: {status}", status=ps.reason),
        say("pages:"),
    ]
    base = urls[0]
    for path, what in (("/standings", say("standings")), ("/pairings", say("pairings")),
                       ("/crosstable", say("crosstable")), ("/show", say("projector (cycles pairings and standings)")),
                       ("/live", say("live tables for spectators")), ("/director", say("director's console (login)"))):
        lines.append(say("  {url}  {what}", url=f"{base}{path}", what=what))
    for other in urls[1:]:
        lines.append(say("  also at {url}", url=other))
    lines.append(say("broker: {broker} as director", broker=_safe_broker(broker)) if broker
                 else say("broker: none (--no-broker): pages only"))
    return lines


def _safe_broker(url: str) -> str:
    """The broker URL without its password."""
    from urllib.parse import urlparse

    u = urlparse(url if "://" in url else "mqtt://" + url)
    user = f"{u.username}@" if u.username else ""
    return f"{u.scheme}://{user}{u.hostname}:{u.port or 1883}"


def ack_line(table: int, key: str, status: str, reason: str = "") -> str:
    """One line per message a table sent and what the director answered, in words:
    ``table 3: result of round 2 accepted`` (the message's key carries the match's
    database id, which no director reads)."""
    words = {"accepted": say("accepted"), "duplicate": say("duplicate"), "refused": say("refused")}
    said = words.get(status, status)
    parts = key.split("/")
    what: Sentence | None = None
    if len(parts) == 5 and parts[2].isdigit() and parts[4].isdigit():
        rnd, last = int(parts[2]), int(parts[4])
        if parts[0] == "result":
            what = say("result of round {round}", round=rnd) if last <= 1 else \
                say("result of round {round} (revision {n})", round=rnd, n=last)
        elif parts[0] == "confirm":
            what = say("confirmation of round {round}", round=rnd)
        elif parts[0] == "checkin":
            what = say("check-in for round {round}", round=rnd)
    if what is None:  # not a key of ours (a refused message): shown as it came
        kind = key.split("/", 1)[0] if "/" in key else "message"
        what = say("{kind} {key}", kind=kind, key=key)
    if reason:
        return say("table {table}: {what} {status}: {reason}", table=table, what=what, status=said, reason=reason)
    return say("table {table}: {what} {status}", table=table, what=what, status=said)
