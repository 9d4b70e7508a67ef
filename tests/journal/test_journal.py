"""The durable journal: SQLite WAL, fsynced appends, resume."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from tablesense.journal.store import Journal, JournalError
from testsupport import need


def test_append_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        mid = j.begin({"game": "dominoes", "seed": 1})
        assert j.append({"type": "match"}) < j.append(
            {"type": "move", "move": {"seat": 0, "tile": "6-6"}}
        )
        assert j.entries() == [
            {"type": "match"},
            {"type": "move", "move": {"seat": 0, "tile": "6-6"}},
        ]
        row = j.running()
        assert row is not None and row.id == mid and row.entries == 2 and row.spec["seed"] == 1
    # WAL mode and full sync are what make an append durable
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_resume_and_close(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    j = Journal(path)
    mid = j.begin({"game": "kems"})
    j.append({"type": "match"})
    j.close()
    j = Journal(path)
    row = j.running()
    assert row is not None and row.id == mid
    j.resume(mid)
    j.append({"type": "finish"})
    assert [e["type"] for e in j.entries()] == ["match", "finish"]
    j.close_match("finished")
    assert j.running() is None
    assert j.matches()[0].status == "finished"
    with pytest.raises(JournalError, match="no match"):
        j.resume("nope")
    j.close()
    j.close()  # idempotent


def test_append_without_a_match_is_refused(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j, pytest.raises(JournalError, match="no match is open"):
        j.append({"type": "move"})


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_unwritable_journal_is_a_clear_error(tmp_path: Path) -> None:
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(JournalError, match="cannot open the journal"):
            Journal(d / "j.sqlite")
    finally:
        d.chmod(stat.S_IRWXU)


def test_referee_stores_before_it_tells() -> None:
    """The move is in the journal before ``move_accepted`` is published, and a
    journal that refuses the write leaves the game unchanged."""
    from tablesense.referee.core import MatchSpec, Referee, RefereeError
    from tablesense.referee.layout import Sensed
    from tablesense.table.geometry import TableGeometry
    from tablesense.table.tags import TagRegistry

    stored: list[dict] = []
    seen_at_accept: list[int] = []
    fail = {"on": False}

    def store(entry: dict) -> None:
        if fail["on"]:
            raise OSError("disk full")
        stored.append(entry)

    def emit(kind: str, **data: object) -> None:
        if kind == "move_accepted":
            seen_at_accept.append(len(stored))

    ref = Referee(
        MatchSpec("dominoes", "pairs-pips", seed=1),
        TableGeometry.load("dominoes-4"),
        TagRegistry.virtual(0),
        emit=emit,
        store=store,
    )
    ref.start(0.0)
    layout = ref.rules.layout()
    cells = {c: p for c, p in layout.exact.items() if p}
    for group, pieces in layout.groups.values():
        cells.update(zip(group.cells, sorted(pieces), strict=False))
    holder = next(c for c, p in cells.items() if p == "6-6")
    del cells[holder]
    cells["center"] = "6-6"
    fail["on"] = True
    ref.feed(Sensed.of(cells), 1.0)
    with pytest.raises(RefereeError, match="disk full"):
        ref.feed(Sensed.of(cells), 5.0)
    assert ref.state.accepted == 0 and not ref.hand.moves
    fail["on"] = False
    ref.feed(Sensed.of(cells), 6.0)
    assert ref.state.accepted == 1
    assert seen_at_accept == [len(stored)] and stored[-1]["type"] == "move"


def test_the_journal_connection_syncs_every_commit(tmp_path: Path) -> None:
    """Issue 21: durability is a setting of the journal's OWN connection
    (``synchronous=FULL`` in WAL mode: every commit is fsynced before
    ``append`` returns). A fresh connection would report SQLite's default,
    so the check reads the journal's connection itself."""
    with Journal(tmp_path / "j.sqlite") as j:
        db = j._db
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        # 2 = FULL, 3 = EXTRA; NORMAL (1) can lose acknowledged moves on a power cut
        assert db.execute("PRAGMA synchronous").fetchone()[0] >= 2


def test_every_append_reaches_the_disk_before_it_returns(tmp_path: Path) -> None:
    """Counted, not only configured: each append fsyncs the WAL (an append
    that returned without a sync could be lost with the power)."""
    import shutil
    import subprocess
    import sys

    need(shutil.which("strace") is not None, "strace is not installed (apt-get install strace)")
    script = (
        "import sys\n"
        "from tablesense.journal.store import Journal\n"
        "j = Journal(sys.argv[1]); j.begin({'game': 'dominoes'})\n"
        "sys.stderr.write('START\\n'); sys.stderr.flush()\n"
        "for i in range(10):\n"
        "    j.append({'type': 'move', 'i': i})\n"
        "sys.stderr.write('END\\n'); sys.stderr.flush()\n"
        "j.close()\n"
    )
    done = subprocess.run(
        ["strace", "-f", "-e", "trace=fsync,fdatasync,write", sys.executable, "-c", script,
         str(tmp_path / "j.sqlite")],
        capture_output=True, text=True, timeout=60,
    )
    if "Operation not permitted" in done.stderr or "PTRACE" in done.stderr:
        pytest.skip("ptrace is not allowed here")
    lines = done.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "START" in line)
    end = next(i for i, line in enumerate(lines) if "END" in line)
    syncs = [line for line in lines[start:end] if "fsync(" in line or "fdatasync(" in line]
    assert len(syncs) >= 10, f"{len(syncs)} syncs for 10 appends"
