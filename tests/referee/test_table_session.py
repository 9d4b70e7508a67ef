"""The table session of ``play`` and the demo of ``demo``, built and run in
this process from their typed options (no command line, no subprocess):
refusals open nothing and carry their exit code; a session on a virtual
table (real firmware behind pseudo-terminals, the computer's hands) plays,
journals, stops on ``stop`` and resumes from its journal."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tablesense.referee.demo import DemoConfig, prepare_demo
from tablesense.referee.demo_console import DemoConsole
from tablesense.referee.options import CommandRefused
from tablesense.referee.table_session import PlayOptions, TableSession


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, highlight=False), out


@pytest.mark.parametrize(("changes", "code", "said"), [
    ({"deal": "mine"}, 2, "--deal is 'table' (read from the racks) or 'host' (the host deals)"),
    ({"coach": True, "director": "mqtt://t:p@localhost:1"}, 2, "--coach cannot go with --director"),
    ({"table": "no-such-layout"}, 2, "no-such-layout"),
    ({"seats": "Ana,Bia,bot"}, 2, "table dominoes-4 has 4 seats; --seats names 3"),
    ({"virtual_table": True, "seats": "Ana,bot,bot,bot"}, 2, "--virtual-table plays computer seats only"),
    ({"player": "nobody"}, 2, "nobody"),
    ({"ports": ["/dev/no-such-board"]}, 2, "--port /dev/no-such-board: no such device"),
    ({"tags": "/no/such/tags.json"}, 2, "tags.json"),
    ({"lang": "xx"}, 2, "xx"),
    ({"director": "mqtt://t:p@localhost:1"}, 2, "--director needs --table-no and --table-key"),
])
def test_a_refusal_opens_nothing_and_names_its_exit_code(
        tmp_path: Path, changes: dict[str, Any], code: int, said: str) -> None:
    journal = tmp_path / "journal.sqlite"
    options = PlayOptions(**{"table": "dominoes-4", "journal": journal, "web": False, "keys": False, **changes})
    console, _out = _console()
    with pytest.raises(CommandRefused) as refused:
        TableSession.build(options, console)
    assert refused.value.code == code
    assert said in str(refused.value.message)
    assert not journal.exists(), "refused before the journal was opened"


def test_a_journal_that_cannot_be_used_is_exit_1_and_stops_the_virtual_boards(tmp_path: Path) -> None:
    bad = tmp_path / "journal.sqlite"
    bad.write_text("not a database, a person's notes\n")
    options = PlayOptions(table="dominoes-4", seats="bot,bot,bot,bot", virtual_table=True, journal=bad,
                          web=False, keys=False, seed=2)
    console, _out = _console()
    calls: list[str] = []
    from tablesense.sim import virtual_table

    real_start, real_stop = virtual_table.VirtualTable.start, virtual_table.VirtualTable.stop

    def start(self: Any, horizon: float = 3600.0) -> Any:
        calls.append("start")
        return real_start(self, horizon)

    def stop(self: Any) -> None:
        calls.append("stop")
        real_stop(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(virtual_table.VirtualTable, "start", start)
        mp.setattr(virtual_table.VirtualTable, "stop", stop)
        with pytest.raises(CommandRefused) as refused:
            TableSession.build(options, console)
    assert refused.value.code == 1
    assert "to start afresh, move it aside or use --journal PATH" in str(refused.value.message)
    assert bad.read_text() == "not a database, a person's notes\n", "the file is left as it is"
    assert calls == ["start", "stop"], "the virtual boards started for the session are stopped again"


def _play_until(session: TableSession, moves: int, timeout: float = 90.0) -> None:
    """Run the session in a thread until ``moves`` moves are accepted, then stop it."""
    accepted = threading.Event()
    count = [0]

    def on_event(ev: Any) -> None:
        if ev.kind == "move_accepted":
            count[0] += 1
            if count[0] >= moves:
                accepted.set()

    session.bus.add_listener(on_event)
    stop = threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            session.run(stop)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            failed.append(exc)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    try:
        assert accepted.wait(timeout), f"only {count[0]} moves accepted in {timeout:.0f} s"
    finally:
        stop.set()
        runner.join(30.0)
    assert not runner.is_alive(), "run() returned once stop was set"
    assert not failed, failed


def test_a_session_on_a_virtual_table_plays_journals_and_resumes(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    options = PlayOptions(table="dominoes-4", seats="bot,bot,bot,bot", virtual_table=True, journal=journal,
                          web=False, keys=False, seed=5, speed=20.0, target=50)
    console, out = _console()
    session = TableSession.build(options, console)
    assert session.spec.seat_names == ["Bot 1", "Bot 2", "Bot 3", "Bot 4"]
    assert session.spec.options == {"target": 50}
    assert session.referee.state.deal_mode == "engine", "a virtual table is dealt by the host"
    # its boards run in this process: a board that is slow to answer is not
    # blamed on a `tablesense sim boards` terminal the player never opened
    assert session.referee.boards_kind == "built-in"
    assert session.running is None
    _play_until(session, moves=2)
    played = session.referee.state.accepted
    assert played >= 2
    assert session.vtable is not None and session.closed, "run() closed what it opened"

    from tablesense.journal.store import Journal

    with Journal(journal) as jour:
        row = jour.running()
        assert row is not None, "stopped mid-match: the match stays unfinished in the journal"
        moves = [e for e in jour.entries(row.id) if e.get("type") == "move"]
    assert len(moves) >= played

    again, said = _console()
    resumed = TableSession.build(options, again)
    try:
        assert resumed.running is not None and resumed.running.id == row.id
        resumed.start_or_resume()
        assert resumed.referee.state.accepted == played, "the journal's moves replayed"
        assert f"resuming match {row.id}" in said.getvalue()
    finally:
        resumed.close()
    assert "display:" not in out.getvalue(), "no page with web=False"


def test_options_that_contradict_the_unfinished_match_are_refused_with_both_ways_on(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    options = PlayOptions(table="dominoes-4", seats="bot,bot,bot,bot", virtual_table=True, journal=journal,
                          web=False, keys=False, seed=5, speed=20.0)
    console, _out = _console()
    session = TableSession.build(options, console)
    _play_until(session, moves=1)
    other = PlayOptions(**{**options.__dict__, "target": 100})
    with pytest.raises(CommandRefused) as refused:
        TableSession.build(other, console)
    message = str(refused.value.message)
    assert refused.value.code == 2
    assert "its target is the default" in message and "add --new" in message
    fresh = TableSession.build(PlayOptions(**{**other.__dict__, "new": True}), console)
    try:
        assert fresh.running is None and fresh.spec.options == {"target": 100}
    finally:
        fresh.close()


@pytest.mark.parametrize(("changes", "sit", "said"), [
    ({"game": "chess"}, None, "chess"),
    ({"variant": "nope"}, None, "unknown dominoes variant 'nope'"),
    ({"link": "wire"}, None, "--link is virtual or direct"),
    ({"boards": "fpga"}, None, "--boards is virtual or rp2040"),
    ({"open_hands": True}, None, "--open-hands goes with --sit"),
    ({"link": "direct"}, "1", "--sit needs the page and the virtual boards"),
    ({}, "9", "9"),
])
def test_the_demo_refuses_before_anything_starts(changes: dict[str, Any], sit: str | None, said: str) -> None:
    cfg = DemoConfig(**changes)
    with pytest.raises(CommandRefused) as refused:
        prepare_demo(cfg, lang="en", sit=sit)
    assert refused.value.code == 2
    assert said in str(refused.value.message)


def test_the_demo_runs_in_process_and_prints_its_record(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = DemoConfig(game="dominoes", hands=1, seed=3, web=False, link="direct", timeout=120)
    prepare_demo(cfg, lang="en")
    console, _out = _console()
    result = DemoConsole(cfg, console).run(threading.Event())
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed == result.record
    assert result.hands_played == 1 and len(printed["hands"]) == 1
