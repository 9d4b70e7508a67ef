"""Record files are bounded: only a regular file is read, at most
``MAX_RECORD_BYTES`` of it (or of stdin), and a record whose fields have the
wrong JSON type is a format error (exit 2), never an internal one (exit 3)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tablesense.games.cli import register
from tablesense.games.common import RecordFormatError
from tablesense.games.record import MAX_RECORD_BYTES, load, loads, replay
from testsupport import REPO

EXAMPLES = Path(REPO) / "docs" / "examples"
app = typer.Typer()
register(app)


@app.callback()
def _root() -> None:
    """A root with only the games room's commands."""


def _replay(*args: str, stdin: bytes | None = None):
    return CliRunner().invoke(app, ["rules", "replay", *args], input=stdin)


@pytest.mark.parametrize("game", [["dominoes"], {"dominoes": 1}, 7, None])
def test_a_game_of_the_wrong_type_is_a_format_error(game: object) -> None:
    rec = json.loads((EXAMPLES / "pairs-pips-match.json").read_text())
    rec["game"] = game
    with pytest.raises(RecordFormatError, match="'game' is one of"):
        replay(rec)
    res = _replay("-", stdin=json.dumps(rec).encode())
    assert res.exit_code == 2, res.output
    assert "internal error" not in res.stdout


def test_dev_zero_and_a_fifo_are_refused_unread(tmp_path: Path) -> None:
    with pytest.raises(RecordFormatError, match="not a regular file"):
        load("/dev/zero")
    fifo = tmp_path / "record.fifo"
    os.mkfifo(fifo)
    with pytest.raises(RecordFormatError, match="not a regular file"):
        load(fifo)  # the open must not wait for a writer either
    res = _replay("/dev/zero")
    assert res.exit_code == 2 and "not a regular file" in json.loads(res.stdout)["error"]


def test_a_record_over_the_limit_is_refused(tmp_path: Path) -> None:
    rec = json.loads((EXAMPLES / "pairs-pips-match.json").read_text())
    rec["x-padding"] = "x" * MAX_RECORD_BYTES
    big = tmp_path / "big.json"
    big.write_text(json.dumps(rec))
    with pytest.raises(RecordFormatError, match="at most 8388608 bytes"):
        load(big)
    with pytest.raises(RecordFormatError, match="at most"):
        loads(big.read_bytes())
    res = _replay("-", stdin=big.read_bytes())
    assert res.exit_code == 2 and "at most" in json.loads(res.stdout)["error"]
    # just under the limit still replays
    rec["x-padding"] = "x" * (MAX_RECORD_BYTES - len(json.dumps(rec)))
    big.write_text(json.dumps(rec))
    assert load(big)["game"] == "dominoes"
