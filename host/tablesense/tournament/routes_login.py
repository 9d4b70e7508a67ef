"""The director's login and logout: a server-side session per login, wrong
passwords slowed and locked out by address (:class:`~tablesense.tournament.site.LoginThrottle`),
every failure audited. Routes over the injected :class:`~tablesense.tournament.site.DirectorSite`."""

from __future__ import annotations

import asyncio
import secrets
import time

from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from tablesense.i18n import N_

from .site import Site, check_password

router = APIRouter()


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, site: Site) -> Response:
    return site.templates.TemplateResponse(request, "login.html", {"request": request, "error": None,
                                                                   "logged_in": False})


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request, site: Site, password: str = Form("")) -> Response:
    addr = request.client.host if request.client else "?"
    now = time.monotonic()
    locked = site.throttle.locked_minutes(addr, now)
    if locked is not None:
        await run_in_threadpool(site.director.audit_limited, f"web:{addr}", "login-locked", "too many wrong passwords")
        return site.templates.TemplateResponse(request, "login.html", {
            "request": request, "logged_in": False,
            "error": site.tr_of(request).plural("too many wrong passwords from this address: try again in {n} minute",
                                                "too many wrong passwords from this address: try again in {n} minutes",
                                                locked)}, status_code=429)
    ok = len(password) <= 1024 and await run_in_threadpool(check_password, password, site.password_hash)
    if not ok:
        delay = site.throttle.failed(addr, now)
        await run_in_threadpool(site.director.audit_limited, f"web:{addr}", "login-failed", "wrong password")
        await asyncio.sleep(delay)
        return site.templates.TemplateResponse(request, "login.html", {
            "request": request, "error": site.tr_of(request)(N_("wrong password")), "logged_in": False},
            status_code=401)
    site.throttle.succeeded(addr)
    request.session.clear()
    request.session["sid"] = site.sessions.open()
    request.session["csrf"] = secrets.token_urlsafe(24)
    return RedirectResponse("/director", status_code=303)


@router.post("/logout")
def logout(request: Request, site: Site) -> RedirectResponse:
    site.sessions.end(str(request.session.get("sid", "")))
    request.session.clear()
    return RedirectResponse("/standings", status_code=303)
