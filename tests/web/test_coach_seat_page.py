"""Issue 31, the coach on a real table: ``tablesense play --coach`` on the
virtual boards of ``tablesense sim boards``, every step through the real
path. The seat to play holds its seat button (the sim's button input: the
table-top page's press, held 1.5 s, through the seat header's wire into
play's ``forward_buttons``); the coach's hint then

- lights the tile's cell on that seat's rack and the line cell it goes to
  (through the link to the boards' LEDs, read back from the boards' world),
- shows on that seat's own page (``seat page:`` printed by play, keyed):
  its sentence, the tile, and the end of the line it goes to glowing,
- and nowhere else: the shared display and another seat's page are
  unchanged, a wrong key is refused.

Twice: for the opening (the centre) and for the next seat (an arm's cell).
Screenshots of the seat page at desktop and phone size go to
test-artifacts/web/."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from sim.test_tabletop_cli import free_port, get, post, wait
from tablesense.outputs.cell_leds import LedPalette
from tablesense.table.geometry import TableGeometry

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
COACH = list(LedPalette().coach)


def keys_of(urls: list[str]) -> dict[Any, str]:
    """``{seat: key}`` (and ``"open"``) from printed addresses."""
    out: dict[Any, str] = {}
    for url in urls:
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        out["open" if "open" in q else int(q["seat"][0])] = q["key"][0]
    return out


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_a_held_seat_button_shows_the_coach_on_that_seats_leds_and_page_only(
    browser: Any, artifacts: Path, tmp_path: Path
) -> None:
    geometry = TableGeometry.load("dominoes-4")
    line = geometry.line
    assert line is not None
    display_port = free_port()
    sim = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--table", "dominoes-4",
         "--web-port", "0", "--display", f"http://127.0.0.1:{display_port}/", "--open-hands"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    play: subprocess.Popen[str] | None = None
    sim_lines: list[str] = []
    play_lines: list[str] = []
    try:
        assert sim.stdout is not None and sim.stderr is not None
        ports = [sim.stdout.readline().strip() for _ in geometry.boards]
        sim_err = sim.stderr
        threading.Thread(target=lambda: sim_lines.extend(sim_err), daemon=True).start()
        header = wait(lambda: next((m.group(1) for ln in sim_lines if (m := re.search(r"--seat-header (\S+)", ln))),
                                   None), 30, "the seat header's socket")
        top_urls = [m.group(1) for ln in sim_lines if (m := re.search(r"table top: (\S+)", ln))]
        top_key = keys_of(top_urls)
        top = top_urls[0].rsplit("/tabletop", 1)[0] + "/tabletop/api/"
        play = subprocess.Popen(
            [sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4",
             *[arg for port in ports for arg in ("--port", port)], "--seats", "Ana,Bea,Caio,Dan",
             "--journal", str(tmp_path / "j.sqlite"), "--new", "--no-keys", "--coach",
             "--web-port", str(display_port), "--host", "127.0.0.1", "--seat-header", header],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        )
        assert play.stderr is not None
        play_err = play.stderr
        threading.Thread(target=lambda: play_lines.extend(play_err), daemon=True).start()
        seat_urls = wait(lambda: (found := [m.group(1) for ln in play_lines
                                            if (m := re.search(r"seat page: (\S+)", ln))]) and len(found) == 4
                         and found, 60, "play's four seat page lines")
        seat_key = keys_of(seat_urls)
        assert all(f"127.0.0.1:{display_port}/seat?" in u for u in seat_urls)
        display = f"http://127.0.0.1:{display_port}/"
        wait(lambda: get(display + "api/view")["view"], 30, "play's display")

        assert post(top + "deal", {"open": True, "key": top_key["open"]})["ok"]
        seat = wait(lambda: (get(display + "api/view")["view"] or {}).get("to_play"), 30,
                    "the referee to read the deal from the racks")
        other = (seat + 1) % 4
        shared = browser.new_page(viewport={"width": 1280, "height": 800})
        shared.goto(display)
        mine = browser.new_page(viewport={"width": 1280, "height": 800})
        mine.goto(seat_urls[[keys_of([u]).get(seat) is not None for u in seat_urls].index(True)])
        theirs = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        theirs.goto(display + f"seat?seat={other}&key={seat_key[other]}")
        for page in (shared, mine, theirs):
            page.wait_for_function("() => document.body.dataset.conn === 'live' && "
                                   "document.querySelector('#hand-no').textContent !== ''")
        mine.wait_for_selector("#coach:not([hidden])")
        assert shared.query_selector("#coach") is None  # the shared display has no coach at all

        def coach_cells() -> set[str]:
            cells = get(top + f"state?open=1&key={top_key['open']}")["cells"]
            return {c for c, info in cells.items() if info["led"] == COACH}

        pages = {seat: mine, other: theirs}

        def ask_and_check(asker: int) -> tuple[str, str]:
            """Hold ``asker``'s button: its hint's tile lit on its rack and
            the line cell it goes to, its page showing the tile with that end
            glowing, nothing anywhere else. Returns (tile, end)."""
            before = shared.evaluate("() => document.querySelector('#main').innerText")
            assert not coach_cells()
            assert post(top + "press", {"seat": asker, "key": top_key[asker], "kind": "pass", "hold": 1.5})["ok"]
            lit = wait(lambda: len(found := coach_cells()) == 2 and found, 30, "the coach's two LEDs")
            hint = get(display + f"seat/api/state?seat={asker}&key={seat_key[asker]}")["coach"]["hint"]
            end = hint["end"]
            target = line.center if end == "center" else line.arm(end)[0]
            rack = [c for c in lit if c != target]
            assert target in lit and len(rack) == 1 and rack[0] in geometry.seats[asker].rack, (lit, hint)
            piece = get(top + f"state?seat={asker}&key={top_key[asker]}")["cells"][rack[0]]["piece"]
            assert hint["piece"] == piece
            page = pages[asker]
            page.wait_for_selector("#coach[data-hint='true']")
            page.wait_for_selector(f"#line .drop-target.state-coach[data-target='{end}']")
            assert piece in page.inner_text("#coach-hint")
            assert page.query_selector("#coach .coach-piece svg") is not None
            # nobody else sees it: the shared display's view, page and history, the other seat's page
            assert piece not in json.dumps(get(display + "api/view")["view"])
            assert shared.evaluate("() => document.querySelector('#main').innerText") == before
            assert shared.query_selector(".drop-target") is None
            for who, other_page in pages.items():
                if who != asker:
                    assert other_page.query_selector("#coach[data-hint='true']") is None
                    assert other_page.query_selector(".drop-target.state-coach") is None
            history = get(display + "api/history?limit=100")
            assert all("private" not in ev["data"] for ev in history if ev["kind"] == "coach")
            return piece, end

        # the opening: the only legal tile goes to the line's centre; the long press did not pass
        opener, end = ask_and_check(seat)
        assert (opener, end) == ("6-6", "center")
        assert get(display + "api/view")["view"]["moves"] == 0
        mine.screenshot(path=str(artifacts / "coach-seat-page.png"), full_page=True)
        # wrong keys are refused, on the page and the API
        assert status_of(display + f"seat?seat={seat}&key={seat_key[other]}") == 403
        assert status_of(display + f"seat/api/state?seat={seat}&key=nope") == 403

        # the opener laid as the hint says; the next seat asks: an arm's first cell
        cells = get(top + f"state?open=1&key={top_key['open']}")["cells"]
        rack_cell = next(c for c in geometry.seats[seat].rack if cells[c]["piece"] == opener)
        assert post(top + "lift", {"open": True, "key": top_key["open"], "cell": rack_cell})["ok"]
        assert post(top + "lay", {"open": True, "key": top_key["open"], "piece": opener,
                                  "cell": line.center})["ok"]
        wait(lambda: get(display + "api/view")["view"]["to_play"] == other, 30, "the opening to be accepted")
        mine.wait_for_selector("#coach[data-hint='false']")  # a move makes the hint stale
        wait(lambda: not coach_cells(), 10, "the first hint's LEDs to go out")
        piece, end = ask_and_check(other)
        assert end in ("left", "right") and "6" in piece.split("-")
        theirs.screenshot(path=str(artifacts / "coach-seat-page-phone.png"), full_page=True)
        for page in (shared, mine, theirs):
            page.close()
    finally:
        for proc in (play, sim):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
