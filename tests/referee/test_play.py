"""``tablesense play`` against the virtual boards, as a club would run it with
``tablesense sim boards`` in another terminal: the deal is read from the
racks, a play is recognised through the real link, a bad move is explained,
and a restarted host resumes the match from its journal."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tablesense.sim.virtual_table import VirtualTable
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry, all_tiles


def entries(path: Path) -> list[dict]:
    if not path.exists():
        return []
    db = sqlite3.connect(path)
    try:
        return [json.loads(r[0]) for r in db.execute("SELECT entry FROM entries ORDER BY seq")]
    except sqlite3.Error:
        return []
    finally:
        db.close()


def wait_for(pred, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return False


def start_play(ports: list[str], journal: Path, *extra: str) -> subprocess.Popen[str]:
    cmd = [
        sys.executable,
        "-m",
        "tablesense.cli",
        "play",
        "--table",
        "dominoes-4",
        "--ports",
        ",".join(ports),
        "--no-web",
        "--journal",
        str(journal),
        "--no-keys",
        *extra,
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TABLESENSE_GPIO": "sim", "COLUMNS": "200"}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _matches(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    finally:
        db.close()


def wait_stderr(proc: subprocess.Popen[str], text: str, timeout: float = 60.0) -> str:
    """Read the process's stderr until ``text`` appears (or it ends / times out)."""
    import selectors

    assert proc.stderr is not None
    seen = ""
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while text not in seen and time.monotonic() < deadline and proc.poll() is None:
        if sel.select(timeout=0.2):
            line = proc.stderr.readline()
            if not line:
                break
            seen += line
    return seen


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


def test_play_reads_the_deal_recognises_moves_and_resumes(tmp_path: Path) -> None:
    geometry = TableGeometry.load("dominoes-4")
    registry = TagRegistry.virtual(0)
    journal = tmp_path / "journal.sqlite"
    tiles = all_tiles()
    random.Random(3).shuffle(tiles)
    with VirtualTable(geometry, seed=0) as vt:
        paths = vt.device_paths() or vt.start()
        ports = list(paths.values())
        where: dict[str, str] = {}
        for s, seat in enumerate(geometry.seats):
            for cell, tile in zip(seat.rack, tiles[7 * s : 7 * s + 7], strict=True):
                vt.place(cell, registry.uid_of(tile))
                where[tile] = cell
        proc = start_play(ports, journal)
        try:
            assert wait_for(lambda: any(e["type"] == "hand" for e in entries(journal))), (
                "no deal read"
            )
            hand = next(e for e in entries(journal) if e["type"] == "hand")
            assert sorted(hand["deal"][0]) == sorted(tiles[:7])
            opener = next(s for s, h in enumerate(hand["deal"]) if "6-6" in h)
            vt.move(where["6-6"], "center")
            assert wait_for(lambda: any(e["type"] == "move" for e in entries(journal))), (
                "play not seen"
            )
            move = next(e for e in entries(journal) if e["type"] == "move")
            assert move["move"] == {"seat": opener, "tile": "6-6"}
            # a tile of the wrong seat on the line is explained, not taken
            wrong_seat = (opener + 2) % 4
            tile = hand["deal"][wrong_seat][0]
            vt.move(where[tile], "left-1")
            time.sleep(3.0)
            assert len([e for e in entries(journal) if e["type"] == "move"]) == 1
            vt.move("left-1", where[tile])
        finally:
            err = stop(proc)
        assert "it is" in err and "turn" in err, err[-2000:]
        # a new host process resumes the same match from the journal, and says which
        proc = start_play(ports, journal)
        try:
            err = wait_stderr(proc, "resuming match")
        finally:
            err += stop(proc)
        err = " ".join(err.split())
        assert "resuming match" in err, err[-2000:]
        assert "dominoes pairs-pips on dominoes-4, seats South, East, North, West, hand 1" in err
        assert [e["type"] for e in entries(journal)].count("hand") == 1
        # --new: the unfinished match stays in the journal as abandoned, and it is said
        proc = start_play(ports, journal, "--new")
        try:
            err = wait_stderr(proc, "a new match starts")
            assert wait_for(lambda: _matches(journal) == 2)
        finally:
            err += stop(proc)
        assert "stays in the journal as abandoned" in " ".join(err.split()), err[-2000:]
        db = sqlite3.connect(journal)
        statuses = [r[0] for r in db.execute("SELECT status FROM matches ORDER BY started")]
        db.close()
        assert statuses == ["abandoned", "running"]


@pytest.mark.skipif(sys.platform != "linux", reason="pseudo-terminals")
def test_play_refuses_a_table_file_that_does_not_exist(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tablesense.cli",
            "play",
            "--table",
            str(tmp_path / "nope.toml"),
            "--no-web",
            "--journal",
            str(tmp_path / "j.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "no table geometry file" in done.stderr and "Traceback" not in done.stderr
