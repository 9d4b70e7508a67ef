"""Issue 14 / 13: ``play`` on the command line never loses a match silently.

An unfinished match in the journal is resumed as it was, or refused with
both ways on when the options contradict it; ``--new`` keeps it as
abandoned and says so; a journal that cannot be read gets a clear message
(no traceback, exit 1) and the file is left untouched; a port that does not
exist is named; ``--version`` answers.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tablesense.journal.store import Journal


def run(*args: str, timeout: float = 60, columns: int = 250) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "TABLESENSE_GPIO": "sim"}
    return subprocess.run(
        [sys.executable, "-m", "tablesense.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def unfinished(path: Path, table: str = "dominoes-4") -> str:
    spec = {
        "game": "dominoes",
        "variant": "pairs-pips",
        "options": {},
        "seat_names": ["South", "East", "North", "West"],
        "seat_kinds": ["human"] * 4,
        "seed": None,
        "table": table,
    }
    tiles = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]
    with Journal(path) as j:
        mid = j.begin(spec)
        j.append({"type": "match", "spec": spec, "deal": "table"})
        # a hand was dealt: a match with no entry after its description is not resumed (issue 31)
        j.append({"type": "hand", "deal": [tiles[i::4] for i in range(4)], "boneyard": []})
    return mid


def status(path: Path, mid: str) -> str:
    with Journal(path) as j:
        row = j.match(mid)
        assert row is not None
        return row.status


def test_another_table_is_refused_and_the_running_match_kept(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    mid = unfinished(journal)
    done = run("play", "--table", "dominoes-2", "--journal", str(journal), "--no-web", "--no-keys")
    assert done.returncode == 2, done.stderr
    err = " ".join(done.stderr.split())
    assert f"holds an unfinished match {mid}" in err
    assert "dominoes pairs-pips on dominoes-4, seats South, East, North, West" in err
    assert "it is on table dominoes-4, not dominoes-2" in err
    assert "resume it as it was: tablesense play --table dominoes-4" in err
    assert "add --new" in err
    assert "Traceback" not in done.stderr
    assert status(journal, mid) == "running"


def test_contradicting_seats_are_refused(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    mid = unfinished(journal)
    done = run(
        "play", "--table", "dominoes-4", "--seats", "Ana,Bea,Cid,Dan",
        "--journal", str(journal), "--no-web", "--no-keys",
    )
    assert done.returncode == 2, done.stderr
    assert "its seats are South, East, North, West" in " ".join(done.stderr.split())
    assert status(journal, mid) == "running"


def test_a_port_that_does_not_exist_is_named(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    mid = unfinished(journal)
    # checked before the journal is touched: the unfinished match stays running
    done = run(
        "play", "--table", "dominoes-2", "--new", "--port", str(tmp_path / "no-such-port"),
        "--journal", str(journal), "--no-web", "--no-keys",
    )
    assert done.returncode == 2
    err = " ".join(done.stderr.split())
    assert f"--port {tmp_path / 'no-such-port'}: no such device" in err
    assert status(journal, mid) == "running"


def test_a_corrupt_journal_gets_a_clear_message_and_is_kept(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    journal.write_bytes(b"this is not a database at all\n" * 200)
    before = hashlib.sha256(journal.read_bytes()).hexdigest()
    done = run("play", "--table", "dominoes-4", "--journal", str(journal), "--no-web", "--no-keys")
    assert done.returncode == 1, done.stderr
    err = " ".join(done.stderr.split())
    assert f"cannot open the journal {journal}" in err and "left as it is" in err
    assert "move it aside or use --journal PATH" in err
    assert "Traceback" not in done.stderr
    assert hashlib.sha256(journal.read_bytes()).hexdigest() == before


def test_a_damaged_match_row_gets_a_clear_message(tmp_path: Path) -> None:
    import sqlite3

    journal = tmp_path / "j.sqlite"
    unfinished(journal)
    db = sqlite3.connect(journal)
    db.execute("UPDATE matches SET spec = '{not json'")
    db.commit()
    db.close()
    done = run("play", "--table", "dominoes-4", "--journal", str(journal), "--no-web", "--no-keys")
    assert done.returncode == 1, done.stderr
    assert "cannot read the journal" in done.stderr and "Traceback" not in done.stderr


def test_version() -> None:
    done = run("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("tablesense ")


def test_an_unknown_player_is_refused_before_the_journal_is_opened(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    done = run("play", "--table", "dominoes-4", "--seats", "Ana,bot,Bia,bot", "--player", "nosuch",
               "--journal", str(journal), "--no-web", "--no-keys")
    assert done.returncode == 2, done.stderr
    assert "unknown dominoes player 'nosuch'; players: random, greedy, montecarlo, search" in done.stderr
    assert not journal.exists()
    done = run("play", "--table", "dominoes-4", "--player", "search", "--think-ms", "0",
               "--journal", str(journal), "--no-web", "--no-keys")
    assert done.returncode == 2 and "--think-ms" in done.stderr, done.stderr


def test_the_bot_seats_play_the_chosen_player_with_its_budget() -> None:
    from tablesense.games.dominoes_players import GreedyPlayer, SearchPlayer
    from tablesense.games.kems_players import ReasonerPlayer
    from tablesense.games.registry import find_game

    dominoes, kems = find_game("dominoes"), find_game("kems")
    bot = dominoes.player("search", 50.0)
    assert isinstance(bot, SearchPlayer) and bot.budget_ms == 50.0
    assert dominoes.player("search").budget_ms == SearchPlayer().budget_ms
    assert isinstance(dominoes.player(None, 50.0), GreedyPlayer)
    assert isinstance(kems.player("reasoner", 50.0), ReasonerPlayer)
