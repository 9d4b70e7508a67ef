"""`tablesense demo --sit`: the printed `table top:` lines (each with its
seat's key), the page each one leads to, the open-hands mode, clear refusals
of bad seats, and the keys: another seat's key or none shows only the public
view (HTTP and WebSocket) and presses no other seat's button."""

from __future__ import annotations

import html as htmllib
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from typer.testing import CliRunner
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tablesense.cli import app

REPO = Path(__file__).resolve().parents[2]


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def post(url: str, data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        url, data=json.dumps(data).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def query(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def ws_first(base: str, q: dict[str, str]) -> tuple[int, dict[str, Any] | None]:
    """(HTTP status of the handshake, first live message) of the page's WebSocket."""
    url = base.replace("http://", "ws://") + "/tabletop/ws" + ("?" + urllib.parse.urlencode(q) if q else "")
    try:
        with connect(url, open_timeout=5) as ws:
            return 101, json.loads(ws.recv(timeout=5))
    except InvalidStatus as exc:
        return exc.response.status_code, None


def shown(view: dict[str, Any]) -> set[str]:
    """Every piece a view names face up (cells and hands in the air)."""
    out = {c["piece"] for c in view["cells"].values() if c["piece"] not in (None, "hidden")}
    return out | {a["piece"] for a in view["air"] if a["piece"] != "hidden"}


def test_demo_sit_prints_one_table_top_line_per_seat_and_serves_them(browser: Any) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "demo", "--sit", "1,north", "--open-hands",
         "--port", "0", "--speed", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip() for _ in range(3)]
        assert [ln.split("?")[1].split("&")[0] for ln in lines] == ["seat=0", "seat=2", "open=1"]
        assert all(ln.startswith("table top: http://127.0.0.1:") for ln in lines)
        assert lines[0].endswith("(South)") and lines[1].endswith("(North)")  # seats by name
        url0, url2, url_open = (ln.split()[2] for ln in lines)
        key0, key2, key_open = (query(u)["key"] for u in (url0, url2, url_open))
        assert len({key0, key2, key_open}) == 3 and all(len(k) >= 20 for k in (key0, key2, key_open))
        base = url0.split("/tabletop")[0]
        # the printed lines carry working keys
        status, html = fetch(url0)
        assert status == 200 and 'data-seat="0"' in html and 'data-open="false"' in html
        status, html = fetch(url2)
        assert status == 200 and 'data-seat="2"' in html
        status, html = fetch(url_open)
        assert status == 200 and 'data-open="true"' in html and "Open hands" in html
        layout = json.loads(fetch(base + "/tabletop/api/layout")[1])
        assert [s["person"] for s in layout["seats"]] == [True, False, True, False]
        assert layout["dealer"] == "computer" and layout["buttons"] is True
        # seat 1 is the computer's: no page, no state for it
        assert fetch(base + "/tabletop/api/state?seat=1")[0] == 403
        # the session names every tag: only with the open-hands key
        assert fetch(base + "/tabletop/api/scenario")[0] == 403
        assert fetch(base + "/tabletop/api/scenario?key=" + key0)[0] == 403
        assert fetch(base + "/tabletop/api/scenario?key=" + key_open)[0] == 200

        state = base + "/tabletop/api/state?"
        deadline = time.monotonic() + 30  # the computer deals: seat 2's rack fills
        while True:
            own2 = json.loads(fetch(state + urllib.parse.urlencode({"seat": 2, "key": key2}))[1])
            if any(c["piece"] not in (None, "hidden") for i, c in own2["cells"].items() if i.startswith("seat2-")):
                break
            assert time.monotonic() < deadline, "the deal"
            time.sleep(0.2)
        rack2 = {c["piece"] for i, c in own2["cells"].items() if i.startswith("seat2-") and c["piece"]}
        # seat 2's address with seat 0's key, with a made-up key, with none: refused
        for bad in ({"seat": "2", "key": key0}, {"seat": "2", "key": key_open},
                    {"seat": "2", "key": key2[:-1] + ("A" if key2[-1] != "A" else "B")}, {"seat": "2"}):
            status, text = fetch(state + urllib.parse.urlencode(bad))
            assert status == 403 and "wrong or missing key for North's seat" in text, (bad, status, text)
            assert not any(p in text for p in rack2)
            status, html = fetch(base + "/tabletop?" + urllib.parse.urlencode(bad))
            assert status == 403 and 'data-seat=""' in html
            assert "wrong or missing key for North's seat" in htmllib.unescape(html)
            assert ws_first(base, bad) == (403, None)
        assert fetch(state + "open=1&key=" + key0)[0] == 403
        assert ws_first(base, {"open": "1", "key": key2}) == (403, None)
        # the public view (no seat): every rack face down
        status, public = ws_first(base, {})
        assert status == 101 and public is not None and not shown(public) & rack2
        assert all(c["piece"] in (None, "hidden") for i, c in public["cells"].items() if i.startswith("seat"))
        status, own = ws_first(base, {"seat": "2", "key": key2})
        assert status == 101 and own is not None and rack2 <= shown(own)
        # an action for seat 2 with seat 0's key is refused; with seat 2's key it goes through
        api = base + "/tabletop/api/"
        cell2 = next(i for i, c in own2["cells"].items() if i.startswith("seat2-") and c["piece"])
        for path, data in (("press", {"seat": 2, "key": key0, "kind": "pass"}),
                           ("press", {"seat": 0, "key": key0, "button_seat": 2, "kind": "pass"}),
                           ("press", {"seat": 2, "kind": "pass"}),
                           ("lift", {"seat": 2, "key": key0, "cell": cell2}),
                           ("lift", {"cell": cell2}),
                           ("deal", {"open": True, "key": key0})):
            status, res = post(api + path, data)
            assert status == 403 and res["ok"] is False and "key" in res["error"], (path, data, res)
        assert json.loads(fetch(state + urllib.parse.urlencode({"seat": 2, "key": key2}))[1])["cells"][cell2]["piece"]

        # the page in Chromium: seat 2's address with seat 0's key holds no hidden piece, no button
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        page = ctx.new_page()
        frames: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
        resp = page.goto(base + "/tabletop?" + urllib.parse.urlencode({"seat": 2, "key": key0}))
        assert resp is not None and resp.status == 403
        page.wait_for_selector('#table[data-ready="true"]')
        page.wait_for_function("Number(document.body.dataset.version) > 0")
        assert page.locator("#refused").inner_text().startswith("wrong or missing key for North's seat")
        faces = set(page.eval_on_selector_all("[data-piece]", "ns => ns.map(n => n.dataset.piece)"))
        assert faces and not faces & rack2
        assert page.locator('[data-rack] [data-piece]:not([data-piece="hidden"])').count() == 0
        assert page.locator("[data-button]").count() == 0
        assert frames and not any(shown(json.loads(f)) & rack2 for f in frames)
        # seat 2's own address: its rack face up, its buttons
        page.goto(url2)
        page.wait_for_selector('[data-rack="2"] [data-piece]:not([data-piece="hidden"])')
        assert page.locator('[data-button^="2:"]').count() > 0
        ctx.close()
    finally:
        proc.terminate()
        proc.wait(30)


def test_demo_sit_refuses_bad_seats() -> None:
    r = CliRunner().invoke(app, ["demo", "--sit", "7", "--port", "0"])
    assert r.exit_code == 2 and "there is no seat 7" in r.output
    # players count seats from 1: a 0 gets its own sentence, naming the seats
    r = CliRunner().invoke(app, ["demo", "--sit", "0", "--port", "0"])
    assert r.exit_code == 2 and "seats count from 1" in r.output and "1 = South" in r.output
    r = CliRunner().invoke(app, ["demo", "--sit", "1,2,3,4", "--port", "0"])
    assert r.exit_code == 2 and "no seat to the computer" in r.output
    r = CliRunner().invoke(app, ["demo", "--sit", "south,1", "--port", "0"])
    assert r.exit_code == 2 and "South is named twice" in r.output
    r = CliRunner().invoke(app, ["demo", "--sit", "northeast", "--port", "0"])
    assert r.exit_code == 2 and "not 'northeast'" in r.output
    r = CliRunner().invoke(app, ["demo", "--sit", "1", "--no-web"])
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
        # the first line is seat 0's, with its key; without the key: the public view only
        assert query(url)["seat"] == "0" and query(url)["key"]
        assert fetch(url.split("&key=")[0])[0] == 403
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        page = ctx.new_page()
        page.goto(url)
        page.wait_for_selector('#table[data-ready="true"]')
        page.wait_for_selector('[data-stock="32"]')  # the whole deck, off the table (its first drawing may lag)
        # the words say where such pieces are (issue 31: "4 off the table" and "In the air" were unexplained)
        assert page.inner_text("#stock .count") == "32 in the stock (off the table)"
        assert page.text_content("#tt-computer .tt-seat-head") == "Lifted, in a hand"
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


def test_table_keys_are_fresh_per_page_and_only_a_seats_own_key_opens_it() -> None:
    from tablesense.web.tabletop import TableKeys, tabletop_url

    a, b = TableKeys([0, 2], open_hands=False), TableKeys([0, 2], open_hands=False)
    assert a.seats[0] != b.seats[0] and a.seats[0] != a.seats[2]
    assert a.seat_ok(0, a.seats[0]) and a.seat_ok(2, a.seats[2])
    for wrong in (a.seats[2], b.seats[0], a.seats[0][:-1], a.seats[0] + "x", "", None):
        assert not a.seat_ok(0, wrong), wrong
    assert not a.seat_ok(1, a.seats[0])  # a computer's seat has no key at all
    assert a.open is None and not a.open_ok(None) and not a.open_ok("")
    assert a.lines("http://h:1/") == [
        f"table top: http://h:1/tabletop?seat=0&key={a.seats[0]}",
        f"table top: http://h:1/tabletop?seat=2&key={a.seats[2]}",
    ]
    c = TableKeys([1], open_hands=True)
    assert c.open and c.open_ok(c.open) and not c.open_ok(c.seats[1])
    assert c.lines("http://h:1/tabletop")[-1] == f"table top: http://h:1/tabletop?open=1&key={c.open}  (open hands)"
    assert tabletop_url("http://h:1/") == "http://h:1/tabletop"
