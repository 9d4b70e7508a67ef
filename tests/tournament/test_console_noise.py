"""What the servers print and how they stop (issue 30): a headless table stops
at once on Ctrl-C even when started with SIGINT ignored; a restarted director
calls no table quiet before the tables could speak; ``play`` ends a match with
one readable line naming its record, not the record itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tablesense.referee.evening import TableMatches
from tablesense.referee.state import MatchState, Phase
from tablesense.tournament import protocol as proto
from tablesense.tournament.bridge import BrokerURL, DirectorBridge
from tablesense.tournament.broker_client import make_client
from tablesense.tournament.mosquitto import DIRECTOR_USER, table_user
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from testsupport import wait_until

from .conftest import Broker
from .test_director import make_event


def test_a_headless_table_stops_at_once_on_sigint_even_when_its_shell_ignored_it(broker: Broker, tmp_path: Path) -> None:
    key = tmp_path / "t1.key"
    TableKey.from_seed(b"t1").save(key)
    pw = tmp_path / "pw"
    pw.write_text(broker.files.credentials[table_user(1)])
    url = f"mqtt://{table_user(1)}@127.0.0.1:{broker.port}?password_file={pw}"
    # a script's background job: SIGINT ignored before Python starts (Python then never raises KeyboardInterrupt)
    proc = subprocess.Popen([sys.executable, "-m", "tablesense.cli", "tournament", "table", "1", "--key", str(key),
                             "--journal", str(tmp_path / "t1.journal"), "--broker", url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "LANG": "C.UTF-8"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert proc.stdout is not None
    try:
        seen = ""
        while "waiting for the director's assignment" not in seen:
            line = proc.stdout.readline()
            assert line, f"the table ended before connecting: {seen} {proc.stderr.read() if proc.stderr else ''}"
            seen += line
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)  # a ceiling for a loaded machine; it used to need a SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "table 1: stopped" in out, out
    # it left cleanly: its retained status says offline
    got: list[bytes] = []
    c = make_client("noise-check", BrokerURL("127.0.0.1", broker.port, DIRECTOR_USER,
                                             broker.files.credentials[DIRECTOR_USER]), clean=True)
    def subscribe(cl: Any, _u: Any, _f: Any, _rc: Any, _p: Any = None) -> None:
        cl.subscribe(proto.status_topic(1), 1)

    c.on_connect = subscribe
    c.on_message = lambda _c, _u, m: got.append(bytes(m.payload))
    c.connect("127.0.0.1", broker.port)
    c.loop_start()
    try:
        assert wait_until(lambda: bool(got), 10, what="the table's retained status")
    finally:
        c.disconnect()
        c.loop_stop()
    assert got[-1] == proto.STATUS_OFFLINE.encode()


def test_a_restarted_director_calls_no_table_quiet_before_its_grace_ends(sqlite_url: str) -> None:
    d, _key = make_event(sqlite_url, 4, quiet_after_s=10)
    for t in (1, 2):
        d.table_seen(t, online=True)  # online when the last director stopped, heard long ago
    d.pair_next_round()
    long_ago = time.time() - 3600
    with d.db.session() as s:
        from tablesense.tournament.db import Table

        for t in s.query(Table).all():
            t.last_seen = long_ago
    # a new director process: nothing heard from anyone yet
    d = Director(d.db, d.event_id)
    bridge = DirectorBridge(d, BrokerURL("127.0.0.1", 1, "director", "x"))
    start = bridge._started  # the moment start() would set
    assert bridge.check_quiet(start + 1) == set()
    assert not [a for a in d.audit_log() if a["action"] == "table-quiet"]
    # table 1 beats through the grace; table 2 stays silent
    d.table_seen(1)
    later = time.time()
    bridge._started = later - 11  # the grace is over
    assert bridge.check_quiet(later) == {2}
    quiet = [a["detail"]["table"] for a in d.audit_log() if a["action"] == "table-quiet"]
    assert quiet == [2]


class _Referee:
    """A refereed match that has just ended (what ``session.run`` leaves behind)."""

    def __init__(self) -> None:
        self.state = MatchState(phase=Phase.OVER)

    def start(self, _clock: Any) -> None: ...
    def view(self) -> dict[str, Any]:
        return {"scores": [150, 97.5]}

    def record(self) -> dict[str, Any]:
        return {"format": "tablesense.record/1", "hands": [{"moves": []}]}


class _Session:
    def next_match(self, _referee: Any, _extra: Any) -> None: ...
    def clock(self) -> float:
        return 0.0

    def attach(self) -> None: ...
    def run(self, _stop: Any, until: Any) -> None: ...


class _Journal:
    match_id = "m-7"

    def close_match(self, _how: str) -> None:
        self.match_id = "m-8"  # the journal moves on to the next match


def test_play_ends_a_match_with_one_line_naming_its_record(tmp_path: Path) -> None:
    printed: list[str] = []
    played = TableMatches(lambda _m: _Referee(), _Session(), _Journal(), threading.Event(), out=printed.append,
                          records=tmp_path / "records")
    record = played({"match": 7})
    assert record is not None and record["format"] == "tablesense.record/1"
    assert printed == [f"match over, score 150 - 97.5; its game record is {tmp_path / 'records' / 'm-7.json'}\n"]
    for line in printed:
        try:
            json.loads(line)
        except ValueError:
            continue
        raise AssertionError("the record itself was printed")
