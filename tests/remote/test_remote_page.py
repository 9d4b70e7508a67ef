"""A person on the table-top page at a remote match (issue 32).

Two `play --remote` processes on two virtual tables, each on its own club's
TLS Mosquitto, the brokers bridged. The host table (club A) plays its seats
with the computer; at the joining table (club B, `play --remote page`) East
is a person: in Chromium the person opens the table's `find a game:` page,
types the code the host printed (a mistyped one first: the page says why),
lands on East's seat of the table-top page, and the test plays East there,
dragging tiles from the rack onto the line
and pressing the pass button, for whole hands, while West is the computer.
A second test hosts from the page: the person presses Host, reads the code
off the page, and a computer table joins by it.
The host reports the match to a real director (PostgreSQL, its own TLS
broker), which announced it with its target. Every state the page receives is checked: no piece face up but East's own
rack and the line (the stock and West's rack face down), and East's rack
holds only the tiles the record says were dealt to East in that hand. Both
tables print the same record, the director stores that record, it replays
legal, and East's moves in it are the ones made on the page. The match to
50 (``--runslow``) is the issue's done-when.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from remotekit import Broker, Play, director_event

from tablesense.games.dominoes import replay_record
from tablesense.remote.view import TableView
from testsupport import REPO

pytestmark = pytest.mark.broker

ARTIFACTS = REPO / "test-artifacts" / "remote"
EAST = 1


def _get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def _post(url: str, data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=json.dumps(data).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _nums(cells: dict[str, Any], cell: str | None) -> tuple[int, int] | None:
    piece = cells.get(cell or "", {}).get("piece")
    if piece in (None, "hidden"):
        return None
    a, b = str(piece).split("-")
    return int(a), int(b)


def line_ends(cells: dict[str, Any], line: dict[str, Any]) -> dict[str, int] | None:
    """The numbers open at the line's two ends, read off the page's state as
    a person reads the table (None while the line is empty)."""
    center = _nums(cells, line["center"])
    if center is None:
        return None
    left, right = center
    l0, r0 = _nums(cells, line["left"][0]), _nums(cells, line["right"][0])
    if (l0 and center[1] in l0 and center[0] not in l0) or (r0 and center[0] in r0 and center[1] not in r0):
        left, right = center[1], center[0]
    out: dict[str, int] = {}
    for side, outer in (("left", left), ("right", right)):
        for cell in line[side]:
            t = _nums(cells, cell)
            if t is None:
                break
            inner = outer if outer in t else t[0]
            outer = t[1] if t[0] == inner else t[0]
        out[side] = outer
    return out


def next_cell(cells: dict[str, Any], line: dict[str, Any], side: str) -> str | None:
    return next((c for c in line[side] if not cells.get(c, {}).get("piece")), None)


class Person:
    """East, in Chromium: reads the page's live state, drags tiles, presses pass."""

    def __init__(self, page: Any, url: str, layout: dict[str, Any]) -> None:
        self.page, self.url, self.layout = page, url, layout
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        self.base = url.split("/tabletop")[0]
        self.key = q["key"]
        self.zone = {c["id"]: (c["zone"], c["seat"]) for c in layout["cells"]}
        self.rack = [c["id"] for c in layout["cells"] if c["zone"] == "rack" and c["seat"] == EAST]
        self.states: list[dict[str, Any]] = []
        self.tried: set[tuple[str, str]] = set()
        self.made: list[dict[str, Any]] = []

    def state(self) -> dict[str, Any] | None:
        """What the page gets (its own keyed state), kept for the privacy check;
        None once the table's process has ended (the match is over)."""
        try:
            st = _get(f"{self.base}/tabletop/api/state?seat={EAST}&key={self.key}")
        except OSError:
            return None
        self.states.append(st)
        return st

    def my_turn(self, st: dict[str, Any]) -> bool:
        return bool(st["turn"][EAST]) and self.page.locator(f'.tt-seat[data-seat="{EAST}"]').get_attribute("data-turn") == "true"

    def drag(self, from_cell: str, to_cell: str) -> None:
        src = self.page.locator(f'[data-cell="{from_cell}"] .piece')
        dst = self.page.locator(f'[data-cell="{to_cell}"]')
        src.scroll_into_view_if_needed()
        a, b = src.bounding_box(), dst.bounding_box()
        assert a is not None and b is not None
        mouse = self.page.mouse
        mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
        mouse.down()
        mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=8)
        mouse.up()

    def play(self, st: dict[str, Any]) -> None:
        """One move for East: a tile that fits an end (on the next cell of that
        arm), else the pass button. A tile the table refuses goes back to the rack."""
        cells, line = st["cells"], self.layout["line"]
        mine = [(c, cells[c]["piece"]) for c in self.rack if cells[c]["piece"] not in (None, "hidden")]
        ends = line_ends(cells, line)
        options: list[tuple[str, str, str]] = []
        for cell, tile in sorted(mine, key=lambda x: -sum(map(int, str(x[1]).split("-")))):
            a, b = (int(x) for x in str(tile).split("-"))
            if ends is None:
                options.append((cell, str(tile), line["center"]))
                continue
            for side in ("left", "right"):
                to = next_cell(cells, line, side)
                if to is not None and ends[side] in (a, b):
                    options.append((cell, str(tile), to))
        options = [o for o in options if (o[1], o[2]) not in self.tried]
        if not options:
            self.page.locator(f'#my-buttons [data-button="{EAST}:pass"]').click()
            self.made.append({"pass": True})
            self._wait_turn_over(10)
            return
        cell, tile, to = options[0]
        self.tried.add((tile, to))
        self.drag(cell, to)
        if self._wait_turn_over(20):  # sensed, claimed, judged by the host across the bridge: seconds under load
            self.made.append({"tile": tile})
            return
        # not accepted (a tile that may not open): it goes back where it came from
        now = self.state()
        if now is not None and now["cells"][to]["piece"] == tile:
            self.drag(to, cell)

    def _wait_turn_over(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st = self.state()
            if st is None or not st["turn"][EAST]:
                return True
            time.sleep(0.15)
        return False


def _private_check(person: Person, record: dict[str, Any]) -> int:
    """Every state the page got: nothing face up but East's rack and the line;
    East's rack only tiles dealt to East in the hand being played, or (while
    a deal is laid out and last hand's tiles go back) in the one before,
    hands never going back. The number of hands East saw."""
    deals = [set(h["deal"][EAST]) for h in record["hands"]]
    hand = 0
    for st in person.states:
        rack_now: set[str] = set()
        for cell, info in st["cells"].items():
            piece = info["piece"]
            zone, seat = person.zone[cell]
            if piece in (None, "hidden"):
                continue
            assert zone == "line" or (zone == "rack" and seat == EAST), (cell, zone, piece)
            if zone == "rack":
                rack_now.add(piece)
        assert all(a["piece"] == "hidden" or a["mine"] for a in st["air"])
        fits = [h for h in range(hand, len(deals)) if rack_now <= deals[h] | (deals[h - 1] if h else set())]
        assert fits, (hand, sorted(rack_now))
        hand = fits[0]
    return hand + 1


@pytest.mark.timeout(1600)  # its own deadlines bound it (1400 s of play); the suite's 300 s is less than a loaded machine needs
# To 10 is two hands with these seeds (8, then 15 points): the person plays
# across a hand's end, which the private check needs; to 50 is a soak.
@pytest.mark.parametrize("target", [pytest.param(10, id="to-10"),
                                    pytest.param(50, id="to-50", marks=pytest.mark.slow)])
def test_a_person_on_the_table_top_page_plays_a_remote_match(bridged: tuple[Broker, Broker], browser: Any,
                                                             pg_url: str, tmp_path: Path, target: int) -> None:
    with director_event(tmp_path, pg_url, target) as event:
        record, person, shots = _play_with_a_person(bridged, browser, tmp_path, target, event.host_args)
        stored = event.results()
    # the director stored the host's record: the same as both tables'
    assert len(stored) == 1 and stored[0]["records"] == [record]
    result = replay_record(record)
    assert result.winner is not None and max(result.score) >= target
    # East's moves in the record are the ones made on the page
    east = [m for h in record["hands"] for m in h["moves"] if m.get("seat") == EAST]
    assert [_said(m) for m in east] == [_said(m) for m in person.made]
    assert any("tile" in m for m in east)
    seen_hands = _private_check(person, record)
    assert seen_hands == len(record["hands"]) >= 2, (seen_hands, len(record["hands"]))
    assert shots, "East never had two moves to screenshot"


def _play_with_a_person(bridged: tuple[Broker, Broker], browser: Any, tmp_path: Path, target: int,
                        director: list[str]) -> tuple[dict[str, Any], Person, bool]:
    """Club A's table hosts with computer seats (reporting to the director), club
    B's joins with East a person in Chromium: the record both printed (equal)."""
    club_a, club_b = bridged
    host = Play("--remote", "host", "--broker", club_a.url("table-1"), "--seed", "21",
                "--journal", str(tmp_path / "a" / "journal.sqlite"), "--remote-timeout", "1500", *director)
    join: Play | None = None
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        code = host.wait_for("remote match code:", 60).split("remote match code:")[1].split()[0]
        join = Play("--remote", "page", "--broker", club_b.url("table-2"), "--seed", "22",
                    "--seats", "Caio,bot", "--web-port", "0", "--host", "127.0.0.1",
                    "--journal", str(tmp_path / "b" / "journal.sqlite"), "--remote-timeout", "1500")
        page = context.new_page()
        url = _join_on_the_page(page, join, code)
        layout = _get(url.split("/tabletop")[0] + "/tabletop/api/layout")
        person = Person(page, url, layout)
        page.wait_for_selector('body[data-conn="live"]', timeout=20000)
        # the other table's seats are named so, West is the computer, East has one button: Pass
        whos = [page.locator(f'.tt-seat[data-seat="{s}"] .who').inner_text().strip() for s in range(4)]
        assert whos == ["at the other table", "you", "at the other table", "computer"], whos
        assert page.locator("#my-buttons button").all_inner_texts() == ["Pass"]
        assert page.locator('.tt-seat[data-seat="0"] button, .tt-seat[data-seat="2"] button').count() == 0
        # the stock is face down: the page may not lift a stock piece
        stock_cell = next(c["id"] for c in layout["cells"] if c["zone"] == "stock")
        status, said = _post(person.base + "/tabletop/api/lift", {"seat": EAST, "key": person.key, "cell": stock_cell})
        assert status == 409 and "face down" in said["error"], said
        shots = False
        deadline = time.monotonic() + 1400
        while join.proc.poll() is None and time.monotonic() < deadline:
            st = person.state()
            if st is None:
                time.sleep(0.3)  # the match is over: the table's process is ending
            elif person.my_turn(st):
                if not shots and len(person.made) >= 2:
                    _screenshots(browser, page, url)
                    shots = True
                person.play(st)
            else:
                time.sleep(0.15)
        rc_join, out_join = join.finish(60)
        rc_host, out_host = host.finish(120)
    finally:
        context.close()
        host.kill()
        if join is not None:
            join.kill()
    assert join is not None
    assert rc_join == 0, "".join(join.lines)[-3000:]
    assert rc_host == 0, "".join(host.lines)[-3000:]
    assert f"(to {target})" in "".join(host.lines)  # the director's target
    assert "director: result accepted" in "".join(host.lines), "".join(host.lines)[-2000:]
    record = json.loads(out_host)
    assert json.loads(out_join) == record  # the same record on both sides
    # the joining table's own journal: its frames rebuild its view, which ends with that record
    lines = (tmp_path / "b" / "remote" / f"{code}.join.jsonl").read_text().splitlines()
    view = TableView(frozenset({EAST, 3}))
    for line in lines[1:]:
        view.apply(json.loads(line)["frame"])
    assert view.record == record
    return record, person, shots


def _join_on_the_page(page: Any, join: Play, code: str) -> str:
    """The person finds the match on the table's page: a mistyped code is
    refused there, the host's code (typed as read out: lower case, a dash)
    opens East's seat. The seat's address (the one the table printed)."""
    find = join.wait_for("find a game: ", 120).split("find a game: ")[1].split()[0]
    page.goto(find)
    page.wait_for_selector('body[data-state="choose"]', timeout=20000)
    page.fill("#code", "K7Q1")
    page.click("#join")
    page.wait_for_selector('#message[data-level="error"]', timeout=10000)
    assert "is not a match code" in page.locator("#message").inner_text()
    page.fill("#code", code[:3].lower() + "-" + code[3:].lower())
    page.click("#join")
    page.wait_for_url("**/tabletop?seat=*", timeout=60000)
    line = join.wait_for("table top: ", 10)
    assert "(Caio)" in line, line
    url = line.split()[2]
    assert f"seat={EAST}" in url and "key=" in url and page.url == url
    assert f"joining table-1's match {code}" in "".join(join.lines)
    return url


def test_a_person_hosts_from_the_page_and_a_table_joins_by_the_code_read_out(
    bridged: tuple[Broker, Broker], browser: Any, tmp_path: Path
) -> None:
    club_a, club_b = bridged
    host = Play("--remote", "page", "--broker", club_a.url("table-1"), "--seed", "31", "--seats", "Ana,bot",
                "--web-port", "0", "--host", "127.0.0.1", "--journal", str(tmp_path / "a" / "journal.sqlite"),
                "--remote-timeout", "300", "--target", "10")
    join: Play | None = None
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        find = host.wait_for("find a game: ", 120).split("find a game: ")[1].split()[0]
        # a wrong key: the page says where the right address is, and offers nothing
        status, said = _post(find.split("/tabletop")[0] + "/tabletop/find/api/host", {"key": "guess"})
        assert status == 403 and "find a game:" in said["error"]
        page = context.new_page()
        page.goto(find)
        page.wait_for_selector('body[data-state="choose"]', timeout=20000)
        _find_screenshots(browser, page, find, "choose")
        page.click("#host")
        page.wait_for_url("**/tabletop?seat=*", timeout=30000)
        assert "seat=0" in page.url  # the host table plays seats 0 and 2: Ana has the first
        banner = page.locator("#message")
        banner.wait_for(state="visible", timeout=20000)
        said_code = banner.inner_text().split("match code")[1].strip()
        assert len(said_code) == 6, banner.inner_text()
        assert f"table top: {page.url}  (Ana)" in "".join(host.lines)
        page.screenshot(path=str(ARTIFACTS / "remote-host-waiting-desktop.png"))
        # the other table joins by the code read off the page
        join = Play("--remote", "join", said_code, "--broker", club_b.url("table-2"), "--seed", "32",
                    "--journal", str(tmp_path / "b" / "journal.sqlite"), "--remote-timeout", "300")
        join.wait_for("joined: this table plays seats East, West", 60)
        host.wait_for("table-2 joined: seats East, West", 30)
        page.wait_for_function("!document.querySelector('#message').textContent.includes('match code')",
                               timeout=60000)
        # a second choice is refused: the table plays its match
        status, said = _post(find.split("/tabletop")[0] + "/tabletop/find/api/join",
                             {"key": find.split("key=")[1], "code": "ABCDEF"})
        assert status == 400 and f"plays match {said_code} already" in said["error"], said
    finally:
        context.close()
        host.kill()
        if join is not None:
            join.kill()


def _find_screenshots(browser: Any, page: Any, url: str, name: str) -> None:
    """The find page at 1280x800 (desktop) and 390x844 (a phone, its own page)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"remote-find-{name}-desktop.png"))
    phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                has_touch=True)
    try:
        p = phone.new_page()
        p.goto(url)
        p.wait_for_selector('body[data-state="choose"]', timeout=20000)
        p.fill("#code", "K7Q1")
        p.click("#join")
        p.wait_for_selector('#message[data-level="error"]', timeout=10000)
        time.sleep(1.0)  # polls of the table's state come and go: the refusal stays
        assert "is not a match code" in p.locator("#message").inner_text()
        p.screenshot(path=str(ARTIFACTS / f"remote-find-{name}-phone.png"), full_page=True)
    finally:
        phone.close()


def _said(move: dict[str, Any]) -> str:
    return "pass" if move.get("pass") else "-".join(sorted(str(move["tile"]).split("-")))


def _screenshots(browser: Any, page: Any, url: str) -> None:
    """The page mid-match at 1280 (desktop) and at 390 (a phone, its own page)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "remote-seat-desktop.png"))
    phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                has_touch=True)
    try:
        p = phone.new_page()
        p.goto(url)
        p.wait_for_selector('body[data-conn="live"]', timeout=20000)
        time.sleep(0.5)
        p.screenshot(path=str(ARTIFACTS / "remote-seat-phone.png"), full_page=True)
    finally:
        phone.close()
