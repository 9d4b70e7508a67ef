"""`tablesense sim boards`: paths on stdout as soon as ready, clean stop on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tablesense.firmware import proto
from tablesense.link.discovery import identify

REPO = Path(__file__).resolve().parents[2]


def test_sim_boards_prints_paths_and_stops_on_sigterm(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "tablesense.cli",
        "sim",
        "boards",
        "--table",
        "kems-6",
        "--link-dir",
        str(tmp_path),
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    try:
        assert proc.stdout is not None
        paths = [proc.stdout.readline().strip() for _ in range(2)]
        assert all(p.startswith("/dev/pts/") and os.path.exists(p) for p in paths)
        ident = identify(paths[1], timeout=3)
        assert ident is not None and ident["board"] == 2 and ident["protocol"] == proto.VERSION
        assert os.path.realpath(tmp_path / "board-1") == paths[0]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert not (tmp_path / "board-1").exists()  # unplugged on the way out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sim_boards_rejects_a_bad_table(tmp_path: Path) -> None:
    bad = tmp_path / "t.toml"
    bad.write_text('name = "x"\n')
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--table", str(bad)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=30,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert "problem" in r.stderr and "Traceback" not in r.stderr
    assert time.monotonic() - start < 30


def test_sim_boards_plays_a_scenario_and_exits(tmp_path: Path) -> None:
    sc = tmp_path / "s.json"
    sc.write_text(
        '{"steps": [{"at": 0.1, "place": "slot-1", "uid": "04a1b2c3d4e5f6"},'
        ' {"after": 0.1, "unplug": 1, "duration": 0.2}, {"after": 0.3, "remove": "slot-1"}]}'
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tablesense.cli",
            "sim",
            "boards",
            "--table",
            "kems-4",
            "--scenario",
            str(sc),
            "--exit-after-scenario",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("/dev/pts/") == 2  # kems-4: one board per two seats
    assert "scenario done" in r.stderr and "plugged in again" in r.stderr
