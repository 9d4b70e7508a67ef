"""The director's routes over their injected site (tournament/site.py), without
the app's factory: the login throttle and sessions on a fake clock, the
crosstable and form parsing as functions, and each route module served alone
on a bare app over a site built here."""

from __future__ import annotations

import io
import zipfile

import pytest
from fastapi import APIRouter, FastAPI, Request
from fastapi.templating import Jinja2Templates
from fastapi.testclient import TestClient
from starlette.middleware.sessions import SessionMiddleware

from tablesense.tournament import routes_director, routes_login, routes_public
from tablesense.tournament.page_cache import PageCache
from tablesense.tournament.routes_director import form_int, form_score, split_names
from tablesense.tournament.routes_public import crosstable_grid
from tablesense.tournament.service import Director, DirectorError
from tablesense.tournament.site import (
    LOCKOUT_S,
    MAX_FAILED_LOGINS,
    DirectorSite,
    LoginSessions,
    LoginThrottle,
    hash_password,
)
from tablesense.tournament.web import TEMPLATES, install_page_language

from .test_director import make_event, result_for


def test_wrong_passwords_wait_twice_as_long_each_then_lock_the_address_out() -> None:
    throttle = LoginThrottle(delay_s=0.5)
    assert throttle.locked_minutes("10.0.0.1", 0.0) is None
    delays = [throttle.failed("10.0.0.1", float(t)) for t in range(MAX_FAILED_LOGINS)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert throttle.failed("10.0.0.9", 0.0) == 0.5, "another address is counted apart"
    assert throttle.locked_minutes("10.0.0.1", 5.0) == 15
    assert throttle.locked_minutes("10.0.0.1", 10 * 60.0) == 5
    assert throttle.locked_minutes("10.0.0.1", LOCKOUT_S + 0.5) is None, "the first failure aged out"
    throttle.succeeded("10.0.0.9")
    assert "10.0.0.9" not in throttle.failures


def test_a_login_session_ends_on_logout_or_expiry() -> None:
    now = [100.0]
    sessions = LoginSessions(max_age=60.0, clock=lambda: now[0])
    a, b = sessions.open(), sessions.open()
    assert a != b and sessions.valid(a) and sessions.valid(b)
    sessions.end(a)
    assert not sessions.valid(a)
    now[0] = 161.0
    assert not sessions.valid(b) and b not in sessions.expiry
    assert not sessions.valid("copied-or-made-up")


def test_the_crosstable_pairs_every_two_entrants_who_shared_a_table() -> None:
    rounds = [{"matches": [
        {"entrants": [1, 2], "score": [150, 97]},
        {"entrants": [3, 4, 5], "score": [10, 20, 30]},
        {"entrants": [6, None], "score": None},  # a bye
        {"entrants": [7, 8], "score": None},  # still playing
    ]}]
    grid = crosstable_grid(rounds)
    assert grid[1] == {2: ["150-97"]} and grid[2] == {1: ["97-150"]}
    assert grid[4] == {3: ["20-10"], 5: ["20-30"]}
    assert set(grid) == {1, 2, 3, 4, 5}


def test_numbers_typed_in_forms() -> None:
    assert form_int(" 7 ", "match") == 7
    assert form_score("97.5") == 97.5
    assert split_names("Ana, Bia,,") == ["Ana", "Bia"]
    for bad in ("", "x", "0", "99999999999", "1e3"):
        with pytest.raises(DirectorError, match="the match must be a whole number"):
            form_int(bad, "match")
    for bad in ("nan", "inf", "-1", "x" * 30):
        with pytest.raises(DirectorError, match="a score is a number of points"):
            form_score(bad)


def _alone(d: Director, *routers: APIRouter) -> tuple[TestClient, DirectorSite]:
    """Only these route modules, on a bare app over a site built here (and one
    route of the test's own that shows the session's form token)."""
    templates = Jinja2Templates(directory=str(TEMPLATES))
    site = DirectorSite(d, templates, PageCache(d.data_version), hash_password("letmein"),
                        throttle=LoginThrottle(delay_s=0.0))
    install_page_language(templates, site.event_lang)
    app = FastAPI()
    app.add_middleware(SessionMiddleware, secret_key="k")
    app.state.site = site
    for r in routers:
        app.include_router(r)

    @app.get("/token")
    def token(request: Request) -> str:
        return str(request.session.get("csrf", ""))

    return TestClient(app), site


def test_the_login_and_director_routes_alone_over_their_site(sqlite_url: str) -> None:
    d, _key = make_event(sqlite_url, n=4)
    client, site = _alone(d, routes_login.router, routes_director.router)
    assert client.post("/login", data={"password": "wrong"}).status_code == 401
    assert site.throttle.failures, "the wrong password was counted on the site"
    assert client.post("/director/pair", data={"csrf": ""}, follow_redirects=False).headers["location"] == "/login"
    r = client.post("/login", data={"password": "letmein"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/director"
    assert len(site.sessions.expiry) == 1 and not site.throttle.failures
    csrf = client.get("/token").json()
    assert csrf
    assert client.post("/director/pair", data={"csrf": "stale"}).status_code == 403
    paired: list[int] = []
    site.on_round_paired = lambda: paired.append(d.current_round_no())
    r = client.post("/director/pair", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and "round%201%20paired" in r.headers["location"]
    assert paired == [1] and d.current_round_no() == 1
    r = client.post("/director/checkin", data={"csrf": csrf, "entrant": "x"}, follow_redirects=False)
    assert "error=" in r.headers["location"] and r.headers["location"].endswith("form=checkin")
    assert client.post("/logout", follow_redirects=False).headers["location"] == "/standings"
    assert not site.sessions.expiry


def test_the_public_routes_alone_over_their_site(sqlite_url: str) -> None:
    d, key = make_event(sqlite_url, n=4)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    assert d.ingest(1, result_for(d, m1.id, key, revision=1)).status == "accepted"
    client, site = _alone(d, routes_public.router)
    assert client.get("/", follow_redirects=False).headers["location"] == "/standings"
    assert client.get("/api/event").json()["rounds"][0]["matches"]
    rows = client.get("/standings.csv").text.splitlines()
    assert len(rows) == 5
    assert "event.json" in zipfile.ZipFile(io.BytesIO(client.get("/records.zip").content)).namelist()
