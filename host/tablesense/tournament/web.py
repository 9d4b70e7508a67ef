"""The director's web pages: live standings and pairings, printable crosstable,
exports, and the management page behind a login.

FastAPI + Jinja2 (the same stack as the table display). Public pages refresh
themselves; the management page needs the director's password (kept only as
a PBKDF2 hash) and every form carries a per-session CSRF token. Every action
goes through :class:`Director`, so it lands in the audit log.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context
from markupsafe import Markup
from starlette.middleware.sessions import SessionMiddleware

from tablesense.games.common import message_of, say
from tablesense.i18n import (
    LANGUAGES,
    N_,
    PSEUDO,
    Translator,
    UnknownLanguageError,
    normalize,
    resolve,
)
from tablesense.i18n import ngettext as plural_text

from .export import export_event, records_archive, results_csv, standings_csv
from .page_cache import PageCache
from .present import numbered
from .service import Director, DirectorError
from .words import STATUS, Message, word

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: The director's password: at least this many characters (``director serve`` refuses less).
MIN_PASSWORD = 12
#: A login lasts this long (server-side; the cookie expires with it).
SESSION_MAX_AGE = 8 * 3600
#: Wrong passwords from one address: each answer is slowed (doubling from
#: ``login_delay_s``), and after this many in ``LOCKOUT_S`` the address is locked out that long.
MAX_FAILED_LOGINS = 5
LOCKOUT_S = 15 * 60


def page_language(request: Any, default: str | Callable[[], str]) -> str:
    """The language of one page: ``?lang=pt-BR`` (remembered in the session so the
    nav links keep it), else the event's language (``default``, a tag or a function
    that reads it). A tag we lack is ignored, never an error: a spectator's typo
    still gets the standings. Worked out once per request (every ``_()`` asks)."""
    state = getattr(request, "state", None)
    known = getattr(state, "page_lang", None) if state is not None else None
    if isinstance(known, str):
        return known
    lang = _chosen_lang(request) or (default() if callable(default) else default)
    if state is not None:
        state.page_lang = lang
    return lang


def _chosen_lang(request: Any) -> str | None:
    for tag in (request.query_params.get("lang"), _session_lang(request)):
        if tag:
            try:
                lang = normalize(str(tag))
            except UnknownLanguageError:
                continue
            if lang in LANGUAGES or lang == PSEUDO:
                _remember_lang(request, lang)
                return lang
    return None


def _session_lang(request: Any) -> str | None:
    try:
        return request.session.get("lang")
    except (AssertionError, AttributeError):  # no SessionMiddleware on this app
        return None


def _remember_lang(request: Any, lang: str) -> None:
    try:
        if request.session.get("lang") != lang:
            request.session["lang"] = lang
    except (AssertionError, AttributeError):
        pass


def install_page_language(templates: Jinja2Templates, default: str | Callable[[], str]) -> None:
    """Jinja2's i18n extension with ``_``/``ngettext`` bound to the page's
    Translator: every template rendered through ``templates`` reads the
    ``request`` in its context, so one environment serves all languages."""
    env = templates.env
    env.add_extension("jinja2.ext.i18n")

    def _tr(ctx: Any) -> Translator:
        request = ctx.get("request")
        return Translator(page_language(request, default) if request is not None else _default(default))

    @pass_context
    def gettext(ctx: Any, message: str) -> str:
        tr = _tr(ctx)
        if tr.lang != PSEUDO or hasattr(message, "template"):
            return tr(message)
        # the pseudo-locale protects {fields}, not Jinja's %(fields)s: swap them round it
        # (only those: a {field} the page's script fills stays braced)
        fields = set(re.findall(r"%\((\w+)\)s", message))
        braced = re.sub(r"%\((\w+)\)s", r"{\1}", message)
        return re.sub(r"\{(\w+)\}", lambda m: f"%({m[1]})s" if m[1] in fields else m[0], tr(braced))

    @pass_context
    def ngettext(ctx: Any, singular: str, plural: str, n: int) -> str:
        lang = _tr(ctx).lang
        if lang != PSEUDO:
            return plural_text(singular, plural, n, lang)  # Jinja fills %(num)s
        fields = set(re.findall(r"%\((\w+)\)s", singular + plural))
        one, many = (re.sub(r"%\((\w+)\)s", r"{\1}", t) for t in (singular, plural))
        out = plural_text(one, many, n, lang)
        return re.sub(r"\{(\w+)\}", lambda m: f"%({m[1]})s" if m[1] in fields else m[0], out)

    env.install_gettext_callables(gettext, ngettext, newstyle=True)  # type: ignore[attr-defined]

    @pass_context
    def page_lang(ctx: Any) -> str:
        request = ctx.get("request")
        return page_language(request, default) if request is not None else _default(default)

    @pass_context
    def human(ctx: Any, kind: str, key: object) -> str:
        """A machine name (a status, a format) as the page's language says it (words.py)."""
        return word(_tr(ctx), kind, key)

    @pass_context
    def tr_any(ctx: Any, message: object) -> str:
        """A message made elsewhere (a :class:`Sentence`, a marked constant) in the page's language."""
        return _tr(ctx)(message)

    env.globals["page_lang"] = page_lang
    env.globals["languages"] = LANGUAGES
    env.globals["human"] = human

    @pass_context
    def status_words(ctx: Any) -> dict[str, str]:
        """Every status word in the page's language, for a page's script (the live console)."""
        tr = _tr(ctx)
        return {k: word(tr, "status", k) for k in STATUS}

    env.globals["status_words"] = status_words

    @pass_context
    def plural(ctx: Any, singular: str, many: str, n: int, **params: Any) -> str:
        """``{n}``-style plural for templates, as :meth:`Translator.plural` (the catalogs' ``plural`` keyword)."""
        return _tr(ctx).plural(singular, many, n, **params)

    env.globals["plural"] = plural

    @pass_context
    def display_words(ctx: Any) -> Markup:
        """The table display's words in the page's language, for its scripts drawn here
        (the replay's line of play and cards read them from ``#labels``, as on the display)."""
        from tablesense.web.labels import labels, labels_json

        return Markup(labels_json(labels(_tr(ctx).lang)))

    env.globals["display_words"] = display_words
    env.globals["tr"] = tr_any


def _default(default: str | Callable[[], str]) -> str:
    return default() if callable(default) else default


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or os.urandom(16)
    dk = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 200_000)
    return f"pbkdf2${salt.hex()}${dk.hex()}"


def check_password(password: str, stored: str) -> bool:
    try:
        _scheme, salt, want = stored.split("$")
    except ValueError:
        return False
    got = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), 200_000).hex()
    return hmac.compare_digest(got, want)


def create_app(
    director: Director,
    *,
    password_hash: str,
    secret_key: str | None = None,
    on_round_paired: Callable[[], None] | None = None,
    refresh_s: int = 5,
    secure_cookies: bool = False,
    session_max_age: int = SESSION_MAX_AGE,
    login_delay_s: float = 0.5,
    live: Any = None,
    lang: str | None = None,
    live_gate: Any = None,
) -> FastAPI:
    """The director's app for one event.

    ``secure_cookies``: served over TLS, the session cookie is ``Secure``.
    A login is a server-side session (``sessions`` below): logging out or
    expiring ends it, so a copied cookie is worth nothing afterwards.
    ``live_gate``: the live pages' connection caps (``fanout.Gate``; default
    64 per address, 4096 in total)."""
    app = FastAPI(title="tablesense director", docs_url=None, redoc_url=None)
    app.add_middleware(SessionMiddleware, secret_key=secret_key or secrets.token_hex(32), same_site="strict",
                       https_only=secure_cookies, max_age=session_max_age)
    templates = Jinja2Templates(directory=str(TEMPLATES))
    server_lang = resolve(lang)

    pages = PageCache(director.data_version)
    app.state.pages = pages

    def event_lang() -> str:
        """The event's own language (``tournament create --lang``), else the server's (read once per change)."""
        return pages.get("event-lang", director.language) or server_lang

    install_page_language(templates, event_lang)

    def tr_of(request: Request) -> Translator:
        """The page's Translator: ``?lang=``, the session's choice, the event's, the server's."""
        return Translator(page_language(request, event_lang))
    sessions: dict[str, float] = {}  # session id -> expiry (monotonic)
    failures: dict[str, list[float]] = {}  # address -> times of recent wrong passwords

    def logged_in(request: Request) -> bool:
        sid = str(request.session.get("sid", ""))
        exp = sessions.get(sid)
        if exp is None or exp < time.monotonic():
            sessions.pop(sid, None)
            return False
        return True

    def ctx(request: Request, **extra: Any) -> dict[str, Any]:
        # Once per change. The director's own pages read the exact data version
        # (the page after a check-in shows it); spectators' pages the throttled
        # cache, whose version is read at most twice a second.
        cache = director.memo if logged_in(request) else pages.get
        data = cache("export_event:100", lambda: export_event(director, audit=100))
        names = {e["id"]: numbered(e["number"], e["name"]) for e in data["entrants"]}  # "#3 Ana & Bia", never an id
        return {"request": request, "data": data, "names": names, "refresh": refresh_s,
                "logged_in": logged_in(request), **extra}

    def need_login(request: Request) -> None:
        if not logged_in(request):
            raise HTTPException(status_code=303, headers={"Location": "/login"})

    def check_csrf(request: Request, token: str) -> None:
        if not token or not hmac.compare_digest(token, str(request.session.get("csrf", ""))):
            raise HTTPException(status_code=403, detail="stale or missing form token; reload the page")

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/standings", status_code=303)

    async def public_page(request: Request, template: str) -> Response:
        """A public page as the same bytes for everyone with its language and login
        state, rendered once per change of the event (page_cache.py); a request
        served from the cache never leaves the event loop."""
        key = (template, page_language(request, event_lang) if pages.cached("event-lang") is not None else None,
               logged_in(request))
        body = pages.cached(key) if key[1] is not None else None
        if body is None:
            def render() -> bytes:
                lang = page_language(request, event_lang)
                return pages.get((template, lang, key[2]), lambda: templates.get_template(template).render(
                    ctx(request)).encode())

            body = await run_in_threadpool(render)
        return Response(body, media_type="text/html; charset=utf-8")

    @app.get("/standings", response_class=HTMLResponse)
    async def standings(request: Request) -> Response:
        return await public_page(request, "standings.html")

    @app.get("/pairings", response_class=HTMLResponse)
    async def pairings(request: Request) -> Response:
        return await public_page(request, "pairings.html")

    @app.get("/crosstable", response_class=HTMLResponse)
    def crosstable(request: Request) -> Response:
        c = ctx(request, refresh=0)
        grid: dict[int, dict[int, list[str]]] = {}
        for rnd in c["data"]["rounds"]:
            for m in rnd["matches"]:
                ids, sc = m["entrants"], m["score"]
                if None in ids or sc is None:
                    continue
                for i, a in enumerate(ids):  # every two entrants who shared the table (two, three or four)
                    for j, b in enumerate(ids):
                        if i != j:
                            grid.setdefault(a, {}).setdefault(b, []).append(f"{sc[i]}-{sc[j]}")
        c["grid"] = grid
        return templates.TemplateResponse(request, "crosstable.html", c)

    @app.get("/api/event")
    def api_event() -> JSONResponse:
        return JSONResponse(export_event(director, audit=100))

    @app.get("/export.json")
    def export_json() -> Response:
        return JSONResponse(export_event(director), headers={"Content-Disposition": "attachment; filename=event.json"})

    @app.get("/standings.csv")
    def export_standings(request: Request) -> Response:
        # people open this one in a spreadsheet: headers in the page's language (results.csv is for programs)
        return Response(standings_csv(director, tr_of(request)), media_type="text/csv", headers={"Content-Disposition": "attachment; filename=standings.csv"})

    @app.get("/results.csv")
    def export_results() -> Response:
        return Response(results_csv(director), media_type="text/csv", headers={"Content-Disposition": "attachment; filename=results.csv"})

    @app.get("/records.zip")
    def export_records() -> Response:
        return Response(records_archive(director), media_type="application/zip", headers={"Content-Disposition": "attachment; filename=records.zip"})

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request) -> Response:
        return templates.TemplateResponse(request, "login.html", {"request": request, "error": None, "logged_in": False})

    @app.post("/login", response_class=HTMLResponse)
    async def login(request: Request, password: str = Form("")) -> Response:
        import asyncio

        addr = request.client.host if request.client else "?"
        now = time.monotonic()
        recent = [t for t in failures.get(addr, []) if now - t < LOCKOUT_S]
        failures[addr] = recent
        if len(recent) >= MAX_FAILED_LOGINS:
            wait_min = max(1, round((LOCKOUT_S - (now - recent[0])) / 60))
            await run_in_threadpool(director.audit_limited, f"web:{addr}", "login-locked", "too many wrong passwords")
            return templates.TemplateResponse(request, "login.html", {
                "request": request, "logged_in": False,
                "error": tr_of(request).plural("too many wrong passwords from this address: try again in {n} minute",
                                               "too many wrong passwords from this address: try again in {n} minutes",
                                               wait_min)}, status_code=429)
        ok = len(password) <= 1024 and await run_in_threadpool(check_password, password, password_hash)
        if not ok:
            recent.append(now)
            await run_in_threadpool(director.audit_limited, f"web:{addr}", "login-failed", "wrong password")
            await asyncio.sleep(min(login_delay_s * 2 ** (len(recent) - 1), 8.0))
            return templates.TemplateResponse(request, "login.html", {"request": request, "error": tr_of(request)(N_("wrong password")),
                                                                      "logged_in": False}, status_code=401)
        failures.pop(addr, None)
        sid = secrets.token_urlsafe(24)
        sessions[sid] = now + session_max_age
        request.session.clear()
        request.session["sid"] = sid
        request.session["csrf"] = secrets.token_urlsafe(24)
        return RedirectResponse("/director", status_code=303)

    @app.post("/logout")
    def logout(request: Request) -> RedirectResponse:
        sessions.pop(str(request.session.get("sid", "")), None)
        request.session.clear()
        return RedirectResponse("/standings", status_code=303)

    @app.get("/director", response_class=HTMLResponse)
    def manage(request: Request, message: str = "", error: str = "", form: str = "") -> Response:
        need_login(request)
        c = ctx(request, refresh=0, message=message, error=error, form=form[:40], csrf=request.session.get("csrf", ""),
                event_lang=director.language(), server_lang=server_lang,
                tables=director.tables(), quiet=set(director.quiet_tables()),
                current=director.current_round_no(), complete=director.round_complete(), now=time.time(),
                last_seen=director.last_seen)
        return templates.TemplateResponse(request, "director.html", c)

    def refused(request: Request, reason: str) -> None:
        """A refused form is audited (within the address's budget), its reason cut short."""
        addr = request.client.host if request.client else "?"
        director.audit_limited(f"web:{addr}", "form-refused", reason[:200], path=request.url.path)

    def act(request: Request, token: str, fn: Callable[[], Message]) -> RedirectResponse:
        """Run a form's action; its message (a :class:`Sentence`) or refusal comes back on the
        console in the page's language (the audit log keeps the English)."""
        need_login(request)
        check_csrf(request, token)
        from sqlalchemy.exc import SQLAlchemyError

        try:
            msg = fn()
        except (DirectorError, ValueError, OverflowError) as exc:
            refused(request, str(exc))
            form = request.url.path.rsplit("/", 1)[-1]  # the form to open again (its words are translated)
            return RedirectResponse(f"/director?error={_q(tr_of(request)(message_of(exc)))}&form={_q(form)}", status_code=303)
        except SQLAlchemyError as exc:  # never a 500: the form again, with what went wrong
            why = str(exc).splitlines()[0]
            refused(request, why)
            told = tr_of(request)(say("the database refused it: {why}", why=why))
            return RedirectResponse(f"/director?error={_q(told)}", status_code=303)
        tr = tr_of(request)  # after the action: a change of the event's language answers in the new one
        return RedirectResponse(f"/director?message={_q(msg(tr) if callable(msg) else tr(msg))}", status_code=303)

    @app.post("/director/pair")
    def pair(request: Request, csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            n = director.pair_next_round("director-web")
            if on_round_paired is not None:
                on_round_paired()
            return say("round {n} paired and announced to the tables", n=n)
        return act(request, csrf, run)

    @app.post("/director/correct")
    def correct(request: Request, match: str = Form(""), score_a: str = Form(""), score_b: str = Form(""),
                winner: str = Form(""), reason: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            w = _form_int(winner, "winner") if winner.strip() else None
            mid = _form_int(match, "match")
            director.correct(mid, (_form_score(score_a), _form_score(score_b)), w, reason, "director-web")
            m = next((x for x in director.matches() if x.id == mid), None)
            return say("round {round}, table {table} corrected", round=m.round_no if m else "?",
                       table=(m.table_no if m else None) or "-")
        return act(request, csrf, run)

    def _label(entrant_id: int) -> str:
        """``#3 Ana & Bia``: an entrant in the console's answers (never its database id)."""
        from .console import entrant_labels

        return entrant_labels(director).get(entrant_id, "?")

    @app.post("/director/register")
    def register(request: Request, name: str = Form(""), members: str = Form(""), badges: str = Form(""),
                 seed: str = Form("0"), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            eid = director.register(name, _split(members), _split(badges), _form_int(seed or "0", "seed", lo=-MAX_FORM_INT))
            return say("{name} registered as {who}", name=name, who=_label(eid).split(" ", 1)[0])
        return act(request, csrf, run)

    @app.post("/director/checkin")
    def checkin(request: Request, entrant: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            eid = _form_int(entrant, "entrant")
            changed = director.check_in(eid, "director-web")
            active = [e for e in director.entrants() if e.status != "withdrawn"]
            counts = {"who": _label(eid), "n": sum(1 for e in active if e.status == "checked_in"), "total": len(active)}
            if changed:
                return say("{who} checked in ({n} of {total} checked in)", **counts)
            return say("{who} was already checked in ({n} of {total} checked in)", **counts)
        return act(request, csrf, run)

    @app.post("/director/withdraw")
    def withdraw(request: Request, entrant: str = Form(""), reason: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            eid = _form_int(entrant, "entrant")
            director.withdraw(eid, reason, "director-web")
            return say("{who} withdrawn from the later rounds", who=_label(eid))
        return act(request, csrf, run)

    @app.post("/director/language")
    def language(request: Request, lang: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
        """The event's language (its pages' default); empty: the server's (``serve --lang``)."""
        def run() -> str:
            new = director.set_language(lang.strip() or None, "director-web")
            request.session.pop("lang", None)  # the director sees the choice at once
            request.state.page_lang = new or server_lang
            return say("the event's pages are now in {language}", language=LANGUAGES[new or server_lang])
        return act(request, csrf, run)

    # The projector, the paged audit log, the live console and its confirm actions.
    from .pages import add_club_pages

    add_club_pages(app, director, templates, need_login=need_login, act=act, on_change=on_round_paired, live=live,
                   gate=live_gate,
                   tr_of=tr_of)
    # The club's memory: players, ratings, seasons (memory_pages.py, issue 20).
    from .memory_pages import add_memory_pages

    add_memory_pages(app, director, templates, need_login=need_login, act=act, logged_in=logged_in, tr_of=tr_of)
    return app


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


MAX_FORM_INT = 2**31 - 1


#: The form fields a number is typed in, as the refusal names them.
FORM_FIELDS = {"winner": N_("the winner"), "match": N_("the match"), "entrant": N_("the entrant"), "seed": N_("the seed")}


def _form_int(text: str, what: str, lo: int = 1) -> int:
    """A whole number typed in a form, within what the database can hold."""
    t = text.strip()
    if not (t.lstrip("-").isdigit() and len(t) <= 11) or not lo <= int(t) <= MAX_FORM_INT:
        raise DirectorError(say("{what} must be a whole number from {lo} to {hi}, not {value}",
                                what=say(FORM_FIELDS.get(what, what)), lo=lo, hi=MAX_FORM_INT, value=repr(t[:20])))
    return int(t)


def _form_score(text: str) -> float:
    """A score typed in a form: a finite number of points (NaN and Infinity refused)."""
    import math

    t = text.strip()
    try:
        v = float(t) if len(t) <= 20 else math.nan
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v < 0:
        raise DirectorError(say("a score is a number of points such as 150 or 97.5, not {value}", value=repr(t[:20])))
    return v


def _q(text: str) -> str:
    from urllib.parse import quote

    return quote(text[:300])
