"""Exports of an event: one JSON object, CSV standings and results, a ZIP of records.

The JSON object is what ``tablesense tournament export --json`` prints:
``entrants`` (id, name), ``rounds`` (number, matches with table, entrants,
score, winner, records), ``standings`` (rank order: rank, entrant,
games_won, points_for, points_against, tiebreaks) and ``audit`` (the whole
append-only log, hash chain included), plus the event's settings.

Everything here is public: badge ids (which check a player in) never appear,
numbers are standard JSON (no NaN or Infinity: :func:`dumps` refuses them),
and CSV cells that a spreadsheet would run as a formula are quoted.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from .db import Result
from .present import entrant_numbers
from .service import Director


def _num(x: float | None) -> int | float | None:
    if x is None:
        return None
    return int(x) if float(x).is_integer() else float(x)


def dumps(data: Any, indent: int | None = 1) -> str:
    """Strict JSON (``allow_nan=False``): what every export writes."""
    return json.dumps(data, indent=indent, allow_nan=False)


def _public_audit(entry: dict[str, Any]) -> dict[str, Any]:
    """An audit entry as exported: badge ids (written by older versions) replaced by their count."""
    detail = entry.get("detail")
    if isinstance(detail, dict) and "badges" in detail:
        badges = detail["badges"]
        entry = {**entry, "detail": {**detail, "badges": f"({len(badges) if isinstance(badges, list) else 1} private)"}}
    return entry


def export_event(director: Director, *, audit: bool | int = True) -> dict[str, Any]:
    """The event as one JSON object. ``audit`` True exports the whole log (and
    re-hashes it all); a number exports only that many newest entries and
    checks the chain incrementally (what a page needs); False leaves it out."""
    with director.db.session() as s:
        ev = director.event(s)
        event = {"id": ev.id, "name": ev.name, "game": ev.game, "variant": ev.variant, "format": ev.format,
                 "status": ev.status, "options": ev.options}
        results = {r.id: r.payload for r in s.scalars(select(Result).where(Result.event_id == director.event_id))}
    entrants = director.entrants()
    names = {e.id: e.name for e in entrants}
    numbers = entrant_numbers(names)  # the number people read and type (#3), beside the database id
    rounds: dict[int, dict[str, Any]] = {}
    for m in director.matches():
        rnd = rounds.setdefault(m.round_no, {"number": m.round_no, "matches": []})
        payload = results.get(m.result_id) if m.result_id is not None else None
        rnd["matches"].append({
            "id": m.id,
            "number": m.number,
            "table": m.table_no,
            "kind": m.kind,
            "group": m.group_no,
            "best_of": m.best_of,
            "entrants": list(m.entrants) if m.entrants else [m.entrant_a, m.entrant_b],
            "score": [_num(x) for x in m.scores] if m.scores else (
                [_num(m.score_a), _num(m.score_b)] if m.score_a is not None else None),
            "games": m.games,
            "winner": m.winner_id,
            "status": m.status,
            "confirmed": m.confirmed,
            "revision": payload.get("revision") if payload else None,
            "records": [_strip(r) for r in payload.get("records", [])] if payload else [],
        })
    standings = [
        {
            "rank": st.rank, "entrant": st.entrant, "name": names.get(st.entrant, "?"), "played": st.played,
            "games_won": _num(st.games_won), "wins": st.wins, "draws": st.draws, "losses": st.losses,
            "points_for": _num(st.points_for), "points_against": _num(st.points_against),
            "tiebreaks": {k: _num(v) for k, v in st.tiebreaks.items()},
        }
        for st in director.standings()
    ]
    return {
        "format": "tablesense.event/1",
        "event": event,
        "entrants": [{"id": e.id, "number": numbers[e.id], "name": e.name, "members": e.members, "seed": e.seed,
                      "status": e.status} for e in entrants],
        "rounds": [rounds[k] for k in sorted(rounds)],
        "standings": standings,
        "audit": [_public_audit(a) for a in director.audit_log()] if audit is True
        else [_public_audit(a) for a in director.audit_log(last=int(audit))] if audit else [],
        "audit_chain_ok": director.verify_audit_chain(full=audit is True),
    }


def _cell(value: Any) -> Any:
    """A CSV cell: text starting with ``= + - @`` (or a tab or CR) gets a leading
    apostrophe, so a spreadsheet shows it instead of running it as a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _strip(record: dict[str, Any]) -> dict[str, Any]:
    """The record as archived: our own ``x-`` bookkeeping keys removed."""
    return {k: v for k, v in record.items() if not k.startswith("x-")}


def standings_csv(director: Director, tr: Callable[[str], str] = lambda s: s) -> str:
    """The standings as people read them: unique human headers (in ``tr``'s language), lots as a place (``present``)."""
    from .present import standings_csv_text

    return standings_csv_text(export_event(director, audit=False), _cell, tr)


def results_csv(director: Director) -> str:
    data = export_event(director, audit=False)
    names = {e["id"]: e["name"] for e in data["entrants"]}
    numbers = {e["id"]: e.get("number") for e in data["entrants"]}

    def no(e: Any) -> int | str:  # the entrant's number in the event (3 for #3), never its database id
        return numbers.get(e) or "" if e is not None else ""

    out = io.StringIO()
    w = csv.writer(out)
    # Tables of three or four entrants (kway.py) add entrant/name/score columns c and d at the end.
    k = max([len(m["entrants"]) for rnd in data["rounds"] for m in rnd["matches"]] + [2])
    more = [f"{col}_{side}" for side in "cd"[: k - 2] for col in ("entrant", "name", "score")]
    w.writerow(["round", "match", "table", "kind", "entrant_a", "name_a", "entrant_b", "name_b", "score_a", "score_b", "winner", "confirmed", *more])
    for rnd in data["rounds"]:
        for m in rnd["matches"]:
            a, b, *others = m["entrants"]
            sc = m["score"] or [None] * len(m["entrants"])
            sc = sc + [None] * (2 - len(sc))
            extra: list[Any] = []
            for i in range(k - 2):
                e = others[i] if i < len(others) else None
                extra += [no(e), _cell(names.get(e, "")) if e else "", sc[2 + i] if 2 + i < len(sc) else None]
            w.writerow([rnd["number"], m["number"], m["table"], m["kind"], no(a), _cell(names.get(a, "")), no(b),
                        _cell(names.get(b, "")) if b else "", sc[0], sc[1], no(m["winner"]), m["confirmed"], *extra])
    return out.getvalue()


def records_archive(director: Director) -> bytes:
    """A ZIP of every game record (one file per game), the event JSON and the audit log."""
    data = export_event(director)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("event.json", dumps(data))
        z.writestr("audit.json", dumps(data["audit"]))
        for rnd in data["rounds"]:
            for m in rnd["matches"]:
                for gi, rec in enumerate(m["records"], start=1):
                    z.writestr(f"records/round-{rnd['number']:02d}/match-{m['number']:03d}-game-{gi}.json", dumps(rec))
    return buf.getvalue()
