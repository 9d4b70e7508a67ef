"""Every director page speaks the page's language: the pseudo-locale run of
every page (public, console, audit, login, players, seasons, replay, projector)
finds no untranslated word, in the HTML and in the words each page hands its
script; an event's own language is its pages' default (a visitor may switch,
the server's ``--lang`` is the fallback); the console's answers and refusals
come back in the page's language.

Text a person typed or a program named is not the page's to translate: the
names of the event, entrants and players, audit reasons (``translate="no"``),
the language switcher (each language's own name), file names of the exports
and the command in ``<code>``.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tablesense.tournament.db import Database
from tablesense.tournament.players import add_player, register_players
from tablesense.tournament.seasons import create_season
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director, DirectorError
from tablesense.tournament.web import create_app, hash_password

from .test_director import result_for

PASSWORD = "pw-for-the-language-test"
NAMES = ["Ana Souza", "Bruno Lima", "Siti Aminah", "Wong Kah Wai"]
#: Words on a page that are nobody's to translate (file names, program names, units).
KEEP = re.compile(r"standings\.csv|results\.csv|event\.json|records\.zip|\bCSV\b|\bJSON\b|tablesense|"
                  r"Home|End|NaN|Infinity|openskill|Weng-Lin|Buchholz|Sonneborn-Berger|Kems|Swiss|"
                  r"\bR\d+\b|\bs\b")


def _event(db_url: str, lang: str | None = None) -> tuple[Director, int, int, int]:
    """An evening with club players, one confirmed match with its record, a season."""
    db = Database(db_url)
    ps = [add_player(db, n, badge=f"b{i}") for i, n in enumerate(NAMES)]
    opts: dict[str, Any] = {"target": 30, "lots_seed": "t", "rounds": 2, "confirm": "director"}
    if lang:
        opts["lang"] = lang
    d = Director.create_event(db, "Noite do clube", options=opts)
    register_players(d, ps[:2])
    register_players(d, ps[2:])
    key = TableKey.from_seed(b"table-1")
    d.add_table(1, key.public)
    d.pair_next_round()
    m = d.matches(1)[0]
    assert d.ingest(1, result_for(d, m.id, key, revision=1)).status == "accepted"
    season = create_season(db, "Temporada", events=[d.event_id])
    return d, ps[0], m.id, season


def _client(d: Director, lang: str | None = None) -> TestClient:
    return TestClient(create_app(d, password_hash=hash_password(PASSWORD), secret_key="k", lang=lang))


def _login(c: TestClient) -> None:
    assert c.post("/login", data={"password": PASSWORD}, follow_redirects=False).status_code == 303


class _Text(HTMLParser):
    """Every text a person reads on a page (text nodes, titles, labels, placeholders,
    button captions), outside scripts, styles, code, the language switcher and
    ``translate="no"``; and the word lists the page's scripts are handed (``const L``)."""

    SKIP = {"script", "style", "code"}
    VOID = {"meta", "link", "br", "input", "img", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.texts: list[str] = []
        self.scripts: list[str] = []

    def _skipping(self) -> bool:
        return any(skip for _tag, skip in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        skip = tag in self.SKIP or a.get("translate") == "no" or (tag == "nav" and "langs" in (a.get("class") or ""))
        if not self._skipping() and not skip:
            for name in ("title", "aria-label", "placeholder", "alt"):
                if a.get(name):
                    self.texts.append(a[name] or "")
        if tag not in self.VOID:
            self.stack.append((tag, skip))

    def handle_endtag(self, tag: str) -> None:
        if any(t == tag for t, _ in self.stack):
            while self.stack and self.stack.pop()[0] != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] == "script":
            self.scripts.append(data)
        elif not self._skipping() and data.strip():
            self.texts.append(data)


def untranslated(text: str, names: list[str]) -> str:
    """What is left of a text once pseudo-translated parts, names and kept words are taken out."""
    rest = text
    while "⟦" in rest and (inner := re.sub(r"⟦[^⟦⟧]*⟧", " ", rest)) != rest:  # nested: a Sentence's own fields
        rest = inner
    for n in sorted(names, key=len, reverse=True):
        rest = rest.replace(n, " ")
    rest = KEEP.sub(" ", rest)
    return " ".join(re.findall(r"[A-Za-z]{2,}", rest))


def _script_words(scripts: list[str]) -> list[str]:
    """The strings of every ``const L = {...}`` word list a page hands its script."""
    out: list[str] = []
    for body in scripts:
        for m in re.finditer(r"const L = (\{.*?\});\n", body, re.S):
            def walk(v: Any) -> None:
                if isinstance(v, dict):
                    for x in v.values():
                        walk(x)
                elif isinstance(v, str):
                    out.append(v)
            walk(json.loads(m[1]))
    return out


def test_pseudo_locale_every_director_page_is_translated(sqlite_url: str) -> None:
    d, player, match, season = _event(sqlite_url)
    c = _client(d, lang="qps")
    names = NAMES + ["Noite do clube", "Temporada"] + [" & ".join(NAMES[:2]), " & ".join(NAMES[2:])]
    names += [e.name for e in d.entrants()]
    login_page = c.get("/login").text
    _login(c)
    pages = ["/standings", "/pairings", "/crosstable", "/live", "/show", "/players", f"/players/{player}",
             "/seasons", f"/seasons/{season}", f"/replay/{match}", "/director", "/audit"]
    bad: dict[str, list[str]] = {}
    lists = 0
    for path, html in [("/login", login_page)] + [(p, c.get(p).text) for p in pages]:
        p = _Text()
        p.feed(html)
        assert p.texts, path
        left = [f"{t.strip()!r} -> {u}" for t in p.texts if (u := untranslated(t, names))]
        words = _script_words(p.scripts)
        lists += bool(words)
        left += [f"script word {w!r}" for w in words if not w.startswith("⟦") and untranslated(w, names)]
        if left:
            bad[path] = left
    assert not bad, json.dumps(bad, indent=1, ensure_ascii=False)
    assert lists >= 4  # the console, /live, the projector and the replay hand their scripts words


def test_console_answers_and_refusals_in_the_page_language(sqlite_url: str) -> None:
    d, _player, match, _season = _event(sqlite_url)
    c = _client(d, lang="pt-BR")
    _login(c)
    csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/director").text)
    assert csrf
    page = c.post("/director/confirm", data={"match": str(match), "csrf": csrf[1]}).text
    assert "etapa 1, mesa 1 confirmada" in page  # by round and table, never the database id
    page = c.post("/director/withdraw", data={"entrant": "99", "reason": "x", "csrf": csrf[1]}).text
    assert "não há inscrito 99 neste evento" in page  # a refusal from the service, translated
    page = c.post("/director/correct", data={"match": "x", "score_a": "1", "score_b": "2", "reason": "r",
                                             "csrf": csrf[1]}).text
    assert "a partida deve ser um número inteiro" in page  # a form error names its field in Portuguese
    assert re.search(r"<details open>\s*<summary>Corrigir um resultado", page)  # and its form opens again
    assert "Etapa 2" not in page and "Etapa 1" in page  # the console's heading, glossary: a round is an etapa
    head = c.get("/standings.csv").text.splitlines()[0]  # a file people open: headers in their language
    assert head.startswith("#,Posição,Inscrito") and "Jogadas" in head, head
    assert c.get("/results.csv").text.startswith("round,match,table")  # a file for programs keeps its keys
    ms = c.get("/director?lang=ms").text
    assert "Sahkan semua yang dilaporkan" in ms and "Padankan pusingan seterusnya" in ms
    assert "pusingan 1 belum selesai" not in ms  # round 1 is confirmed: it may be paired
    assert "tiada padanan 2 peserta yang mengelakkan perlawanan ulangan" in ms  # the pairing status says why, in Malay


def test_event_language_is_the_pages_default(sqlite_url: str) -> None:
    d, _player, _match, _season = _event(sqlite_url, lang="pt")
    assert d.language() == "pt-BR"  # stored as the tag people read
    c = _client(d, lang="ms")  # the server's language is only the fallback
    page = c.get("/standings").text
    assert '<html lang="pt-BR">' in page and "Classificação até agora (etapa 1 em jogo)" in page
    assert '<html lang="en">' in c.get("/standings?lang=en").text  # a visitor switches ...
    assert "<h2>Round 1</h2>" in c.get("/pairings").text
    assert '<html lang="en">' in c.get("/crosstable").text  # ... and the choice is remembered
    fresh = _client(d, lang="ms")
    assert '<html lang="pt-BR">' in fresh.get("/show").text  # the projector too
    cols = {col["key"]: col["label"] for col in fresh.get("/api/club").json()["columns"]}
    assert cols["played"] == "Jogadas"  # the projector's refresh keeps the event's language
    # the director changes it on the console; the change is audited
    _login(fresh)
    csrf = re.search(r'name="csrf" value="([^"]+)"', fresh.get("/director").text)
    assert csrf
    page = fresh.post("/director/language", data={"lang": "ms", "csrf": csrf[1]}).text
    assert "halaman acara kini dalam Bahasa Melayu" in page
    assert d.language() == "ms" and '<html lang="ms">' in _client(d).get("/standings").text
    assert any(a["action"] == "event-language" for a in d.audit_log())
    fresh.post("/director/language", data={"lang": "", "csrf": csrf[1]})
    assert d.language() is None and '<html lang="ms">' in _client(d, lang="ms").get("/standings").text
    assert '<html lang="en">' in _client(d, lang="en").get("/standings").text


def test_an_event_language_we_lack_is_refused(sqlite_url: str, tmp_path: Path) -> None:
    with pytest.raises(DirectorError, match="no translation for 'xx'"):
        Director.create_event(Database(sqlite_url), "X", options={"lang": "xx"})
    d, *_ = _event(sqlite_url)
    with pytest.raises(DirectorError, match="choose one of en, pt-BR, ms"):
        d.set_language("klingon")
    from typer.testing import CliRunner

    from tablesense.cli import app

    db = f"sqlite:///{tmp_path / 'cli.db'}"
    r = CliRunner().invoke(app, ["tournament", "create", "Noite", "--db", db, "--lang", "xx"])
    assert r.exit_code == 2 and "no translation for 'xx'" in r.output  # a wrong argument, as serve --lang
    r = CliRunner().invoke(app, ["tournament", "create", "Noite", "--db", db, "--lang", "pt_BR.UTF-8"])
    assert r.exit_code == 0, r.output
    assert Director(Database(db), int(r.stdout.strip())).language() == "pt-BR"  # the id alone on stdout
