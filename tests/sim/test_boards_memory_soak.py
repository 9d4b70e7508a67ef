"""Soak (--runslow): `sim boards` memory over a simulated evening (issue 30).

`sim boards --table dominoes-4` runs with its table-top page and a `play`
refereeing it over the seat header, as at a club evening; every few seconds
the table top shuffles and deals (28 tiles lifted and laid: the readers,
firmware and link all busy), and the referee reads each deal from the racks.
The boards' process's resident memory is sampled from /proc every ten
seconds after a warm-up. Printed as a figure (MB at start and end, MB an
hour) with ``uptime`` beside it; it fails when the memory grows by more than
``LIMIT_MB_PER_HOUR`` (the growth found: ~50 MB a minute, the emulated pins
kept every level they ever had). ``TABLESENSE_SOAK_MINUTES`` sets the length
(default 5)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from tablesense.table.geometry import TableGeometry

from .test_tabletop_cli import REPO, free_port, get, post, wait

LIMIT_MB_PER_HOUR = 30.0
WARM_UP_S = 30.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise AssertionError(f"no VmRSS for process {pid}")


@pytest.mark.slow
def test_sim_boards_memory_stays_flat_over_an_evening(tmp_path: Path) -> None:
    minutes = float(os.environ.get("TABLESENSE_SOAK_MINUTES", "5"))
    display_port = free_port()
    sim = subprocess.Popen(
        [sys.executable, "-m", "tablesense.cli", "sim", "boards", "--table", "dominoes-4", "--web-port", "0",
         "--display", f"http://127.0.0.1:{display_port}/", "--open-hands"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    play: subprocess.Popen[str] | None = None
    lines: list[str] = []
    try:
        assert sim.stdout is not None and sim.stderr is not None
        ports = [sim.stdout.readline().strip() for _ in TableGeometry.load("dominoes-4").boards]
        err = sim.stderr
        threading.Thread(target=lambda: lines.extend(err), daemon=True).start()
        header = wait(lambda: next((m.group(1) for ln in lines if (m := re.search(r"--seat-header (\S+)", ln))), None),
                      30, "the seat header's socket")
        opened = wait(lambda: next((m.group(1) for ln in lines if (m := re.search(r"table top: (\S+open=1\S*)", ln))),
                                   None), 30, "the open-hands table top")
        open_key = urllib.parse.parse_qs(urllib.parse.urlsplit(opened).query)["key"][0]
        base = opened.rsplit("/tabletop", 1)[0] + "/tabletop/api/"
        play = subprocess.Popen(
            [sys.executable, "-m", "tablesense.cli", "play", "--table", "dominoes-4",
             *[arg for port in ports for arg in ("--port", port)], "--seats", "Ana,Bea,Caio,Dan",
             "--journal", str(tmp_path / "j.sqlite"), "--new", "--no-keys", "--web-port", str(display_port),
             "--host", "127.0.0.1", "--seat-header", header],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, cwd=REPO,
        )
        wait(lambda: get(f"http://127.0.0.1:{display_port}/api/view")["view"], 60, "play's display")
        started = time.monotonic()
        samples: list[tuple[float, float]] = []
        deals = 0
        while time.monotonic() - started < WARM_UP_S + minutes * 60:
            assert sim.poll() is None and play.poll() is None, "a process of the evening ended"
            assert post(base + "deal", {"open": True, "key": open_key})["ok"]
            deals += 1
            now = time.monotonic() - started
            if now >= WARM_UP_S and (not samples or now - samples[-1][0] >= 10.0):
                samples.append((now, _rss_mb(sim.pid)))
            time.sleep(4.0)
        assert len(samples) >= 2
        (t0, first), (t1, last) = samples[0], samples[-1]
        per_hour = (last - first) / max(t1 - t0, 1.0) * 3600.0
        load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        print(f"\nsim boards RSS over {minutes:g} min ({deals} deals): {first:.1f} MB -> {last:.1f} MB, "
              f"peak {max(m for _t, m in samples):.1f} MB; {per_hour:+.1f} MB/hour; uptime: {load}")
        print(f"rss_start_mb={first:.1f} rss_end_mb={last:.1f} mb_per_hour={per_hour:.1f} deals={deals}")
        assert per_hour < LIMIT_MB_PER_HOUR, f"sim boards grows {per_hour:.0f} MB an hour"
    finally:
        for proc in (play, sim):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
