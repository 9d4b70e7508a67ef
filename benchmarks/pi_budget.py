"""The host on a Raspberry Pi 4's CPU: the search player's decision time and the
link's frame→LED latency, with this machine's CPU limited to what a Pi 4 core gives.

Usage: ``sudo .venv/bin/python benchmarks/pi_budget.py [--factor F]
[--hands N] [--link-seconds S]``

**The factor**: how many times faster one core of this machine is than one
of a Pi 4. It is measured in the same run with Debian's ``sysbench`` (``cpu
--threads=1``: primes up to 10 000, events per second of CPU time, so a busy
machine does not make its core look slower), against the
published Pi 4 figure for the same test on Raspberry Pi OS 64-bit, 812
events/s at 1.8 GHz (zbotic.in, "Raspberry Pi 5 benchmarks", 2024), scaled
to 1.5 GHz (677 events/s): the clock of the first Pi 4 boards, the slowest a
table may have. ``--factor`` sets it instead (e.g. ``--factor 3``, the "about
three times slower" of benchmarks/coach.py). A prime loop is not an
interpreter's branchy work, so the CPU-time column (CPU time on this machine
× factor) is a second reading of the same figures.

**The limit**: a cgroup (v2 ``cpu.max`` or v1 ``cpu.cfs_quota_us``) with a
10 ms period and a quota of 10 ms / factor, so the processes in it get
1/factor of one core in slices short enough not to add a 100 ms stall to a
latency. It needs root and a cpu controller; without them the script says so
and reports the unlimited run and the CPU-time estimate only.

**The workloads**, each once without the limit (the peer, same run) and once
under it:

- decisions: the search player with its table defaults (``SearchPlayer()``:
  240 worlds, 200 ms budget) at every decision with a choice of greedy-played
  hands of the three domino variants: wall time (median, 90th percentile,
  worst), CPU time, worlds sampled, and the share of decisions the budget
  stopped before their 240 worlds (the decision got weaker, not later);
- link: ``benchmarks/link.py --seconds S`` (8 virtual boards, a referee-like
  LED painter): its p99 host latency (CELL frame read → LED frame written)
  and end to end (board writes CELL → board shows the LED frame). The
  virtual boards run in the limited cgroup too (a real table's boards are
  their own chips), so the limited figures are pessimistic.

The last line (under the limit): ``pi4_factor=F decide_p50_ms=..
decide_max_ms=.. stopped_early=.. host_p99_ms=.. e2e_p99_ms=..``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
PI4_SYSBENCH_EVENTS_PER_S = 812.0 * 1.5 / 1.8
"""Pi 4, sysbench cpu single thread (published at 1.8 GHz), at 1.5 GHz."""
PERIOD_US = 10_000


def measure_factor() -> float | None:
    """This machine's single-core sysbench score over the Pi 4's (None: no sysbench).

    Events per second of *CPU time* (sysbench's total events over the CPU
    time the child used), so other processes on a shared machine do not make
    this core look slower than it is.
    """
    if shutil.which("sysbench") is None:
        return None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        ["sysbench", "cpu", "--threads=1", "--time=5", "run"], capture_output=True, text=True, check=True
    ).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    m = re.search(r"total number of events:\s*(\d+)", out)
    if m is None or cpu_s <= 0:
        raise SystemExit("pi_budget: sysbench printed no 'total number of events'")
    eps = int(m.group(1)) / cpu_s
    print(f"sysbench cpu, one thread: {eps:.0f} events per CPU second here, Pi 4 (1.5 GHz) {PI4_SYSBENCH_EVENTS_PER_S:.0f}")
    return eps / PI4_SYSBENCH_EVENTS_PER_S


class CpuLimit:
    """A cgroup giving its processes 1/factor of one core (removed by ``close``)."""

    def __init__(self, factor: float) -> None:
        quota = max(1000, round(PERIOD_US / factor))
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        if v2.exists() and "cpu" in v2.read_text().split():
            self.path = Path(f"/sys/fs/cgroup/tablesense-pi4-{os.getpid()}")
            self.path.mkdir()
            (self.path / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            self.path = Path(f"/sys/fs/cgroup/cpu/tablesense-pi4-{os.getpid()}")
            self.path.mkdir()
            (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.path / "cpu.cfs_quota_us").write_text(str(quota))
        self.procs = self.path / "cgroup.procs"
        print(f"cpu limit: cgroup {self.path} quota {quota} us per {PERIOD_US} us")

    def join(self) -> None:
        """Called in the child before exec: move it into the cgroup."""
        self.procs.write_text(str(os.getpid()))

    def close(self) -> None:
        self.path.rmdir()


def run_child(args: list[str], limit: CpuLimit | None) -> str:
    preexec: Callable[[], None] | None = limit.join if limit else None
    done = subprocess.run(args, capture_output=True, text=True, preexec_fn=preexec, cwd=HERE.parent)
    if done.returncode != 0:
        raise SystemExit(f"pi_budget: {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def decisions(hands: int) -> dict[str, list[float]]:
    """The search player's table defaults at every decision with a choice."""
    from tablesense.games.dominoes import DominoMatch
    from tablesense.games.dominoes_players import GreedyPlayer
    from tablesense.games.dominoes_players.search import SearchPlayer
    from tablesense.games.registry import find_game

    player = SearchPlayer()
    wall: list[float] = []
    cpu: list[float] = []
    worlds: list[float] = []
    for variant in find_game("dominoes").variants:
        for k in range(hands):
            rng = random.Random(f"pi-budget:{variant}:{k}")
            hand = DominoMatch(variant).new_hand(rng)
            while not hand.is_over:
                seat = hand.to_play
                if len(hand.legal_moves(seat)) > 1:
                    t, c = time.perf_counter(), time.process_time()
                    player.choose(hand, seat, random.Random(k))
                    wall.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
                    worlds.append(float(player.played))
                hand.play(GreedyPlayer().choose(hand, seat, rng))
    return {"wall": wall, "cpu": cpu, "worlds": worlds}


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q / 100 * len(s)))]


def link(seconds: float, limit: CpuLimit | None) -> dict[str, float]:
    out = run_child([sys.executable, str(HERE / "link.py"), "--seconds", str(seconds)], limit)
    last = out.strip().splitlines()[-1]
    return {k: float(v) for k, v in (kv.split("=") for kv in last.split())}


def main() -> None:
    ap = argparse.ArgumentParser(description="The host on a Pi 4's CPU.")
    ap.add_argument("--factor", type=float, help="this core over a Pi 4's (default: measured with sysbench)")
    ap.add_argument("--hands", type=int, default=2, help="hands per variant (default 2)")
    ap.add_argument("--link-seconds", type=float, default=4.0, help="each link run (default 4 s)")
    ap.add_argument("--child-decisions", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_decisions is not None:
        print(json.dumps(decisions(args.child_decisions)))
        return

    factor = args.factor or measure_factor()
    if factor is None:
        raise SystemExit("pi_budget: no sysbench (apt-get install sysbench) and no --factor: cannot scale")
    print(f"factor: one core here = {factor:.2f} Pi 4 cores")
    limit: CpuLimit | None = None
    try:
        limit = CpuLimit(factor)
    except OSError as exc:
        print(f"no cpu limit ({exc}): only the unlimited run and CPU time x {factor:.2f}")
    results: dict[str, tuple[dict[str, list[float]], dict[str, float]]] = {}
    try:
        for name, lim in (("here", None), ("pi4", limit)):
            if name == "pi4" and lim is None:
                continue
            d = json.loads(
                run_child([sys.executable, __file__, "--child-decisions", str(args.hands)], lim).splitlines()[-1]
            )
            results[name] = (d, link(args.link_seconds, lim))
    finally:
        if limit is not None:
            limit.close()
    for name, (d, lk) in results.items():
        wall = [x * 1e3 for x in d["wall"]]
        cpu = [x * 1e3 for x in d["cpu"]]
        early = sum(1 for w in d["worlds"] if w < 240) / len(d["worlds"])
        label = "this machine" if name == "here" else f"limited to a Pi 4 core (1/{factor:.2f})"
        print(
            f"{label:34} {len(wall)} decisions: wall p50 {statistics.median(wall):6.1f} ms, "
            f"p90 {pct(wall, 90):6.1f}, max {max(wall):6.1f}; cpu p50 {statistics.median(cpu):6.1f} ms; "
            f"worlds p50 {statistics.median(d['worlds']):.0f}, stopped early {early:.0%}; "
            f"link p99 host {lk['p99_host_ms']:.2f} ms, end to end {lk['p99_end_to_end_ms']:.1f} ms"
        )
        if name == "here":
            est = [c * factor for c in cpu]
            print(
                f"{'CPU time here x factor':34} decisions cpu p50 {statistics.median(est):6.1f} ms, "
                f"max {max(est):6.1f} ms (if no budget stopped them)"
            )
    d, lk = results["pi4"] if "pi4" in results else results["here"]
    wall = [x * 1e3 for x in d["wall"]]
    early = sum(1 for w in d["worlds"] if w < 240) / len(d["worlds"])
    print(
        f"pi4_factor={factor:.2f} decide_p50_ms={statistics.median(wall):.1f} decide_max_ms={max(wall):.1f} "
        f"stopped_early={early:.2f} host_p99_ms={lk['p99_host_ms']:.2f} e2e_p99_ms={lk['p99_end_to_end_ms']:.1f}"
    )


if __name__ == "__main__":
    main()
