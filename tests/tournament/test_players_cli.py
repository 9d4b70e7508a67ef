"""``tablesense tournament club ...`` and ``tournament simulate --club``: commands, output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tablesense.cli import app


def test_club_commands(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'c.db'}"
    r = CliRunner()
    out = r.invoke(app, ["tournament", "simulate", "--club", "8", "--evenings", "2", "--rounds", "2", "--db", db])
    assert out.exit_code == 0, out.output
    rep = json.loads(out.stdout.strip().splitlines()[-1])
    assert rep["players"] == 8 and rep["events"] == [1, 2] and rep["first_round_matches"] == 2
    out = r.invoke(app, ["tournament", "club", "ratings", "--db", db])
    assert out.exit_code == 0 and len(out.stdout.strip().splitlines()) == 8
    assert "provisional" in out.stdout  # 4 matches each: still provisional
    out = r.invoke(app, ["tournament", "club", "season", "1", "--format", "csv", "--db", db])
    assert out.stdout.splitlines()[0].startswith("rank,player,total,played,wins,Club night 1,Club night 2")
    assert r.invoke(app, ["tournament", "club", "season-create", "X", "--scoring", "elo", "--db", db]).exit_code == 2
    assert r.invoke(app, ["tournament", "club", "ratings", "--family", "chess", "--db", db]).exit_code == 2
    out = r.invoke(app, ["tournament", "club", "add-player", "Ana", "--badge", "club-0-1", "--db", db])
    assert out.exit_code == 1 and "already belongs" in out.output
    assert r.invoke(app, ["tournament", "simulate", "--club", "2", "--db", db]).exit_code == 2
