"""The director's pages: public standings/pairings/crosstable, exports, and the
management page behind a login with CSRF-protected forms."""

from __future__ import annotations

import csv
import io
import json
import random
import re
import zipfile

from fastapi.testclient import TestClient

from tablesense.tournament.service import Director
from tablesense.tournament.web import check_password, create_app, hash_password

from .test_director import make_event, result_for


def _app(d: Director) -> TestClient:
    return TestClient(create_app(d, password_hash=hash_password("letmein"), secret_key="k"))


def _csrf(html: str) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', html)
    assert m
    return m.group(1)


def test_public_pages_and_exports(sqlite_url: str) -> None:
    d, key = make_event(sqlite_url, n=4)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    assert d.ingest(1, result_for(d, m1.id, key, revision=1)).status == "accepted"
    c = _app(d)
    r = c.get("/standings")
    assert r.status_code == 200 and "Pair 1" in r.text and "Club night" in r.text
    assert "Round 1" in c.get("/pairings").text
    assert "crosstable" in c.get("/crosstable").text.lower()
    data = c.get("/export.json").json()
    assert {"entrants", "rounds", "standings", "audit"} <= set(data)
    rows = list(csv.reader(io.StringIO(c.get("/standings.csv").text)))
    assert rows[0][:3] == ["#", "Rank", "Entrant"] and len(rows) == 5 and rows[1][0].startswith("#")
    res = list(csv.reader(io.StringIO(c.get("/results.csv").text)))
    assert len(res) == 3
    z = zipfile.ZipFile(io.BytesIO(c.get("/records.zip").content))
    names = z.namelist()
    assert "event.json" in names and "audit.json" in names
    recs = [n for n in names if n.startswith("records/")]
    assert len(recs) == 1 and json.loads(z.read(recs[0]))["format"] == "tablesense.record/1"


def test_director_page_needs_login_and_csrf(sqlite_url: str) -> None:
    d, _ = make_event(sqlite_url, n=4)
    c = _app(d)
    r = c.get("/director", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login"
    assert c.post("/director/pair", data={"csrf": "x"}, follow_redirects=False).status_code == 303
    assert d.current_round_no() == 0
    assert c.post("/login", data={"password": "nope"}).status_code == 401
    r = c.post("/login", data={"password": "letmein"}, follow_redirects=True)
    assert r.status_code == 200 and "Pair next round" in r.text
    token = _csrf(r.text)
    assert c.post("/director/pair", data={"csrf": "forged"}).status_code == 403
    r = c.post("/director/pair", data={"csrf": token}, follow_redirects=True)
    assert "round 1 paired" in r.text and d.current_round_no() == 1
    m = d.matches(1)[0]
    r = c.post("/director/correct", data={"csrf": token, "match": m.id, "score_a": 7, "score_b": 3,
                                          "winner": m.entrant_a, "reason": ""}, follow_redirects=True)
    assert "needs a reason" in r.text
    r = c.post("/director/correct", data={"csrf": token, "match": m.id, "score_a": 7, "score_b": 3,
                                          "winner": m.entrant_a, "reason": "table 1 display broke"}, follow_redirects=True)
    assert "corrected" in r.text
    assert any(a["action"] == "correction" and a["actor"] == "director-web" for a in d.audit_log())
    r = c.post("/director/register", data={"csrf": token, "name": "Late pair", "members": "X, Y", "badges": "", "seed": 0},
               follow_redirects=True)
    assert "registered" in r.text
    assert any(a["action"] == "login-failed" for a in d.audit_log())


def test_password_hash_roundtrip() -> None:
    h = hash_password("pw", salt=random.Random(0).randbytes(16))
    assert check_password("pw", h) and not check_password("pw2", h) and not check_password("pw", "junk")
