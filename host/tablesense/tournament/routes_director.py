"""The director's console page and its forms (pair the next round, make a
match remote, correct a result, register, check in, withdraw, the event's language), behind the
login and the form token. Each form's action goes through the Director (so
it lands in the audit log) by :meth:`~tablesense.tournament.site.DirectorSite.act`,
which brings its answer or refusal back on the console in the page's
language. Routes over the injected :class:`~tablesense.tournament.site.DirectorSite`."""

from __future__ import annotations

import math
import time

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from tablesense.games.common import say
from tablesense.i18n import LANGUAGES, N_

from .service import DirectorError
from .site import Site
from .words import Message

router = APIRouter()

MAX_FORM_INT = 2**31 - 1

#: The form fields a number is typed in, as the refusal names them.
FORM_FIELDS = {"winner": N_("the winner"), "match": N_("the match"), "entrant": N_("the entrant"), "seed": N_("the seed"),
               "table": N_("the table")}


def split_names(text: str) -> list[str]:
    """``"Ana, Bia,"`` as ``["Ana", "Bia"]``."""
    return [p.strip() for p in text.split(",") if p.strip()]


def form_int(text: str, what: str, lo: int = 1) -> int:
    """A whole number typed in a form, within what the database can hold."""
    t = text.strip()
    if not (t.lstrip("-").isdigit() and len(t) <= 11) or not lo <= int(t) <= MAX_FORM_INT:
        raise DirectorError(say("{what} must be a whole number from {lo} to {hi}, not {value}",
                                what=say(FORM_FIELDS.get(what, what)), lo=lo, hi=MAX_FORM_INT, value=repr(t[:20])))
    return int(t)


def form_score(text: str) -> float:
    """A score typed in a form: a finite number of points (NaN and Infinity refused)."""
    t = text.strip()
    try:
        v = float(t) if len(t) <= 20 else math.nan
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v < 0:
        raise DirectorError(say("a score is a number of points such as 150 or 97.5, not {value}", value=repr(t[:20])))
    return v


@router.get("/director", response_class=HTMLResponse)
def manage(request: Request, site: Site, message: str = "", error: str = "", form: str = "") -> Response:
    site.need_login(request)
    director = site.director
    c = site.ctx(request, refresh=0, message=message, error=error, form=form[:40], csrf=request.session.get("csrf", ""),
                 event_lang=director.language(), server_lang=site.server_lang,
                 tables=director.tables(), quiet=set(director.quiet_tables()),
                 current=director.current_round_no(), complete=director.round_complete(), now=time.time(),
                 last_seen=director.last_seen)
    return site.templates.TemplateResponse(request, "director.html", c)


@router.post("/director/pair")
def pair(request: Request, site: Site, csrf: str = Form("")) -> RedirectResponse:
    def run() -> Message:
        n = site.director.pair_next_round("director-web")
        if site.on_round_paired is not None:
            site.on_round_paired()
        return say("round {n} paired and announced to the tables", n=n)
    return site.act(request, csrf, run)


@router.post("/director/pair-remote")
def pair_remote(request: Request, site: Site, table: str = Form(""), with_table: str = Form(""),
                csrf: str = Form("")) -> RedirectResponse:
    """``tournament pair-remote`` on the console: the match at ``table`` is played
    together with ``with_table`` (another venue's), announced to both at once."""
    def run() -> Message:
        from .console import pair_remote_at

        p = pair_remote_at(site.director, form_int(table, "table"), form_int(with_table, "table"), "director-web")
        if site.on_round_paired is not None:  # both tables' assignments changed: announce them now
            site.on_round_paired()
        return say("round {round}: table {host} hosts, table {join} joins; code {code}",
                   round=p.round, host=p.host, join=p.join, code=p.code)
    return site.act(request, csrf, run)


@router.post("/director/correct")
def correct(request: Request, site: Site, match: str = Form(""), score_a: str = Form(""), score_b: str = Form(""),
            winner: str = Form(""), reason: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
    def run() -> Message:
        w = form_int(winner, "winner") if winner.strip() else None
        mid = form_int(match, "match")
        site.director.correct(mid, (form_score(score_a), form_score(score_b)), w, reason, "director-web")
        m = next((x for x in site.director.matches() if x.id == mid), None)
        return say("round {round}, table {table} corrected", round=m.round_no if m else "?",
                   table=(m.table_no if m else None) or "-")
    return site.act(request, csrf, run)


@router.post("/director/register")
def register(request: Request, site: Site, name: str = Form(""), members: str = Form(""), badges: str = Form(""),
             seed: str = Form("0"), csrf: str = Form("")) -> RedirectResponse:
    def run() -> Message:
        eid = site.director.register(name, split_names(members), split_names(badges),
                                     form_int(seed or "0", "seed", lo=-MAX_FORM_INT))
        return say("{name} registered as {who}", name=name, who=site.label(eid).split(" ", 1)[0])
    return site.act(request, csrf, run)


@router.post("/director/checkin")
def checkin(request: Request, site: Site, entrant: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
    def run() -> Message:
        director = site.director
        eid = form_int(entrant, "entrant")
        changed = director.check_in(eid, "director-web")
        active = [e for e in director.entrants() if e.status != "withdrawn"]
        counts = {"who": site.label(eid), "n": sum(1 for e in active if e.status == "checked_in"), "total": len(active)}
        if changed:
            return say("{who} checked in ({n} of {total} checked in)", **counts)
        return say("{who} was already checked in ({n} of {total} checked in)", **counts)
    return site.act(request, csrf, run)


@router.post("/director/withdraw")
def withdraw(request: Request, site: Site, entrant: str = Form(""), reason: str = Form(""),
             csrf: str = Form("")) -> RedirectResponse:
    def run() -> Message:
        eid = form_int(entrant, "entrant")
        site.director.withdraw(eid, reason, "director-web")
        return say("{who} withdrawn from the later rounds", who=site.label(eid))
    return site.act(request, csrf, run)


@router.post("/director/language")
def language(request: Request, site: Site, lang: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
    """The event's language (its pages' default); empty: the server's (``serve --lang``)."""
    def run() -> Message:
        new = site.director.set_language(lang.strip() or None, "director-web")
        request.session.pop("lang", None)  # the director sees the choice at once
        request.state.page_lang = new or site.server_lang
        return say("the event's pages are now in {language}", language=LANGUAGES[new or site.server_lang])
    return site.act(request, csrf, run)
