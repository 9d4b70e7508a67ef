"""A table's outbox keyed by table and event (issue 30): two tables whose
hosts share a folder share ``outbox.sqlite`` but never a row; an assignment
for another table is refused; a file of the older layout is taken over."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tablesense.journal.outbox import TableOutbox, WrongTable


def _digest(message: dict[str, Any]) -> str:
    return "d:" + json.dumps(message, sort_keys=True)


def _assignment(table: int | None, event: int = 1, rnd: int = 1, match: int = 10) -> dict[str, Any]:
    a: dict[str, Any] = {"event": event, "round": rnd, "matches": [{"match": match}]}
    if table is not None:
        a["table"] = table
    return a


def test_two_tables_in_one_file_keep_apart(tmp_path: Path) -> None:
    path = tmp_path / "outbox.sqlite"
    one, two = TableOutbox(path, 1, _digest), TableOutbox(path, 2, _digest)
    try:
        assert one.assign(_assignment(1, match=10)) and two.assign(_assignment(2, match=11))
        assert (one.assignment() or {})["matches"][0]["match"] == 10
        assert (two.assignment() or {})["matches"][0]["match"] == 11
        one.queue("result/1/1/1/1", {"table": 1})
        two.queue("result/1/1/2/1", {"table": 2})
        assert [k for k, _p in one.pending()] == ["result/1/1/1/1"]
        assert [k for k, _p in two.pending()] == ["result/1/1/2/1"]
        assert not two.acked("result/1/1/1/1", _digest({"table": 1}), "accepted"), "table 2 acked table 1's"
        assert one.acked("result/1/1/1/1", _digest({"table": 1}), "accepted")
        assert one.ack_status("result/1/1/1/1") == "accepted" and two.ack_status("result/1/1/1/1") is None
        one.put("revision/1/1", 3)
        assert two.get("revision/1/1") is None
        one.save_match(1, 10, "playing", [])
        two.save_match(1, 10, "done", [{"x": 1}], 2)  # the same match number, another table's row
        assert one.match(1, 10) == ("playing", [], None) and two.match(1, 10) == ("done", [{"x": 1}], 2)
        assert one.match(2, 10) is None, "a match row belongs to its event"
    finally:
        one.close()
        two.close()


def test_an_assignment_for_another_table_is_refused(tmp_path: Path) -> None:
    box = TableOutbox(tmp_path / "outbox.sqlite", 2, _digest)
    try:
        box.assign(_assignment(2, match=11))
        with pytest.raises(WrongTable, match="assignment for table 1 reached table 2"):
            box.assign(_assignment(1, match=10))
        with pytest.raises(WrongTable):
            box.put("assignment", _assignment(1, match=10))
        assert (box.assignment() or {})["matches"][0]["match"] == 11
        assert box.assign(_assignment(None, rnd=2, match=12)), "a director that names no table: the topic did"
        assert not box.assign(_assignment(2, rnd=1, match=11)), "an older round never replaces a newer one"
        assert (box.assignment() or {})["round"] == 2
    finally:
        box.close()


def test_a_file_of_the_older_layout_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "outbox.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE outbox (key TEXT PRIMARY KEY, digest TEXT, payload TEXT, created REAL, acked INTEGER DEFAULT 0,
            ack_status TEXT);
        CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT);
        CREATE TABLE matches (match INTEGER PRIMARY KEY, state TEXT, hands TEXT, revision INTEGER);
        """
    )
    db.execute("INSERT INTO outbox VALUES ('result/4/2/3/1', 'old', ?, 1.0, 0, NULL)", (json.dumps({"r": 1}),))
    db.execute("INSERT INTO kv VALUES ('assignment', ?)", (json.dumps(_assignment(None, event=4, rnd=2, match=7)),))
    db.execute("INSERT INTO matches VALUES (7, 'reporting', '[]', 1)")
    db.commit()
    db.close()
    box = TableOutbox(path, 3, _digest)
    try:
        assert box.pending() == [("result/4/2/3/1", json.dumps({"r": 1}))]
        assert box.acked("result/4/2/3/1", _digest({"r": 1}), "accepted"), "the waiting digest is brought up to date"
        assert (box.assignment() or {})["round"] == 2
        assert box.match(4, 7) == ("reporting", [], 1)
    finally:
        box.close()
    names = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "outbox" not in names and "kv" not in names
