"""The rehearsal (issue 30): a Swiss of 8 pairs on 4 virtual tables (2 rounds; 3 as a soak), each a
real ``play --director`` process (referee, journal, display, outbox) whose
computer hands move the pieces on its virtual boards, a director on PostgreSQL
and a TLS broker, unattended to a winner; the console shows every real table's
hand and score while it plays (Chromium screenshots, desktop and phone). And the
command's answers to bad input, each with its documented exit status."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.games.record import replay
from tablesense.tournament.db import Database, Result
from tablesense.tournament.mosquitto import mosquitto_binary
from tablesense.tournament.rehearsal import Plan, Rehearsal, Report
from tablesense.tournament.service import Director
from testsupport import REPO, need

from .conftest import _pg_schema_url

SHOTS = REPO / "test-artifacts" / "web"
HAND_AND_SCORE = re.compile(r"hand (\d+) · (\d+) – (\d+)")


@pytest.fixture
def pg_url(postgres_url: str) -> Iterator[str]:
    yield from _pg_schema_url(postgres_url)


# Two rounds to 5 points: every table plays twice (so each stops cleanly between
# matches) and the Swiss pairs its second round from the first's results. The
# three-round evening to 10, three times the play, is a soak (--runslow).
@pytest.mark.parametrize(("rounds", "target"), [pytest.param(2, 5, id="2-rounds-to-5"),
                                                pytest.param(3, 10, id="3-rounds-to-10",
                                                             marks=[pytest.mark.slow, pytest.mark.timeout(1200)])])
def test_a_rehearsal_runs_an_evening_of_real_tables_to_a_winner(pg_url: str, tmp_path: Path, browser: Any,
                                                                rounds: int, target: int) -> None:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    tables = 4
    plan = Plan(db_url=pg_url, workdir=tmp_path / "evening", pairs=8, rounds=rounds, tables=tables, target=target,
                speed=6.0, tls=True, port=0, password="rehearsal-password", round_timeout=600.0)
    said: list[str] = []
    r = Rehearsal(plan, tell=lambda line: said.append(str(line)))
    outcome: dict[str, Any] = {}

    def evening() -> None:
        try:
            outcome["report"] = r.run()
        except Exception as exc:  # noqa: BLE001 - the test says what stopped the evening
            outcome["error"] = exc

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        r.start()
        assert r.broker_files.ca is not None and r.table_url(1).startswith("mqtts://"), "the broker speaks TLS"
        runner = threading.Thread(target=evening, daemon=True)
        runner.start()
        for p in (page, phone):
            p.goto(r.url + "/login")
            p.fill("input[name=password]", "rehearsal-password")
            p.click("form button")
            p.wait_for_url("**/director")
        # every real table shows its hand and score on the console while it plays
        seen: dict[int, str] = {}
        shot = False
        while len(seen) < 4 and "report" not in outcome and "error" not in outcome:
            for card in page.locator("article.tcard").all():
                table = int(card.get_attribute("data-table") or 0)
                text = card.inner_text()
                if card.get_attribute("data-state") in ("playing", "stalled") and HAND_AND_SCORE.search(text):
                    seen.setdefault(table, text)
            scored = [t for t in seen.values() if HAND_AND_SCORE.search(t) and "0 – 0" not in t]
            if (len(seen) == 4 or scored) and not shot:  # the console as a director sees it mid-evening
                page.screenshot(path=str(SHOTS / "rehearsal-console.png"), full_page=True)
                phone.screenshot(path=str(SHOTS / "rehearsal-console-phone.png"), full_page=True)
                shot = True
            page.wait_for_timeout(250)
        assert set(seen) == {1, 2, 3, 4}, f"tables never shown playing with hand and score: {seen}; {said[-5:]}"
        assert all("to play" in text for text in seen.values()), seen
        page.goto(r.url + "/live")
        page.wait_for_selector("article.tcard")
        runner.join(600)
        assert "error" not in outcome, outcome.get("error")
        report: Report = outcome["report"]
        page.goto(r.url + "/standings")
        # The winner is known: the page no longer reloads itself. While it did (every 5 s), a
        # full-page capture slower than that under load was cut by each reload and never ended.
        assert page.locator("meta[http-equiv=refresh]").count() == 0
        page.screenshot(path=str(SHOTS / "rehearsal-standings.png"), full_page=True)
    finally:
        page.close()
        phone.close()
        r.stop()
    assert report.rounds == rounds and report.matches == tables * rounds and report.winners
    d = Director(Database(pg_url), report.event_id)
    matches = [m for rnd in range(1, rounds + 1) for m in d.matches(rnd)]
    assert len(matches) == tables * rounds and all(m.confirmed for m in matches)
    with d.db.session() as s:
        results = list(s.scalars(select(Result)))
    assert len(results) == tables * rounds, "one result per match, each sent once through its table's outbox"
    for res in results:
        for rec in res.payload["records"]:
            assert replay(rec).to_json()["ok"] is True
    deals = {res.payload["table"]: [] for res in results}
    for res in results:
        deals[res.payload["table"]].append(res.payload["records"][0]["hands"][0]["deal"])
    assert all(len({str(x) for x in ds}) == len(ds) for ds in deals.values()), "a table dealt two matches alike"
    assert f"the winner: {' & '.join(report.winners)}" in said
    for t in (1, 2, 3, 4):  # each table stopped cleanly between matches
        log = (plan.workdir or tmp_path) / f"table-{t}" / "play.log"
        assert "stopped between matches" in log.read_text(), log.read_text()[-2000:]


class _Done:
    """A command's exit status and its output as one line (the console wraps at 80 columns)."""

    def __init__(self, *args: str) -> None:
        done = CliRunner().invoke(app, ["tournament", "rehearse", *args])
        self.exit_code = done.exit_code
        self.output = " ".join(done.output.split())


def _rehearse(*args: str) -> _Done:
    return _Done(*args)


def test_bad_input_gets_a_sentence_and_its_exit_status(tmp_path: Path) -> None:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    club = f"sqlite:///{tmp_path / 'club.db'}"
    Director.create_event(Database(club), "Club night")
    done = _rehearse("--event", "99", "--from-db", club, "--workdir", str(tmp_path / "w1"), "--port", "0")
    assert done.exit_code == 2 and "no event 99" in done.output
    done = _rehearse("--event", "1", "--from-db", club, "--workdir", str(tmp_path / "w2"), "--port", "0")
    assert done.exit_code == 2 and "event 1 has 0 entrants" in done.output
    done = _rehearse("--pairs", "1", "--port", "0", "--workdir", str(tmp_path / "w3"))
    assert done.exit_code == 2 and "--pairs is 1" in done.output
    done = _rehearse("--confirm", "badges")
    assert done.exit_code == 2 and "the computer carries no badges" in done.output
    done = _rehearse("--event", "1", "--from-db", club, "--db", club)
    assert done.exit_code == 2 and "a database of its own" in done.output
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = _rehearse("--port", str(port), "--workdir", str(tmp_path / "w4"))
    assert done.exit_code == 2 and f"port {port} is in use" in done.output
    done = _rehearse("--db", "postgresql+psycopg://nobody@127.0.0.1:1/none", "--port", "0",
                     "--workdir", str(tmp_path / "w5"))
    assert done.exit_code == 3 and "cannot use the database" in done.output
