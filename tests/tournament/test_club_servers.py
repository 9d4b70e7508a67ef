"""Servers say what they do: ``director serve`` prints its pages and broker and
every acknowledgement; ``tournament table`` prints who it is, what it waits
for, each report and each answer; the generated broker starts as root from
any folder."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tablesense.tournament.bridge import default_check_workers
from tablesense.tournament.db import Database
from tablesense.tournament.mosquitto import Mosquitto, mosquitto_binary, write_broker_config
from tablesense.tournament.security import TableKey
from tablesense.tournament.service import Director
from testsupport import free_port, need, wait_until

from .conftest import Broker


class Lines:
    """A child process's stdout, line by line, readable with a deadline."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        self._q: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._q.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        end = time.monotonic() + timeout
        for line in self.lines:
            if text in line:
                return line
        while time.monotonic() < end:
            try:
                line = self._q.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None and self._q.empty():
                    break
                continue
            self.lines.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} in:\n" + "\n".join(self.lines))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def test_serve_and_table_print_who_they_are_and_each_report(broker: Broker, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'club.db'}"
    d = Director.create_event(Database(url), "Tuesday club", variant="pips-two-player",
                              options={"target": 20, "rounds": 1, "confirm": "director", "lots_seed": "s"})
    d.register("Ana")
    d.register("Bia")
    key = TableKey.generate()
    key.save(tmp_path / "table-1.key")
    d.add_table(1, key.public)
    d.pair_next_round()
    port = free_port()
    cli = [sys.executable, "-m", "tablesense.cli"]
    serve = Lines([*cli, "director", "serve", "--db", url, "--broker", broker.url("director"), "--port", str(port)],
                  env={"TABLESENSE_DIRECTOR_PASSWORD": "club-night-password"})
    table = None
    try:
        assert "event 1 'Tuesday club' (dominoes pips-two-player, swiss; results confirmed by director)" in serve.wait_for("director: event")
        assert serve.wait_for("round 1 ").strip() == "round 1 is not finished: 1 still playing (table 1)"
        assert serve.wait_for("/director").strip() == f"http://127.0.0.1:{port}/director  director's console (login)"
        assert serve.wait_for("broker:") == f"broker: mqtt://director@127.0.0.1:{broker.port} as director"
        table = Lines([*cli, "tournament", "table", "1", "--key", str(tmp_path / "table-1.key"), "--journal",
                       str(tmp_path / "t1.journal"), "--broker", broker.url("table-1")])
        assert "as table-1" in table.wait_for("table 1: headless table")
        table.wait_for("table 1: connected to 127.0.0.1")
        assert table.wait_for("round 1:").strip() == "table 1: round 1: Ana v Bia"  # no match id
        sent = table.wait_for("table 1: sent result/1/1/1/1")
        assert "score [" in sent
        table.wait_for("table 1: director accepted result/1/1/1/1")
        serve.wait_for("table 1: result of round 1 accepted")
        workers = _descendants(serve.proc.pid)
    finally:
        serve.stop()
        if table is not None:
            table.stop()
    # SIGTERM stops the director cleanly: status 0, and the processes that
    # checked the results (a forkserver and a worker per core) end with it
    assert serve.proc.returncode == 0, serve.lines[-5:]
    if default_check_workers() > 0:
        assert workers, "the director started no check workers"
    assert wait_until(lambda: not [p for p in workers if Path(f"/proc/{p}").exists()], 10, what="check workers gone")


def _descendants(pid: int) -> list[int]:
    """Every process started by pid, and by those, as /proc shows them now."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@pytest.mark.parametrize("private", [False, True])
def test_generated_broker_starts_as_root_from_any_folder(tmp_path: Path, private: bool) -> None:
    """The guide's commands, run as root from another folder: no 'Unable to open pwfile'.

    In a folder the ``mosquitto`` account can reach, the files are handed to
    it; under a private folder (like /root) the broker stays root."""
    need(mosquitto_binary() is not None, "the mosquitto binary is not installed")
    if os.geteuid() != 0:
        pytest.skip("needs root (the broker drops to the mosquitto account)")
    port = free_port()
    base = tmp_path if private else Path(tempfile.mkdtemp(prefix="ts-club-", dir="/tmp"))
    base.chmod(0o700 if private else 0o755)
    work = base / "club"
    work.mkdir()
    old = Path.cwd()
    try:
        os.chdir(work)
        files = write_broker_config(Path("broker"), tables=2, port=port)  # relative, as in the guide
        os.chdir(base)  # started from elsewhere
        conf = files.conf.read_text()
        assert f"password_file {work / 'broker' / 'passwd'}" in conf and f"acl_file {work / 'broker' / 'acl'}" in conf
        assert ("user root" in conf) == private
        m = Mosquitto(files.conf, port).start()
        try:
            assert m.running
        finally:
            m.stop()
        log = (files.conf.parent / "mosquitto.log").read_text()
        assert "Unable to open pwfile" not in log
    finally:
        os.chdir(old)
        if not private:
            shutil.rmtree(base, ignore_errors=True)
