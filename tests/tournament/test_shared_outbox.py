"""Two real tables whose hosts share a folder (issue 30): both default to
``outbox.sqlite`` beside the journal; each is announced its own match, and
an assignment for another table reaching a table is refused and logged."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tablesense.referee.evening import start_reporter as _start_reporter
from tablesense.tournament.bridge import BrokerURL, DirectorBridge
from tablesense.tournament.db import Database
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from tablesense.tournament.table_link import DirectorLink


def test_two_tables_sharing_a_folder_are_announced_their_own_matches(broker: Any, sqlite_url: str,
                                                                    tmp_path: Path) -> None:
    d = Director.create_event(Database(sqlite_url), "Club night", options={"target": 20, "lots_seed": "s"})
    for i in range(1, 5):
        d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"])
    for t in (1, 2):
        key = TableKey.from_seed(f"shared-{t}".encode())
        key.save(tmp_path / f"table-{t}.key")
        d.add_table(t, key.public)
    d.pair_next_round()
    at = {m.table_no: m.id for m in d.matches(1)}
    with DirectorBridge(d, BrokerURL.parse(broker.url("director"))) as bridge:
        assert bridge.wait_connected(30)
        bridge.announce_round()
        # the same folder, the same journal name: the same default outbox file
        reps = [_start_reporter(broker.url(f"table-{t}"), t, tmp_path / f"table-{t}.key", None,
                                tmp_path / "journal.sqlite") for t in (1, 2)]
        try:
            got = [r.current_match(timeout=10) for r in reps]
            assert [m and m["match"] for m in got] == [at[1], at[2]], "a table announced another table's match"
            assert {p.name for p in tmp_path.glob("outbox*")} >= {"outbox.sqlite"}
        finally:
            for r in reps:
                r.close()


def test_an_assignment_for_another_table_is_refused_and_logged(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    link = DirectorLink(2, TableKey.from_seed(b"t2"), tmp_path / "outbox.sqlite", BrokerURL("127.0.0.1", 1))
    try:
        assert link.take_assignment({"event": 1, "round": 1, "table": 2, "matches": [{"match": 5}]})
        with caplog.at_level(logging.WARNING):
            assert not link.take_assignment({"event": 1, "round": 2, "table": 1, "matches": [{"match": 9}]})
        assert "assignment for table 1 reached table 2" in caplog.text
        assert link.refused_assignments == 1
        assert (link.outbox.assignment() or {})["matches"] == [{"match": 5}]
    finally:
        link.outbox.close()
