"""`tablesense demo --sit`: the printed `table top:` lines, the page each one
leads to, the open-hands mode, and clear refusals of bad seats."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from typer.testing import CliRunner

from tablesense.cli import app

REPO = Path(__file__).resolve().parents[2]


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_demo_sit_prints_one_table_top_line_per_seat_and_serves_them() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "demo", "--sit", "0,2", "--open-hands",
         "--port", "0", "--speed", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip() for _ in range(3)]
        assert [ln.split("?")[1].split()[0] for ln in lines] == ["seat=0", "seat=2", "open=1"]
        assert all(ln.startswith("table top: http://127.0.0.1:") for ln in lines)
        url0 = lines[0].split()[2]
        base = url0.split("/tabletop")[0]
        status, html = fetch(url0)
        assert status == 200 and 'data-seat="0"' in html and 'data-open="false"' in html
        status, html = fetch(lines[2].split()[2])
        assert status == 200 and 'data-open="true"' in html and "Open hands" in html
        layout = json.loads(fetch(base + "/tabletop/api/layout")[1])
        assert [s["person"] for s in layout["seats"]] == [True, False, True, False]
        assert layout["dealer"] == "computer" and layout["buttons"] is True
        # seat 1 is the computer's: no page, no state for it
        assert fetch(base + "/tabletop/api/state?seat=1")[0] == 403
        # the session names every tag: only in the open-hands mode (on here)
        assert fetch(base + "/tabletop/api/scenario")[0] == 200
    finally:
        proc.terminate()
        proc.wait(30)


def test_demo_sit_refuses_bad_seats() -> None:
    r = CliRunner().invoke(app, ["demo", "--sit", "7", "--port", "0"])
    assert r.exit_code == 2 and "there is no seat 7" in r.output
    r = CliRunner().invoke(app, ["demo", "--sit", "0,1,2,3", "--port", "0"])
    assert r.exit_code == 2 and "no seat to the computer" in r.output
    r = CliRunner().invoke(app, ["demo", "--sit", "0", "--no-web"])
    assert r.exit_code == 2 and "--sit needs the page" in r.output
    r = CliRunner().invoke(app, ["demo", "--open-hands", "--no-web", "--hands", "1"])
    assert r.exit_code == 2 and "--open-hands goes with --sit" in r.output
