"""`tablesense demo --sit`: the printed `table top:` lines, the page each one
leads to, the open-hands mode, and clear refusals of bad seats."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

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


def test_sim_boards_table_top_deal_button_and_dealing_from_the_stock(browser: Any) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--table", "kems-4",
         "--web-port", "0", "--display", ""],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        url = ""
        while not url:
            line = proc.stderr.readline()
            assert line, "sim boards ended without a table top"
            m = re.search(r"table top: (\S+)", line)
            url = m.group(1) if m else ""
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        page = ctx.new_page()
        page.goto(url + "?seat=0")
        page.wait_for_selector('#table[data-ready="true"]')
        assert page.locator('[data-stock="32"]').count() == 1  # the whole deck, off the table
        # one card laid by hand from the stock onto the rack: face up for its owner
        drag_to(page, "#stock", '[data-cell="seat0-1"]')
        page.wait_for_selector('[data-cell="seat0-1"] [data-piece]:not([data-piece="hidden"])')
        assert page.locator('[data-stock="31"]').count() == 1
        page.locator("#deal").click()
        page.wait_for_selector('[data-stock="12"]')
        assert page.locator('[data-rack="0"] [data-piece]:not([data-piece="hidden"])').count() == 4
        assert page.locator('[data-rack="1"] [data-piece="hidden"]').count() == 4
        assert page.locator('[data-cell^="slot-"] [data-piece]:not([data-piece="hidden"])').count() == 4
        # without `play --seat-header` the buttons say why nothing happens
        page.locator('[data-button="0:pass"]').click()
        page.wait_for_selector("#oops:has-text('no referee is connected')")
        ctx.close()
    finally:
        proc.terminate()
        proc.wait(15)


def drag_to(page: Any, src: str, dst: str) -> None:
    a = page.locator(src).bounding_box()
    b = page.locator(dst).bounding_box()
    assert a is not None and b is not None
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=5)
    page.mouse.up()
