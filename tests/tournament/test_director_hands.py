"""The director's hand work at the command line (issue 30): entrants by their
number in the event, never a database id; every command says what it did;
a simple command imports no more than it needs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.tournament.db import HEAD_REVISION, MIGRATIONS, Database
from tablesense.tournament.service import Director

runner = CliRunner()


def _run(*args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, " ".join(r.output.split())  # errors are wrapped to the terminal's width


def _event(tmp_path: Path, n: int = 5) -> str:
    """A second event in the database, so entrant ids (6..) differ from the numbers (1..)."""
    db = f"sqlite:///{tmp_path / 'ev.db'}"
    assert _run("tournament", "create", "Last week", "--db", db)[0] == 0
    for i in range(n):
        assert _run("tournament", "register", f"Old {i}", "--db", db, "--event", "1")[0] == 0
    assert _run("tournament", "create", "Tonight", "--db", db, "-o", "target=50")[0] == 0
    for i, who in enumerate(("Ana & Bia", "Cy & Di", "Eva & Flo", "Gil & Hal", "Ivo & Jo")[:n], start=1):
        code, out = _run("tournament", "register", who, "--db", db)
        assert (code, out.strip()) == (0, str(i)), out  # its number in the event, not the id (n + i)
    for t in (1, 2):
        assert _run("tournament", "add-table", str(t), "--db", db, "--key-dir", str(tmp_path / "keys"))[0] == 0
    return db


def test_check_in_withdraw_and_bye_take_the_number_and_say_what_they_did(tmp_path: Path) -> None:
    db = _event(tmp_path)
    code, out = _run("tournament", "check-in", "2", "--db", db)
    assert code == 0 and out.strip() == "checked in #2 Cy & Di (1 of 5 checked in)", out
    code, out = _run("tournament", "check-in", "2", "--db", db)
    assert code == 0 and "#2 Cy & Di was already checked in (1 of 5 checked in)" in out
    code, out = _run("tournament", "check-in", "9", "--db", db)
    assert code == 1 and "no entrant #9 in this event (its entrants are #1 to #5)" in out
    code, out = _run("tournament", "withdraw", "3", "--reason", "ill", "--db", db)
    assert code == 0 and "withdrew #3 Eva & Flo" in out and "'ill'" in out
    code, out = _run("tournament", "bye", "4", "--round", "1", "--db", db)
    assert code == 0 and "#4 Gil & Hal sits out round 1" in out
    d = Director(Database(db), 2)
    log = d.audit_log()
    by_action = {a["action"]: a for a in log}
    assert by_action["checked-in"]["detail"]["name"] == "Cy & Di" and by_action["checked-in"]["actor"] == "director-cli"
    assert by_action["withdrawn"]["detail"]["name"] == "Eva & Flo"
    assert by_action["bye-requested"]["detail"]["name"] == "Gil & Hal"


def test_a_correction_names_the_table_or_the_pair_and_the_winner_follows_the_score(tmp_path: Path) -> None:
    db = _event(tmp_path, 4)
    code, out = _run("tournament", "pair", "--db", db)
    assert code == 0 and "#" in out, out
    d = Director(Database(db), 2)
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    numbers = {e.id: i for i, e in enumerate(d.entrants(), start=1)}
    a, b = numbers[m1.entrant_a], numbers[m1.entrant_b or 0]
    # no --winner: the side with more points wins (the refusal used to say "not None")
    code, out = _run("tournament", "correct", "1", "--score", "20-50", "--reason", "sheet", "--db", db)
    assert code == 0, out
    assert "round 1, table 1" in out and "no result -> 20-50" in out and f"winner #{b} " in out, out
    assert "None" not in out
    # by the pair's number, with a winner the score contradicts: refused in words, by numbers and names
    code, out = _run("tournament", "correct", "--pair", str(a), "--score", "50-20", "--winner", str(b),
                     "--reason", "x", "--db", db)
    assert code == 1 and f"makes #{a} " in out and f"not #{b} " in out and "table 1 in round 1" in out, out
    assert "None" not in out and not re.search(r"entrant \d", out)
    code, out = _run("tournament", "correct", "--pair", str(a), "--score", "50-20", "--winner", str(a),
                     "--reason", "typo", "--db", db)
    assert code == 0 and "20-50 -> 50-20" in out and f"winner #{a} " in out, out
    # a winner who was not at the table, a table that has no match, neither or both named
    other = next(n for n in (1, 2, 3, 4) if n not in (a, b))
    code, out = _run("tournament", "correct", "1", "--score", "50-50", "--winner", str(other), "--reason", "x", "--db", db)
    assert code == 1 and f"#{other} " in out and "did not play the match at table 1 in round 1" in out
    code, out = _run("tournament", "correct", "7", "--score", "1-0", "--reason", "x", "--db", db)
    assert code == 1 and "no match at table 7 in round 1 (its tables: 1, 2)" in out
    assert _run("tournament", "correct", "--score", "1-0", "--reason", "x", "--db", db)[0] == 2
    assert _run("tournament", "correct", "1", "--pair", "1", "--score", "1-0", "--reason", "x", "--db", db)[0] == 2
    m1 = next(m for m in d.matches(1) if m.table_no == 1)
    assert (m1.score_a, m1.score_b, m1.winner_id, m1.confirmed) == (50.0, 20.0, m1.entrant_a, True)


def test_a_simple_command_imports_no_web_server_and_no_migration_tool(tmp_path: Path) -> None:
    """``tablesense`` loads only the commands; a call on a database already at
    the newest migration never imports Alembic (a fifth of a second each time)."""
    db = _event(tmp_path, 2)
    probe = (
        "import sys\n"
        "from tablesense.cli import app\n"
        "heavy = ('sqlalchemy', 'alembic', 'fastapi', 'uvicorn', 'paho', 'rustworkx', 'jinja2', 'openskill')\n"
        "print(' '.join(m for m in heavy if m in sys.modules) or '-')\n"
        "try:\n"
        f"    app(['tournament', 'check-in', '1', '--db', {db!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True).stdout
    at_import, checked_in, after = out.strip().splitlines()
    assert at_import == "-", f"importing the command line loaded {at_import}"
    assert checked_in.startswith("checked in #1")
    assert "sqlalchemy" in after and "alembic" not in after and "fastapi" not in after, after


def test_the_head_revision_is_alembics_head() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(cfg).get_current_head() == HEAD_REVISION
