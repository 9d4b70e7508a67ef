"""The director's public pages speak the event's language; a spectator may
switch with ``?lang=`` (remembered for the next page), and the pseudo-locale
shows that no heading or label on them was left unmarked."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from tablesense.tournament.service import Director
from tablesense.tournament.web import create_app, hash_password

from .test_director import make_event, result_for


def _client(d: Director, lang: str | None = None) -> TestClient:
    return TestClient(create_app(d, password_hash=hash_password("pw"), secret_key="k", lang=lang))


def _played(sqlite_url: str) -> Director:
    d, key = make_event(sqlite_url, n=4)
    d.pair_next_round()
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    assert d.ingest(1, result_for(d, m1.id, key, revision=1)).status == "accepted"
    return d


@pytest.mark.parametrize(("lang", "standings", "pairings", "html_lang"), [
    ("pt-BR", "Classificação até agora (etapa 1 em jogo)", "Etapa 1", "pt-BR"),
    ("ms", "Kedudukan setakat ini (pusingan 1 sedang dimainkan)", "Pusingan 1", "ms"),
])
def test_spectator_switches_language(sqlite_url: str, lang: str, standings: str, pairings: str, html_lang: str) -> None:
    c = _client(_played(sqlite_url))
    assert "Standings so far (round 1 in play)" in c.get("/standings").text  # the event default stays English
    page = c.get(f"/standings?lang={lang}").text
    assert f"<h2>{standings}</h2>" in page and f'<html lang="{html_lang}">' in page
    assert "Standings so far" not in page
    heads = {h.strip() for h in re.findall(r"<th[^>]*>\s*(?:<abbr[^>]*>)?([^<]*)", page)}
    assert heads and not heads & {"Played", "Won", "Points for", "Games won"}, heads  # column and tie-break names too
    nxt = c.get("/pairings").text  # remembered without the query
    assert f"<h2>{pairings}</h2>" in nxt and "<h2>Round 1</h2>" not in nxt
    assert "Played" in {h.strip() for h in re.findall(r"<th[^>]*>\s*([^<]*)", c.get("/standings?lang=en").text)}


def test_event_language_is_the_default(sqlite_url: str) -> None:
    c = _client(_played(sqlite_url), lang="ms")
    assert "<h2>Pusingan 1</h2>" in c.get("/pairings").text
    assert "<h2>Round 1</h2>" in c.get("/pairings?lang=en").text
    # a tag we have no catalog for is ignored, not an error
    r = c.get("/standings?lang=xx")
    assert r.status_code == 200


class _Labels(HTMLParser):
    """Text of the page's headings and labels (h1-h3, th, nav links, dt, p,
    small, abbr titles and aria-labels), outside the language switcher, whose
    items are each language's own name on purpose."""

    TAGS = {"h2", "h3", "th", "a", "dt", "p", "small", "title"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.skip = 0
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "nav" and "langs" in (a.get("class") or ""):
            self.skip += 1
        if not self.skip:
            for name in ("aria-label", "title"):
                if a.get(name) and tag not in ("th",):
                    self.texts.append(a[name] or "")
        if tag not in ("meta", "link", "br", "input"):
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav" and self.skip and "nav" in self.stack:
            self.skip -= 1
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if not self.skip and self.stack and self.stack[-1] in self.TAGS and data.strip():
            self.texts.append(data)


def test_pseudo_locale_leaves_no_label_unmarked(sqlite_url: str) -> None:
    d = _played(sqlite_url)
    c = _client(d, lang="qps")
    names = {e.name for e in d.entrants()} if hasattr(d, "entrants") else set()
    for path in ("/standings", "/pairings", "/crosstable"):
        p = _Labels()
        p.feed(c.get(path).text)
        assert p.texts, path
        for text in p.texts:
            rest = re.sub(r"⟦[^⟧]*⟧", "", text)
            for n in names:
                rest = rest.replace(n, "")
            rest = re.sub(r"Pair \d+|Club night", "", rest)  # entrant and event names of the fixture
            assert not re.search(r"[A-Za-z]{2,}", rest), f"{path}: unmarked text {text!r}"
