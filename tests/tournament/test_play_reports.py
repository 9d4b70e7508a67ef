"""A real table reports to the director: a match refereed on the table (the
referee session on the direct table, as ``tablesense play`` runs it) is sent
through the headless table's outbox (tournament.reporter) over a real
Mosquitto, to a director on SQLite, and the table shows the director's echo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tablesense.games.record import replay
from tablesense.outputs.events import EventBus
from tablesense.referee.demo import DemoConfig, run_demo
from tablesense.referee.direct import DirectTable
from tablesense.referee.evening import start_reporter as _start_reporter
from tablesense.referee.reporting import confirm_at_table, report_match
from tablesense.table.geometry import TableGeometry
from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
from tablesense.tournament.db import Database, Result
from tablesense.tournament.reporter import ReportError, TableReporter
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director

TARGET = 20


def _event(url: str) -> tuple[Director, TableKey]:
    d = Director.create_event(Database(url), "Club night", format="swiss", options={"target": TARGET, "lots_seed": "p"})
    for i in range(1, 3):
        d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"], [f"04a1b2c3d4e5{i}a", f"04a1b2c3d4e5{i}b"], seed=i)
    key = TableKey.from_seed(b"real-table-1")
    d.add_table(1, key.public)
    d.pair_next_round()
    return d, key


def test_a_refereed_match_reaches_the_director_once(broker: Any, sqlite_url: str, tmp_path: Path) -> None:
    """The path of ``play --director``: the CLI's own helpers connect the table,
    show the announced match, report the finished match and wait for the echo."""
    d, key = _event(sqlite_url)
    key_file = tmp_path / "table-1.key"
    key.save(key_file)
    bus = EventBus(history_size=500)
    seen: list[dict[str, Any]] = []
    bus.add_listener(lambda ev: seen.append({"kind": ev.kind, **ev.data}))
    console = _Said()
    with DirectorBridge(d, BrokerURL.parse(broker.url("director"))) as bridge:
        assert bridge.wait_connected(30)
        bridge.announce_round()
        rep = _start_reporter(broker.url("table-1"), 1, key_file, None, tmp_path / "journal.sqlite")
        try:
            assert (tmp_path / "outbox.sqlite").exists()
            rep.attach(bus)
            m = rep.current_match(timeout=10)
            assert m is not None, "the table never got the director's announcement"
            rep.show_match(m)
            assert any(e["kind"] == "tournament_match" and e["target"] == TARGET for e in seen)
            # the match is refereed on the table: the referee session, the direct table
            said = _Said()
            played = run_demo(DemoConfig(seed=5, web=False, link="direct", timeout=60, fast=True,
                                         options={"target": m["options"]["target"]}), log=said)
            assert played.match_over, "the match did not finish"
            record = played.record
            stop = threading.Event()
            timer = threading.Timer(20, stop.set)
            timer.start()
            try:
                report_match(rep, record, stop, console)
            finally:
                timer.cancel()
            assert "director: result accepted" in console.lines, console.lines
            # the echo is on the display
            assert any(e["kind"] == "message" and e.get("director") == "accepted" for e in seen)
            assert rep.pending() == 0
            # the match is done on the table: reporting it again is refused at the table
            with pytest.raises(ReportError):
                rep.report(record)
            # both sides confirm by laying a badge on the table
            table = DirectTable(TableGeometry.load("dominoes-4"))
            cells = list(table.geometry.cells)
            table.place(cells[0], bytes.fromhex("04a1b2c3d4e51b"))
            stop = threading.Event()
            threading.Timer(0.6, lambda: table.place(cells[1], bytes.fromhex("04a1b2c3d4e52a"))).start()
            timer = threading.Timer(20, stop.set)
            timer.start()
            try:
                assert confirm_at_table(rep, table, bus, stop, console)
            finally:
                timer.cancel()
            assert any("lay your badge" in str(e.get("text")) for e in seen)
        finally:
            rep.close()
        assert wait_until(bridge.idle, 5)
    with d.db.session() as s:
        results = list(s.scalars(select(Result)))
    assert len(results) == 1
    stored = results[0].payload
    # the score the table announced at the end of the match ("match over: ... score [a, b]")
    over = next(t for t in said.lines if t.startswith("[bold]match over"))
    table_score = json.loads(over.rsplit("score ", 1)[1].removesuffix("[/]"))  # the whole line is bold (issue 18)
    assert [float(x) for x in stored["score"]] == [float(x) for x in table_score]
    assert stored["records"] == [record]
    for rec in stored["records"]:
        assert replay(rec).to_json()["ok"] is True
    match = next(x for x in d.matches(1) if x.id == m["match"])
    assert [match.score_a, match.score_b] == [float(x) for x in table_score]
    assert match.confirmed
    assert sum(a["action"] == "result-accepted" for a in d.audit_log()) == 1


def test_a_result_survives_a_host_restart_before_the_echo(broker: Any, sqlite_url: str, tmp_path: Path) -> None:
    """The director is away when the match ends and the table's host is switched
    off before any echo: the next start re-sends from the outbox, exactly once."""
    d, key = _event(sqlite_url)
    outbox = tmp_path / "outbox.sqlite"
    table_url = BrokerURL.parse(broker.url("table-1"))
    with DirectorBridge(d, BrokerURL.parse(broker.url("director"))) as bridge:
        assert bridge.wait_connected(30)
        bridge.announce_round()
    with TableReporter(1, key, outbox, table_url, resend_interval=0.2) as rep:
        m = rep.current_match(timeout=10)  # the retained announcement, director gone
        assert m is not None
        record = _record(m["options"]["target"])
        k = rep.report(record)
        assert rep.wait_echo(k, timeout=1.0) is None
        assert rep.pending() == 1
    with DirectorBridge(d, BrokerURL.parse(broker.url("director"))) as bridge:
        assert bridge.wait_connected(30)
        with TableReporter(1, key, outbox, table_url, resend_interval=0.2) as rep:
            assert rep.wait_echo(k, timeout=15) == "accepted"
            assert rep.pending() == 0
        assert wait_until(bridge.idle, 5)
    with d.db.session() as s:
        assert len(list(s.scalars(select(Result)))) == 1


def _record(target: int) -> dict[str, Any]:
    """A finished pairs-pips match record (heaviest-tile players)."""
    import random

    from tablesense.games.dominoes import DominoMatch

    rng = random.Random(11)
    mt = DominoMatch("pairs-pips", {"target": target})
    while not mt.is_over:
        h = mt.new_hand(rng=rng)
        while not h.is_over:
            moves = h.legal_moves(h.to_play)
            h.play(max(moves, key=lambda mv: (getattr(getattr(mv, "tile", None), "pips", -1), rng.random())))
        mt.finish_hand()
    return mt.to_record()


class _Said:
    """A console stand-in that keeps what the referee's log prints."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, text: str, **kwargs: Any) -> None:
        self.lines.append(str(text))


def test_play_offers_the_director_options_and_checks_them(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200", "TABLESENSE_GPIO": "sim"}
    done = subprocess.run([sys.executable, "-m", "tablesense.cli", "play", "--help"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0
    for opt in ("--director", "--table-no", "--table-key", "--outbox"):
        assert opt in done.stdout, opt
    done = subprocess.run([sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4", "--no-web",
                           "--no-keys", "--journal", str(tmp_path / "j.sqlite"), "--director", "mqtt://127.0.0.1:1"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert "--table-no and --table-key" in done.stderr and "Traceback" not in done.stderr
