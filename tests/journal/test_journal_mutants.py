"""Journal tests written to kill mutants that survived the older suite
(benchmarks/mutation.py, docs/mutation-testing.md): the injected clock, the order in
which matches are resumed, what is stored byte for byte, and that a failed
write is rolled back and leaves the journal usable."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tablesense.journal.store import Journal, JournalError


class Clock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def test_the_clock_dates_matches_and_entries(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, clock=Clock()) as j:
        mid = j.begin({"b": 1, "a": [1, 2]}, match_id="m1")
        assert mid == "m1" and j.match_id == "m1"
        assert j.append({"z": 1, "y": {"x": None}}) == 1
        assert j.append({"type": "move"}) == 2
        j.close_match("abandoned")
        row = j.match("m1")
        assert row is not None
        assert (row.started, row.ended, row.status, row.entries) == (101.0, 104.0, "abandoned", 2)
        assert row.spec == {"a": [1, 2], "b": 1}
    db = sqlite3.connect(path)
    assert db.execute("SELECT spec FROM matches").fetchone()[0] == json.dumps(
        {"a": [1, 2], "b": 1}, sort_keys=True)
    assert [r for r in db.execute("SELECT seq, match_id, ts, entry FROM entries")] == [
        (1, "m1", 102.0, '{"y":{"x":null},"z":1}'),
        (2, "m1", 103.0, '{"type":"move"}'),
    ]
    db.close()


def test_generated_match_ids_are_twelve_hex_digits_and_unique(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        a = j.begin({})
        b = j.begin({})
        assert len(a) == 12 and len(b) == 12 and a != b
        int(a, 16)
        assert j.match_id == b


def test_running_is_the_last_started_match(tmp_path: Path) -> None:
    times = iter([50.0, 10.0, 50.0, 99.0])
    with Journal(tmp_path / "j.sqlite", clock=lambda: next(times)) as j:
        j.begin({"n": 1}, match_id="first")
        j.begin({"n": 2}, match_id="older")  # started earlier though begun later
        j.begin({"n": 3}, match_id="tie")  # same start as "first", inserted later
        running = j.running()
        assert running is not None and running.id == "tie"
        assert [m.id for m in j.matches()] == ["older", "first", "tie"]
        j.close_match(match_id="tie")
        running = j.running()
        assert running is not None and running.id == "first"
        assert j.match_id == "tie"  # closing another match does not change the open one
        assert j.match("tie") is not None and j.match("tie").status == "finished"  # type: ignore[union-attr]
        assert j.match("tie").ended == 99.0  # type: ignore[union-attr]
        assert j.match("nope") is None


def test_close_match_without_an_open_match_does_nothing(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        j.close_match()
        assert j.matches() == []


def test_entries_of_each_match_stay_apart(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        a = j.begin({}, match_id="a")
        j.append({"n": 1})
        b = j.begin({}, match_id="b")
        j.append({"n": 2})
        j.append({"n": 3})
        assert j.entries() == [{"n": 2}, {"n": 3}]
        assert j.entries(a) == [{"n": 1}]
        j.resume(a)
        j.append({"n": 4})
        assert j.entries(a) == [{"n": 1}, {"n": 4}]
        assert [(m.id, m.entries) for m in j.matches()] == [(a, 2), (b, 2)]


def test_a_failed_write_is_rolled_back_and_the_journal_stays_usable(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        j.begin({}, match_id="m")
        with pytest.raises(JournalError, match=r"^cannot write the journal .*UNIQUE"):
            j.begin({}, match_id="m")
        j.match_id = "ghost"  # no such match: the foreign key refuses the entry
        with pytest.raises(JournalError, match="FOREIGN KEY"):
            j.append({"n": 1})
        j.match_id = "m"
        assert j.append({"n": 2}) >= 1  # no transaction was left open
        assert j.entries() == [{"n": 2}]


def test_opening_creates_missing_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "j.sqlite"
    with Journal(path) as j:
        j.begin({})
    assert path.exists()


def test_a_database_without_wal_is_refused() -> None:
    with pytest.raises(JournalError, match=r"refused WAL mode \(got memory\)"):
        Journal(":memory:")


def test_a_file_that_is_not_a_journal_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(JournalError, match=r"cannot open the journal .*\(the file is left as it is\)$"):
        Journal(path)
    assert path.read_bytes() == b"not a database" * 100


def test_damaged_rows_are_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        j.begin({}, match_id="m")
        j.append({"n": 1})
    db = sqlite3.connect(path)
    db.execute("UPDATE entries SET entry = '[1]'")
    db.commit()
    damaged = r"an entry is not a JSON object \(the file is damaged"
    with Journal(path) as j, pytest.raises(JournalError, match=damaged):
        j.entries("m")
    db.execute("UPDATE entries SET entry = '{'")
    db.commit()
    with Journal(path) as j, pytest.raises(JournalError, match="cannot read the journal"):
        j.entries("m")
    db.execute("UPDATE matches SET spec = '[]'")
    db.commit()
    db.close()
    with Journal(path) as j:
        with pytest.raises(JournalError, match="match m: its description is not a JSON object"):
            j.running()
        with pytest.raises(JournalError, match="not a JSON object"):
            j.matches()
        with pytest.raises(JournalError, match="not a JSON object"):
            j.resume("m")


def test_foreign_keys_are_enforced_on_the_journal_connection(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        assert j._db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert j._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL, as documented


def test_appends_from_another_thread(tmp_path: Path) -> None:
    """The journal is shared by the referee's threads (one lock guards it):
    an append from a thread other than the opener's works."""
    import threading

    with Journal(tmp_path / "j.sqlite") as j:
        j.begin({}, match_id="m")
        errors: list[BaseException] = []

        def append() -> None:
            try:
                j.append({"from": "thread"})
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        t = threading.Thread(target=append)
        t.start()
        t.join()
        assert errors == []
        assert j.entries() == [{"from": "thread"}]


def test_match_rows_are_values(tmp_path: Path) -> None:
    import dataclasses

    with Journal(tmp_path / "j.sqlite") as j:
        j.begin({}, match_id="m")
        row = j.match("m")
        assert row is not None
        with pytest.raises(dataclasses.FrozenInstanceError):
            row.status = "finished"  # type: ignore[misc]
