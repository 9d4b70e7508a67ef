"""Faults in a match between two `play --remote` processes over two bridged
TLS brokers: a cut link between the clubs, a killed joining table, a killed
host; the match pauses each time and resumes exactly where it was."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from remotekit import Broker, Play

from tablesense.games.dominoes import replay_record

pytestmark = pytest.mark.broker


@pytest.mark.timeout(600)  # a one-hand match with three faults: about 70 s idle
def test_a_cut_link_a_killed_table_and_a_killed_host_pause_the_match_which_resumes_exactly(
        bridged: tuple[Broker, Broker], tmp_path: Path) -> None:
    """Club B's broker (and with it the bridge) goes down for 5 s mid-match;
    later the joining table's process is killed and started again with the
    code; later still the host's: each time the match pauses and resumes
    where it was (the host from its journal), and the two tables that end it
    print the same record. The match is one hand (target 1): every fault
    falls in it, and the host dies before its end (checked below); a whole
    match to 30 took 170 s idle and over 600 s in the suite's load."""
    club_a, club_b = bridged
    assert club_b.proc is not None
    journal = str(tmp_path / "host-journal.sqlite")
    host_args = ["--broker", club_a.url("table-1"), "--journal", journal, "--remote-timeout", "500"]
    join_args = ["--broker", club_b.url("table-2"), "--remote-timeout", "500"]
    host = Play("--remote", "host", *host_args, "--seed", "31", "--target", "1")
    procs: list[Play] = [host]

    def remote_pieces(proc: Play) -> int:
        return len([x for x in proc.lines if x.startswith("remote piece:")])

    def wait_pieces(proc: Play, n: int) -> None:
        deadline = time.monotonic() + 120
        while remote_pieces(proc) < n and time.monotonic() < deadline:
            time.sleep(0.2)
        assert remote_pieces(proc) >= n, "".join(proc.lines)[-2000:]

    try:
        code = host.wait_for("remote match code:", 60).split("remote match code:")[1].split()[0]
        join = Play("--remote", "join", code, *join_args, "--seed", "32")
        procs.append(join)
        wait_pieces(join, 1)
        club_b.proc.restart(down_for=5.0)  # the link between the clubs is cut
        host.wait_for("is away: the match pauses", 30)
        host.wait_for("is back: the match resumes", 90)
        wait_pieces(join, remote_pieces(join) + 3)
        join.kill()  # the joining table's process dies
        again = Play("--remote", "join", code, *join_args, "--seed", "33")
        procs.append(again)
        host.wait_for("started again: it gets the match from its first frame", 90)
        wait_pieces(again, 3)
        host.kill()  # the host's process dies
        submitted = _submitted(Path(journal).parent / "remote", code)  # play keeps remote journals beside --journal
        host2 = Play("--remote", "host", code, *host_args, "--seed", "34")
        procs.append(host2)
        host2.wait_for("resuming remote match", 60)
        rc_host, out_host = host2.finish(500)
        rc_again, out_again = again.finish(60)
    finally:
        for proc in procs:
            proc.kill()
    assert rc_host == 0, "".join(host2.lines)[-3000:]
    assert rc_again == 0, "".join(again.lines)[-3000:]
    assert json.loads(out_host) == json.loads(out_again)
    record = json.loads(out_host)
    assert replay_record(record).winner is not None
    moves = sum(len(hand["moves"]) for hand in record["hands"])
    assert 0 < submitted < moves, f"the host died after {submitted} of the match's {moves} moves: not mid-match"


def _submitted(folder: Path, code: str) -> int:
    """How many moves the host's journal of ``code`` holds."""
    lines = (folder / f"{code}.jsonl").read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.strip() and json.loads(line).get("input", {}).get("op") == "submit")
