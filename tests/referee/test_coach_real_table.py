"""Issue 19 on the real table's path: ``tablesense play --coach`` on the
virtual boards of ``tablesense sim boards``. The seat to play holds its seat
button (the seat header's wire, as on a Pi), play's ``forward_buttons``
makes it a long press, the coach's hint goes to the cell LEDs only: through
the link to the boards, where the table top shows the seat's own rack cell
lit in the coach's colour and the line cell it goes to (issue 31: the
centre for the opening), no other cell; the display never shows it, and the
long press does not pass. The seat's own page: tests/web/test_coach_seat_page.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path
from typing import Any

from sim.test_tabletop_cli import free_port, get, post, wait
from tablesense.outputs.cell_leds import LedPalette
from tablesense.table.geometry import TableGeometry

REPO = Path(__file__).resolve().parents[2]
COACH = list(LedPalette().coach)


def test_a_held_seat_button_lights_the_coachs_tile_on_that_seats_rack_only(tmp_path: Path) -> None:
    display_port = free_port()
    sim = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--table", "dominoes-4",
         "--web-port", "0", "--display", f"http://127.0.0.1:{display_port}/", "--open-hands"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    play: subprocess.Popen[str] | None = None
    lines: list[str] = []
    try:
        assert sim.stdout is not None and sim.stderr is not None
        boards = len(TableGeometry.load("dominoes-4").boards)
        ports = [sim.stdout.readline().strip() for _ in range(boards)]
        err = sim.stderr
        threading.Thread(target=lambda: lines.extend(err), daemon=True).start()
        header = wait(lambda: next((m.group(1) for ln in lines if (m := re.search(r"--seat-header (\S+)", ln))), None),
                      20, "the seat header's socket")
        urls = [m.group(1) for ln in lines if (m := re.search(r"table top: (\S+)", ln))]
        keyed = [urllib.parse.parse_qs(urllib.parse.urlsplit(u).query) for u in urls]
        key = {int(q["seat"][0]): q["key"][0] for q in keyed if "seat" in q}
        open_key = next(q["key"][0] for q in keyed if "open" in q)
        base = urls[0].rsplit("/tabletop", 1)[0] + "/tabletop/api/"
        play = subprocess.Popen(
            [sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4",
             *[arg for port in ports for arg in ("--port", port)], "--seats", "Ana,Bea,Caio,Dan",
             "--journal", str(tmp_path / "j.sqlite"), "--new", "--no-keys", "--coach",
             "--web-port", str(display_port), "--host", "127.0.0.1", "--seat-header", header],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        )
        display = f"http://127.0.0.1:{display_port}/api/view"
        wait(lambda: get(display)["view"], 30, "play's display")
        assert post(base + "deal", {"open": True, "key": open_key})["ok"]
        v = wait(lambda: (get(display)["view"] or {}).get("to_play") is not None and get(display)["view"], 30,
                 "the referee to read the deal from the racks")
        seat = v["to_play"]

        def coach_cells() -> list[str]:
            cells = get(base + f"state?open=1&key={open_key}")["cells"]
            return [c for c, info in cells.items() if info["led"] == COACH]

        assert not coach_cells()
        # a tap would pass (refused here: the opener must open); held 1.5 s it asks the coach
        assert post(base + "press", {"seat": seat, "key": key[seat], "kind": "pass", "hold": 1.5})["ok"]
        lit = wait(coach_cells, 20, "the coach's LED on the rack")
        mine = get(base + f"state?seat={seat}&key={key[seat]}")["cells"]
        lit = wait(lambda: len(found := coach_cells()) == 2 and found, 20, "the coach's target LED on the line")
        rack = [c for c in lit if c != "center"]
        assert "center" in lit and len(rack) == 1 and rack[0].startswith(f"seat{seat}-"), lit
        lit = rack
        assert mine[lit[0]]["piece"] == "6-6"  # the opener's only move, on its own rack
        view = get(display)["view"]
        assert view["moves"] == 0 and "6-6" not in json.dumps(view)  # no pass, nothing shown
        other: Any = get(base + f"state?seat={(seat + 1) % 4}&key={key[(seat + 1) % 4]}")
        assert other["cells"][lit[0]]["piece"] == "hidden"
    finally:
        for proc in (play, sim):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
