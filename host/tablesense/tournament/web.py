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
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.middleware.sessions import SessionMiddleware

from .export import export_event, records_archive, results_csv, standings_csv
from .service import Director, DirectorError

TEMPLATES = Path(__file__).resolve().parent / "templates"


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
) -> FastAPI:
    """The director's app for one event."""
    app = FastAPI(title="tablesense director", docs_url=None, redoc_url=None)
    app.add_middleware(SessionMiddleware, secret_key=secret_key or secrets.token_hex(32), same_site="strict")
    templates = Jinja2Templates(directory=str(TEMPLATES))

    def ctx(request: Request, **extra: Any) -> dict[str, Any]:
        data = export_event(director)
        names = {e["id"]: e["name"] for e in data["entrants"]}
        return {"request": request, "data": data, "names": names, "refresh": refresh_s,
                "logged_in": bool(request.session.get("director")), **extra}

    def need_login(request: Request) -> None:
        if not request.session.get("director"):
            raise HTTPException(status_code=303, headers={"Location": "/login"})

    def check_csrf(request: Request, token: str) -> None:
        if not token or not hmac.compare_digest(token, str(request.session.get("csrf", ""))):
            raise HTTPException(status_code=403, detail="stale or missing form token; reload the page")

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/standings", status_code=303)

    @app.get("/standings", response_class=HTMLResponse)
    def standings(request: Request) -> Response:
        return templates.TemplateResponse(request, "standings.html", ctx(request))

    @app.get("/pairings", response_class=HTMLResponse)
    def pairings(request: Request) -> Response:
        return templates.TemplateResponse(request, "pairings.html", ctx(request))

    @app.get("/crosstable", response_class=HTMLResponse)
    def crosstable(request: Request) -> Response:
        c = ctx(request, refresh=0)
        grid: dict[int, dict[int, list[str]]] = {}
        for rnd in c["data"]["rounds"]:
            for m in rnd["matches"]:
                a, b = m["entrants"]
                if b is None or m["score"] is None:
                    continue
                sa, sb = m["score"]
                grid.setdefault(a, {}).setdefault(b, []).append(f"{sa}-{sb}")
                grid.setdefault(b, {}).setdefault(a, []).append(f"{sb}-{sa}")
        c["grid"] = grid
        return templates.TemplateResponse(request, "crosstable.html", c)

    @app.get("/api/event")
    def api_event() -> JSONResponse:
        return JSONResponse(export_event(director))

    @app.get("/export.json")
    def export_json() -> Response:
        return JSONResponse(export_event(director), headers={"Content-Disposition": "attachment; filename=event.json"})

    @app.get("/standings.csv")
    def export_standings() -> Response:
        return Response(standings_csv(director), media_type="text/csv", headers={"Content-Disposition": "attachment; filename=standings.csv"})

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
    def login(request: Request, password: str = Form(...)) -> Response:
        if not check_password(password, password_hash):
            director.audit("web", "login-failed")
            return templates.TemplateResponse(request, "login.html", {"request": request, "error": "wrong password", "logged_in": False}, status_code=401)
        request.session["director"] = True
        request.session["csrf"] = secrets.token_urlsafe(24)
        return RedirectResponse("/director", status_code=303)

    @app.post("/logout")
    def logout(request: Request) -> RedirectResponse:
        request.session.clear()
        return RedirectResponse("/standings", status_code=303)

    @app.get("/director", response_class=HTMLResponse)
    def manage(request: Request, message: str = "", error: str = "") -> Response:
        need_login(request)
        c = ctx(request, refresh=0, message=message, error=error, csrf=request.session.get("csrf", ""),
                tables=director.tables(), quiet=set(director.quiet_tables()),
                current=director.current_round_no(), complete=director.round_complete(), now=time.time(),
                last_seen=director.last_seen)
        return templates.TemplateResponse(request, "director.html", c)

    def act(request: Request, token: str, fn: Callable[[], str]) -> RedirectResponse:
        need_login(request)
        check_csrf(request, token)
        try:
            msg = fn()
        except (DirectorError, ValueError) as exc:
            return RedirectResponse(f"/director?error={_q(str(exc))}", status_code=303)
        return RedirectResponse(f"/director?message={_q(msg)}", status_code=303)

    @app.post("/director/pair")
    def pair(request: Request, csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            n = director.pair_next_round("director-web")
            if on_round_paired is not None:
                on_round_paired()
            return f"round {n} paired and announced to the tables"
        return act(request, csrf, run)

    @app.post("/director/correct")
    def correct(request: Request, match: int = Form(...), score_a: float = Form(...), score_b: float = Form(...),
                winner: str = Form(""), reason: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            w = int(winner) if winner.strip() else None
            director.correct(match, (score_a, score_b), w, reason, "director-web")
            return f"match {match} corrected"
        return act(request, csrf, run)

    @app.post("/director/register")
    def register(request: Request, name: str = Form(...), members: str = Form(""), badges: str = Form(""),
                 seed: int = Form(0), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            eid = director.register(name, _split(members), _split(badges), seed)
            return f"{name} registered as entrant {eid}"
        return act(request, csrf, run)

    @app.post("/director/checkin")
    def checkin(request: Request, entrant: int = Form(...), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            director.check_in(entrant, "director-web")
            return f"entrant {entrant} checked in"
        return act(request, csrf, run)

    @app.post("/director/withdraw")
    def withdraw(request: Request, entrant: int = Form(...), reason: str = Form(""), csrf: str = Form("")) -> RedirectResponse:
        def run() -> str:
            director.withdraw(entrant, reason, "director-web")
            return f"entrant {entrant} withdrawn"
        return act(request, csrf, run)

    return app


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _q(text: str) -> str:
    from urllib.parse import quote

    return quote(text[:300])
