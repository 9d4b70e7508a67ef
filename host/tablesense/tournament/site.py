"""What every route of the director's web app reads: one :class:`DirectorSite`.

The routes (routes_public.py, routes_login.py, routes_director.py) are plain
module-level functions that receive the site through FastAPI's dependency
:func:`site_of` (the app holds it as ``app.state.site``), so a test builds a
site over a Director and calls them, or serves them, without the app's
factory. The site holds the event's Director, the templates and the page
cache, the logins (server-side sessions, :class:`LoginSessions`) and the
wrong-password throttle (:class:`LoginThrottle`), and the helpers the
routes share: the page's language, the template context, the login and CSRF
checks, and :meth:`DirectorSite.act` (a console form's action, its answer
or refusal back on the console in the page's language).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, HTTPException, Request
from fastapi.responses import RedirectResponse
from fastapi.templating import Jinja2Templates

from tablesense.games.common import message_of, say
from tablesense.i18n import LANGUAGES, PSEUDO, Translator, UnknownLanguageError, normalize

from .export import export_event
from .page_cache import PageCache
from .present import numbered
from .service import Director, DirectorError
from .words import Message

#: A login lasts this long (server-side; the cookie expires with it).
SESSION_MAX_AGE = 8 * 3600
#: Wrong passwords from one address: each answer is slowed (doubling from
#: ``login_delay_s``), and after this many in ``LOCKOUT_S`` the address is locked out that long.
MAX_FAILED_LOGINS = 5
LOCKOUT_S = 15 * 60


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


@dataclass
class LoginSessions:
    """Logged-in sessions, server-side: a session id and its expiry. Logging
    out or expiring ends it, so a copied cookie is worth nothing afterwards."""

    max_age: float = SESSION_MAX_AGE
    clock: Callable[[], float] = time.monotonic
    expiry: dict[str, float] = field(default_factory=dict)

    def open(self) -> str:
        sid = secrets.token_urlsafe(24)
        self.expiry[sid] = self.clock() + self.max_age
        return sid

    def valid(self, sid: str) -> bool:
        exp = self.expiry.get(sid)
        if exp is None or exp < self.clock():
            self.expiry.pop(sid, None)
            return False
        return True

    def end(self, sid: str) -> None:
        self.expiry.pop(sid, None)


@dataclass
class LoginThrottle:
    """Wrong passwords by address: each wrong answer waits twice as long as
    the one before (from ``delay_s``, at most 8 s), and ``MAX_FAILED_LOGINS``
    within ``LOCKOUT_S`` lock the address out until the first of them is that old."""

    delay_s: float = 0.5
    failures: dict[str, list[float]] = field(default_factory=dict)

    def locked_minutes(self, addr: str, now: float) -> int | None:
        """Minutes ``addr`` must still wait (None: it may try)."""
        recent = [t for t in self.failures.get(addr, []) if now - t < LOCKOUT_S]
        self.failures[addr] = recent
        if len(recent) >= MAX_FAILED_LOGINS:
            return max(1, round((LOCKOUT_S - (now - recent[0])) / 60))
        return None

    def failed(self, addr: str, now: float) -> float:
        """Count a wrong password; returns how long its answer waits, in seconds."""
        recent = self.failures.setdefault(addr, [])
        recent.append(now)
        return min(self.delay_s * 2 ** (len(recent) - 1), 8.0)

    def succeeded(self, addr: str) -> None:
        self.failures.pop(addr, None)


def quoted(text: str) -> str:
    """A message for a redirect's query string (cut short)."""
    return quote(text[:300])


@dataclass
class DirectorSite:
    """The state and services the director's routes share; see the module docstring."""

    director: Director
    templates: Jinja2Templates
    pages: PageCache
    password_hash: str
    server_lang: str = "en"
    refresh_s: int = 5
    on_round_paired: Callable[[], None] | None = None
    sessions: LoginSessions = field(default_factory=LoginSessions)
    throttle: LoginThrottle = field(default_factory=LoginThrottle)

    # -- language ------------------------------------------------------------------
    def event_lang(self) -> str:
        """The event's own language (``tournament create --lang``), else the server's (read once per change)."""
        return self.pages.get("event-lang", self.director.language) or self.server_lang

    def tr_of(self, request: Request) -> Translator:
        """The page's Translator: ``?lang=``, the session's choice, the event's, the server's."""
        return Translator(page_language(request, self.event_lang))

    # -- logins --------------------------------------------------------------------
    def logged_in(self, request: Request) -> bool:
        return self.sessions.valid(str(request.session.get("sid", "")))

    def need_login(self, request: Request) -> None:
        if not self.logged_in(request):
            raise HTTPException(status_code=303, headers={"Location": "/login"})

    def check_csrf(self, request: Request, token: str) -> None:
        if not token or not hmac.compare_digest(token, str(request.session.get("csrf", ""))):
            raise HTTPException(status_code=403, detail="stale or missing form token; reload the page")

    # -- pages ---------------------------------------------------------------------
    def ctx(self, request: Request, **extra: Any) -> dict[str, Any]:
        """A page's template context. Once per change: the director's own pages
        read the exact data version (the page after a check-in shows it);
        spectators' pages the throttled cache, whose version is read at most
        twice a second."""
        director = self.director
        cache = director.memo if self.logged_in(request) else self.pages.get
        data = cache("export_event:100", lambda: export_event(director, audit=100))
        names = {e["id"]: numbered(e["number"], e["name"]) for e in data["entrants"]}  # "#3 Ana & Bia", never an id
        return {"request": request, "data": data, "names": names, "refresh": self.refresh_s,
                "logged_in": self.logged_in(request), **extra}

    def label(self, entrant_id: int) -> str:
        """``#3 Ana & Bia``: an entrant in the console's answers (never its database id)."""
        from .console import entrant_labels

        return entrant_labels(self.director).get(entrant_id, "?")

    # -- the console's forms ----------------------------------------------------------
    def refused(self, request: Request, reason: str) -> None:
        """A refused form is audited (within the address's budget), its reason cut short."""
        addr = request.client.host if request.client else "?"
        self.director.audit_limited(f"web:{addr}", "form-refused", reason[:200], path=request.url.path)

    def act(self, request: Request, token: str, fn: Callable[[], Message]) -> RedirectResponse:
        """Run a form's action; its message (a :class:`Sentence`) or refusal comes back on the
        console in the page's language (the audit log keeps the English)."""
        self.need_login(request)
        self.check_csrf(request, token)
        from sqlalchemy.exc import SQLAlchemyError

        try:
            msg = fn()
        except (DirectorError, ValueError, OverflowError) as exc:
            self.refused(request, str(exc))
            form = request.url.path.rsplit("/", 1)[-1]  # the form to open again (its words are translated)
            told = quoted(self.tr_of(request)(message_of(exc)))
            return RedirectResponse(f"/director?error={told}&form={quoted(form)}", status_code=303)
        except SQLAlchemyError as exc:  # never a 500: the form again, with what went wrong
            why = str(exc).splitlines()[0]
            self.refused(request, why)
            told = self.tr_of(request)(say("the database refused it: {why}", why=why))
            return RedirectResponse(f"/director?error={quoted(told)}", status_code=303)
        tr = self.tr_of(request)  # after the action: a change of the event's language answers in the new one
        return RedirectResponse(f"/director?message={quoted(msg(tr) if callable(msg) else tr(msg))}",
                                status_code=303)


def site_of(request: Request) -> DirectorSite:
    """The route's site (FastAPI dependency): the app's ``state.site``."""
    return request.app.state.site


#: A route's parameter that receives the site: ``def page(site: Site) -> ...``.
Site = Annotated[DirectorSite, Depends(site_of)]
