"""A real table in a `buttons` or `director` event: after the director's echo,
each side accepts with its seat button (the call button refuses and calls the
director), or the table leaves the confirmation to the director's console."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tablesense.outputs.events import EventBus
from tablesense.referee.demo import DemoConfig, run_demo
from tablesense.referee.evening import start_reporter as _start_reporter
from tablesense.referee.reporting import confirm_at_table, report_match
from tablesense.tournament.bridge import BrokerURL, DirectorBridge, wait_until
from tablesense.tournament.console import confirm_match
from tablesense.tournament.db import Database
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director

from .test_play_reports import _Said


class Seats:
    """The session's seat buttons, as GPIO and the keyboard reach them (``press``)."""

    def __init__(self) -> None:
        self.outside: list[tuple[int, str]] = []

    def press(self, seat: int, button: str = "main") -> None:
        self.outside.append((seat, button))


def _play_and_report(broker: Any, sqlite_url: str, tmp_path: Path, mode: str) -> tuple[Director, Any, Any, EventBus, _Said]:
    d = Director.create_event(Database(sqlite_url), "Club night", options={"target": 10, "lots_seed": "p", "confirm": mode})
    for i in (1, 2):
        d.register(f"Pair {i}", [f"P{i}a", f"P{i}b"])
    key = TableKey.from_seed(b"real-table-1")
    key.save(tmp_path / "table-1.key")
    d.add_table(1, key.public)
    d.pair_next_round()
    bridge = DirectorBridge(d, BrokerURL.parse(broker.url("director"))).start()
    assert bridge.wait_connected(30)
    bridge.announce_round()
    rep = _start_reporter(broker.url("table-1"), 1, tmp_path / "table-1.key", None, tmp_path / "journal.sqlite")
    bus = EventBus(history_size=500)
    rep.attach(bus)
    m = rep.current_match(timeout=10)
    assert m is not None
    played = run_demo(DemoConfig(seed=5, web=False, link="direct", timeout=60, fast=True,
                                 options={"target": m["options"]["target"]}), log=_Said())
    console = _Said()
    stop = threading.Event()
    timer = threading.Timer(20, stop.set)
    timer.start()
    try:
        assert report_match(rep, played.record, stop, console)
    finally:
        timer.cancel()
    return d, bridge, rep, bus, console


@pytest.mark.parametrize("refuse", [False, True])
def test_buttons_event_sides_answer_with_seat_buttons(broker: Any, sqlite_url: str, tmp_path: Path, refuse: bool) -> None:
    d, bridge, rep, bus, console = _play_and_report(broker, sqlite_url, tmp_path, "buttons")
    seats = Seats()
    try:
        stop = threading.Event()
        threading.Timer(20, stop.set).start()
        # seat 0 (side 0) accepts; seat 3 (side 1) accepts, or calls the director
        threading.Timer(0.4, lambda: seats.press(0, "main")).start()
        threading.Timer(0.8, lambda: seats.press(3, "call" if refuse else "main")).start()
        assert confirm_at_table(rep, None, bus, stop, console, seats)
        stop.set()
        assert seats.outside == [] and type(seats).press is Seats.press  # the buttons go back to the game
        assert wait_until(bridge.idle, 5)
    finally:
        rep.close()
        bridge.stop()
    m = d.matches(1)[0]
    if refuse:
        assert m.status == "disputed" and not m.confirmed
        assert "director: refusal accepted" in console.lines
        confirm_match(d, m.id, "director-test")
    else:
        assert m.confirmed and "director: confirmation accepted" in console.lines
    assert d.matches(1)[0].confirmed


def test_director_event_leaves_the_confirmation_to_the_console(broker: Any, sqlite_url: str, tmp_path: Path) -> None:
    d, bridge, rep, bus, console = _play_and_report(broker, sqlite_url, tmp_path, "director")
    try:
        assert confirm_at_table(rep, None, bus, threading.Event(), console, Seats())
        assert any("confirmed by the director" in line for line in console.lines)
    finally:
        rep.close()
        bridge.stop()
    m = d.matches(1)[0]
    assert m.status == "reported"
    confirm_match(d, m.id, "director-test")
