"""The club's memory on the director's app: players, their pages, ratings, seasons.

``web.create_app`` calls :func:`add_memory_pages`, which adds:

- ``/players`` — the club's players with their ratings (search as you type);
- ``/players/{id}`` — a player's page: ratings per family (provisional
  shown), the rating over time as an inline SVG chart (no script, no CDN),
  the evenings played (place, rating before and after) and every match;
- ``/replay/{match}`` — a match's stored records stepped through (dominoes:
  the line of play; Kems: the board and the hands), or a sentence saying the
  result was entered by hand and has no record;
- ``/seasons``, ``/seasons/{id}`` (printable), ``/seasons/{id}.csv|.json``;
- ``/api/players?q=`` — the search behind the director's "enter club
  players" form (names only, never badges, unless logged in);
- ``/api/evening-ratings`` — this evening's players, their rating and its
  change so far (the standings page and the projector show it);
- ``/director/enter-players`` and ``/director/add-player`` (login, CSRF).

Ratings are brought up to date (``ratings.update``, a no-op when nothing
changed) before a page that shows them is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from sqlalchemy import select

from tablesense.games.common import say
from tablesense.i18n import N_, Translator

from . import ratings as rt
from .db import Entrant, Event, Match
from .players import (
    EntrantPlayer,
    add_player,
    all_players,
    get_player,
    player_names,
    register_players,
    search,
)
from .seasons import season_table, seasons
from .service import Director, DirectorError
from .words import Message, word


def add_memory_pages(
    app: FastAPI,
    director: Director,
    templates: Jinja2Templates,
    *,
    need_login: Callable[[Request], None],
    act: Callable[[Request, str, Callable[[], Message]], RedirectResponse],
    logged_in: Callable[[Request], bool],
    tr_of: Callable[[Request], Translator] = lambda _request: Translator("en"),
) -> None:
    db = director.db
    templates.env.globals.update(evening_ratings=lambda: evening_ratings(director), skill_text=skill_text)

    def page(request: Request, name: str, **extra: Any) -> Response:
        # The layout's header, without the evening's winner banner (these pages are about the club).
        from .pages import club_view

        view = {**club_view(director), "final": None}
        return templates.TemplateResponse(request, name, {"request": request, "refresh": 0, "view": view,
                                                          "logged_in": logged_in(request), **extra})

    @app.get("/players", response_class=HTMLResponse)
    def players_page(request: Request, q: str = "") -> Response:
        return page(request, "players.html", q=q[:200], rows=club_table(director, q[:200]))

    @app.get("/api/players")
    def api_players(request: Request, q: str = "") -> JSONResponse:
        show_badge = logged_in(request)
        return JSONResponse([{"id": p.id, "name": p.name, "club": p.club, **({"badge": p.badge} if show_badge else {})}
                             for p in search(db, q[:200])])

    @app.get("/players/{player_id}", response_class=HTMLResponse)
    def player_page(request: Request, player_id: int) -> Response:
        try:
            view = player_view(director, player_id, tr_of(request))
        except DirectorError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        return page(request, "player.html", p=view)

    @app.get("/api/evening-ratings")
    def api_evening() -> JSONResponse:
        return JSONResponse(evening_ratings(director))

    @app.get("/seasons", response_class=HTMLResponse)
    def seasons_page(request: Request) -> Response:
        return page(request, "seasons.html", seasons=seasons(db))

    def table_or_404(season_id: int) -> Any:
        try:
            return season_table(db, season_id)
        except DirectorError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc

    @app.get("/seasons/{season_id}.csv")
    def season_csv(season_id: int) -> Response:
        return Response(table_or_404(season_id).to_csv(), media_type="text/csv",
                        headers={"Content-Disposition": f"attachment; filename=season-{season_id}.csv"})

    @app.get("/seasons/{season_id}.json")
    def season_json(season_id: int) -> JSONResponse:
        return JSONResponse(table_or_404(season_id).to_json())

    @app.get("/seasons/{season_id}", response_class=HTMLResponse)
    def season_page(request: Request, season_id: int) -> Response:
        t = table_or_404(season_id)
        return page(request, "season.html", t=t, ids=[e["id"] for e in t.events])

    @app.get("/replay/{match_id}", response_class=HTMLResponse)
    def replay_page(request: Request, match_id: int, game: int = 1) -> Response:
        from .record_view import RecordViewError, match_place, match_records, seat_names, steps

        try:
            rnd, table = match_place(db, match_id)
            place = {"match_id": match_id, "round": rnd, "table": table or "–"}
            recs = match_records(db, match_id)
            if not recs:
                # A result entered by hand (or no result yet): the page says so, not an empty viewer.
                return page(request, "replay.html", **place, game=1, games=0, rec=None)
            if not 1 <= game <= len(recs):
                raise RecordViewError(f"match {match_id} has no stored record {game} (it has {len(recs)})")  # a 404's detail
            view = steps(recs[game - 1], tr_of(request), seat_names(db, match_id))
        except RecordViewError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        return page(request, "replay.html", **place, game=game, games=len(recs), rec=view)

    @app.post("/director/enter-players")
    def enter_players(request: Request, players: str = Form(""), name: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            ids = [p.strip() for p in players.split(",") if p.strip()]
            if not ids or not all(i.isdigit() and len(i) <= 9 for i in ids):
                raise DirectorError(say("pick the entrant's player(s) from the club list"))
            eid = register_players(director, [int(i) for i in ids], name.strip() or None)
            from .console import entrant_label

            return say("{entrant} registered from the club's players", entrant=entrant_label(director, eid))
        return act(request, csrf, run)

    @app.post("/director/add-player")
    def add_club_player(request: Request, name: str = Form(""), badge: str = Form(""), club: str = Form(""),
                        csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            pid = add_player(db, name, badge=badge.strip() or None, club=club)
            return say("{name} joined the club as player {id}", name=name.strip(), id=pid)
        return act(request, csrf, run)


# ------------------------------------------------------------ views


def skill_text(sk: rt.Skill | None) -> str:
    """A rating as people read it: the estimate and its uncertainty."""
    if sk is None:
        return "–"
    return f"{sk.mu:.1f} ±{sk.sigma:.1f}"


def _family(director: Director) -> str:
    with director.db.session() as s:
        ev = director.event(s)
        return rt.family_of(ev.game, ev.variant, int(ev.options.get("seats", 4)))


def club_table(director: Director, q: str = "") -> list[dict[str, Any]]:
    """The club's players with their rating in this event's family, strongest (conservatively) first."""
    db = director.db
    rt.update(db)
    fam = _family(director)
    now = rt.current(db, fam)
    people = search(db, q, limit=10_000) if q else all_players(db)
    rows = [{"id": p.id, "name": p.name, "club": p.club, "skill": now.get(p.id)} for p in people]
    rows.sort(key=lambda r: (r["skill"] is None, -(r["skill"].ordinal if r["skill"] else 0.0), r["name"]))
    return rows


def evening_ratings(director: Director) -> dict[str, Any]:
    """This evening's players: rating now and its change since the evening began."""
    db = director.db
    rt.update(db)
    fam = _family(director)
    changes = rt.evening_changes(db, director.event_id)
    now = rt.current(db, fam)
    with db.session() as s:
        ents = list(s.scalars(select(Entrant).where(Entrant.event_id == director.event_id)))
        links = list(s.scalars(select(EntrantPlayer).where(EntrantPlayer.entrant_id.in_([e.id for e in ents]))))
        names = player_names(s)
    rows = []
    for ln in links:
        before, after = changes.get(ln.player_id, (now.get(ln.player_id, rt.Skill()), now.get(ln.player_id, rt.Skill())))
        rows.append({"player": ln.player_id, "name": names.get(ln.player_id, "?"), "rating": skill_text(after),
                     "mu": round(after.mu, 2), "delta": round(after.mu - before.mu, 2),
                     "delta_text": f"{after.mu - before.mu:+.1f}", "provisional": after.provisional})
    rows.sort(key=lambda r: (-r["mu"], r["name"]))
    return {"family": fam, "family_label": rt.FAMILY_LABELS[fam], "rows": rows}  # pages say the family with human("family", …)


def player_view(director: Director, player_id: int, tr: Translator | None = None) -> dict[str, Any]:
    """Everything a player page shows (see the module docstring)."""
    db = director.db
    tr = tr or Translator("en")
    info = get_player(db, player_id)
    rt.update(db)
    hist = rt.history(db, player_id)
    with db.session() as s:
        mine = {ep.entrant_id: ep for ep in s.scalars(select(EntrantPlayer).where(EntrantPlayer.player_id == player_id))}
        ents = {e.id: e for e in s.scalars(select(Entrant).where(Entrant.id.in_(list(mine))))}
        event_ids = sorted({e.event_id for e in ents.values()})
        events = {ev.id: ev for ev in s.scalars(select(Event).where(Event.id.in_(event_ids)))}
        all_names = {e.id: e.name for e in s.scalars(select(Entrant).where(Entrant.event_id.in_(event_ids)))}
        matches = list(s.scalars(select(Match).where(Match.event_id.in_(event_ids), Match.kind == "match")
                                 .order_by(Match.event_id, Match.round_no, Match.number)))
        deltas = {(r.match_id): r for r in s.scalars(select(rt.RatingChange).where(rt.RatingChange.player_id == player_id))}
    by_event_entrant = {e.event_id: e for e in ents.values()}
    evenings = []
    for eid in event_ids:
        ent = by_event_entrant[eid]
        table = Director(db, eid).standings()
        place = next((st.rank for st in table if st.entrant == ent.id), None)
        ch = rt.evening_changes(db, eid).get(player_id)
        evenings.append({"event": eid, "name": events[eid].name, "entrant": ent.name,
                         "partners": [m for m in ent.members if m != info.name], "place": place, "of": len(table),
                         "before": skill_text(ch[0]) if ch else "–", "after": skill_text(ch[1]) if ch else "–",
                         "delta": f"{ch[1].mu - ch[0].mu:+.1f}" if ch else ""})
    rows = []
    for m in matches:
        ents_m = [int(x) for x in (m.entrants or [m.entrant_a, m.entrant_b]) if x is not None]
        me = by_event_entrant.get(m.event_id)
        if me is None or me.id not in ents_m:
            continue
        scores = m.scores or [m.score_a, m.score_b]
        i = ents_m.index(me.id)
        if not m.confirmed:
            result = m.status
        elif m.winner_id is None:
            result = "draw"
        else:
            result = "won" if m.winner_id == me.id else "lost"
        rc = deltas.get(m.id)
        rows.append({"event": events[m.event_id].name, "round": m.round_no, "table": m.table_no,
                     "opponents": [all_names.get(e, "?") for e in ents_m if e != me.id],
                     # the player's own score first, the others' after it, like "Against" ("59 – 39 lost" read wrong)
                     "score": " – ".join(_num(scores[j]) for j in [i, *(j for j in range(len(scores)) if j != i)])
                     if scores[0] is not None else "",
                     "mine": _num(scores[i]) if scores[i] is not None else "", "result": result,
                     "delta": f"{rc.mu_after - rc.mu_before:+.1f}" if rc else "",
                     "replay": m.id if m.result_id is not None or m.confirmed else None})
    fams = []
    for fam, pts in hist.items():
        last = pts[-1].after
        fams.append({"family": fam, "label": word(tr, "family", fam), "skill": last, "text": skill_text(last),
                     "chart": rating_chart(pts, [events[p.event_id].name if p.event_id in events else "" for p in pts], tr=tr)})
    return {"id": info.id, "name": info.name, "club": info.club, "families": fams, "evenings": evenings[::-1],
            "matches": rows[::-1], "provisional_games": rt.PROVISIONAL_GAMES, "provisional_sigma": rt.PROVISIONAL_SIGMA}


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def rating_chart(points: Sequence[rt.HistoryPoint], event_names: Sequence[str], width: int = 640, height: int = 220,
                 tr: Translator | None = None) -> Markup:
    """The rating over time as inline SVG: mu after each rated match, the ±sigma band, evenings marked.

    Drawn on the server (no script, no CDN); scales with its box (viewBox); its words in ``tr``'s language."""
    tr = tr or Translator("en")
    if not points:
        return Markup("")
    left, right, top, bottom = 44, 10, 12, 28
    mus = [points[0].before.mu] + [p.after.mu for p in points]
    sig = [points[0].before.sigma] + [p.after.sigma for p in points]
    lo = min(m - s for m, s in zip(mus, sig, strict=True))
    hi = max(m + s for m, s in zip(mus, sig, strict=True))
    lo, hi = (lo - 1.0, hi + 1.0) if hi - lo < 2 else (lo, hi)
    n = len(mus)

    def x(i: int) -> float:
        return left + (width - left - right) * (i / max(1, n - 1))

    def y(v: float) -> float:
        return top + (height - top - bottom) * (1 - (v - lo) / (hi - lo))

    band = [f"{x(i):.1f},{y(m + s):.1f}" for i, (m, s) in enumerate(zip(mus, sig, strict=True))]
    band += [f"{x(i):.1f},{y(m - s):.1f}" for i, (m, s) in reversed(list(enumerate(zip(mus, sig, strict=True))))]
    line = " ".join(f"{x(i):.1f},{y(m):.1f}" for i, m in enumerate(mus))
    about = tr.plural("rating over {n} rated match, from {first} to {last}", "rating over {n} rated matches, from {first} to {last}",
                      len(points), first=f"{mus[0]:.1f}", last=f"{mus[-1]:.1f}")
    parts = [f'<svg class="rating-chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(about)}">']
    for v in (lo, (lo + hi) / 2, hi):
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
                     f'<text class="axis" x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
    prev = None
    for i, p in enumerate(points, start=1):  # a tick where an evening starts
        if p.event_id != prev:
            prev = p.event_id
            parts.append(f'<line class="evening" x1="{x(i - 1):.1f}" x2="{x(i - 1):.1f}" y1="{top}" y2="{height - bottom}">'
                         f'<title>{escape(event_names[i - 1])}</title></line>')
    parts.append(f'<polygon class="band" points="{" ".join(band)}"/>')
    parts.append(f'<polyline class="mu" points="{line}"/>')
    parts.append(f'<circle class="now" cx="{x(n - 1):.1f}" cy="{y(mus[-1]):.1f}" r="4"/>')
    count = tr.plural("{n} rated match", "{n} rated matches", len(points))
    first = tr(N_("first match"))
    parts.append(f'<text class="axis" x="{left}" y="{height - 8}">{escape(first)}</text>'
                 f'<text class="axis" x="{width - right}" y="{height - 8}" text-anchor="end">{escape(count)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
