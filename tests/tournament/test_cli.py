"""The commands: simulate then export --json (the issue's check), create/register/pair, broker config."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.tournament.mosquitto import mosquitto_binary
from testsupport import need

runner = CliRunner()


def test_simulate_then_export_json(tmp_path: Path) -> None:
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    db = f"sqlite:///{tmp_path / 'ev.db'}"
    r = runner.invoke(app, ["tournament", "simulate", "--entrants", "8", "--rounds", "3", "--format", "swiss",
                            "--tables", "4", "--seed", "5", "--db", db, "--broker", "spawn", "--target", "25"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["tournament", "export", "--db", db, "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [e.keys() >= {"id", "name"} for e in data["entrants"]] == [True] * 8
    assert [r["number"] for r in data["rounds"]] == [1, 2, 3]
    for rnd in data["rounds"]:
        assert len(rnd["matches"]) == 4
        for m in rnd["matches"]:
            assert {"table", "entrants", "score", "winner", "records"} <= m.keys()
            assert len(m["entrants"]) == 2 and len(m["score"]) == 2 and m["records"]
            assert m["winner"] in (*m["entrants"], None)
    ranks = [s["rank"] for s in data["standings"]]
    assert ranks == sorted(ranks) and len(ranks) == 8
    for s in data["standings"]:
        assert {"rank", "entrant", "games_won", "points_for", "points_against", "tiebreaks"} <= s.keys()
    assert any(a["action"] == "result-accepted" for a in data["audit"])


def test_director_commands_and_clear_errors(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ev.db'}"
    r = runner.invoke(app, ["tournament", "export", "--db", db, "--json"])
    assert r.exit_code == 1 and "no event" in r.output
    r = runner.invoke(app, ["tournament", "create", "Open", "--db", db, "--format", "round-robin", "-o", "target=150"])
    assert r.exit_code == 0 and r.stdout.strip() == "1"
    r = runner.invoke(app, ["tournament", "create", "X", "--db", db, "--format", "ladder"])
    assert r.exit_code == 1 and "unknown format" in r.output
    for i in range(3):
        r = runner.invoke(app, ["tournament", "register", f"Team {i}", "--db", db, "--member", f"A{i}", "--member", f"B{i}"])
        assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["tournament", "add-table", "1", "--db", db, "--key-dir", str(tmp_path / "keys")])
    assert r.exit_code == 0 and (tmp_path / "keys" / "table-1.key").exists()
    r = runner.invoke(app, ["tournament", "pair", "--db", db])
    assert r.exit_code == 0 and "round 1" in r.stdout and "bye" in r.stdout
    r = runner.invoke(app, ["tournament", "pair", "--db", db])
    assert r.exit_code == 1 and "without a confirmed result" in r.output
    r = runner.invoke(app, ["tournament", "standings", "--db", db])
    assert r.exit_code == 0 and "Standings" in r.stdout and "Team" in r.stdout
    assert "Rank" in r.stdout and re.search(r"#\d Team", r.stdout), r.stdout  # the entrant's number beside its name
    r = runner.invoke(app, ["tournament", "export", "--db", db, "--archive", str(tmp_path / "ev.zip")])
    assert r.exit_code == 0 and (tmp_path / "ev.zip").exists() and f"wrote {tmp_path / 'ev.zip'} (" in r.stderr
    r = runner.invoke(app, ["tournament", "export", "--db", db, "--csv", "results"])
    assert r.exit_code == 0 and r.stdout.startswith("round,match,table")


def test_mosquitto_config_command(tmp_path: Path) -> None:
    r = runner.invoke(app, ["tournament", "mosquitto-config", "--out", str(tmp_path / "b"), "--tables", "3", "--port", "1999"])
    assert r.exit_code == 0, r.output
    conf = (tmp_path / "b" / "mosquitto.conf").read_text()
    assert "allow_anonymous false" in conf and "listener 1999 127.0.0.1" in conf
    users = [line.split(":")[0] for line in (tmp_path / "b" / "passwd").read_text().splitlines()]
    assert users == ["director", "table-1", "table-2", "table-3"]
    assert "pattern write tablesense/tables/%u/#" in (tmp_path / "b" / "acl").read_text()
    # each table's password in a file of its own (0600) to copy to that table; the printed URLs carry no password
    creds = dict(line.split() for line in (tmp_path / "b" / "credentials").read_text().splitlines())
    for n in (1, 2, 3):
        pw = tmp_path / "b" / f"table-{n}.password"
        assert pw.read_text().strip() == creds[f"table-{n}"] and pw.stat().st_mode & 0o077 == 0
    out = " ".join(r.output.split())
    assert "password_file=PATH/table-N.password" in out and f"password_file={tmp_path / 'b' / 'director.password'}" in out
    assert "PASSWORD@" not in out and not any(p in out for p in creds.values())
