"""The club pages on top of the director's app: projector, audit, live console.

``web.create_app`` builds the app (logins, sessions, forms, exports) and
calls :func:`add_club_pages`, which adds:

- ``/show`` — the projector: big type, cycles the current round's pairings
  and the standings, refreshes its data from ``/api/club`` (no reloads);
- ``/api/club`` — what the public pages show, in people's terms;
- ``/audit`` — the audit log, its own page, paged (newest first; login);
- ``/director/live`` — Server-Sent Events: the console's state
  (:func:`console.console_state`) pushed whenever it changes (login);
- ``/director/confirm`` and ``/director/confirm-all`` — the ``director``
  confirmation mode's actions, in place on the console; ``/director/announce``
  publishes the round's assignments again (a table that was switched off);
- ``/display-static/…`` — the table display's own stylesheet, served from
  the display's folder so the pages share one visual language (nothing
  copied), and ``/club-static/…`` — the pages' additions.

Template helpers (``fmt``, ``label``, ``standings_rows``, ``club``…) are
installed on the app's Jinja environment here as well.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Form, Request, WebSocket
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from tablesense.games.common import say
from tablesense.i18n import Translator

from . import console as cons
from .fanout import Gate, LiveFeed
from .live import LiveBoard
from .present import TIEBREAK_HELP, fmt_num, label, numbered, standings_rows
from .service import Director, DirectorError
from .words import Message

HERE = Path(__file__).resolve().parent
CLUB_STATIC = HERE / "static"
#: The table display's stylesheet lives with the display (the ``web`` room); it
#: is served from there by path, not imported, so the rooms stay apart.
DISPLAY_STATIC = HERE.parent / "web" / "static"
AUDIT_PAGE = 50


def add_club_pages(
    app: FastAPI,
    director: Director,
    templates: Jinja2Templates,
    *,
    need_login: Callable[[Request], None],
    act: Callable[[Request, str, Callable[[], Message]], RedirectResponse],
    on_change: Callable[[], None] | None = None,
    live_interval_s: float = 0.5,
    live: LiveBoard | None = None,
    tr_of: Callable[[Request], Translator] = lambda _request: Translator("en"),
    gate: Gate | None = None,
) -> None:
    """Add the club pages and the live console to the director's ``app``.

    ``live``: the tables' relayed progress (``live.LiveBoard``), shown on the
    console and on ``/live`` for spectators, through one :class:`LiveFeed`
    (``gate``: its connection caps). ``tr_of``: the page's language of a
    request (what the console's live feed says in words: why a round cannot be paired)."""
    if DISPLAY_STATIC.is_dir():
        app.mount("/display-static", StaticFiles(directory=str(DISPLAY_STATIC)), name="display-static")
        # the display's own page (spectators' /live/table/N) asks for its files under /static
        app.mount("/static", StaticFiles(directory=str(DISPLAY_STATIC)), name="display-page-static")
    app.mount("/club-static", StaticFiles(directory=str(CLUB_STATIC)), name="club-static")
    env = templates.env
    env.globals.update(
        fmt=fmt_num, label=label, tiebreak_help=TIEBREAK_HELP, standings_rows=standings_rows,
        club=lambda: director.memo("club_view", lambda: club_view(director)), console=lambda: cons.console_state(director, live=live),
    )

    @app.get("/api/live")
    async def api_live() -> JSONResponse:
        return JSONResponse(await run_in_threadpool(live_view, director, live))

    feed = LiveFeed(live, lambda: live_view(director, live), gate=gate)
    app.state.live_feed = feed

    @app.get("/live/events")
    async def live_events(request: Request) -> Response:
        """Server-Sent Events: every table's progress, the same frame for every spectator (fanout.py)."""
        address = request.client.host if request.client else "?"
        if not feed.gate.has_room(address):
            return Response("too many live connections; try again shortly\n", status_code=503,
                            headers={"Retry-After": "10", "Cache-Control": "no-store"}, media_type="text/plain")
        return StreamingResponse(feed.stream(address), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    @app.get("/live/table/{number}", response_class=HTMLResponse)
    def live_table(request: Request, number: int) -> Response:
        """One table as its own display shows it: the display's page and renderer, fed from the relay."""
        with director.db.session() as s:
            name = director.event(s).name
        tr = tr_of(request)
        return HTMLResponse(display_page(number, tr("Table {n}", n=number) + f" · {name}", tr.lang))

    @app.websocket("/live/table/{number}/ws")
    async def live_table_ws(socket: WebSocket, number: int) -> None:
        """The display page's live socket: the table's latest ``view``, sent again whenever it changes;
        closed at once for a table not in the event, and when the client leaves (fanout.py)."""
        known = await run_in_threadpool(lambda: number in {t.number for t in director.tables()})
        await feed.table_socket(socket, number, known)

    @app.get("/live", response_class=HTMLResponse)
    def live_page(request: Request) -> Response:
        return templates.TemplateResponse(request, "live.html", {"request": request, "tables": live_view(director, live)})

    @app.get("/api/club")
    async def api_club(request: Request) -> JSONResponse:
        """What the public pages show; column names in the page's language (``?lang=``, the event's)."""
        return JSONResponse(await run_in_threadpool(club_view, director, tr_of(request)))

    @app.get("/show", response_class=HTMLResponse)
    def show(request: Request) -> Response:
        return templates.TemplateResponse(request, "show.html", {"request": request, "view": club_view(director, tr_of(request))})

    @app.get("/audit", response_class=HTMLResponse)
    def audit(request: Request, page: int = 1) -> Response:
        need_login(request)
        total = director.audit_count()  # a page reads only its 50 entries, never the whole log
        pages = max(1, -(-total // AUDIT_PAGE))
        page = min(max(page, 1), pages)
        shown = list(reversed(director.audit_log(last=AUDIT_PAGE, skip=(page - 1) * AUDIT_PAGE)))
        labels = cons.entrant_labels(director)
        where = {m.id: (m.round_no, m.table_no) for m in director.matches()}
        tr = tr_of(request)
        for i, a in enumerate(shown):
            a["about"] = audit_about(a, labels, where, tr)
            a["n"] = total - (page - 1) * AUDIT_PAGE - i  # the entry's place in this event's log, not its database id
        return templates.TemplateResponse(request, "audit.html", {
            "request": request, "view": club_view(director), "entries": shown, "page": page, "pages": pages,
            "total": total, "chain_ok": director.verify_audit_chain(), "logged_in": True,
        })

    @app.get("/director/live")
    async def live_console(request: Request) -> Response:
        need_login(request)
        tr = tr_of(request)

        async def stream() -> AsyncIterator[str]:
            last = ""
            beat = time.monotonic()
            yield "retry: 2000\n\n"
            while not await request.is_disconnected():
                state = await run_in_threadpool(lambda: cons.console_state(director, live=live))
                state.pop("now", None)
                state["pair"]["reason"] = tr(state["pair"]["reason"])  # words for the director, in the page's language
                body = json.dumps(_stable(state), sort_keys=True)
                if body != last:
                    last = body
                    yield f"event: console\ndata: {body}\n\n"
                    beat = time.monotonic()
                elif time.monotonic() - beat > 15:
                    yield ": still here\n\n"
                    beat = time.monotonic()
                await asyncio.sleep(live_interval_s)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    @app.post("/director/confirm")
    def confirm(request: Request, match: int = Form(...), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            m = cons.confirm_match(director, match, "director-web")
            if on_change is not None:
                on_change()
            return say("round {round}, table {table} confirmed", round=m.round_no, table=m.table_no or "-")
        return act(request, csrf, run)

    @app.post("/director/announce")
    def announce(request: Request, csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            if on_change is None:
                raise DirectorError(say("no broker: this server was started with --no-broker"))
            on_change()
            director.audit("director-web", "round-announced", round=director.current_round_no())
            return say("round {n} announced again to every table", n=director.current_round_no())
        return act(request, csrf, run)

    @app.post("/director/confirm-all")
    def confirm_all(request: Request, csrf: str = Form("")) -> RedirectResponse:
        def run() -> Message:
            done = cons.confirm_reported(director, "director-web")
            if on_change is not None and done:
                on_change()
            if not done:
                return say("no reported result to confirm")
            n = len(done)
            return lambda tr: tr.plural("{n} result confirmed", "{n} results confirmed", n)
        return act(request, csrf, run)


def audit_about(entry: dict[str, Any], labels: dict[int, str], where: dict[int, tuple[int, int | None]],
                tr: Callable[..., str]) -> str:
    """What an audit entry is about, in words: who (``#3 Ana & Bia``, by number
    and name, never an id), which table and round, the score before and after."""
    d = entry.get("detail") or {}
    parts: list[str] = []
    m = entry.get("match")
    if m in where:
        rnd, table = where[m]
        parts.append(tr(say("round {round}, table {table}", round=rnd, table=table)) if table
                     else tr(say("round {round}", round=rnd)))
    else:
        if isinstance(d.get("table"), int):
            parts.append(tr(say("table {table}", table=d["table"])))
        if isinstance(d.get("round"), int):
            parts.append(tr(say("round {round}", round=d["round"])))
    listed = d.get("entrants")
    ids: list[Any] = listed if isinstance(listed, list) else [d["entrant"]] if "entrant" in d else []
    who = [labels.get(e) or str(d.get("name") or "?") for e in ids if isinstance(e, int)]
    if not who and entry.get("action") in ("registered", "event-created") and d.get("name"):
        who = [str(d["name"])]
    parts += who
    if entry.get("action") == "correction":
        def score(side: Any) -> str:
            sc = (side.get("score") or side.get("scores")) if isinstance(side, dict) else None
            return "-".join(fmt_num(x) for x in sc) if isinstance(sc, list) and None not in sc else "–"
        parts.append(f"{score(d.get('before'))} → {score(d.get('after'))}")
    elif isinstance(d.get("score"), list) and None not in d["score"]:
        parts.append("-".join(fmt_num(x) for x in d["score"]))
    return " · ".join(parts)


def _stable(state: dict[str, Any]) -> dict[str, Any]:
    """The console state without what changes every second (so only real changes are pushed);
    "last heard" is rounded to whole seconds and capped, which still shows a table going quiet."""
    for row in state.get("tables", []):
        s = row.get("last_heard_s")
        if s is not None:
            row["last_heard_s"] = int(s) if s < 60 else 60
    return state


def club_view(director: Director, tr: Callable[[str], str] = lambda s: s) -> dict[str, Any]:
    """What the public pages and the projector show, in people's terms (``tr``: the
    column and tie-break names in the page's language; the keys stay machine names)."""
    from .export import export_event

    data = export_event(director, audit=False)
    names = {e["id"]: numbered(e["number"], e["name"]) for e in data["entrants"]}  # "#3 Ana & Bia"
    cols, rows = standings_rows(data)
    rounds = []
    for rnd in data["rounds"]:
        ms = []
        for m in rnd["matches"]:
            ids = [e for e in m["entrants"] if e is not None]
            ms.append({
                "table": m["table"], "kind": m["kind"], "status": "confirmed" if m["confirmed"] else m["status"],
                "names": [names.get(e, "?") for e in ids],
                "score": [fmt_num(x) for x in m["score"]] if m["score"] else None,
                "winner": names.get(m["winner"]) if m["winner"] else None,
            })
        ms.sort(key=lambda x: (x["table"] is None, x["table"] or 0))
        rounds.append({"number": rnd["number"], "matches": ms})
    ps = cons.pair_status(director)
    fin = cons.final_result(director)
    ev = data["event"]
    return {
        "event": {"name": ev["name"], "game": ev["game"], "variant": ev["variant"], "format": ev["format"],
                  "target": ev["options"].get("target"), "rounds": ev["options"].get("rounds"),
                  "confirm": ev["options"].get("confirm", "badges"),
                  "tiebreaks": [tr(label(t)) for t in ev["options"].get("tiebreaks", [])]},
        "round": rounds[-1]["number"] if rounds else 0,
        # results of the round still out: the standings are "so far", not "after round N"
        "in_play": bool(rounds) and any(not m["confirmed"] for m in data["rounds"][-1]["matches"]),
        "rounds": rounds,
        "columns": [{"key": k, "label": tr(h)} for k, h in cols],
        "standings": rows,
        "pair": ps.to_json(),
        "final": fin,
    }


_AT_PLAY = ("stalled", "correction", "paused")


def live_view(director: Director, live: LiveBoard | None) -> list[dict[str, Any]]:
    """Every table of the round in progress for spectators: who plays, hand, scores (public only)."""
    _cur, rows, _matches, _names = cons.table_rows(director, live=live)
    out = []
    for row in rows:
        m = row["match"]
        out.append({
            # what holds a table up is the director's business: spectators see it playing
            "table": row["table"], "state": "playing" if row["state"] in _AT_PLAY else row["state"],
            "names": (m["names"][:-1] if m["entrants"] and len(m["entrants"]) == 1 else m["names"]) if m else [],
            "bye": bool(m and len(m["entrants"]) == 1),  # the page says "bye" in its language
            "hand": row["live"]["hand"] if row["live"] else None,
            "scores": row["live"]["scores"] if row["live"] else (m["score"] if m else None),
            "counts": row["live"]["counts"] if row["live"] else None,
            "ts": row["live"]["ts"] if row["live"] else None,
            "last_heard_s": row["last_heard_s"],
        })
    return out


def display_page(number: int, title: str, lang: str = "en") -> str:
    """The table display's own page (its template, read from the display's folder), whose
    live socket is pointed at this table's relay: the display draws what the table shows."""
    from jinja2 import Environment, select_autoescape

    template = (DISPLAY_STATIC.parent / "templates" / "display.html").read_text()
    from tablesense.web.labels import labels, labels_json

    words = labels(lang)  # the display template takes its words from the server (issue 18)
    html = Environment(autoescape=select_autoescape(default=True)).from_string(template).render(
        title=title, lang=lang, L=words, labels_json=labels_json(words))
    # display.js opens ws://HOST/ws; on this page that socket is table N's relay.
    shim = (
        "<script>(function(){var N=window.WebSocket;window.WebSocket=function(u,p){"
        f"return new N(String(u).replace(/\\/ws$/, '/live/table/{int(number)}/ws'),p);}};"
        "window.WebSocket.prototype=N.prototype;})();</script>"
    )
    return html.replace("</title>", "</title>\n" + shim, 1)
