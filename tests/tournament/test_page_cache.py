"""Public pages are rendered once per change of the event, not once per request."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from tablesense.tournament.page_cache import VERSION_TTL_S, PageCache
from tablesense.tournament.web import create_app, hash_password

from .test_director import make_event


def test_standings_render_once_per_change_and_show_a_change_within_the_ttl(db_url: str) -> None:
    d, _ = make_event(db_url)
    app = create_app(d, password_hash=hash_password("letmein"), secret_key="k")
    client = TestClient(app)
    pages: PageCache = app.state.pages
    first = client.get("/standings")
    assert first.status_code == 200 and "Pair 1" in first.text
    renders = pages.renders
    for _ in range(30):
        assert client.get("/standings").content == first.content
    assert pages.renders == renders, "a request recomputed the page"
    d.register("Pair 99", ["A", "B"])
    time.sleep(VERSION_TTL_S + 0.1)
    after = client.get("/standings")
    assert "Pair 99" in after.text
    assert client.get("/standings?lang=pt-BR").text != after.text  # one page per language


def test_the_data_version_is_read_at_most_once_per_ttl() -> None:
    reads = []
    now = [0.0]

    def version() -> int:
        reads.append(now[0])
        return len(reads)

    cache = PageCache(version, ttl_s=1.0, clock=lambda: now[0])
    assert cache.get("k", lambda: "a") == "a"
    assert cache.get("k", lambda: "b") == "a"
    assert len(reads) == 1
    now[0] = 1.5
    assert cache.get("k", lambda: "c") == "c"  # a new version: computed again
    assert len(reads) == 2 and cache.renders == 2
