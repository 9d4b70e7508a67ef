"""Issue 19, the coach's switches as a user types them: ``demo --coach``
records its reviews and the record replays; ``play --coach`` is refused at
a tournament table; the keyboard's ``h N`` is a held seat button."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_table_messages import FakeSession
from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.referee.keyboard import KEYS_HELP, key_command

REPO = Path(__file__).resolve().parents[2]


def test_demo_with_the_coach_prints_a_reviewed_record_that_replays(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tablesense.cli", "demo", "--no-web", "--hands", "1", "--seed", "3",
         "--link", "direct", "--coach"],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=True,
    )
    record = json.loads(out.stdout)
    review = record["hands"][0]["x-review"]
    assert isinstance(review, list)
    for line in review:
        assert set(line) == {"move", "seat", "played", "better", "loss", "text"}
        assert line["loss"] >= 0.5 and "points more" in line["text"]
        assert record["hands"][0]["moves"][line["move"]] == line["played"]
    path = tmp_path / "record.json"
    path.write_text(out.stdout, encoding="utf-8")
    r = CliRunner().invoke(app, ["rules", "replay", str(path)])
    assert r.exit_code == 0, r.output
    # without --coach (and without --sit) the demo's record has no review
    plain = subprocess.run(
        [sys.executable, "-m", "tablesense.cli", "demo", "--no-web", "--hands", "1", "--seed", "3",
         "--link", "direct"],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=True,
    )
    bare = json.loads(plain.stdout)
    assert "x-review" not in bare["hands"][0]
    assert bare["hands"][0]["moves"] == record["hands"][0]["moves"]  # the coach changes no move


def test_a_tournament_table_refuses_the_coach() -> None:
    r = CliRunner().invoke(
        app,
        ["play", "--table", "dominoes-4", "--coach", "--director", "mqtt://table-1:x@127.0.0.1:1",
         "--table-no", "1", "--journal", "/nonexistent/j.sqlite"],
    )
    assert r.exit_code == 2, r.output
    assert "a tournament table plays without the coach" in r.output


def test_the_keyboard_holds_a_seat_button_for_the_coach() -> None:
    s = FakeSession(4)
    assert key_command(s, "h 3") is None and s.pressed == [(2, "coach")]
    assert key_command(s, "h 5") == "there is no seat 5: the seats are 1 to 4"
    assert "h N" in KEYS_HELP
