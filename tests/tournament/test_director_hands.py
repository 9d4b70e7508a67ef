"""The director's hand work at the command line (issue 30): entrants by their
number in the event, never a database id; every command says what it did;
a simple command imports no more than it needs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.tournament.db import HEAD_REVISION, MIGRATIONS, Database
from tablesense.tournament.service import Director, DirectorError

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
    r = runner.invoke(app, ["tournament", "create", "Tonight", "--db", db, "-o", "target=50"])
    assert (r.exit_code, r.stdout.strip()) == (0, "2"), r.output  # the event's id alone, for scripts
    assert r.stderr.startswith("created event 2 'Tonight'; next: register its entrants"), r.stderr
    for i, who in enumerate(("Ana & Bia", "Cy & Di", "Eva & Flo", "Gil & Hal", "Ivo & Jo")[:n], start=1):
        r = runner.invoke(app, ["tournament", "register", who, "--db", db])
        assert (r.exit_code, r.stdout.strip()) == (0, str(i)), r.output  # its number, not the id (n + i)
        assert r.stderr.strip() == f"registered #{i} {who} (entrants: {i})", r.stderr  # and a sentence for people
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


def _director_event(tmp_path: Path, n: int = 4) -> tuple[str, Director]:
    """A `director`-confirmed event after last week's, so ids are not the numbers."""
    from .test_director import make_event

    url = f"sqlite:///{tmp_path / 'confirm.db'}"
    old = Director.create_event(Database(url), "Last week", options={"lots_seed": "o"})
    for name in ("X", "Y", "Z"):
        old.register(name)
    d, _key = make_event(url, n=n, confirm="director", rounds=2)
    return url, d


def test_confirm_takes_the_table_or_the_pair_never_a_database_id(tmp_path: Path) -> None:
    from .test_club_confirm import _report_all

    url, d = _director_event(tmp_path, 4)
    d.pair_next_round()
    _report_all(d, 1)
    numbers = {e.id: i for i, e in enumerate(d.entrants(), start=1)}
    assert min(numbers) > 3
    m1, m2 = sorted(d.matches(1), key=lambda m: m.table_no or 0)
    # neither, or two ways at once: a wrong argument (exit 2), nothing confirmed
    for args in ((), ("1", "--pair", "1"), ("1", "--all"), ("--pair", "1", "--all")):
        code, out = _run("tournament", "confirm", *args, "--db", url)
        assert code == 2 and "one of the three" in out, (args, out)
    assert not any(m.confirmed for m in d.matches(1))
    # a table nobody plays at, a round with no match there, an unknown number: exit 1 with what there is
    code, out = _run("tournament", "confirm", "7", "--db", url)
    assert code == 1 and "no match at table 7 in round 1 (its tables: 1, 2)" in out, out
    code, out = _run("tournament", "confirm", "--pair", "9", "--db", url)
    assert code == 1 and "no entrant #9 in this event (its entrants are #1 to #4)" in out, out
    # by table: the answer names the round, the table, and both sides by number and score
    code, out = _run("tournament", "confirm", "1", "--round", "1", "--db", url)
    a, b = numbers[m1.entrant_a], numbers[m1.entrant_b or 0]
    assert code == 0 and f"confirmed round 1, table 1: #{a} Pair {a} {m1.score_a:g} v #{b} Pair {b} " in out, out
    assert "1 reported but not confirmed (table 2)" in out
    code, out = _run("tournament", "confirm", "1", "--db", url)
    assert code == 1 and "table 1 in round 1 is already confirmed" in out, out
    # by a pair's number (the other table), once even when named twice
    c = numbers[m2.entrant_b or 0]
    code, out = _run("tournament", "confirm", "--pair", str(c), "--pair", str(numbers[m2.entrant_a]), "--db", url)
    assert code == 0 and out.count("confirmed round 1, table 2") == 1, out
    assert all(m.confirmed for m in d.matches(1))
    for _code, said in (_run("tournament", "confirm", "2", "--db", url), _run("tournament", "confirm", "--all", "--db", url)):
        assert not re.search(r"match \d", said), said
    # a table still playing says so, by table and round
    d.pair_next_round()
    code, out = _run("tournament", "confirm", "2", "--db", url)
    assert code == 1 and "table 2 in round 2 has no result to confirm yet (it is" in out, out


def test_exports_and_refusals_name_numbers_not_ids(tmp_path: Path) -> None:
    import csv
    import io

    from tablesense.tournament import kway
    from tablesense.tournament.export import export_event, results_csv
    from tablesense.tournament.present import standings_csv_text

    from .test_club_confirm import _report_all

    url, d = _director_event(tmp_path, 4)
    d.pair_next_round()
    _report_all(d, 1)
    ids = {e.id for e in d.entrants()}
    st = list(csv.reader(io.StringIO(standings_csv_text(export_event(d)))))
    assert st[0][:3] == ["#", "Rank", "Entrant"] and sorted(r[0] for r in st[1:]) == ["#1", "#2", "#3", "#4"], st
    res = list(csv.reader(io.StringIO(results_csv(d))))
    head = res[0]
    for row in res[1:]:
        for col in ("entrant_a", "entrant_b", "winner"):
            cell = row[head.index(col)]
            assert cell == "" or re.fullmatch(r"[1-4]", cell), (col, row)  # entrant numbers, not ids (4..)
    played = {r[head.index(c)] for r in res[1:] for c in ("entrant_a", "entrant_b")}
    assert played == {"1", "2", "3", "4"} and ids == {4, 5, 6, 7}, (played, ids)  # ids would read 4 to 7
    # a table of three corrected with A-B: the refusal names the table, round and the command that works
    trio = Director.create_event(Database(url), "Trios", variant="brazilian-points",
                                 options={"seats": 3, "rounds": 1, "confirm": "director", "lots_seed": "s"})
    for name in ("Ana", "Bia", "Caio"):
        trio.register(name)
    trio.add_table(1, "11" * 32)
    trio.pair_next_round()
    m = trio.matches(1)[0]
    with pytest.raises(DirectorError) as refused:
        trio.correct(m.id, (1.0, 2.0), None, "typo", "director")
    said = str(refused.value)
    assert "table 1 in round 1 is a table of 3" in said and "tournament correct 1 --round 1 --score 0-0-0" in said
    assert "MATCH" not in said and f"{m.id} " not in said.replace("table 1 ", "")
    code, out = _run("tournament", "correct", "1", "--score", "4-1", "--reason", "x", "--db", url, "--event",
                     str(trio.event_id))
    assert code == 1 and "table 1 in round 1 is a table of 3" in out, out
    code, out = _run("tournament", "correct", "1", "--score", "4-1-0-0", "--reason", "x", "--db", url, "--event",
                     str(trio.event_id))
    assert code == 1 and "table 1 in round 1 has 3 entrants: give 3 scores in seat order, e.g. 0-0-0" in out, out
    code, out = _run("tournament", "correct", "1", "--score", "4-1-0", "--reason", "sheet", "--db", url, "--event",
                     str(trio.event_id))
    assert code == 0 and re.match(r"round 1, table 1: #\d \w+ 4, #\d \w+ 1, #\d \w+ 0; confirmed", out), out
    assert kway.match_scores(trio.matches(1)[0]) == [4.0, 1.0, 0.0]


def test_the_serve_log_names_a_tables_messages_by_round_not_by_key() -> None:
    from tablesense.tournament.console import ack_line

    assert ack_line(3, "result/1/2/3/1", "accepted") == "table 3: result of round 2 accepted"
    assert ack_line(3, "result/1/2/3/2", "duplicate") == "table 3: result of round 2 (revision 2) duplicate"
    assert ack_line(3, "checkin/1/2/3/17", "accepted") == "table 3: check-in for round 2 accepted"  # 17: a match id
    assert ack_line(3, "confirm/1/2/3/1", "refused", "forged") == "table 3: confirmation of round 2 refused: forged"
    assert ack_line(3, "junk", "refused", "bad") == "table 3: message junk refused: bad"


def test_the_serve_banner_says_the_rounds_state_once(tmp_path: Path) -> None:
    from tablesense.tournament.console import serve_banner

    url, d = _director_event(tmp_path, 4)
    lines = [str(x) for x in serve_banner(d, "127.0.0.1", 8080, None)]
    assert "no round paired yet: round 1 can be paired" in lines, lines  # was "round 0: round 1 can be paired"
    d.pair_next_round()
    lines = [str(x) for x in serve_banner(d, "127.0.0.1", 8080, None)]
    assert "round 1 is not finished: 2 still playing (tables 1, 2)" in lines, lines  # not "round 1: round 1 is ..."


def test_the_round_clock_stops_when_every_result_is_confirmed(tmp_path: Path) -> None:
    from tablesense.tournament.console import confirm_reported, console_state

    from .test_club_confirm import _report_all

    _url, d = _director_event(tmp_path, 4)
    d.pair_next_round()
    assert console_state(d)["round_started"] is not None  # the clock counts while the round is played
    _report_all(d, 1)
    assert console_state(d)["round_started"] is not None  # and while results wait for confirmation
    confirm_reported(d)
    assert console_state(d)["round_started"] is None  # all in: no "16:25 since pairing" any more
