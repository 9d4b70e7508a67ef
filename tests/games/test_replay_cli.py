"""``tablesense rules replay FILE|-``: result object on stdout, summary on
stderr, exit status 0 / 1 / 2 as the record spec says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tablesense.games.cli import register
from testsupport import REPO

EXAMPLES = Path(REPO) / "docs" / "examples"
runner = CliRunner()
app = typer.Typer()
register(app)


@app.callback()
def _root() -> None:
    """A root like tablesense's, with only this room's commands."""


def run(*args: str, stdin: str | None = None):
    return runner.invoke(app, ["rules", "replay", *args], input=stdin)


def test_a_legal_record_prints_the_result_object_and_exits_0() -> None:
    path = EXAMPLES / "pairs-pips-match.json"
    res = run(str(path))
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["ok"] is True and out["winner"] in (0, 1) and len(out["score"]) == 2
    assert "legal record" in res.stderr and "hand 0" in res.stderr


def test_an_illegal_step_exits_1_with_hand_move_and_sentence() -> None:
    res = run(str(EXAMPLES / "pairs-pips-illegal.json"))
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["ok"] is False and isinstance(out["hand"], int) and isinstance(out["move"], int)
    assert "may not pass" in out["error"]
    assert set(out) == {"ok", "hand", "move", "error"}
    assert "illegal step" in res.stderr


@pytest.mark.parametrize("name", ["pairs-pips-malformed.json", "brazilian-points-malformed.json"])
def test_a_malformed_record_exits_2(name: str) -> None:
    res = run(str(EXAMPLES / name))
    assert res.exit_code == 2
    out = json.loads(res.stdout)
    assert out["ok"] is False and out["error"] and set(out) == {"ok", "error"}


def test_invalid_json_and_missing_files_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": ')
    for args in ([str(bad)], [str(tmp_path / "none.json")]):
        res = run(*args)
        assert res.exit_code == 2
        assert json.loads(res.stdout)["ok"] is False


def test_dash_reads_stdin_and_quiet_drops_the_summary() -> None:
    text = (EXAMPLES / "brazilian-points-cruzada.json").read_text()
    res = run("-", "--quiet", stdin=text)
    assert res.exit_code == 0
    assert json.loads(res.stdout)["hands"][0]["label"] == "cruzada"
    assert res.stderr == ""


def test_the_console_script_runs_the_same_command() -> None:
    exe = Path(sys.executable).with_name("tablesense")
    if not exe.exists():
        pytest.skip("tablesense console script not installed in this environment")
    text = (EXAMPLES / "pips-two-player-illegal.json").read_bytes()
    proc = subprocess.run(
        [str(exe), "rules", "replay", "-"],
        input=text,
        capture_output=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["error"].startswith("seat")
    assert b"Traceback" not in proc.stderr
