"""Kill the host with SIGKILL at random points of seeded matches: no accepted
move is lost, and the resumed match continues the same match.

The host runs ``tablesense demo --link direct`` in a subprocess with a
journal and a world file (the table keeps its pieces when the host dies, as
a real one does). ``--trace`` prints every move as it is accepted, which the
referee does only after the journal has it: every traced move must be in the
journal after the kill. The match is then resumed to the end, and its record
must be the record of the same seed played without a crash.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tablesense.journal.store import Journal


def demo_cmd(journal: Path, world: Path, seed: int, hands: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tablesense.cli",
        "demo",
        "--link",
        "direct",
        "--no-web",
        "--hands",
        str(hands),
        "--seed",
        str(seed),
        "--journal",
        str(journal),
        "--world-file",
        str(world),
        "--trace",
        "--timeout",
        "120",
    ]


def journal_moves(path: Path) -> list[dict]:
    j = Journal(path)
    try:
        row = j.running() or j.matches()[-1]
        return [e["move"] for e in j.entries(row.id) if e["type"] == "move"]
    finally:
        j.close()


def run_with_kills(
    tmp: Path, seed: int, hands: int, kills: int, rng: random.Random
) -> tuple[dict, int]:
    journal, world = tmp / f"crash-{seed}.sqlite", tmp / f"crash-{seed}.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    killed = 0
    witnessed = 0
    for _ in range(kills):
        proc = subprocess.Popen(
            demo_cmd(journal, world, seed, hands),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        time.sleep(rng.uniform(1.0, 5.0))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=10)
        killed += 1
        traced = [json.loads(line) for line in out.splitlines() if line.startswith('{"trace"')]
        moves = journal_moves(journal)
        # every move shown as accepted is in the journal, at its place
        for t in traced:
            assert moves[t["index"] - 1] == t["trace"], "an accepted move was lost"
        if traced:
            assert len(moves) - traced[-1]["index"] <= 1
        witnessed += len(traced)
    done = subprocess.run(
        demo_cmd(journal, world, seed, hands), capture_output=True, text=True, env=env, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = [line for line in done.stdout.splitlines() if line.startswith('{"format"')]
    assert witnessed > 0, "no kill happened after an accepted move"
    return json.loads(last[-1]), killed


@pytest.mark.parametrize("seed", [5])
def test_sigkill_at_random_points_loses_no_move_and_resumes_the_same_match(
    tmp_path: Path, seed: int
) -> None:
    from tablesense.referee.demo import DemoConfig, run_demo

    reference = run_demo(
        DemoConfig(hands=1, seed=seed, web=False, link="direct", timeout=120)
    ).record
    record, killed = run_with_kills(tmp_path, seed, 1, 4, random.Random(seed))
    assert killed >= 1
    assert record == reference


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_sigkill_soak(tmp_path: Path, seed: int) -> None:
    from tablesense.referee.demo import DemoConfig, run_demo

    reference = run_demo(
        DemoConfig(hands=3, seed=seed, web=False, link="direct", timeout=300)
    ).record
    record, killed = run_with_kills(tmp_path, seed, 3, 8, random.Random(seed))
    assert killed >= 3
    assert record == reference
