"""A real table that stays up all evening (``play --director``, referee.evening):
match after match as the director announces them, a confirmation still owed
when the host restarts, and check-in at the table (a wrong badge is refused
with the right table's number). Over a real Mosquitto, director on SQLite;
the matches are refereed on the direct table, as in test_play_reports."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from tablesense.outputs.events import EventBus
from tablesense.referee.demo import DemoConfig, run_demo
from tablesense.referee.evening import PENDING, Evening
from tablesense.referee.evening import start_reporter as _start_reporter
from tablesense.table.state import Tag
from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
from tablesense.tournament.console import confirm_match
from tablesense.tournament.db import Database
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director

from .test_play_reports import _Said

TARGET = 10


def _badges(i: int) -> list[str]:
    return [f"04a1b2c3d4e5{i}a", f"04a1b2c3d4e5{i}b"]


class Cells:
    """The table link as the evening reads it: ``state()`` maps cells to what lies there."""

    def __init__(self, *uids: str) -> None:
        self.cells: dict[str, Any] = {}
        for u in uids:
            self.lay(u)

    def lay(self, uid: str) -> None:
        self.cells[f"c{len(self.cells)}"] = Tag(bytes.fromhex(uid))

    def state(self) -> dict[str, Any]:
        return dict(self.cells)


class Players(Cells):
    """Whoever the director announced at this table lays a badge on it: the
    players carry their own badges (the assignment names them only by salted
    digest), so one badge of each announced side is laid."""

    def __init__(self, rep: Any) -> None:
        super().__init__()
        self.rep = rep
        self.wallet = {b for i in range(1, 9) for b in _badges(i)}

    def state(self) -> dict[str, Any]:
        m = self.rep.current_match()
        if m is None:
            return {}
        laid: dict[int, str] = {}
        for uid, side in sorted(self.rep.match_taps(m, self.wallet).items()):
            laid.setdefault(side, uid)
        return {f"c{side}": Tag(bytes.fromhex(uid)) for side, uid in laid.items()}


class Seats:
    """The session's seat buttons (``press``), as GPIO and the keyboard reach them."""

    def press(self, seat: int, button: str = "main") -> None:
        raise AssertionError("a seat button reached the game during check-in or confirmation")


def _director(url: str, mode: str, pairs: int = 2, tables: int = 1, format: str = "swiss") -> Director:
    d = Director.create_event(Database(url), "Club night", format=format,
                              options={"target": TARGET, "lots_seed": "p", "confirm": mode})
    for i in range(1, pairs + 1):
        d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"], _badges(i), seed=i)
    for t in range(1, tables + 1):
        d.add_table(t, TableKey.from_seed(f"real-table-{t}".encode()).public)
    return d


def _table(broker: Any, tmp_path: Path, number: int = 1) -> Any:
    key = TableKey.from_seed(f"real-table-{number}".encode())
    key.save(tmp_path / f"table-{number}.key")
    return _start_reporter(broker.url(f"table-{number}"), number, tmp_path / f"table-{number}.key", None,
                           tmp_path / "journal.sqlite")


def _play(m: dict[str, Any]) -> dict[str, Any]:
    played = run_demo(DemoConfig(seed=5, web=False, link="direct", timeout=60, fast=True,
                                 options={"target": m["options"]["target"]}), log=_Said())
    assert played.match_over
    return played.record


def test_one_run_plays_match_after_match_as_announced(broker: Any, sqlite_url: str, tmp_path: Path) -> None:
    d = _director(sqlite_url, "director", pairs=3, format="round-robin")
    d.pair_next_round()
    bridge = DirectorBridge(d, BrokerURL.parse(broker.url("director"))).start()
    assert bridge.wait_connected(30)
    rep = _table(broker, tmp_path)
    bus = EventBus(history_size=1000)
    rep.attach(bus)
    console = _Said()
    stop = threading.Event()
    evening = Evening(rep, bus, console, stop, Players(rep), Seats(), poll=0.05)
    runner = threading.Thread(target=evening.run, args=(_play,), daemon=True)
    try:
        bridge.announce_round()
        runner.start()
        assert wait_until(lambda: d.matches(1)[0].status == "reported", 60), console.lines
        assert wait_until(lambda: any("waiting for the director to announce" in x for x in console.lines), 10)
        confirm_match(d, d.matches(1)[0].id, "director-test")
        d.pair_next_round()
        bridge.announce_round()
        assert wait_until(lambda: len(evening.played) == 2 and d.matches(2)[0].status == "reported", 60), \
            console.lines
        stop.set()  # Ctrl-C between matches
        runner.join(10)
        assert not runner.is_alive()
    finally:
        stop.set()
        rep.close()
        bridge.stop()
    assert evening.played == [d.matches(1)[0].id, d.matches(2)[0].id]
    assert any("stopped between matches (2 played" in x for x in console.lines)
    assert [e.status for e in d.entrants()] == ["checked_in"] * 3  # round robin: round 2 brings the bye in
    assert not any(e.data.get("level") == "error" for e in bus.history if e.kind == "message")
    texts = [str(e.data.get("text")) for e in bus.history if e.kind == "message"]
    assert sum("expecting Pair" in t for t in texts) == 2


def test_a_restarted_table_resumes_the_confirmation_it_owed(broker: Any, sqlite_url: str, tmp_path: Path) -> None:
    d = _director(sqlite_url, "badges")
    d.pair_next_round()
    bridge = DirectorBridge(d, BrokerURL.parse(broker.url("director"))).start()
    assert bridge.wait_connected(30)
    try:
        bridge.announce_round()
        rep = _table(broker, tmp_path)
        m = rep.current_match(timeout=10)
        assert m is not None
        record = _play(m)
        stop = threading.Event()
        bus = EventBus(history_size=500)
        rep.attach(bus)
        table = Cells()  # nobody lays a badge: the host is switched off while it waits
        first = Evening(rep, bus, _Said(), stop, table, Seats(), poll=0.05)

        def switch_off_once_waiting_for_badges() -> None:
            # after the director's echo, not after a guess of how long it takes
            try:
                wait_until(lambda: (first.pending() or {}).get("stage") == "confirm", 60)
            finally:
                stop.set()

        threading.Thread(target=switch_off_once_waiting_for_badges, daemon=True).start()
        assert not first.finish(record)
        assert first.pending() is not None and first.pending()["stage"] == "confirm"  # type: ignore[index]
        rep.close()
        assert d.matches(1)[0].status == "reported" and not d.matches(1)[0].confirmed
        # the host starts again; the players lay their badges
        rep = _table(broker, tmp_path)
        bus = EventBus(history_size=500)
        rep.attach(bus)
        console = _Said()
        again = Evening(rep, bus, console, threading.Event(), Cells(_badges(1)[1], _badges(2)[0]), Seats(),
                        poll=0.05)
        assert again.resume()
        assert any("resuming: this table's result of round 1" in x for x in console.lines)
        assert "director: confirmation accepted" in console.lines
        assert rep.table.outbox.get(PENDING) is None
        assert rep.current_match() is None  # nothing left to play: the next start waits for an announcement
        rep.close()
    finally:
        bridge.stop()
    assert d.matches(1)[0].confirmed


def test_check_in_refuses_a_badge_from_another_table_naming_it(broker: Any, sqlite_url: str, tmp_path: Path) -> None:
    d = _director(sqlite_url, "badges", pairs=4, tables=2)
    d.pair_next_round()
    bridge = DirectorBridge(d, BrokerURL.parse(broker.url("director"))).start()
    assert bridge.wait_connected(30)
    rep = _table(broker, tmp_path)
    bus = EventBus(history_size=500)
    rep.attach(bus)
    try:
        bridge.announce_round()
        m = rep.current_match(timeout=10)
        assert m is not None
        here = [int(e["name"].split()[-1]) for e in m["entrants"]]
        stranger = next(i for i in range(1, 5) if i not in here)
        table = Cells(_badges(stranger)[0], _badges(here[0])[0])
        console = _Said()
        evening = Evening(rep, bus, console, threading.Event(), table, Seats(), poll=0.05)
        # the second pair checks in a little later with a seat button
        seat = next(int(s["seat"]) for s in m["seats"] if int(s["entrant"]) == 1)

        def press() -> None:
            assert wait_until(lambda: any("check-in refused" in x for x in console.lines), 10)
            evening.buttons.press(seat, "main")

        presser = threading.Thread(target=press, daemon=True)
        presser.start()
        assert evening.check_in(m)
        presser.join(10)
    finally:
        rep.close()
        bridge.stop()
    errors = [str(e.data.get("text")) for e in bus.history if e.kind == "message" and e.data.get("level") == "error"]
    assert errors == [f"Pair {stranger} plays at table 2, not at table 1"], errors
    status = {e.name: e.status for e in d.entrants()}
    assert status[f"Pair {here[0]}"] == "checked_in" and status[f"Pair {here[1]}"] == "checked_in"
    assert status[f"Pair {stranger}"] == "registered"


def test_demo_player_help_names_every_computer_player() -> None:
    import os
    import subprocess
    import sys

    from tablesense.games.dominoes_players import PLAYERS as DOMINOES
    from tablesense.games.kems_players import PLAYERS as KEMS

    env = {**os.environ, "COLUMNS": "400", "TABLESENSE_GPIO": "sim", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "tablesense.cli", "demo", "--help"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0
    text = " ".join(done.stdout.replace("│", " ").split())
    for name in [*DOMINOES, *KEMS]:
        assert f"{name}," in text or f"{name} (" in text, name


def test_play_director_waits_between_matches_and_stops_cleanly(broker: Any, sqlite_url: str, tmp_path: Path) -> None:
    """The command itself: its match is reported and confirmed, so a (re)started
    ``play --director`` says what it waits for; Ctrl-C there exits 0."""
    d = _director(sqlite_url, "director", pairs=3, format="round-robin")
    d.pair_next_round()
    bridge = DirectorBridge(d, BrokerURL.parse(broker.url("director"))).start()
    assert bridge.wait_connected(30)
    try:
        bridge.announce_round()
        rep = _table(broker, tmp_path)
        m = rep.current_match(timeout=10)
        assert m is not None
        assert rep.wait_echo(rep.report(_play(m)), timeout=20) == "accepted"
        rep.close()
        lines = _run_until(tmp_path, broker, "table 1: waiting for the director to announce the next match")
        assert "Traceback" not in lines
        # started again after the next round is announced: it shows who is expected at once
        confirm_match(d, d.matches(1)[0].id, "director-test")
        d.pair_next_round()
        bridge.announce_round()
        lines = _run_until(tmp_path, broker, "expecting Pair")
        assert "Traceback" not in lines and "unfinished match" not in lines
    finally:
        bridge.stop()


def _run_until(tmp_path: Path, broker: Any, wanted: str) -> str:
    """Run ``play --director`` until it prints ``wanted``, then Ctrl-C: it must exit 0."""
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "COLUMNS": "250", "TABLESENSE_GPIO": "sim"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4", "--no-web", "--no-keys",
         "--journal", str(tmp_path / "journal.sqlite"), "--director", broker.url("table-1"), "--table-no", "1",
         "--table-key", str(tmp_path / "table-1.key"), "--announce-wait", "0.5"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    stream = proc.stderr
    assert stream is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(stream.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 30
    while not any(wanted in x for x in lines) and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    assert any(wanted in x for x in lines), lines
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=20)
    reader.join(5)
    assert proc.returncode == 0, lines
    return "".join(lines)
