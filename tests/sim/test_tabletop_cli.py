"""`tablesense sim boards` serves the table-top page and `tablesense play` in
another process referees what is done on it; `tags export --registry virtual`
lists the virtual table's tags."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tablesense.cli import app
from tablesense.table.geometry import TableGeometry
from tablesense.table.tags import TagRegistry

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def post(url: str, data: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        url, data=json.dumps(data).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def wait(cond: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            got = cond()
        except OSError:
            got = None
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_tags_export_virtual_registry(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["tags", "export", "--registry", "virtual:3"])
    assert r.exit_code == 0, r.output
    reg = TagRegistry.from_json(json.loads(r.output))
    assert len(reg) == 28 + 52
    assert reg.uid_of("6-6") == TagRegistry.virtual(3).uid_of("6-6")
    out = tmp_path / "tags.csv"
    r = CliRunner().invoke(app, ["tags", "export", "--registry", "virtual", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert f"{TagRegistry.virtual(0).uid_of('TH').hex()},TH" in out.read_text()
    r = CliRunner().invoke(app, ["tags", "export", "--registry", "virtual:x"])
    assert r.exit_code == 2 and "takes a number" in r.output


def test_play_referees_what_is_done_on_the_sim_boards_table_top(tmp_path: Path) -> None:
    display_port = free_port()
    sim = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--table", "dominoes-4",
         "--web-port", "0", "--display", f"http://127.0.0.1:{display_port}/", "--open-hands",
         "--save-session", str(tmp_path / "session.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    play: subprocess.Popen[str] | None = None
    lines: list[str] = []
    try:
        assert sim.stdout is not None and sim.stderr is not None
        boards = len(TableGeometry.load("dominoes-4").boards)
        ports = [sim.stdout.readline().strip() for _ in range(boards)]
        err = sim.stderr

        def read_err() -> None:
            for line in err:
                lines.append(line)

        threading.Thread(target=read_err, daemon=True).start()
        header = wait(lambda: next((m.group(1) for ln in lines if (m := re.search(r"--seat-header (\S+)", ln))), None),
                      20, "the seat header's socket")
        # one printed line per seat, then the open-hands one, each with its own key
        urls = [m.group(1) for ln in lines if (m := re.search(r"table top: (\S+)", ln))]
        keyed = [urllib.parse.parse_qs(urllib.parse.urlsplit(u).query) for u in urls]
        assert [q.get("seat", q.get("open")) for q in keyed] == [["0"], ["1"], ["2"], ["3"], ["1"]]
        assert "(open hands)" in next(ln for ln in lines if "open=1" in ln)
        key = {int(q["seat"][0]): q["key"][0] for q in keyed if "seat" in q}
        open_key = keyed[4]["key"][0]
        assert len({*key.values(), open_key}) == 5
        url = urls[0]
        base = url.rsplit("/tabletop", 1)[0] + "/tabletop/api/"
        with urllib.request.urlopen(urls[2], timeout=5) as r:
            assert 'data-seat="2"' in r.read().decode()
        try:  # seat 2's page with seat 0's key: the public view, 403
            urllib.request.urlopen(urls[2].split("&key=")[0] + "&key=" + key[0], timeout=5)
            raise AssertionError("seat 2's page opened with seat 0's key")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403 and 'data-seat=""' in exc.read().decode()

        def state(seat: int) -> Any:
            return get(base + f"state?seat={seat}&key={key[seat]}")

        play = subprocess.Popen(
            [sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4",
             *[arg for port in ports for arg in ("--port", port)], "--seats", "Ana,Bea,Caio,Dan",
             "--journal", str(tmp_path / "j.sqlite"), "--new", "--no-keys",
             "--web-port", str(display_port), "--host", "127.0.0.1", "--seat-header", header],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        )
        display = f"http://127.0.0.1:{display_port}/api/view"
        wait(lambda: get(display)["view"], 30, "play's display")
        assert post(base + "deal", {"open": True, "key": open_key})["ok"]
        v = wait(lambda: (get(display)["view"] or {}).get("to_play") is not None and get(display)["view"], 30,
                 "the referee to read the deal from the racks")
        opener = v["to_play"]
        table = get(base + f"state?open=1&key={open_key}")
        six = next(c for c, info in table["cells"].items() if info["piece"] == "6-6")
        assert six.startswith(f"seat{opener}-")
        # the table top follows the referee's display: the opener's turn LED, for everyone
        wait(lambda: state((opener + 1) % 4)["turn"][opener], 10, "the turn light")
        # seat `opener` lays the 6-6 by hand: pick-up, then put-down on the centre
        assert post(base + "lift", {"seat": opener, "key": key[opener], "cell": six})["piece"] == "6-6"
        assert post(base + "lay", {"seat": opener, "key": key[opener], "piece": "6-6", "cell": "center"})["ok"]
        wait(lambda: get(display)["view"].get("moves") == 1, 20, "the referee to accept 6-6")
        assert get(display)["view"]["line"]["center"]["tile"] == "6-6"
        # the next seat's turn LED is lit by play through the seat header, and its
        # pass button reaches play's referee through the same wire
        nxt = get(display)["view"]["to_play"]
        wait(lambda: state(0)["turn"][nxt], 10, "the next seat's turn LED")
        # another seat's key presses no button of seat `nxt`
        other_key = key[(nxt + 1) % 4]
        for data in ({"seat": nxt, "key": other_key, "kind": "pass"},
                     {"seat": (nxt + 1) % 4, "key": other_key, "button_seat": nxt, "kind": "pass"}):
            req = urllib.request.Request(base + "press", data=json.dumps(data).encode(),
                                         headers={"Content-Type": "application/json"})
            try:
                urllib.request.urlopen(req, timeout=5)
                raise AssertionError(f"seat {nxt}'s button pressed with another seat's key")
            except urllib.error.HTTPError as exc:
                assert exc.code == 403 and "key" in json.loads(exc.read())["error"]
        assert get(display)["view"].get("moves") == 1
        assert post(base + "press", {"seat": nxt, "key": key[nxt], "kind": "pass"})["ok"]
        wait(lambda: (get(display)["view"].get("message") or {}).get("level") == "error"
             or get(display)["view"].get("moves") == 2, 10, "the referee to hear the pass button")
        # a seat may not touch another seat's rack
        other = next(c for c in table["cells"] if c.startswith(f"seat{(opener + 1) % 4}-"))
        req = urllib.request.Request(base + "lift", data=json.dumps({"seat": opener, "key": key[opener],
                                                                     "cell": other}).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=5)
            raise AssertionError("lifting from another seat's rack was allowed")
        except urllib.error.HTTPError as exc:
            assert "rack" in json.loads(exc.read())["error"]
    finally:
        for proc in (play, sim):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
    saved = json.loads((tmp_path / "session.json").read_text())
    assert sum(1 for s in saved["steps"] if "place" in s) == 29  # the deal and the 6-6
