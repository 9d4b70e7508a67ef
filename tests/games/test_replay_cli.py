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
    # the summary counts hands and teams from 1, as players do; the JSON from 0
    assert "legal record" in res.stderr and "hand 1:" in res.stderr and "hand 0" not in res.stderr
    assert f"team {out['winner'] + 1} wins" in res.stderr


def test_an_illegal_step_exits_1_with_hand_move_and_sentence() -> None:
    res = run(str(EXAMPLES / "pairs-pips-illegal.json"))
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["ok"] is False and isinstance(out["hand"], int) and isinstance(out["move"], int)
    assert "may not pass" in out["error"]
    assert set(out) == {"ok", "hand", "move", "error"}
    assert f"illegal step in hand {out['hand'] + 1}, move {out['move'] + 1}:" in res.stderr.replace("\n", " ")


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


# -- malformed input (issue 12): exit 2, a clear message, strict JSON on stdout


def _strict(text: str) -> dict:
    """Parse stdout as strict JSON: NaN and Infinity are not JSON."""

    def refuse(name: str) -> None:
        raise AssertionError(f"stdout holds {name}, which is not JSON")

    return json.loads(text, parse_constant=refuse)


def _example_text(name: str, edit) -> str:  # a small local helper
    record = json.loads((EXAMPLES / name).read_text())
    edit(record)
    return json.dumps(record)


def _replace(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


PAIRS = (EXAMPLES / "pairs-pips-match.json").read_text()
BRAZIL = (EXAMPLES / "brazilian-points-bonus.json").read_text()
KEMS = (EXAMPLES / "kems-match.json").read_text()

MALFORMED = {
    "1e400 as target": (_replace(PAIRS, '"target": 50', '"target": 1e400'), "number"),
    "-1e400 as lambreta": (_replace(BRAZIL, '"lambreta": -1', '"lambreta": -1e400'), "number"),
    "NaN in start_score": (
        _replace(BRAZIL, '"start_score": null', '"start_score": [NaN, 0]'),
        "NaN",
    ),
    "1e400 in start_score": (
        _replace(BRAZIL, '"start_score": null', '"start_score": [1e400, 0]'),
        "number",
    ),
    "Infinity as simple_domino": (
        _replace(BRAZIL, '"simple_domino": 1', '"simple_domino": Infinity'),
        "Infinity",
    ),
    "1e400 as a Kems target": (_replace(KEMS, '"target": 3', '"target": 1e400'), "number"),
    "500-digit target": (_replace(PAIRS, '"target": 50', '"target": ' + "9" * 500), "integer"),
    "5000-digit score": (
        _replace(BRAZIL, '"start_score": null', '"start_score": [' + "7" * 5000 + ", 0]"),
        "integer",
    ),
    "5000-digit seat": (
        _replace(PAIRS, '"seat": 0', '"seat": ' + "1" * 5000),
        "integer",
    ),
    "deep nesting": ('{"format": ' + "[" * 200000 + "]" * 200000 + "}", "nested"),
    "deep nesting, unclosed": ("[" * 200000, "nested"),
    "moderate nesting in a move": (
        _replace(PAIRS, '"seat": 0', '"seat": ' + "[" * 500 + "]" * 500),
        "nested",
    ),
    "Kems record without rounds": (
        _example_text("kems-match.json", lambda r: r.update(hands=[])),
        "at least one round",
    ),
    "Kems event by seat 9": (
        _example_text(
            "kems-match.json",
            lambda r: r["hands"][0]["events"].insert(0, {"seat": 9, "call": "kems"}),
        ),
        "no seat 9",
    ),
    "Kems contre on seat 7": (
        _example_text(
            "kems-match.json",
            lambda r: r["hands"][0]["events"].insert(0, {"seat": 0, "call": "contre", "target": 7}),
        ),
        "no seat 7",
    ),
    "Kems event by seat -1": (
        _example_text(
            "kems-match.json",
            lambda r: r["hands"][0]["events"].insert(0, {"seat": -1, "call": "kems"}),
        ),
        "no seat -1",
    ),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_input_exits_2_with_strict_json(name: str) -> None:
    text, words = MALFORMED[name]
    res = run("-", stdin=text)
    assert res.exit_code == 2, (res.exit_code, res.stdout[:300])
    out = _strict(res.stdout)
    assert out["ok"] is False and set(out) == {"ok", "error"}
    assert words in out["error"], out["error"]
    assert len(out["error"]) < 400, "the message names the problem, not the whole value"
    assert "internal error" not in res.stderr


def test_the_library_refuses_non_finite_numbers_handed_to_it() -> None:
    """``replay`` on a parsed object (the host's own use) refuses what JSON
    text cannot carry either."""
    from tablesense.games.common import RecordFormatError
    from tablesense.games.record import replay

    for value in (float("inf"), float("nan"), 10**400):
        record = json.loads(BRAZIL)
        record["options"]["start_score"] = [value, 0]
        with pytest.raises(RecordFormatError, match="out of range"):
            replay(record)
        # the engine's own check, for a caller that skips record.replay
        from tablesense.games.dominoes import replay_record

        with pytest.raises(RecordFormatError, match="start_score"):
            replay_record(record)
    # a seat of 5000 digits in a parsed record: a message, not a crash
    record = json.loads(PAIRS)
    record["hands"][0]["moves"][0]["seat"] = (10**5000 - 1) // 9  # 5000 ones
    with pytest.raises(RecordFormatError, match="integer of about .* digits"):
        replay(record)
    deep: list = []
    for _ in range(100):
        deep = [deep]
    record["hands"][0]["moves"][0]["seat"] = deep
    with pytest.raises(RecordFormatError, match="nested"):
        replay(record)
