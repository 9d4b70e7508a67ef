"""The director's web pages: live standings and pairings, printable crosstable,
exports, and the management page behind a login.

FastAPI + Jinja2 (the same stack as the table display). Public pages refresh
themselves; the management page needs the director's password (kept only as
a PBKDF2 hash) and every form carries a per-session CSRF token. Every action
goes through :class:`Director`, so it lands in the audit log.

:func:`create_app` only assembles the app: the state every route reads is one
:class:`~tablesense.tournament.site.DirectorSite` (``app.state.site``), and the
routes are module-level functions over it: routes_public.py (standings,
pairings, crosstable, exports), routes_login.py, routes_director.py (the
console and its forms); pages.py and memory_pages.py add the club's pages.
This module also gives the templates the page's language (:func:`install_page_language`).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context
from markupsafe import Markup
from starlette.middleware.sessions import SessionMiddleware

from tablesense.i18n import LANGUAGES, PSEUDO, Translator, resolve
from tablesense.i18n import ngettext as plural_text

from . import routes_director, routes_login, routes_public
from .page_cache import PageCache
from .service import Director
from .site import (
    SESSION_MAX_AGE,
    DirectorSite,
    LoginSessions,
    LoginThrottle,
    check_password,
    hash_password,
    page_language,
)
from .words import STATUS, word

__all__ = ["MIN_PASSWORD", "check_password", "create_app", "hash_password", "install_page_language", "page_language"]

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: The director's password: at least this many characters (``director serve`` refuses less).
MIN_PASSWORD = 12


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
    pages = PageCache(director.data_version)
    site = DirectorSite(
        director, templates, pages, password_hash, server_lang=resolve(lang), refresh_s=refresh_s,
        on_round_paired=on_round_paired, sessions=LoginSessions(max_age=session_max_age),
        throttle=LoginThrottle(delay_s=login_delay_s),
    )
    app.state.site = site
    app.state.pages = pages
    install_page_language(templates, site.event_lang)
    for routes in (routes_public.router, routes_login.router, routes_director.router):
        app.include_router(routes)
    # The projector, the paged audit log, the live console and its confirm actions.
    from .pages import add_club_pages

    add_club_pages(app, director, templates, need_login=site.need_login, act=site.act, on_change=on_round_paired,
                   live=live, gate=live_gate, tr_of=site.tr_of)
    # The club's memory: players, ratings, seasons (memory_pages.py, issue 20).
    from .memory_pages import add_memory_pages

    add_memory_pages(app, director, templates, need_login=site.need_login, act=site.act,
                     logged_in=site.logged_in, tr_of=site.tr_of)
    return app
